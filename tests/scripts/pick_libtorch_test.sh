#!/usr/bin/env bash
# scripts/pick-libtorch.sh against fake LibTorch prefixes (folders with a TorchConfig.cmake) and fake Pythons
# (scripts that print what `import torch` would: cmake_prefix_path, version, CUDA version), one case a line:
# which LibTorch it picks and what it says. Prints "N passed, N failed".
set -uo pipefail
pick=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/scripts/pick-libtorch.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0

# fake_prefix NAME: a LibTorch prefix as PyTorch lays it out (PREFIX/Torch/TorchConfig.cmake).
fake_prefix() { mkdir -p "$work/$1/Torch" && touch "$work/$1/Torch/TorchConfig.cmake" && echo "$work/$1"; }
# fake_python NAME PREFIX VERSION CUDA: an interpreter whose torch answers so; PREFIX "-": no torch.
fake_python() {
  if [ "$2" = - ]; then printf '#!/bin/sh\necho "No module named torch" >&2\nexit 1\n' >"$work/$1"
  else printf '#!/bin/sh\nprintf "%%s\\n" "%s" "%s" "%s"\n' "$2" "$3" "$4" >"$work/$1"; fi
  chmod +x "$work/$1" && echo "$work/$1"
}

# expect CASE DIR WORDS [ENV=VALUE...]: the picker, run with the environment given, prints DIR on its first
# line and a second line containing WORDS.
expect() {
  local name=$1 dir=$2 words=$3 out
  shift 3
  out=$(env -u INFERBENCH_LIBTORCH "$@" "$pick")
  local got_dir got_why
  { read -r got_dir; read -r got_why; } <<<"$out"
  if [ "$got_dir" = "$dir" ] && [[ $got_why == *"$words"* ]]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    printf 'FAILED %s\n  expected: %s / ...%s...\n  got:      %s / %s\n' "$name" "$dir" "$words" "$got_dir" "$got_why"
  fi
}

cuda_torch=$(fake_prefix cuda-torch)
cpu_torch=$(fake_prefix cpu-torch)
old_torch=$(fake_prefix old-torch)
system=$(fake_prefix system)
nvcc=$work/nvcc
printf '#!/bin/sh\n' >"$nvcc" && chmod +x "$nvcc"
py_cuda=$(fake_python py-cuda "$cuda_torch" 2.11.0+cu130 13.0)
py_cpu=$(fake_python py-cpu "$cpu_torch" 2.7.1+cpu "")
py_old=$(fake_python py-old "$old_torch" 1.13.1 "")
py_debian=$(fake_python py-debian "$work/no-cmake-files" 1.13.0a0 "")
py_none=$(fake_python py-none - - -)
sys_env="INFERBENCH_SYSTEM_TORCH_DIRS=$work/nothing-here $system/Torch"

expect "PyTorch with CUDA and a toolkit wins over the system's" "$cuda_torch/Torch" "PyTorch 2.11.0+cu130's own LibTorch (from $py_cuda, CUDA 13.0): the torch and torch-aoti backends run on the GPU" \
  INFERBENCH_PYTHONS="$py_cuda" "$sys_env" INFERBENCH_NVCC="$nvcc"
expect "without a CUDA toolkit, the system's, and it says what to install" "$system/Torch" "no CUDA toolkit (nvcc) is here to build against it: install CUDA toolkit 13.0" \
  INFERBENCH_PYTHONS="$py_cuda" "$sys_env" INFERBENCH_NVCC="$work/no-nvcc"
expect "without a toolkit or a system LibTorch, none" "" "no LibTorch found" \
  INFERBENCH_PYTHONS="$py_cuda" INFERBENCH_SYSTEM_TORCH_DIRS="$work/nothing-here" INFERBENCH_NVCC="$work/no-nvcc"
expect "a CPU PyTorch >= 2.6 wins over the system's (torch-aoti)" "$cpu_torch/Torch" "PyTorch 2.7.1+cpu's own LibTorch (from $py_cpu, CPU only): torch-aoti runs" \
  INFERBENCH_PYTHONS="$py_cpu" "$sys_env" INFERBENCH_NVCC="$nvcc"
expect "an older CPU PyTorch loses to the system's" "$system/Torch" "torch-aoti needs LibTorch >= 2.6 and is not built" \
  INFERBENCH_PYTHONS="$py_old" "$sys_env" INFERBENCH_NVCC="$nvcc"
expect "an older CPU PyTorch alone is still a LibTorch" "$old_torch/Torch" "PyTorch 1.13.1's own LibTorch (from $py_old, CPU only; torch-aoti needs" \
  INFERBENCH_PYTHONS="$py_old" INFERBENCH_SYSTEM_TORCH_DIRS="" INFERBENCH_NVCC="$nvcc"
expect "Debian's python3-torch ships no CMake files: the system's" "$system/Torch" "the system's LibTorch ($system/Torch, CPU only" \
  INFERBENCH_PYTHONS="$py_debian" "$sys_env" INFERBENCH_NVCC="$nvcc"
expect "a python3 without torch hands over to the next interpreter" "$cuda_torch/Torch" "from $py_cuda, CUDA 13.0" \
  INFERBENCH_PYTHONS="$py_none $work/no-such-python $py_cuda" "$sys_env" INFERBENCH_NVCC="$nvcc"
expect "a LibTorch the user names comes first" "$old_torch/Torch" "the LibTorch INFERBENCH_LIBTORCH names" \
  INFERBENCH_LIBTORCH="$old_torch" INFERBENCH_PYTHONS="$py_cuda" "$sys_env" INFERBENCH_NVCC="$nvcc"
expect "a named folder without TorchConfig.cmake is said" "" "holds no TorchConfig.cmake" \
  INFERBENCH_LIBTORCH="$work/nothing-here" INFERBENCH_PYTHONS="$py_cuda" "$sys_env" INFERBENCH_NVCC="$nvcc"
expect "nothing at all" "" "the torch and torch-aoti backends are not built" \
  INFERBENCH_PYTHONS="$py_none" INFERBENCH_SYSTEM_TORCH_DIRS="" INFERBENCH_NVCC="$nvcc"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
