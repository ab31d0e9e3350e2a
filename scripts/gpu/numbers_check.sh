#!/usr/bin/env bash
# Issue 17's figures on a GPU machine, each part in one go, everything written under OUT_DIR:
#   here:  scripts/setup.sh && scripts/bundle.sh                (dist/: the CLI and its libraries)
#   there: scripts/gpu/verify.sh OUT_DIR build                  (the torch module against that LibTorch)
#          scripts/gpu/numbers_check.sh OUT_DIR [PART...]       (no PART: every part_* below)
# Each part is a function part_NAME that runs its plans into OUT_DIR/NAME.db and prints what it checked,
# ending with "NAME: OK" or "NAME: FAILED (...)". Run it with nothing else on the GPU: other work there, compiles
# included, shows as stretches of slow iterations and spoils the repeats' CV (bench/results/numbers_h200.md).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dist=$root/dist
out=${1:?usage: numbers_check.sh OUT_DIR [PART...]}
shift
mkdir -p "$out"
export LD_LIBRARY_PATH="$dist/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/inferbench-cache}
inferbench=$dist/inferbench

# Throttle awareness, cooldown, energy net of idle, L2 flush and sync (items 2 and 3), about 2 minutes:
# ResNet-50 fp16 batch 32 on the torch backend (CUDA graph) with l2_flush off/on x sync spin/blocking,
# 3 s each, then two cells with `cooldown: idle` between them. Prints one line per cell (latency,
# throughput, gross and net energy per inference, flagged share, SM clock, cooldown) and checks that
# the flags, energy and conditions columns and the harness metrics were stored.
part_throttle() {
    local db=$out/throttle.db
    rm -f "$db"
    local common=(--backend torch --model resnet50 --device cuda:0 --precision fp16 --batch 32 --warmup 1s
                  --duration 3s --set max_iterations=0 --set backend_options.torch.cuda_graph=true
                  --set idle_baseline=2s --db "$db")
    local flush sync
    for flush in false true; do
        for sync in spin blocking; do
            "$inferbench" run "${common[@]}" --name "l2_flush=$flush sync=$sync" --set l2_flush=$flush --set sync=$sync \
                >"$out/throttle-$flush-$sync.txt" 2>&1 || { tail -5 "$out/throttle-$flush-$sync.txt"; }
        done
    done
    "$inferbench" run "${common[@]}" --name "cooldown idle" --batch 32,128 --set cooldown=idle --set cooldown_max=45s \
        --set throttle_policy=discard >"$out/throttle-cooldown.txt" 2>&1 || tail -5 "$out/throttle-cooldown.txt"
    local run_id
    for run_id in $("$inferbench" summary --db "$db" --runs --format csv | tail -n +2 | cut -d, -f1); do
        "$inferbench" summary --db "$db" --run "$run_id" --format csv --columns all
    done >"$out/throttle-summary.csv"
    python3 - "$db" <<'PY'
import json, os, sqlite3, subprocess, sys
db = sys.argv[1]
con = sqlite3.connect(db)
problems = []
print(f"{'run':<28} {'cell':<10} {'status':<7} {'mean ms':>8} {'p99 ms':>8} {'inf/s':>8} {'J/inf':>7} "
      f"{'net':>7} {'flag%':>6} {'disc':>5} {'SM MHz':>7} {'CPU%':>5} {'cooldown':>14}")
for run_id, name, env_text in con.execute("SELECT run_id, name, environment_json FROM runs ORDER BY run_id"):
    env = json.loads(env_text)
    baseline = env.get("idle_baseline")
    if not baseline or not baseline.get("gpus"):
        problems.append(f"run {run_id}: no idle baseline stored ({baseline})")
    clocks = [d.get("default_applications_clock_mhz") for d in env.get("gpus", {}).get("devices", [])]
    if not clocks or clocks[0] is None:
        problems.append(f"run {run_id}: no default applications clock stored")
    summary = json.loads(subprocess.check_output([os.environ["INFERBENCH"], "summary", "--db", db,
                                                  "--run", str(run_id), "--json"]))
    for row in summary["rows"]:
        metrics = dict(con.execute("SELECT name, value FROM benchmark_metrics WHERE benchmark_id IN "
                                   "(SELECT benchmark_id FROM benchmarks WHERE run_id = ? AND batch_size = ?)",
                                   (run_id, row["batch_size"])).fetchall())
        def f(key, digits=2):
            value = row.get(key)
            return "-" if value is None else f"{value:.{digits}f}"
        cooldown = "-"
        if "harness_cooldown_s" in metrics:
            reached = metrics.get("harness_cooldown_reached_idle")
            cooldown = f"{metrics['harness_cooldown_s']:.0f}s {'idle' if reached == 1 else 'NOT idle'}"
        print(f"{name:<28} {'b' + str(row['batch_size']):<10} {row['status']:<7} {f('mean_ms'):>8} {f('p99_ms'):>8} "
              f"{f('throughput_per_s', 0):>8} {f('joules_per_inference', 4):>7} {f('joules_per_inference_net', 4):>7} "
              f"{f('throttle_flagged_pct', 1):>6} {row.get('throttle_discarded') or '-':>5} "
              f"{f('sm_clock_mean_mhz', 0):>7} {f('cpu_mean_pct', 0):>5} {cooldown:>14}")
        if row["status"] != "ok":
            problems.append(f"{name} b{row['batch_size']}: {row['status']}: {row.get('note')}")
            continue
        for key in ("joules_per_inference", "joules_per_inference_net", "throttle_flagged_pct", "idle_power_w",
                    "l2_flush", "sync"):
            if row.get(key) is None:
                problems.append(f"{name} b{row['batch_size']}: {key} missing")
        if "l2_flush=true" in name and not metrics.get("harness_l2_flush_bytes"):
            problems.append(f"{name}: no harness_l2_flush_bytes stored")
        if "sync=" in name and "harness_cuda_sched_flags" not in metrics:
            problems.append(f"{name}: no harness_cuda_sched_flags stored")
        # Blocking sync puts the waiting thread to sleep: the process's CPU (100 = one core) must fall well below
        # the spinning runs' (a wait that spins whatever the mode reads 100% here).
        if "sync=blocking" in name and (row.get("cpu_mean_pct") or 0) > 50:
            problems.append(f"{name}: the process used {row['cpu_mean_pct']:.0f}% of a core; blocking sync sleeps")
        if name == "cooldown idle" and row["batch_size"] == 128 and "harness_cooldown_s" not in metrics:
            problems.append("cooldown idle: the second cell has no cooldown stored")
        if row.get("note"):
            print(f"    note: {row['note']}")
print("throttle: OK" if not problems else "throttle: FAILED (" + "; ".join(problems) + ")")
PY
}

ensure_torch_backend() {
    ls "$dist/backends/"libinferbench_backend_torch*.so >/dev/null 2>&1 && return 0
    "$root/scripts/gpu/verify.sh" "$out/build" build
}

# One named run into DB; its summary as text and as JSON (summary --json of that run).
run_named() {  # DB, NAME, then inferbench run arguments
    local db=$1 name=$2
    shift 2
    "$inferbench" run --db "$db" --name "$name" "$@" 2>"$out/$name.progress.log" | tee "$out/$name.summary.txt"
    local run_id
    run_id=$("$inferbench" summary --db "$db" --runs --format csv | tail -n 1 | cut -d, -f1)
    "$inferbench" summary --db "$db" --run "$run_id" --json >"$out/$name.summary.json"
}

# Stopping criteria and repeats (items 1 and 4), about 2 minutes: ResNet-50 fp16 on the torch backend
# (CUDA graph), cuda:0, batch 32: a stdrel run beside a fixed 10 s run (iterations used, the mean and its
# 95% interval, whether it converged), then the same cell 5 times (repeats: 5, 3 s each) with the mean
# of the means, its Student-t interval and the CV of the means (goal: at most 1%).
part_stopping() {
    local db=$out/stopping.db
    rm -f "$db"
    local cell=(--backend torch --model resnet50 --device cuda:0 --precision fp16 --batch 32 --warmup 2s
        --set backend_options.torch.cuda_graph=true)
    run_named "$db" stop-stdrel "${cell[@]}" --set stop=stdrel
    run_named "$db" stop-fixed-10s "${cell[@]}" --duration 10s
    run_named "$db" repeats-5 "${cell[@]}" --duration 3s --set repeats=5
    # The same with cuDNN's heuristic choice of algorithms instead of timing them in each worker: where the
    # repeats' means sit at per-worker levels, this says whether the autotuned choice is what differs.
    run_named "$db" repeats-5-no-cudnn-benchmark "${cell[@]}" --duration 3s --set repeats=5 \
        --set backend_options.torch.cudnn_benchmark=false
    python3 - "$out" <<'PY' | tee "$out/stopping-figures.txt"
import json, sys
out = sys.argv[1]
def row(name):
    return json.load(open(f"{out}/{name}.summary.json"))["rows"][0]
def interval(r):
    low, high = r.get("mean_ci95_low_ms"), r.get("mean_ci95_high_ms")
    if low is None or high is None:
        return "no interval"
    mean = r["mean_ms"]
    # Each side apart: an interval cut at the fastest iteration is no longer symmetric.
    return (f"{mean:.5g} ms +{high - mean:.3g} / -{mean - low:.3g} ms (+{100 * (high - mean) / mean:.3f}% / "
            f"-{100 * (mean - low) / mean:.3f}%), 95%: {low:.5g} .. {high:.5g} ms")
print("ResNet-50 fp16, torch + CUDA graph, cuda:0, batch 32")
for name, what in (("stop-stdrel", "stdrel (max_noise 0.5%, min_time 0.5 s, stop_timeout 15 s)"),
                   ("stop-fixed-10s", "fixed 10 s")):
    r = row(name)
    print(f"{what}: {r['iterations']} iterations, {r['throughput_per_s']:.1f} inferences/s, mean {interval(r)}, "
          f"{r['convergence']}; {r.get('stop_reason') or ''}")
for name, what in (("repeats-5", ""), ("repeats-5-no-cudnn-benchmark", ", cudnn_benchmark false (not the goal's run)")):
    r = row(name)
    cv = r.get("cv_of_means_pct")
    goal = f" (goal <= 1%: {'met' if cv is not None and cv <= 1 else 'NOT met'})" if not what else ""
    print(f"5 repeats x 3 s{what}: mean of the means {interval(r)} ({r.get('ci_method')}), CV of the means "
          f"{'-' if cv is None else f'{cv:.3f}'}%{goal}, {r['iterations']} iterations in all")
PY
    grep -q "goal <= 1%: met" "$out/stopping-figures.txt" && echo "stopping: OK" || echo "stopping: FAILED (see stopping-figures.txt)"
}

# ResNet-50 fp16, LibTorch with CUDA graphs, on cuda:0, under each scenario; every cell is its own worker.
#   single_stream  batch 1: the p90 and its early-stopping estimate
#   multi_stream   8 samples per query as one inference of batch 8: the p99 of query latency and its estimate
#   offline        batch 32, every sample issued at once: samples per second
#   concurrency    4 queries of batch 8 in flight on 2 streams (two instances, each on its own CUDA stream)
#   server         find_peak: the highest Poisson rate whose p99 (from the scheduled arrival) stays within
#                  15 ms, MLPerf's ResNet-50 bound; one query per inference of batch 1, then through the
#                  dynamic batcher (up to 32 queries per inference, 2 ms longest wait), each step a 3 s run
part_scenarios() {
    local db=$out/scenarios.db
    rm -f "$db" "$db-wal" "$db-shm" "$out/scenarios.md"
    local common=(--db "$db" --model resnet50 --backend torch --device cuda:0 --precision fp16 --warmup 2s
                  --set backend_options.torch.cuda_graph=true)
    local columns=model,batch_size,scenario,result,iterations,p50_ms,p90_ms,p99_ms,early_stop_p90_ms
    columns+=,early_stop_p99_ms,queue_p99_ms,throughput_per_s,target_qps,peak_qps,mean_batch,completed_qps,note
    run() {  # NAME, then arguments; the run's summary (Markdown, JSON) is added to scenarios.md and NAME.json
        local name=$1
        shift
        echo "== scenarios: $name $(date -u +%T)"
        "$inferbench" run "${common[@]}" --name "$name" "$@" 2>"$out/$name.progress.log" | tee "$out/$name.txt"
        { echo "### $name"; "$inferbench" summary --db "$db" --format md --columns "$columns"; echo; } >>"$out/scenarios.md"
        "$inferbench" summary --db "$db" --format json >"$out/$name.json"
    }
    run single-stream --batch 1 --duration 10s --scenario single_stream
    run multi-stream --batch 8 --duration 10s --scenario multi_stream --set samples_per_query=8
    run offline --batch 32 --duration 10s --scenario offline --set max_iterations=0
    run concurrency-streams --batch 8 --duration 5s --scenario concurrency --set concurrency=4 --set streams=2
    run server-peak --batch 1 --duration 3s --scenario server --set find_peak=true --set latency_bound=15ms \
        --set min_iterations=2000 --set max_iterations=0 --timeout 10m
    run server-peak-batcher --batch 32 --duration 3s --scenario server --set find_peak=true \
        --set latency_bound=15ms --set batcher=true --set max_queue_delay=2ms --set min_iterations=2000 \
        --set max_iterations=0 --timeout 10m
    cat "$out/scenarios.md"
    # find_peak's steps: the rate tried, its p99 and whether LoadGen's test passed it.
    python3 - "$db" <<'PY' | tee "$out/scenarios-find-peak-steps.txt"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for (bid, name) in db.execute("SELECT b.benchmark_id, r.name FROM benchmarks b JOIN runs r USING (run_id) "
                              "WHERE r.name LIKE 'server-peak%' ORDER BY 1").fetchall():
    steps = {}
    for series, seq, value in db.execute("SELECT series, seq, value FROM benchmark_series WHERE benchmark_id = ? "
                                         "ORDER BY series, seq", (bid,)):
        steps.setdefault(seq, {})[series] = value
    print(f"{name} (benchmark {bid}):")
    for seq in sorted(steps):
        s = steps[seq]
        print(f"  step {seq + 1}: {s.get('find_peak_qps', 0):9.1f} qps  p99 {s.get('find_peak_p99_ms', 0):8.2f} ms  "
              f"{int(s.get('find_peak_queries', 0)):7d} queries  {'passed' if s.get('find_peak_passed') else 'failed'}")
PY
    local rows
    rows=$(grep -c "^|" "$out/scenarios.md" || true)
    [ "$rows" -gt 0 ] && ! grep -q "| failed |" "$out/scenarios.md" && echo "scenarios: OK" ||
        echo "scenarios: FAILED (see scenarios.md)"
}

export INFERBENCH=$inferbench
ensure_torch_backend
parts=("$@")
if [ ${#parts[@]} -eq 0 ]; then
    mapfile -t parts < <(declare -F | awk '{print $3}' | sed -n 's/^part_//p')
fi
for part in "${parts[@]}"; do
    echo "== $part $(date -u +%T)"
    "part_${part//-/_}" || echo "$part: FAILED (the part itself failed)"
done
