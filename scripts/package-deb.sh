#!/usr/bin/env bash
# Builds the Debian package dist/inferbench_VERSION_amd64.deb: what `cmake --install` puts under /usr, with
# every library beyond the C/C++ runtime bundled in /usr/lib/inferbench/lib (INFERBENCH_BUNDLE_LIBS), so that
# it installs and runs on Debian 12 and Ubuntu 22.04/24.04 GPU servers without a compiler. Left out: the torch
# and torch-aoti backends, which are built there against that machine's LibTorch (docs/gpu-server.md).
# Run scripts/setup.sh first (it installs the build's packages and fetches ONNX Runtime).
#   scripts/package-deb.sh            -> dist/inferbench_<version>_amd64.deb
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$root/build/package
args=(-DCMAKE_BUILD_TYPE=Release -DINFERBENCH_BUILD_TESTS=OFF -DINFERBENCH_BUILD_BENCH=OFF
      -DINFERBENCH_BUNDLE_LIBS=ON -DCMAKE_DISABLE_FIND_PACKAGE_Torch=ON -DINFERBENCH_WERROR=ON)
command -v ccache >/dev/null 2>&1 && args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$root" -B "$build" -G Ninja "${args[@]}" >/dev/null
cmake --build "$build" -j "$(nproc)" --target inferbench-tool
mkdir -p "$root/dist"
(cd "$build" && cpack -G DEB -B "$root/dist/cpack" >/dev/null)
mv "$root"/dist/cpack/inferbench_*.deb "$root/dist/"
rm -rf "$root/dist/cpack"
ls -l "$root"/dist/inferbench_*.deb
