#!/usr/bin/env bash
# Packs a built inferbench into one folder that runs on another x86-64 Linux machine without this
# machine's -dev packages: the executable, its backend modules and runners, the shared libraries it
# needs beyond the C/C++ runtime (next to it in lib/), and fmt's and nlohmann_json's headers (include/) so that backend
# modules can be compiled there against a framework that exists only there (see scripts/gpu-verify.sh).
#   scripts/bundle.sh [BUILD_DIR] [OUT_DIR]      defaults: build/release dist
set -euo pipefail
shopt -s nullglob
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build/release}
out=${2:-$root/dist}

[ -x "$build/inferbench" ] || { echo "bundle: $build/inferbench not built; run scripts/setup.sh" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out/lib" "$out/backends" "$out/include"
cp "$build/inferbench" "$out/"
# Left out: the torch and torch-aoti modules (built there against the LibTorch that has CUDA). The ONNX
# Runtime module comes with its runtime (below), the CPU reference of `models check` there.
find "$build/backends" -maxdepth 1 -name 'libinferbench_backend_*.so' ! -name '*_torch.so' ! -name '*_torch-aoti.so' \
  -exec cp {} "$out/backends/" \;
# The CUDA probe module (built where nvcc is found; the CUDA runtime inside, cuBLASLt opened at run time).
[ -f "$build/libinferbench_probe_cuda.so" ] && cp "$build/libinferbench_probe_cuda.so" "$out/"
# The GPU pipeline stages module (likewise; nvJPEG opened at run time), found beside the CLI.
[ -f "$build/libinferbench_pipeline_cuda.so" ] && cp "$build/libinferbench_pipeline_cuda.so" "$out/"
[ -d "$build/runners" ] && cp -r "$build/runners" "$out/"
[ -d "$build/bench" ] && find "$build/bench" -maxdepth 1 -type f -executable -exec cp {} "$out/" \;

# Libraries outside the C/C++ runtime, which every target machine has in a newer version.
system_libs='^(linux-vdso|ld-linux|libc\.|libm\.|libdl\.|libpthread\.|librt\.|libstdc\+\+|libgcc_s)'
for binary in "$out/inferbench" "$out"/backends/*.so "$out"/libinferbench_probe_cuda.so "$out"/libinferbench_pipeline_cuda.so; do
  [ -f "$binary" ] || continue
  ldd "$binary" | awk '$3 ~ /^\// {print $1, $3}' | while read -r name path; do
    [[ $name =~ $system_libs ]] || [ -e "$out/lib/$name" ] || cp -L "$path" "$out/lib/$name"
  done
done
# ONNX Runtime, which the module opens at run time (it looks in ../lib): the CPU core (28 MB) and, where
# scripts/fetch-onnxruntime.sh --with-cuda fetched them, the CUDA and TensorRT provider libraries (230 MB),
# each a file of its own under lib/ so that a transfer can send them apart.
ort_root=$(sed -n 's/^INFERBENCH_ONNXRUNTIME_ROOT:PATH=//p' "$build/CMakeCache.txt" 2>/dev/null)
ort_lib=${ort_root:-$root/third_party/onnxruntime}/lib
if [ -f "$build/backends/libinferbench_backend_onnxruntime.so" ]; then
  [ -f "$ort_lib/libonnxruntime.so.1" ] || { echo "bundle: no $ort_lib/libonnxruntime.so.1; run scripts/fetch-onnxruntime.sh" >&2; exit 1; }
  for lib in libonnxruntime.so.1 libonnxruntime_providers_shared.so libonnxruntime_providers_cuda.so \
             libonnxruntime_providers_tensorrt.so; do
    if [ -f "$ort_lib/$lib" ]; then cp -L "$ort_lib/$lib" "$out/lib/"; fi
  done
  if [ -f "$out/lib/libonnxruntime_providers_cuda.so" ]; then
    echo "bundle: with ONNX Runtime's CUDA provider: $out/lib/libonnxruntime_providers_*.so"
  fi
fi
# llama.cpp, whose backend loads its CPU (and, where scripts/fetch-llama-cpp.sh --cuda fetched it, CUDA) modules
# from libllama's own folder: all of them beside it in lib/. libggml-cuda.so (159 MB) is a file of its own, so a
# transfer can send it in parts (scripts/gpu/generation_table.sh joins them).
llama_root=$(sed -n 's/^INFERBENCH_LLAMA_CPP_ROOT:PATH=//p' "$build/CMakeCache.txt" 2>/dev/null)
llama_lib=${llama_root:-$root/third_party/llama.cpp}/lib
llama_server=${llama_root:-$root/third_party/llama.cpp}/bin/llama-server
if { [ -f "$build/backends/libinferbench_backend_llamacpp.so" ] || [ -x "$llama_server" ]; } && [ -d "$llama_lib" ]; then
  for lib in "$llama_lib"/lib*.so; do cp -L "$lib" "$out/lib/"; done
fi
# llama.cpp's server (scripts/build-llama-server.sh), for serving cells there: bin/llama-server finds lib/ through
# its RUNPATH and loads the compute backends from its working directory, so it is started in lib/ (with
# libggml-cuda.so there, -ngl 99 puts the model on the GPU).
if [ -x "$llama_server" ] && [ -d "$llama_lib" ]; then
  mkdir -p "$out/bin"
  cp "$llama_server" "$out/bin/"
  echo "bundle: with llama-server: run it as (cd $out/lib && ../bin/llama-server -m MODEL.gguf ...)"
fi
cp -r /usr/include/fmt /usr/include/nlohmann "$out/include/"
echo "bundle: $out ($(du -sh "$out" | cut -f1)); run with LD_LIBRARY_PATH=$out/lib $out/inferbench"
