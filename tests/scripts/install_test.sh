#!/usr/bin/env bash
# `cmake --install` into a fresh prefix: the installed inferbench finds its backend modules, runners, ONNX
# Runtime and completion under that prefix and benchmarks from there.
#   install_test.sh BUILD_DIR
set -euo pipefail
build=$1
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
exe=$prefix/bin/inferbench
export XDG_CACHE_HOME=$prefix/cache
fail() { echo "install_test: $*" >&2; exit 1; }
[ -x "$exe" ] || fail "no bin/inferbench"
[ -f "$prefix/share/bash-completion/completions/inferbench" ] || fail "no bash completion"
grep -q '_inferbench' "$prefix/share/bash-completion/completions/inferbench" || fail "completion script empty"
[ -d "$prefix/share/inferbench/runners" ] || fail "no runners"
[ -f "$prefix/share/inferbench/plans/example.yaml" ] || fail "no example plans"
"$exe" --version | grep -q '^inferbench ' || fail "--version"
# Backend modules from lib/inferbench/backends, not from the build tree.
listing=$(cd "$prefix" && INFERBENCH_BACKEND_PATH= "$exe" list backends --json)
if ls "$build"/backends/libinferbench_backend_onnxruntime.so >/dev/null 2>&1; then
  echo "$listing" | grep -q "$prefix/lib/inferbench/backends/libinferbench_backend_onnxruntime.so" ||
    fail "onnxruntime backend not found under the prefix: $listing"
  [ -e "$prefix/lib/inferbench/lib/libonnxruntime.so.1" ] || fail "no ONNX Runtime under lib/inferbench/lib"
  # The backend opens the runtime installed beside it (the listing's version names the file and why).
  echo "$listing" | grep -q "$prefix/lib/inferbench/lib/libonnxruntime.so.1, bundled" ||
    fail "the installed onnxruntime backend does not open the bundled runtime: $listing"
  (cd "$prefix" && "$exe" run --backend onnxruntime --model mobilenet --batch 1 --duration 0.2s --set min_iterations=5 \
     --set telemetry_enabled=false --db "$prefix/r.db" --quiet >"$prefix/run.txt" 2>&1) || { cat "$prefix/run.txt"; fail "installed run failed"; }
fi
if ls "$build"/backends/libinferbench_backend_llamacpp.so >/dev/null 2>&1; then
  # The installed module links the libllama installed beside ONNX Runtime and loads its CPU backends from there.
  [ -e "$prefix/lib/inferbench/lib/libllama.so" ] || fail "no llama.cpp under lib/inferbench/lib"
  ls "$prefix"/lib/inferbench/lib/libggml-cpu-*.so >/dev/null 2>&1 || fail "no llama.cpp CPU backends under lib/inferbench/lib"
  echo "$listing" | tr -d '\n' | grep -Eq '"name": "llamacpp", *"usable": true,.*"origin": "'"$prefix"'/lib/inferbench/backends/libinferbench_backend_llamacpp.so"' ||
    fail "the installed llamacpp backend is not usable from the prefix: $listing"
fi
(cd "$prefix" && "$exe" run --backend null --model null --batch 1 --duration 0.2s --set min_iterations=5 \
   --set telemetry_enabled=false --db "$prefix/n.db" --quiet >"$prefix/null.txt" 2>&1) || { cat "$prefix/null.txt"; fail "installed null run failed"; }
echo "install_test: ok ($prefix)"
