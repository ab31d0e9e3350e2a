#!/usr/bin/env bash
# Provision ONNX Runtime for the build into third_party/onnxruntime/ (git-ignored), from the npm packages
# of asus4/onnxruntime-unity (Microsoft's release binaries, MIT), each checked against its pinned sha512
# integrity (npm's dist.integrity) before anything is unpacked:
#   com.github.asus4.onnxruntime             include/  C/C++ headers (the Apple framework's Headers/, the same
#                                                      version's headers for every platform)
#                                            lib/      libonnxruntime.so.1 (a CPU build; + libonnxruntime.so link),
#                                                      libonnxruntime_providers_shared.so
#   com.github.asus4.onnxruntime.linux-x64-gpu (only where a GPU is, or when asked; 230 MB, CUDA 13 + cuDNN 9)
#                                            lib/      libonnxruntime_providers_cuda.so, _tensorrt.so: execution
#                                                      provider libraries that the CPU core loads as plugins
#   VERSION   what was fetched; a later run with the same pins does nothing
# The result is checked by compiling and running a small program against it (and, with the CUDA
# libraries, by registering the CUDA provider library and listing the devices it offers).
# Usage: scripts/fetch-onnxruntime.sh [--force] [--verify] [--with-cuda|--without-cuda]
#   --force    fetch again even if VERSION matches       --verify  only re-run the check
#   --with-cuda / --without-cuda   fetch the CUDA provider libraries or not; default: env INFERBENCH_ORT_CUDA
#              (1 or 0), else whether nvidia-smi lists a GPU
set -euo pipefail

ORT_VERSION=1.29.0                # the ONNX Runtime both packages ship
PKG_VERSION=0.4.9
CPU_PACKAGE=com.github.asus4.onnxruntime
CPU_INTEGRITY=sha512-BkzxduSZ9IkeDP6Q8lz2TFU2ie7hSSvS7ZIfzMooExoq0CNzJnuuGaUJ7IsojBgqO4ouD1jXah8OYyJbCN29Fg==
GPU_PACKAGE=com.github.asus4.onnxruntime.linux-x64-gpu
GPU_INTEGRITY=sha512-FopIhNE/Ng+v2X65wVc9clPCBCvhvA53Hxo2U0Kf5fGdVsC7iCA+mZ0KLWggcQAj7TIZ6pNidR4AC10g74Xo6w==
HEADERS=package/Plugins/iOS~/onnxruntime.xcframework/ios-arm64/onnxruntime.framework/Headers
LINUX_LIBS=package/Plugins/Linux/x64

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dest=$root/third_party/onnxruntime

die() { echo "fetch-onnxruntime: error: $*" >&2; exit 1; }

force=0 verify_only=0 cuda=${INFERBENCH_ORT_CUDA:-}
for arg in "$@"; do
  case $arg in
    --force) force=1 ;;
    --verify) verify_only=1 ;;
    --with-cuda) cuda=1 ;;
    --without-cuda) cuda=0 ;;
    *) die "unknown argument '$arg' (use --force, --verify, --with-cuda or --without-cuda)" ;;
  esac
done
case $cuda in
  1 | 0) ;;
  "") if command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then cuda=1; else cuda=0; fi ;;
  *) die "INFERBENCH_ORT_CUDA=$cuda: use 1 (fetch the CUDA provider libraries) or 0" ;;
esac

[[ $(uname -s)/$(uname -m) == Linux/x86_64 ]] \
  || die "the pinned ONNX Runtime packages are for Linux/x86_64, not $(uname -s)/$(uname -m); set INFERBENCH_ONNXRUNTIME_ROOT to an ORT install instead"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fetch-onnxruntime.XXXXXX")
stage=""
cleanup() { rm -rf "$tmp"; [[ -z $stage ]] || rm -rf "$stage"; }
trap cleanup EXIT

# Compile and run a small program against <dir>/include + <dir>/lib; prints what it found on success.
# The CUDA provider library is registered where it is present; its failure (no CUDA libraries, no
# GPU) is reported, not fatal: the CPU runtime is what the build needs.
verify() {
  local dir=$1
  cat >"$tmp/check.cpp" <<'EOF'
#define ORT_API_MANUAL_INIT
#include <onnxruntime_cxx_api.h>
#include <dlfcn.h>
#include <cstdio>
#include <string>
int main(int argc, char** argv) {
  const OrtApiBase* base = OrtGetApiBase();
  const OrtApi* api = base->GetApi(ORT_API_VERSION);
  if (api == nullptr) {
    std::fprintf(stderr, "runtime %s rejects header API version %d\n", base->GetVersionString(), ORT_API_VERSION);
    return 1;
  }
  Ort::InitApi(api);
  Ort::Env env(ORT_LOGGING_LEVEL_WARNING, "fetch-onnxruntime");
  Ort::SessionOptions options;
  options.SetIntraOpNumThreads(1);
  std::printf("runtime %s, header API %d", base->GetVersionString(), ORT_API_VERSION);
  if (argc < 2) { std::printf("\n"); return 0; }
  const std::string lib = argv[1];
  if (dlopen((lib + "/libonnxruntime_providers_shared.so").c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
    std::printf("; CUDA provider not loadable: %s\n", dlerror());
    return 0;
  }
  try {
    env.RegisterExecutionProviderLibrary("CUDA", lib + "/libonnxruntime_providers_cuda.so");
    std::printf("; devices:");
    for (const auto& device : env.GetEpDevices()) std::printf(" %s", device.EpName());
    std::printf("\n");
  } catch (const Ort::Exception& e) {
    std::printf("; CUDA provider not usable here: %s\n", e.what());
  }
  return 0;
}
EOF
  local log=$tmp/check.log
  g++ -std=c++17 -O0 -I"$dir/include" "$tmp/check.cpp" -o "$tmp/check" \
      -L"$dir/lib" -lonnxruntime -ldl -Wl,-rpath,"$dir/lib" >"$log" 2>&1 \
    || { cat "$log" >&2; die "the check program does not compile/link against $dir"; }
  local args=()
  [[ -f $dir/lib/libonnxruntime_providers_cuda.so ]] && args=("$dir/lib")
  "$tmp/check" "${args[@]}" >"$log" 2>&1 || { cat "$log" >&2; die "the check program fails against $dir"; }
  tail -n 1 "$log"
}

# npm pack <package> into $tmp, checked against its pinned integrity (npm's dist.integrity); prints its path.
source "$root/scripts/npm-pinned.sh"
fetch_package() { npm_pack_checked "$tmp" "$1" "$PKG_VERSION" "$2"; }

cpu_pin="npm: $CPU_PACKAGE $PKG_VERSION (ONNX Runtime $ORT_VERSION) $CPU_INTEGRITY"
gpu_pin="npm: $GPU_PACKAGE $PKG_VERSION (ONNX Runtime $ORT_VERSION) $GPU_INTEGRITY"
gpu_libs=(libonnxruntime_providers_cuda.so libonnxruntime_providers_tensorrt.so)
if ((verify_only)); then
  [[ -f $dest/VERSION ]] || die "$dest is not provisioned; run $0 first"
  verify "$dest"
  exit 0
fi

have_cpu=0 have_gpu=0
if ((!force)) && [[ -f $dest/VERSION && -f $dest/include/onnxruntime_cxx_api.h && -f $dest/lib/libonnxruntime.so.1 ]] \
   && grep -qxF "$cpu_pin" "$dest/VERSION"; then
  have_cpu=1
  grep -qxF "$gpu_pin" "$dest/VERSION" && [[ -f $dest/lib/${gpu_libs[0]} ]] && have_gpu=1
fi
((have_cpu && (have_gpu || !cuda))) && exit 0   # already provisioned with these pins

command -v npm >/dev/null || die "npm is needed (apt-get install npm)"
command -v openssl >/dev/null || die "openssl is needed for the integrity check (apt-get install openssl)"
command -v g++ >/dev/null || die "g++ is needed for the check"

# --- assemble next to the destination (from the provisioned CPU part where its pin holds), check, swap in ---
mkdir -p "$root/third_party"
stage=$(mktemp -d "$root/third_party/.onnxruntime.XXXXXX")
chmod 755 "$stage"
if ((have_cpu)); then
  cp -a "$dest/." "$stage/"
  grep -vx -e "check: .*" "$dest/VERSION" >"$stage/VERSION"
else
  tgz=$(fetch_package "$CPU_PACKAGE" "$CPU_INTEGRITY")
  tar -xzf "$tgz" -C "$tmp" "$HEADERS" "$LINUX_LIBS/libonnxruntime.so" "$LINUX_LIBS/libonnxruntime_providers_shared.so" \
      package/LICENSE package/ThirdPartyNotices.txt \
    || die "$(basename "$tgz") lacks the headers, the Linux x64 libraries or the license files"
  rm -f "$tgz"
  mkdir -p "$stage/include" "$stage/lib" "$stage/share/doc"
  cp -R "$tmp/$HEADERS/." "$stage/include/"
  install -m 755 "$tmp/$LINUX_LIBS/libonnxruntime.so" "$stage/lib/libonnxruntime.so.1"   # its SONAME
  ln -s libonnxruntime.so.1 "$stage/lib/libonnxruntime.so"
  install -m 755 "$tmp/$LINUX_LIBS/libonnxruntime_providers_shared.so" "$stage/lib/"
  install -m 644 "$tmp/package/LICENSE" "$tmp/package/ThirdPartyNotices.txt" "$stage/share/doc/"
  printf '%s\n' "$cpu_pin" >"$stage/VERSION"
fi
if ((cuda && !have_gpu)); then
  tgz=$(fetch_package "$GPU_PACKAGE" "$GPU_INTEGRITY")
  members=()
  for lib in "${gpu_libs[@]}"; do members+=("$LINUX_LIBS/$lib"); done
  tar -xzf "$tgz" -C "$tmp" "${members[@]}" || die "$(basename "$tgz") lacks ${gpu_libs[*]}"
  rm -f "$tgz"
  for lib in "${gpu_libs[@]}"; do install -m 755 "$tmp/$LINUX_LIBS/$lib" "$stage/lib/"; done
  printf '%s\n' "$gpu_pin" >>"$stage/VERSION"
fi
check=$(verify "$stage")
echo "check: $check" >>"$stage/VERSION"
echo "fetch-onnxruntime: $check"

rm -rf "$dest"
mv "$stage" "$dest"
stage=""
