#!/usr/bin/env bash
# Sets up (see setup.sh) and runs every test: unit tests of each module, the ONNX Runtime backend,
# and end-to-end tests of the real CLI (crashes, hangs, Ctrl-C, bad plans).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
preset=${INFERBENCH_PRESET:-release}
"$root/scripts/setup.sh" --tests
cd "$root"
ctest --preset "$preset"
