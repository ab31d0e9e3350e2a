#!/usr/bin/env bash
# Sets up inferbench on Debian 12 or Ubuntu 22.04/24.04: installs the distribution packages the build, the
# benchmarks and the tests need (only those missing; LibTorch 1.13 for the torch backend where no better one
# is here, python3-torch for the PyTorch runners, python3-torchvision and python3-onnx to export the corpus of
# real-world ONNX files (scripts/corpus/export_corpus.py), ISA-L (the workbooks' deflate) and gnuplot for reports, unzip for the
# workbook tests, Chromium for the HTML report's test, LibreOffice Calc and poppler-utils for the test that
# renders a workbook in a spreadsheet program), picks the LibTorch the torch and torch-aoti backends
# build against (scripts/pick-libtorch.sh: python3's PyTorch's own when it has CUDA or is 2.6 or newer, else
# the system's) and says which, provisions ONNX Runtime (scripts/fetch-onnxruntime.sh), llama.cpp
# (scripts/fetch-llama-cpp.sh; INFERBENCH_LLAMA_CUDA=1 adds its CUDA backend) and uPlot
# (scripts/fetch-uplot.sh), then configures and builds. Non-interactive and idempotent: a second run only
# rebuilds what changed. Packages an archive lacks (Ubuntu has no libtorch-dev; its chromium is a snap, which
# only a test needs) are left out with a note: the main job needs none of them.
#   scripts/setup.sh            the tool: packages for run and report, and only the CLI, its backend modules
#                               and the CUDA probe (target inferbench-tool) in build/release
#   scripts/setup.sh --tests    also the packages the tests need, every target (tests, benches), and llama.cpp's
#                               llama-server for the serving tests (scripts/build-llama-server.sh)
#   INFERBENCH_PRESET=debug scripts/setup.sh   (or asan)
#   INFERBENCH_LIBTORCH=/path/to/libtorch scripts/setup.sh   (a LibTorch of your choosing)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
preset=${INFERBENCH_PRESET:-release}
tests=false
case "${1:-}" in
  "") ;;
  --tests) tests=true ;;
  *) echo "setup: unknown argument '$1'; use no argument (the tool) or --tests (the tool and its tests)" >&2; exit 2 ;;
esac
os_id=$(. /etc/os-release 2>/dev/null && echo "${ID:-unknown}")

# What the build, the benchmarks and the reports need: in Debian 12 and Ubuntu 22.04/24.04 alike.
required=(
  build-essential cmake ninja-build pkg-config git ca-certificates
  libyaml-cpp-dev libcli11-dev nlohmann-json3-dev libfmt-dev libsqlite3-dev libpq-dev
  libisal-dev libcurl4-openssl-dev gnuplot-nox fonts-dejavu-core
  libturbojpeg0-dev libpng-dev
)
command -v npm >/dev/null 2>&1 || required+=(npm)
optional=()
if $tests; then
  # The test frameworks, unzip for the workbook tests; where the archive has them: the PyTorch the tests and
  # the corpus use, Chromium for one test, LibreOffice Calc (without its GUI) and pdftoppm to render a workbook.
  required+=(libgtest-dev libgmock-dev libbenchmark-dev unzip)
  # The PostgreSQL server the store tests start (initdb and pg_ctl; the tests start and stop it themselves).
  required+=(postgresql)
  optional+=(python3-torch python3-torchvision python3-onnx libreoffice-calc-nogui poppler-utils)
  # Ubuntu's chromium package only installs the snap, which a headless server need not carry.
  [ "$os_id" = ubuntu ] || optional+=(chromium)
  # A real one-node Slurm for `inferbench slurm` (tests/slurm): the tests start munged, slurmctld and slurmd.
  required+=(slurm-wlm munge)
fi

# The LibTorch first: Debian's libtorch-dev is needed only where nothing better is here.
{ read -r torch_dir; read -r torch_why; } < <("$root/scripts/pick-libtorch.sh")
# The tool builds the torch backends against a LibTorch found here; Debian's (with its many dependencies) is
# installed for the tests only, or with INFERBENCH_DEBIAN_LIBTORCH=1.
if $tests || [ "${INFERBENCH_DEBIAN_LIBTORCH:-0}" = 1 ]; then
  case "$torch_dir" in
    "" | /usr/lib/*) optional=(libtorch-dev "${optional[@]}") ;;
  esac
fi

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
missing=() missing_optional=()
for p in "${required[@]}"; do installed "$p" || missing+=("$p"); done
for p in "${optional[@]}"; do installed "$p" || missing_optional+=("$p"); done
if ((${#missing[@]} + ${#missing_optional[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  for p in "${missing_optional[@]}"; do
    if apt-cache show --no-all-versions "$p" >/dev/null 2>&1; then
      missing+=("$p")
    else
      echo "setup: $p is not in this system's package archive; left out (only tests and the corpus use it)"
    fi
  done
  if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi
# libtorch-dev may just have come: ask again.
{ read -r torch_dir; read -r torch_why; } < <("$root/scripts/pick-libtorch.sh")

# The presets need CMake 3.25; Ubuntu 22.04 has 3.22: a newer one from pip, where pip is.
cmake_version=$(cmake --version | sed -n '1s/[^0-9]*\([0-9][0-9.]*\).*/\1/p')
if [ "$(printf '%s\n' 3.25 "$cmake_version" | sort -V | head -1)" != 3.25 ]; then
  echo "setup: CMake $cmake_version is older than the 3.25 inferbench needs; installing a newer one with pip (--user)"
  python3 -m pip install --user --quiet 'cmake>=3.25' ||
    { echo "setup: could not install CMake >= 3.25; install it (Kitware's apt repository, or pip install cmake) and rerun" >&2; exit 1; }
  export PATH="$HOME/.local/bin:$PATH"
fi

"$root/scripts/fetch-onnxruntime.sh"
"$root/scripts/fetch-llama-cpp.sh"
# llama.cpp's HTTP server, which the serving tests start (compiled from the fetched source, about 80 CPU-seconds).
if $tests; then "$root/scripts/build-llama-server.sh"; fi
"$root/scripts/fetch-uplot.sh"

echo "setup: LibTorch: $torch_why"
cmake_args=()
[ -z "$torch_dir" ] || cmake_args=(-DTorch_DIR="$torch_dir")
cd "$root"
# A compiler cache where one is installed: a second clone or a rebuild after a branch switch recompiles
# only what changed.
command -v ccache >/dev/null 2>&1 && cmake_args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# The tests' frameworks are configured only where they are wanted (a tool build needs no GoogleTest).
# A build folder the test command already configured keeps its tests.
if $tests; then
  cmake_args+=(-DINFERBENCH_BUILD_TESTS=ON -DINFERBENCH_BUILD_BENCH=ON)
elif ! grep -q '^INFERBENCH_BUILD_TESTS:BOOL=ON' "build/$preset/CMakeCache.txt" 2>/dev/null; then
  cmake_args+=(-DINFERBENCH_BUILD_TESTS=OFF -DINFERBENCH_BUILD_BENCH=OFF)
fi
cmake --preset "$preset" "${cmake_args[@]}" >/dev/null
if $tests; then
  cmake --build --preset "$preset" -j "$(nproc)"
else
  cmake --build --preset "$preset" -j "$(nproc)" --target inferbench-tool
fi
built=()
for backend in torch torch-aoti; do
  [ -f "build/$preset/backends/libinferbench_backend_$backend.so" ] && built+=("$backend")
done
echo "setup: built build/$preset/inferbench${built:+ with the ${built[*]} backend(s)}"
[ -n "$torch_dir" ] || echo "setup: no LibTorch here: the torch backends are not built (INFERBENCH_DEBIAN_LIBTORCH=1 scripts/setup.sh installs Debian's; INFERBENCH_LIBTORCH=/path names another)"
