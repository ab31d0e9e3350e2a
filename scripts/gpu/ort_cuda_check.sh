#!/usr/bin/env bash
# Checks ONNX Runtime's CUDA (and TensorRT) execution providers on a GPU machine with the bundle built
# elsewhere (scripts/fetch-onnxruntime.sh --with-cuda && scripts/setup.sh && scripts/bundle.sh there: dist/
# holds the CLI, the onnxruntime module, libonnxruntime.so.1 and the provider libraries under dist/lib/).
#   scripts/gpu/ort_cuda_check.sh OUT_DIR
# CUDA 13 and cuDNN 9 come from the machine, or from the folders of pip's nvidia-* packages (PyTorch's),
# which this script adds to LD_LIBRARY_PATH. It prints, and leaves in OUT_DIR:
#   backends.txt       `list backends`: the onnxruntime runtime used, and per device usable or why not
#   providers.txt      the providers that ONNX Runtime offers on this machine (fetch-onnxruntime's check)
#   ort-cuda.*         plans/ort-cuda.yaml: ResNet-50, MobileNet, BERT on cuda:0, CUDA graphs off/on, host
#                      copies timed/left out; summary with H2D / compute / D2H
#   tensorrt.*         the same model on the TensorRT provider, or the reason its cells were skipped
#   placement.txt      per benchmark: nodes per execution provider, and the nodes that fell back to the CPU
#   agreement.txt      `models check`: the CUDA provider's outputs against the CPU provider's
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dist=$root/dist
out=${1:?usage: ort_cuda_check.sh OUT_DIR}
mkdir -p "$out"
inferbench=$dist/inferbench
[[ -x $inferbench ]] || { echo "ort_cuda_check: $inferbench missing; copy the bundle (scripts/bundle.sh) here" >&2; exit 1; }
[[ -f $dist/lib/libonnxruntime_providers_cuda.so ]] \
  || echo "ort_cuda_check: warning: no dist/lib/libonnxruntime_providers_cuda.so: cuda cells will be skipped (fetch with --with-cuda before bundling)"

source "$root/scripts/gpu/bundle_env.sh"
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH" | tee "$out/environment.txt"
nvidia-smi -L | tee -a "$out/environment.txt" || true

echo "== list backends"
"$inferbench" list backends --format md | tee "$out/backends.txt"

run_plan() {  # NAME, then inferbench run arguments
    local name=$1
    shift
    echo "== $name"
    "$inferbench" run --db "$out/results.db" --name "$name" "$@" 2>"$out/$name.progress.log" | tee "$out/$name.summary.txt"
}

run_plan ort-cuda "$root/plans/ort-cuda.yaml"
run_plan tensorrt --backend onnxruntime --model resnet50 --device cuda:0 --batch 1,32 --duration 3s \
    --set backend_options.onnxruntime.execution_provider=tensorrt
run_plan cpu --backend onnxruntime --model resnet50 --device cpu --batch 1,32 --duration 3s
run_plan detector --backend onnxruntime --model yolov5s --device cuda:0 --batch 1 --duration 3s

echo "== placement"
python3 - "$out/results.db" <<'PY' | tee "$out/placement.txt"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("""SELECT b.benchmark_id, b.model, b.device, b.batch_size, b.status, b.reason, b.settings_json
                     FROM benchmarks b ORDER BY b.benchmark_id""").fetchall()
for bid, model, device, batch, status, reason, settings in rows:
    providers = db.execute("""SELECT provider, COUNT(*) FROM layer_times WHERE benchmark_id = ?
                              GROUP BY provider ORDER BY 2 DESC""", (bid,)).fetchall()
    cpu = [n for (n,) in db.execute("""SELECT node || ' (' || op_type || ')' FROM layer_times
                                       WHERE benchmark_id = ? AND provider = 'CPUExecutionProvider'""", (bid,))]
    print(f"{bid} {model} {device} b{batch} {status}: " + (reason or ", ".join(f"{p}: {c}" for p, c in providers)))
    if cpu and device.startswith("cuda"):
        print("   on the CPU: " + ", ".join(cpu))
PY

echo "== output agreement (CUDA provider against the CPU provider)"
"$inferbench" models check resnet50 --backend onnxruntime --device cuda:0 --reference onnxruntime --reference-device cpu \
    --batch 2 2>&1 | tee "$out/agreement.txt" || echo "models check failed"
"$inferbench" summary --db "$out/results.db" --format csv >"$out/summary.csv" 2>/dev/null || true
