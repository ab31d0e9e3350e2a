#!/usr/bin/env bash
# Packs a built inferbench into one folder that runs on another x86-64 Linux machine without this
# machine's -dev packages: the executable, its backend modules and runners, the shared libraries it
# needs beyond the C/C++ runtime (next to it in lib/), and fmt's headers (include/) so that backend
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
# Left out: the torch module (built there against the LibTorch that has CUDA). The ONNX Runtime module
# comes with its runtime (44 MB), the CPU reference of `models check` there.
find "$build/backends" -maxdepth 1 -name 'libinferbench_backend_*.so' ! -name '*_torch.so' -exec cp {} "$out/backends/" \;
# The CUDA probe module (built where nvcc is found; the CUDA runtime inside, cuBLASLt opened at run time).
[ -f "$build/libinferbench_probe_cuda.so" ] && cp "$build/libinferbench_probe_cuda.so" "$out/"
[ -d "$build/runners" ] && cp -r "$build/runners" "$out/"
[ -d "$build/bench" ] && find "$build/bench" -maxdepth 1 -type f -executable -exec cp {} "$out/" \;

# Libraries outside the C/C++ runtime, which every target machine has in a newer version.
system_libs='^(linux-vdso|ld-linux|libc\.|libm\.|libdl\.|libpthread\.|librt\.|libstdc\+\+|libgcc_s)'
for binary in "$out/inferbench" "$out"/backends/*.so "$out"/libinferbench_probe_cuda.so; do
  ldd "$binary" | awk '$3 ~ /^\// {print $1, $3}' | while read -r name path; do
    [[ $name =~ $system_libs ]] || [ -e "$out/lib/$name" ] || cp -L "$path" "$out/lib/$name"
  done
done
cp -r /usr/include/fmt "$out/include/"
echo "bundle: $out ($(du -sh "$out" | cut -f1)); run with LD_LIBRARY_PATH=$out/lib $out/inferbench"
