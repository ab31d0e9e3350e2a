#!/usr/bin/env bash
# Provision ONNX Runtime for the build into third_party/onnxruntime/ (git-ignored):
#   include/  C/C++ headers from Debian trixie's libonnxruntime-dev .deb (fetched with a private apt
#             state: nothing is added to the system's sources and nothing is installed)
#   lib/      libonnxruntime.so.1 (+ libonnxruntime.so symlink) from the npm package onnxruntime-node
#   VERSION   what was fetched; a later run with the same pins does nothing
# The result is checked by compiling and running a small program against it.
# Usage: scripts/fetch-onnxruntime.sh [--force] [--verify]
#   --force   fetch again even if VERSION matches      --verify  only re-run the check
set -euo pipefail

ORT_NPM_VERSION=1.30.0            # onnxruntime-node release that ships the runtime library
ORT_DEB_SUITE=trixie              # Debian release whose libonnxruntime-dev provides the headers
ORT_DEB_VERSION=""                # pin an exact .deb version; empty = whatever the suite has now
DEBIAN_MIRROR=http://deb.debian.org/debian
DEBIAN_KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dest=$root/third_party/onnxruntime

die() { echo "fetch-onnxruntime: error: $*" >&2; exit 1; }

force=0 verify_only=0
for arg in "$@"; do
  case $arg in
    --force) force=1 ;;
    --verify) verify_only=1 ;;
    *) die "unknown argument '$arg' (use --force or --verify)" ;;
  esac
done

case $(uname -s)/$(uname -m) in
  Linux/x86_64) npm_arch=x64 ;;
  Linux/aarch64) npm_arch=arm64 ;;
  *) die "unsupported platform $(uname -s)/$(uname -m); set INFERBENCH_ONNXRUNTIME_ROOT to an ORT install instead" ;;
esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fetch-onnxruntime.XXXXXX")
stage=""
cleanup() { rm -rf "$tmp"; [[ -z $stage ]] || rm -rf "$stage"; }
trap cleanup EXIT

# Compile and run a small program against <dir>/include + <dir>/lib; prints what it found on success.
verify() {
  local dir=$1
  cat >"$tmp/check.cpp" <<'EOF'
#define ORT_API_MANUAL_INIT
#include <onnxruntime_cxx_api.h>
#include <cstdio>
int main() {
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
  std::printf("runtime %s, header API %d, providers:", base->GetVersionString(), ORT_API_VERSION);
  for (const auto& p : Ort::GetAvailableProviders()) std::printf(" %s", p.c_str());
  std::printf("\n");
  return 0;
}
EOF
  local log=$tmp/check.log
  g++ -std=c++17 -O0 -I"$dir/include" "$tmp/check.cpp" -o "$tmp/check" \
      -L"$dir/lib" -lonnxruntime -Wl,-rpath,"$dir/lib" >"$log" 2>&1 \
    || { cat "$log" >&2; die "the check program does not compile/link against $dir"; }
  "$tmp/check" >"$log" 2>&1 || { cat "$log" >&2; die "the check program fails against $dir"; }
  cat "$log"
}

want_npm="onnxruntime-node $ORT_NPM_VERSION linux/$npm_arch"
if ((verify_only)); then
  [[ -f $dest/VERSION ]] || die "$dest is not provisioned; run $0 first"
  verify "$dest"
  exit 0
fi
if ((!force)) && [[ -f $dest/VERSION && -f $dest/include/onnxruntime_cxx_api.h && -f $dest/lib/libonnxruntime.so.1 ]] \
   && grep -qxF "npm: $want_npm" "$dest/VERSION" \
   && { [[ -z $ORT_DEB_VERSION ]] || grep -qxF "deb: libonnxruntime-dev $ORT_DEB_VERSION ($ORT_DEB_SUITE)" "$dest/VERSION"; }; then
  exit 0   # already provisioned with these pins
fi

command -v apt-get >/dev/null || die "apt-get is needed (Debian/Ubuntu host)"
command -v npm >/dev/null || die "npm is needed (apt-get install npm)"
command -v g++ >/dev/null || die "g++ is needed for the check"
[[ -r $DEBIAN_KEYRING ]] || die "$DEBIAN_KEYRING is missing (apt-get install debian-archive-keyring)"

# --- headers: libonnxruntime-dev from Debian, through a throw-away apt state -----------------------
mkdir -p "$tmp/apt/state/lists/partial" "$tmp/apt/cache/archives/partial" "$tmp/apt/dl" "$tmp/deb"
echo "deb [signed-by=$DEBIAN_KEYRING] $DEBIAN_MIRROR $ORT_DEB_SUITE main" >"$tmp/apt/sources.list"
if ((EUID == 0)) && id _apt >/dev/null 2>&1; then   # let apt's unprivileged downloader write there
  chmod 755 "$tmp"; chown -R _apt "$tmp/apt"
fi
apt_opts=(-qq
  -o "Dir::Etc::SourceList=$tmp/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o Dir::Etc::Preferences=/dev/null -o Dir::Etc::PreferencesParts=/dev/null
  -o "Dir::State=$tmp/apt/state" -o Dir::State::status=/dev/null -o "Dir::Cache=$tmp/apt/cache"
  -o APT::Architecture=amd64 -o APT::Architectures=amd64 -o Acquire::Languages=none)
log=$tmp/apt.log
apt-get "${apt_opts[@]}" update >"$log" 2>&1 || { cat "$log" >&2; die "apt-get update for $ORT_DEB_SUITE failed"; }
deb_spec=libonnxruntime-dev${ORT_DEB_VERSION:+=$ORT_DEB_VERSION}
(cd "$tmp/apt/dl" && apt-get "${apt_opts[@]}" download "$deb_spec") >"$log" 2>&1 \
  || { cat "$log" >&2; die "apt-get download $deb_spec from $ORT_DEB_SUITE failed"; }
deb=$(echo "$tmp"/apt/dl/libonnxruntime-dev_*.deb)
[[ -f $deb ]] || die "no .deb downloaded"
deb_version=$(dpkg-deb -f "$deb" Version)
dpkg-deb -x "$deb" "$tmp/deb"
deb_inc=$tmp/deb/usr/include/onnxruntime
[[ -f $deb_inc/onnxruntime_cxx_api.h ]] || die "$(basename "$deb") has no usr/include/onnxruntime/onnxruntime_cxx_api.h"

# --- runtime library: from the onnxruntime-node npm tarball (not installed, private npm cache) ------
npm_member=package/bin/napi-v6/linux/$npm_arch/libonnxruntime.so.1
(cd "$tmp" && npm pack --loglevel=error --cache "$tmp/npm-cache" "onnxruntime-node@$ORT_NPM_VERSION") >"$log" 2>&1 \
  || { cat "$log" >&2; die "npm pack onnxruntime-node@$ORT_NPM_VERSION failed"; }
tgz=$tmp/onnxruntime-node-$ORT_NPM_VERSION.tgz
if ! tar -tzf "$tgz" "$npm_member" >/dev/null 2>&1; then   # the napi-v* folder may change between releases
  npm_member=$(tar -tzf "$tgz" | grep -m1 -E "^package/bin/napi-v[0-9]+/linux/$npm_arch/libonnxruntime\.so\.1$") \
    || die "no linux/$npm_arch libonnxruntime.so.1 in $(basename "$tgz")"
fi
tar -xzf "$tgz" -C "$tmp" "$npm_member"

# --- assemble next to the destination, check, then swap in ------------------------------------------
mkdir -p "$root/third_party"
stage=$(mktemp -d "$root/third_party/.onnxruntime.XXXXXX")
chmod 755 "$stage"
mkdir -p "$stage/include" "$stage/lib" "$stage/share/doc"
cp -R "$deb_inc/." "$stage/include/"
install -m 755 "$tmp/$npm_member" "$stage/lib/libonnxruntime.so.1"
ln -s libonnxruntime.so.1 "$stage/lib/libonnxruntime.so"
cp "$tmp/deb/usr/share/doc/libonnxruntime-dev/copyright" "$stage/share/doc/copyright.debian"
printf 'npm: %s\ndeb: libonnxruntime-dev %s (%s)\n' "$want_npm" "$deb_version" "$ORT_DEB_SUITE" >"$stage/VERSION"
check=$(verify "$stage")
echo "check: $check" >>"$stage/VERSION"

rm -rf "$dest"
mv "$stage" "$dest"
stage=""
