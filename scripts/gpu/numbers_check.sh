#!/usr/bin/env bash
# Figures that hold, measured on the GPU host (issue 17), one check per function; each writes into OUT_DIR
# (results.db, the summaries as text and Markdown, logs). As scripts/gpu/verify.sh:
#   1. here:  scripts/setup.sh && scripts/bundle.sh            (dist/: the CLI and its libraries)
#   2. there: scripts/gpu/numbers_check.sh OUT_DIR CHECK...
# Checks: scenarios (ResNet-50 fp16 on the torch backend under LoadGen's four scenarios; the server's
# find_peak at p99 <= 15 ms, with and without the dynamic batcher, beside the offline throughput; ~3 min).
# The torch module is built there first (verify.sh's build stage) where dist/ lacks it.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dist=$root/dist
out=${1:?usage: numbers_check.sh OUT_DIR CHECK...}
shift
mkdir -p "$out"
export LD_LIBRARY_PATH="$dist/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/inferbench-cache}
inferbench=$dist/inferbench

ensure_torch_module() {
    [ -f "$dist/backends/libinferbench_backend_torch.so" ] || "$root/scripts/gpu/verify.sh" "$out" build
}

# ResNet-50 fp16, LibTorch with CUDA graphs, on cuda:0, under each scenario; every cell is its own worker.
#   single_stream  batch 1: the p90 and its early-stopping estimate
#   multi_stream   8 samples per query as one inference of batch 8: the p99 of query latency and its estimate
#   offline        batch 32, every sample issued at once: samples per second
#   concurrency    4 queries of batch 8 in flight on 2 streams (two instances, each on its own CUDA stream)
#   server         find_peak: the highest Poisson rate whose p99 (from the scheduled arrival) stays within
#                  15 ms, MLPerf's ResNet-50 bound; one query per inference of batch 1, then through the
#                  dynamic batcher (up to 32 queries per inference, 2 ms longest wait), each step a 3 s run
check_scenarios() {
    ensure_torch_module
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
                              "WHERE r.name LIKE 'server-peak%' ORDER BY 1"):
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
}

for check in "$@"; do
    echo "== $check $(date -u +%T)"
    "check_${check//-/_}" || echo "check $check failed"
done
