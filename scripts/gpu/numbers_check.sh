#!/usr/bin/env bash
# The figures of "numbers that hold" on a GPU machine, in one go (about 2 minutes for the stopping part):
#   1. here:  scripts/setup.sh && scripts/bundle.sh            (dist/: the CLI and its libraries)
#   2. there: scripts/gpu/numbers_check.sh OUT_DIR [PART...]   (default: every part)
# The torch backend module is built there first where dist/ lacks it (scripts/gpu/verify.sh's build stage).
# Parts:
#   stopping  ResNet-50 fp16, torch backend with a CUDA graph, cuda:0, batch 32: a stdrel run beside a fixed
#             10 s run (iterations used, the mean and its 95% interval, whether it converged), then the same
#             cell 5 times (repeats: 5, 3 s each) with the mean of the means, its Student-t interval and
#             the CV of the means (goal: at most 1%).
# Everything lands in OUT_DIR: numbers.db, each run's summary (text and JSON), the figures as text.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dist=$root/dist
out=${1:?usage: numbers_check.sh OUT_DIR [PART...]}
shift
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(stopping)
mkdir -p "$out"
export LD_LIBRARY_PATH="$dist/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/inferbench-cache}
inferbench=$dist/inferbench
db=$out/numbers.db

ensure_torch_backend() {
    ls "$dist/backends/"libinferbench_backend_torch*.so >/dev/null 2>&1 && return 0
    "$root/scripts/gpu/verify.sh" "$out/build" build
}

# One named run into numbers.db; its summary as text and as JSON (summary --json of that run).
run_named() {  # NAME, then inferbench run arguments
    local name=$1
    shift
    "$inferbench" run --db "$db" --name "$name" "$@" 2>"$out/$name.progress.log" | tee "$out/$name.summary.txt"
    local run_id
    run_id=$("$inferbench" summary --db "$db" --runs --format csv | tail -n 1 | cut -d, -f1)
    "$inferbench" summary --db "$db" --run "$run_id" --json >"$out/$name.summary.json"
}

part_stopping() {
    local cell=(--backend torch --model resnet50 --device cuda:0 --precision fp16 --batch 32 --warmup 2s
        --set backend_options.torch.cuda_graph=true)
    run_named stop-stdrel "${cell[@]}" --set stop=stdrel
    run_named stop-fixed-10s "${cell[@]}" --duration 10s
    run_named repeats-5 "${cell[@]}" --duration 3s --set repeats=5
    python3 - "$out" <<'PY' | tee "$out/stopping-figures.txt"
import json, sys
out = sys.argv[1]
def row(name):
    return json.load(open(f"{out}/{name}.summary.json"))["rows"][0]
def interval(r):
    low, high = r.get("mean_ci95_low_ms"), r.get("mean_ci95_high_ms")
    if low is None or high is None:
        return "no interval"
    half = (high - low) / 2
    return f"{r['mean_ms']:.5g} ms +- {half:.3g} ms ({100 * half / r['mean_ms']:.3f}%), 95%: {low:.5g} .. {high:.5g} ms"
print("ResNet-50 fp16, torch + CUDA graph, cuda:0, batch 32")
for name, what in (("stop-stdrel", "stdrel (max_noise 0.5%, min_time 0.5 s, stop_timeout 15 s)"),
                   ("stop-fixed-10s", "fixed 10 s")):
    r = row(name)
    print(f"{what}: {r['iterations']} iterations, {r['throughput_per_s']:.1f} inferences/s, mean {interval(r)}, "
          f"{r['convergence']}; {r.get('stop_reason') or ''}")
r = row("repeats-5")
cv = r.get("cv_of_means_pct")
print(f"5 repeats x 3 s: mean of the means {interval(r)} ({r.get('ci_method')}), CV of the means "
      f"{cv:.3f}% (goal <= 1%: {'met' if cv is not None and cv <= 1 else 'NOT met'}), "
      f"{r['iterations']} iterations in all")
PY
}

ensure_torch_backend
for part in "${parts[@]}"; do
    echo "== $part $(date -u +%T)"
    "part_${part//-/_}" || echo "part $part failed"
done
