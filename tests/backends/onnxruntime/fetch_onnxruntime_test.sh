#!/usr/bin/env bash
# scripts/fetch-onnxruntime.sh: the provisioned runtime passes the script's own check (a program compiled
# and run against it; with the CUDA provider libraries, their registration tried), and bad arguments get
# one error line and a non-zero exit, before anything is fetched.
set -uo pipefail
script=${1:?usage: fetch_onnxruntime_test.sh SCRIPT}
fail() { echo "FAIL: $*" >&2; exit 1; }

out=$("$script" --verify 2>&1) || fail "--verify exited $?: $out"
[[ $out =~ ^runtime\ [0-9]+\.[0-9]+\.[0-9]+,\ header\ API\ [0-9]+ ]] || fail "--verify printed: $out"
echo "verify: $out"

expect_error() {  # EXPECTED-TEXT, then the command
  local expected=$1 err rc
  shift
  err=$("$@" 2>&1 >/dev/null); rc=$?
  ((rc != 0)) || fail "$* exited 0"
  [[ $(printf '%s\n' "$err" | wc -l) -eq 1 ]] || fail "$* printed more than one line: $err"
  [[ $err == *"$expected"* ]] || fail "$* said: $err (expected: $expected)"
}
expect_error "unknown argument '--bogus' (use --force, --verify, --with-cuda or --without-cuda)" "$script" --bogus
expect_error "INFERBENCH_ORT_CUDA=maybe: use 1 (fetch the CUDA provider libraries) or 0" \
  env INFERBENCH_ORT_CUDA=maybe "$script" --verify
echo "ok"
