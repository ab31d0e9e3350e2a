#!/usr/bin/env bash
# scripts/fetch-llama-cpp.sh without the network: its arguments, that a tree provisioned with the pinned packages
# is left alone, and --verify (a program compiled against the tree lists the devices it loads) on the repository's
# own third_party/llama.cpp where it was fetched. Prints "N passed, N failed".
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/scripts" && cp "$repo/scripts/fetch-llama-cpp.sh" "$repo/scripts/npm-pinned.sh" "$work/scripts/"
fetch=$work/scripts/fetch-llama-cpp.sh
source "$repo/tests/scripts/expect.sh"

expect unknown-argument fail "unknown argument '--frobnicate'" "$fetch" --frobnicate
expect bad-cuda-env fail "INFERBENCH_LLAMA_CUDA=2" env INFERBENCH_LLAMA_CUDA=2 "$fetch"
expect verify-unprovisioned fail "is not provisioned" "$fetch" --verify

# A tree whose VERSION carries the script's pins is taken as provisioned: nothing fetched, nothing printed.
pin() { sed -n "s/^$1=\([^ ]*\).*/\1/p" "$fetch"; }
dest=$work/third_party/llama.cpp
mkdir -p "$dest/include" "$dest/lib" && touch "$dest/include/llama.h" "$dest/lib/libllama.so" "$dest/lib/libllama-common.so"
nlc=$(pin NLC_VERSION) release=$(pin LLAMA_RELEASE)
printf 'npm: @node-llama-cpp/linux-x64 %s (llama.cpp %s) sha256 %s\nnpm: node-llama-cpp %s (llama.cpp %s source) sha256 %s\n' \
  "$nlc" "$release" "$(pin CPU_SHA256)" "$nlc" "$release" "$(pin SRC_SHA256)" >"$dest/VERSION"
mkdir -p "$work/bin" && printf '#!/bin/sh\necho "npm was called" >&2\nexit 1\n' >"$work/bin/npm" && chmod +x "$work/bin/npm"
expect provisioned-is-kept 0 "" env PATH="$work/bin:$PATH" "$fetch"
# A tree fetched before libllama-common.so was part of it (scripts/build-llama-server.sh links it) is fetched again.
rm "$dest/lib/libllama-common.so"
expect missing-common-is-fetched fail "npm was called" env PATH="$work/bin:$PATH" "$fetch"

if [ -f "$repo/third_party/llama.cpp/VERSION" ]; then
  expect verify-fetched 0 "devices: CPU" "$repo/scripts/fetch-llama-cpp.sh" --verify
else
  echo "skipped verify-fetched: $repo/third_party/llama.cpp is not fetched (scripts/fetch-llama-cpp.sh)"
fi

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
