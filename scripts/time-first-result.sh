#!/usr/bin/env bash
# Times what a newcomer does, from `git clone` to the report, and prints each phase:
#   clone   git clone of SOURCE (a path or URL; default: this checkout's origin, else this checkout)
#   setup   scripts/setup.sh (packages, ONNX Runtime and uPlot fetched, the tool built)
#   first   from the run's start to its first benchmark on screen (the first "[1/N] ... ok" line)
#   run     build/release/inferbench run (the default plan), whole
#   report  build/release/inferbench report
# and the time from the clone's start to the first benchmark on screen (the target: 10 minutes on a fresh
# 2-core Debian 12 machine). The compiler cache is left out unless --warm-compiler-cache is given, so that the
# build is what a fresh machine does; packages already installed stay installed (say which in a report: a
# cold package cache means a machine where setup.sh installs them all).
#   scripts/time-first-result.sh [--warm-compiler-cache] [SOURCE] [WORKDIR]
set -euo pipefail
warm=false
[ "${1:-}" = --warm-compiler-cache ] && { warm=true; shift; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source=${1:-$(git -C "$here" remote get-url origin 2>/dev/null || echo "$here")}
work=${2:-$(mktemp -d)}
$warm || export CCACHE_DISABLE=1

now() { date +%s.%N; }
seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
log=$work/time-first-result.log
: >"$log"

t0=$(now)
git clone -q "$source" "$work/inferbench"
t_clone=$(now)
cd "$work/inferbench"
scripts/setup.sh >>"$log" 2>&1 || { tail -20 "$log"; echo "time-first-result: setup failed (log: $log)" >&2; exit 1; }
t_setup=$(now)
t_first=""
while IFS= read -r line; do
  printf '%s\n' "$line" >>"$log"
  if [ -z "$t_first" ] && [[ $line =~ ^\[1/[0-9]+\].*\ ok\  ]]; then t_first=$(now); fi
done < <(build/release/inferbench run 2>&1)
t_run=$(now)
build/release/inferbench report >>"$log" 2>&1
t_report=$(now)

printf '%-8s %9s\n' phase seconds
printf '%-8s %9s\n' clone "$(seconds "$t0" "$t_clone")"
printf '%-8s %9s\n' setup "$(seconds "$t_clone" "$t_setup")"
printf '%-8s %9s\n' first "${t_first:+$(seconds "$t_setup" "$t_first")}"
printf '%-8s %9s\n' run "$(seconds "$t_setup" "$t_run")"
printf '%-8s %9s\n' report "$(seconds "$t_run" "$t_report")"
printf 'clone to first benchmark on screen: %s s; clone to report: %s s\n' \
  "${t_first:+$(seconds "$t0" "$t_first")}" "$(seconds "$t0" "$t_report")"
printf 'compiler cache: %s; CPU: %s x %s; log: %s\n' "$($warm && echo warm || echo off)" "$(nproc)" \
  "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')" "$log"
