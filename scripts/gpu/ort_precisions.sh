#!/usr/bin/env bash
# ONNX Runtime's CUDA execution provider at fp32 / fp16 / int8 beside the torch backend, on a GPU machine with
# the bundle built elsewhere (scripts/fetch-onnxruntime.sh --with-cuda && scripts/setup.sh && scripts/bundle.sh
# there: dist/), PyTorch's LibTorch there for the torch module (scripts/gpu/verify.sh OUT build first).
#   scripts/gpu/ort_precisions.sh OUT_DIR STAGE...
# Stages (each appends to OUT_DIR/results.db; a stage already done is skipped, so a second call resumes):
#   ort        plans/ort-precisions.yaml, CUDA graphs off (every batch size)
#   ort-graph  the same with enable_cuda_graph=true, batch 1 and 32
#   torch      plans/torch-precisions.yaml
#   report     summary (CSV, Markdown), explain (Markdown, JSON), placement and the profiler check per benchmark
# CUDA 13 and cuDNN 9 come from the machine or from the lib/ folders of pip's nvidia-* packages (PyTorch's).
set -uo pipefail   # a run with a failed cell exits non-zero: the next stage still runs
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dist=$root/dist
out=${1:?usage: ort_precisions.sh OUT_DIR STAGE...}
shift
mkdir -p "$out"
inferbench=$dist/inferbench
source "$root/scripts/gpu/bundle_env.sh"

run_plan() {  # NAME, then inferbench run arguments
    local name=$1
    shift
    if [[ -f $out/$name.done ]]; then echo "== $name: done before"; return 0; fi
    echo "== $name"
    "$inferbench" run --db "$out/results.db" --name "$name" "$@" 2>"$out/$name.progress.log" \
        | tee "$out/$name.summary.txt"
    touch "$out/$name.done"
}

stage_ort() { run_plan ort "$root/plans/ort-precisions.yaml"; }
stage_ort-graph() {
    run_plan ort-graph "$root/plans/ort-precisions.yaml" --batch 1,32 \
        --set backend_options.onnxruntime.enable_cuda_graph=true --set backend_options.onnxruntime.layer_profile=1
}
stage_torch() { run_plan torch "$root/plans/torch-precisions.yaml"; }

stage_report() {
    local run
    : >"$out/summary.csv"
    for run in $(python3 -c 'import sqlite3, sys; print(*[r[0] for r in sqlite3.connect(sys.argv[1]).execute("SELECT run_id FROM runs ORDER BY 1")])' "$out/results.db"); do
        "$inferbench" summary --db "$out/results.db" --run "$run" --format csv >>"$out/summary.csv"
    done
    "$inferbench" explain --db "$out/results.db" --run all --format md >"$out/explain.md" || true
    "$inferbench" explain --db "$out/results.db" --run all --format json >"$out/explain.json" || true
    python3 - "$out/results.db" <<'PY' | tee "$out/checks.txt"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
def metric(bid, name):
    row = db.execute("SELECT value FROM benchmark_metrics WHERE benchmark_id = ? AND name = ?", (bid, name)).fetchone()
    return row[0] if row else None
print("benchmark | model | precision | batch | status | providers | CPU nodes | profiler/events | int8 cosine")
for bid, model, backend, precision, batch, status, reason in db.execute(
        "SELECT benchmark_id, model, backend, precision, batch_size, status, reason FROM benchmarks ORDER BY 1"):
    providers = db.execute("SELECT provider, COUNT(*) FROM layer_times WHERE benchmark_id = ? GROUP BY provider",
                           (bid,)).fetchall()
    cpu = [n for (n,) in db.execute("SELECT node || ' (' || op_type || ')' FROM layer_times WHERE benchmark_id = ? "
                                    "AND provider = 'CPUExecutionProvider'", (bid,))]
    ratio = metric(bid, "profile_runtime_over_events")
    cosine = metric(bid, "int8_output_cosine")
    print(f"{bid} | {model} | {backend} {precision} | b{batch} | {status} {reason or ''} | "
          + ", ".join(f"{p}: {c}" for p, c in providers) + f" | {', '.join(cpu[:6])}"
          + f" | {'' if ratio is None else f'{(ratio - 1) * 100:+.2f}%'} | {'' if cosine is None else f'{cosine:.4f}'}")
PY
}

for stage in "$@"; do
    "stage_$stage"
done
