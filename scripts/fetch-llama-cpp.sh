#!/usr/bin/env bash
# Provision llama.cpp for the build into third_party/llama.cpp/ (git-ignored), from the npm packages of
# node-llama-cpp (withcatai/node-llama-cpp, MIT; prebuilt llama.cpp release v0.4.0 of its own build), each
# checked against its pinned SHA-256 before anything is unpacked:
#   @node-llama-cpp/linux-x64          lib/      libllama.v0.4.0.so, libggml.v0.4.0.so, libggml-base.so (each
#                                                its own SONAME, RUNPATH $ORIGIN) + libllama.so / libggml.so links,
#                                                and the CPU backends libggml-cpu-<microarchitecture>.so, modules
#                                                that ggml_backend_load_all_from_path(lib/) opens, taking the best
#                                                one this CPU runs (x64, sse42, haswell, ..., zen4, sapphirerapids),
#                                                and libllama-common.so (llama.cpp's common/ with cpp-httplib, built
#                                                with LLAMA_SUBPROCESS), which scripts/build-llama-server.sh links
#   @node-llama-cpp/linux-x64-cuda     lib/      libggml-cuda.so, another such module (only when asked: 143 MB;
#                                                it needs CUDA 13: libcudart.so.13, libcublas.so.13, libcuda.so.1)
#   node-llama-cpp                     src/      the exact llama.cpp source those libraries were built from (the
#                                                package's llama/gitRelease.bundle, cloned; its tools/server is
#                                                what scripts/build-llama-server.sh builds), and from it:
#                                      include/  llama.h, llama-cpp.h and ggml/include/*.h (ggml.h, gguf.h, ...)
#   VERSION   what was fetched; a later run with the same pins does nothing
# The result is checked by compiling a small program against it and listing the backends it loads.
# Usage: scripts/fetch-llama-cpp.sh [--force] [--verify] [--cuda]
#   --force    fetch again even if VERSION matches       --verify  only re-run the check
#   --cuda     also the CUDA backend module (default: env INFERBENCH_LLAMA_CUDA=1)
set -euo pipefail

NLC_VERSION=3.21.1                 # node-llama-cpp's release; its packages carry llama.cpp release v0.4.0
LLAMA_RELEASE=v0.4.0
CPU_PACKAGE=@node-llama-cpp/linux-x64
CPU_SHA256=4b5b65a8b2611d8af94349b02d815c0f424a30a0a19aef2be5db25ecfef6730f
SRC_PACKAGE=node-llama-cpp
SRC_SHA256=7a231d6bafa14142a1cbed9893d4ec5bc6041b2a5f5939a623accaab4203c11f
CUDA_PACKAGE=@node-llama-cpp/linux-x64-cuda
CUDA_SHA256=499b4012541cb3e01b3d35e18e7dd2dc546174979494b02dbcc0a6667ed6b7d9
BINS=package/bins

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dest=$root/third_party/llama.cpp

die() { echo "fetch-llama-cpp: error: $*" >&2; exit 1; }

force=0 verify_only=0 cuda=${INFERBENCH_LLAMA_CUDA:-0}
for arg in "$@"; do
  case $arg in
    --force) force=1 ;;
    --verify) verify_only=1 ;;
    --cuda) cuda=1 ;;
    *) die "unknown argument '$arg' (use --force, --verify or --cuda)" ;;
  esac
done
[[ $cuda == 0 || $cuda == 1 ]] || die "INFERBENCH_LLAMA_CUDA=$cuda: use 1 (fetch the CUDA backend module) or 0"
[[ $(uname -s)/$(uname -m) == Linux/x86_64 ]] \
  || die "the pinned llama.cpp packages are for Linux/x86_64, not $(uname -s)/$(uname -m); configure with INFERBENCH_LLAMA_CPP_ROOT naming a llama.cpp build instead"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fetch-llama-cpp.XXXXXX")
stage=""
cleanup() { rm -rf "$tmp"; [[ -z $stage ]] || rm -rf "$stage"; }
trap cleanup EXIT

# Compile and run a small program against <dir>/include + <dir>/lib: it loads the backend modules of lib/
# and prints the llama.cpp system line and the devices found.
verify() {
  local dir=$1
  cat >"$tmp/check.cpp" <<'EOF'
#include <llama.h>
#include <ggml-backend.h>
#include <cstdio>
static void quiet(ggml_log_level, const char*, void*) {}
int main(int, char** argv) {
  llama_log_set(quiet, nullptr);
  ggml_backend_load_all_from_path(argv[1]);
  llama_backend_init();
  if (ggml_backend_dev_count() == 0) { std::fprintf(stderr, "no ggml device loaded from %s\n", argv[1]); return 1; }
  std::printf("devices:");
  for (size_t i = 0; i < ggml_backend_dev_count(); ++i) std::printf(" %s", ggml_backend_dev_name(ggml_backend_dev_get(i)));
  std::printf("; %s\n", llama_print_system_info());
  llama_backend_free();
  return 0;
}
EOF
  local log=$tmp/check.log
  g++ -std=c++17 -O0 -I"$dir/include" "$tmp/check.cpp" -o "$tmp/check" \
      -L"$dir/lib" -lllama -lggml -lggml-base -Wl,-rpath,"$dir/lib" >"$log" 2>&1 \
    || { cat "$log" >&2; die "the check program does not compile/link against $dir"; }
  "$tmp/check" "$dir/lib" >"$log" 2>&1 || { cat "$log" >&2; die "the check program fails against $dir"; }
  tail -n 1 "$log"
}

# npm pack <package> into $tmp, checked against its pinned SHA-256; prints its path.
source "$root/scripts/npm-pinned.sh"
fetch_package() { npm_pack_checked "$tmp" "$1" "$NLC_VERSION" "sha256:$2"; }

cpu_pin="npm: $CPU_PACKAGE $NLC_VERSION (llama.cpp $LLAMA_RELEASE) sha256 $CPU_SHA256"
src_pin="npm: $SRC_PACKAGE $NLC_VERSION (llama.cpp $LLAMA_RELEASE source) sha256 $SRC_SHA256"
cuda_pin="npm: $CUDA_PACKAGE $NLC_VERSION (llama.cpp $LLAMA_RELEASE) sha256 $CUDA_SHA256"
if ((verify_only)); then
  [[ -f $dest/VERSION ]] || die "$dest is not provisioned; run $0 first"
  verify "$dest"
  exit 0
fi

have_cpu=0 have_cuda=0
if ((!force)) && [[ -f $dest/VERSION && -f $dest/include/llama.h && -f $dest/lib/libllama.so && -f $dest/lib/libllama-common.so ]] \
   && grep -qxF "$cpu_pin" "$dest/VERSION" && grep -qxF "$src_pin" "$dest/VERSION"; then
  have_cpu=1
  grep -qxF "$cuda_pin" "$dest/VERSION" && [[ -f $dest/lib/libggml-cuda.so ]] && have_cuda=1
fi
((have_cpu && (have_cuda || !cuda))) && exit 0   # already provisioned with these pins

command -v npm >/dev/null || die "npm is needed (apt-get install npm)"
# Node trusts its own CA list only; the system's (with a proxy's CA where one intercepts TLS) is added to it.
if [[ -z ${NODE_EXTRA_CA_CERTS:-} && -f /etc/ssl/certs/ca-certificates.crt ]]; then
  export NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
fi
command -v git >/dev/null || die "git is needed to clone the source bundle"
command -v g++ >/dev/null || die "g++ is needed for the check"

# --- assemble next to the destination (from the provisioned CPU part where its pins hold), check, swap in ---
mkdir -p "$root/third_party"
stage=$(mktemp -d "$root/third_party/.llama.cpp.XXXXXX")
chmod 755 "$stage"
if ((have_cpu)); then
  cp -a "$dest/." "$stage/"
  grep -vx -e "check: .*" "$dest/VERSION" >"$stage/VERSION"
else
  tgz=$(fetch_package "$CPU_PACKAGE" "$CPU_SHA256")
  tar -xzf "$tgz" -C "$tmp" "$BINS/linux-x64" package/LICENSE || die "$(basename "$tgz") lacks $BINS/linux-x64"
  rm -f "$tgz"
  mkdir -p "$stage/lib" "$stage/include" "$stage/share/doc"
  for lib in "$tmp/$BINS"/linux-x64/lib{llama.v*,llama-common,ggml.v*,ggml-base,ggml-cpu-*}.so; do
    [[ -f $lib ]] || die "the package lacks $(basename "$lib")"
    install -m 755 "$lib" "$stage/lib/"
  done
  ln -s "$(basename "$stage"/lib/libllama.v*.so)" "$stage/lib/libllama.so"
  ln -s "$(basename "$stage"/lib/libggml.v*.so)" "$stage/lib/libggml.so"
  install -m 644 "$tmp/package/LICENSE" "$stage/share/doc/LICENSE.node-llama-cpp"

  tgz=$(fetch_package "$SRC_PACKAGE" "$SRC_SHA256")
  tar -xzf "$tgz" -C "$tmp" package/llama/gitRelease.bundle || die "$(basename "$tgz") lacks llama/gitRelease.bundle"
  rm -f "$tgz"
  git clone --quiet "$tmp/package/llama/gitRelease.bundle" "$stage/src" 2>"$tmp/git.log" \
    || { cat "$tmp/git.log" >&2; die "cannot clone the llama.cpp source bundle"; }
  install -m 644 "$stage/src/include/llama.h" "$stage/src/include/llama-cpp.h" "$stage/src/ggml/include/"*.h "$stage/include/"
  install -m 644 "$stage/src/LICENSE" "$stage/share/doc/LICENSE.llama.cpp"
  printf '%s\n%s\n' "$cpu_pin" "$src_pin" >"$stage/VERSION"
  echo "source: llama.cpp commit $(git -C "$stage/src" rev-parse HEAD)" >>"$stage/VERSION"
fi
if ((cuda && !have_cuda)); then
  tgz=$(fetch_package "$CUDA_PACKAGE" "$CUDA_SHA256")
  tar -xzf "$tgz" -C "$tmp" "$BINS" || die "$(basename "$tgz") lacks $BINS"
  rm -f "$tgz"
  cuda_lib=$(find "$tmp/$BINS" -name libggml-cuda.so | head -n 1)
  [[ -n $cuda_lib ]] || die "the CUDA package lacks libggml-cuda.so"
  install -m 755 "$cuda_lib" "$stage/lib/"
  printf '%s\n' "$cuda_pin" >>"$stage/VERSION"
fi
check=$(verify "$stage")
echo "check: $check" >>"$stage/VERSION"
echo "fetch-llama-cpp: $check"

rm -rf "$dest"
mv "$stage" "$dest"
stage=""
