#!/usr/bin/env bash
# Sets up inferbench on Debian 12: installs the Debian packages the build, the benchmarks and the
# tests need (only those missing; LibTorch 1.13 for the torch backend, python3-torch for the PyTorch
# runner, python3-torchvision and python3-onnx to export the corpus of real-world ONNX files
# (scripts/corpus/export_corpus.py), ISA-L (the workbooks' deflate) and gnuplot for reports, unzip for the workbook tests, Chromium for the HTML report's test), provisions ONNX Runtime (scripts/fetch-onnxruntime.sh) and uPlot (scripts/fetch-uplot.sh), then
# configures and builds. Non-interactive and idempotent: a second run only rebuilds what changed.
#   scripts/setup.sh            release build in build/release
#   INFERBENCH_PRESET=debug scripts/setup.sh   (or asan)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
preset=${INFERBENCH_PRESET:-release}

packages=(
  build-essential cmake ninja-build pkg-config git ca-certificates
  libyaml-cpp-dev libcli11-dev nlohmann-json3-dev libfmt-dev libsqlite3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libtorch-dev python3-torch python3-torchvision python3-onnx
  libisal-dev gnuplot-nox fonts-dejavu-core chromium unzip
)
command -v npm >/dev/null 2>&1 || packages+=(npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

"$root/scripts/fetch-onnxruntime.sh"
"$root/scripts/fetch-uplot.sh"

cd "$root"
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)"
echo "setup: built build/$preset/inferbench"
