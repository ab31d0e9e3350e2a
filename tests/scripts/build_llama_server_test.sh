#!/usr/bin/env bash
# scripts/build-llama-server.sh without compiling: its arguments, a tree lacking what scripts/fetch-llama-cpp.sh
# provisions, and, where the repository's server is built, that a second run with the same stamp does nothing.
# Prints "N passed, N failed".
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/scripts/llama-server"
cp "$repo/scripts/build-llama-server.sh" "$work/scripts/"
cp "$repo/scripts/llama-server/mtmd_absent.cpp" "$work/scripts/llama-server/"
build=$work/scripts/build-llama-server.sh
source "$repo/tests/scripts/expect.sh"

expect unknown-argument fail "unknown argument '--fast'" "$build" --fast
expect bad-jobs fail "INFERBENCH_BUILD_JOBS=0" env INFERBENCH_BUILD_JOBS=0 "$build"
expect unprovisioned fail "run scripts/fetch-llama-cpp.sh first" "$build"
mkdir -p "$work/third_party/llama.cpp/src/tools/server" "$work/third_party/llama.cpp/lib"
expect no-common-library fail "lib/libllama-common.so" "$build"

server=$repo/third_party/llama.cpp/bin/llama-server
# Built from the sources here (the fetched commit and this stand-in): then a run must leave it alone.
current() {
  grep -qxF "llama.cpp $(git -C "$repo/third_party/llama.cpp/src" rev-parse HEAD 2>/dev/null)" "$server.stamp" &&
    grep -qxF "mtmd_absent $(sha256sum "$repo/scripts/llama-server/mtmd_absent.cpp" | cut -d' ' -f1)" "$server.stamp"
}
if [ -x "$server" ] && [ -f "$server.stamp" ] && current; then
  before=$(stat -c %Y "$server")
  expect built-is-kept 0 "" "$repo/scripts/build-llama-server.sh"
  [ "$(stat -c %Y "$server")" = "$before" ] || { failed=$((failed + 1)); echo "FAIL built-is-kept: $server was rebuilt"; }
else
  echo "skipped built-is-kept: $server is not built from these sources (scripts/build-llama-server.sh)"
fi

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
