#!/usr/bin/env bash
# Builds here (where nvcc is found) what scripts/gpu/pipeline_stages.sh runs on a GPU host, into build/gpu-pack:
# bench/pipeline_gpu_stages, the CUDA module libinferbench_pipeline_cuda.so beside it (where the program looks),
# and lib/ with the shared libraries the program needs beyond the C and C++ runtimes (fmt, ...). Carry that folder
# to the GPU host. nvJPEG is not packed: the GPU host's CUDA 13 or PyTorch's nvidia wheels provide it.
#   scripts/gpu/pack_pipeline_stages.sh [BUILD_DIR]      (default build/release, configured by scripts/setup.sh)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-$root/build/release}
pack=$root/build/gpu-pack
cmake --build "$build" -j2 --target pipeline_gpu_stages inferbench_pipeline_cuda
module=$build/libinferbench_pipeline_cuda.so
[[ -f $module ]] || { echo "pack_pipeline_stages: $module was not built: configure $build where nvcc is found (CUDA 13 at /usr/local/cuda)" >&2; exit 1; }
rm -rf "$pack"
mkdir -p "$pack/lib"
cp "$build/bench/pipeline_gpu_stages" "$module" "$pack/"
ldd "$pack/pipeline_gpu_stages" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' \
  | grep -vE '/(libc|libm|libstdc\+\+|libgcc_s|libpthread|libdl|librt|ld-linux[^/]*)\.so' \
  | while read -r lib; do cp -L "$lib" "$pack/lib/"; done
git -C "$root" rev-parse HEAD > "$pack/commit.txt" 2>/dev/null || true
du -sh "$pack"
ls -l "$pack" "$pack/lib"
