# Sourced by the scripts' tests: expect CASE STATUS WORDS COMMAND... runs COMMAND and counts a pass when it exits
# with STATUS (0 or "fail") and its output contains WORDS, else a failure with what it said.
passed=0 failed=0
expect() {
  local name=$1 status=$2 words=$3 out rc
  shift 3
  out=$("$@" 2>&1); rc=$?
  if { [ "$status" = 0 ] && [ $rc -eq 0 ]; } || { [ "$status" = fail ] && [ $rc -ne 0 ]; }; then
    if [[ $out == *"$words"* ]]; then passed=$((passed + 1)); return; fi
  fi
  failed=$((failed + 1))
  echo "FAIL $name: exit $rc, output: $out"
}
