#!/usr/bin/env bash
# Picks the LibTorch that inferbench's torch and torch-aoti backends are built against, and says why.
# Prints two lines: the folder holding TorchConfig.cmake (for -DTorch_DIR=; empty: none found), then one
# sentence saying which LibTorch it is and why it was chosen. In order of preference:
#   1. $INFERBENCH_LIBTORCH, a LibTorch the user names (its Torch_DIR, or a prefix with share/cmake/Torch);
#   2. the LibTorch of python3's PyTorch (torch.utils.cmake_prefix_path) when that PyTorch has CUDA and a CUDA
#      toolkit (nvcc) is here to build against it: what PyTorch users run, and the one version whose .pt2
#      packages torch-aoti can load (one with CUDA but no toolkit here cannot be built against: it is passed
#      over, and the sentence says what to install);
#   3. that LibTorch without CUDA when it is 2.6 or newer (torch-aoti needs its AOTIModelPackageLoader);
#   4. the system's LibTorch (Debian's libtorch-dev: 1.13, CPU only);
#   5. python3's older CPU-only LibTorch; else none (the torch and torch-aoti backends are then not built).
# Where to look, for tests and unusual machines: INFERBENCH_PYTHONS (interpreters asked, in order; default
# "python3 /usr/bin/python3"), INFERBENCH_SYSTEM_TORCH_DIRS (default, when unset: the distributions' Torch_DIRs),
# INFERBENCH_NVCC (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc).
set -uo pipefail

pythons=${INFERBENCH_PYTHONS:-python3 /usr/bin/python3}
system_dirs=${INFERBENCH_SYSTEM_TORCH_DIRS-/usr/lib/x86_64-linux-gnu/cmake/Torch /usr/lib/aarch64-linux-gnu/cmake/Torch /usr/share/cmake/Torch /usr/local/share/cmake/Torch}
nvcc=${INFERBENCH_NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}

# The Torch_DIR of a prefix or of a Torch_DIR itself; nothing if neither holds TorchConfig.cmake.
torch_dir_of() {
  local d
  for d in "$1" "$1/Torch" "$1/share/cmake/Torch"; do
    if [ -f "$d/TorchConfig.cmake" ]; then (cd "$d" && pwd); return 0; fi
  done
  return 1
}

# Whether version $1 (e.g. 2.11.0+cu130) is at least $2.$3.
at_least() {
  local major minor
  IFS=. read -r major minor _ <<<"${1%%[!0-9.]*}"
  [ -n "$major" ] && { [ "$major" -gt "$2" ] || { [ "$major" -eq "$2" ] && [ "${minor:-0}" -ge "$3" ]; }; }
}

say() { printf '%s\n%s\n' "$1" "$2"; exit 0; }

if [ -n "${INFERBENCH_LIBTORCH:-}" ]; then
  dir=$(torch_dir_of "$INFERBENCH_LIBTORCH") ||
    { say "" "INFERBENCH_LIBTORCH=$INFERBENCH_LIBTORCH holds no TorchConfig.cmake (give a LibTorch's prefix or its share/cmake/Torch); no LibTorch chosen"; }
  say "$dir" "the LibTorch INFERBENCH_LIBTORCH names ($dir)"
fi

# python3's PyTorch: the first interpreter that imports torch and whose LibTorch ships its CMake files.
py_dir="" py_version="" py_cuda="" py=""
for candidate in $pythons; do
  answer=$("$candidate" -c 'import torch; print(torch.utils.cmake_prefix_path); print(torch.__version__); print(torch.version.cuda or "")' 2>/dev/null) || continue
  { read -r prefix; read -r version; read -r cuda; } <<<"$answer"
  dir=$(torch_dir_of "$prefix") || continue
  py=$candidate py_dir=$dir py_version=$version py_cuda=$cuda
  break
done

system_dir=""
for d in $system_dirs; do
  if system_dir=$(torch_dir_of "$d"); then break; fi
  system_dir=""
done

no_toolkit=""
if [ -n "$py_dir" ] && [ -n "$py_cuda" ]; then
  if [ -x "$nvcc" ]; then
    say "$py_dir" "PyTorch $py_version's own LibTorch (from $py, CUDA $py_cuda): the torch and torch-aoti backends run on the GPU"
  fi
  # A CUDA LibTorch's CMake files need the CUDA toolkit: without it that LibTorch cannot be built against.
  no_toolkit="; $py's PyTorch $py_version has CUDA $py_cuda, but no CUDA toolkit (nvcc) is here to build against it: install CUDA toolkit $py_cuda and rerun for the GPU paths"
  py_dir=""
fi
if [ -n "$py_dir" ] && at_least "$py_version" 2 6; then
  say "$py_dir" "PyTorch $py_version's own LibTorch (from $py, CPU only): torch-aoti runs its .pt2 packages on the CPU"
fi
if [ -n "$system_dir" ]; then
  say "$system_dir" "the system's LibTorch ($system_dir, CPU only; torch-aoti needs LibTorch >= 2.6 and is not built)$no_toolkit"
fi
if [ -n "$py_dir" ]; then
  say "$py_dir" "PyTorch $py_version's own LibTorch (from $py, CPU only; torch-aoti needs LibTorch >= 2.6 and is not built)"
fi
say "" "no LibTorch found (neither python3's PyTorch with its CMake files nor libtorch-dev): the torch and torch-aoti backends are not built$no_toolkit"
