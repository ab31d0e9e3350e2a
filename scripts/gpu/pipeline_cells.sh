#!/usr/bin/env bash
# The image pipeline cells on a GPU host, from the bundle (scripts/bundle.sh's dist/, built where nvcc is found so
# that it holds libinferbench_pipeline_cuda.so, carried here): ResNet-50 and YOLOv3 on ONNX Runtime's CUDA provider
# (cuda:0) at batch 1 and 32, pre-processing on the CPU and on the GPU, sequential and overlapped, over synthetic
# JPEG images (640x480), post-processing on the CPU (the GPU post-processes SSD boxes only), and the same models'
# network-only cells to compare against.
#   scripts/gpu/pipeline_cells.sh [OUT_DIR]            (default: $OUT)
# Settings from the environment: INFERBENCH_DIST (default dist/ of this checkout), PIPELINE_THREADS (the CPU stages'
# threads, default 8), PIPELINE_CELLS_BUDGET_S (the whole script's time, default 470 s).
# ONNX Runtime's CUDA provider: dist/lib's (scripts/fetch-onnxruntime.sh --with-cuda before bundling), else this
# machine's pip onnxruntime-gpu package (its capi/ folder, given as INFERBENCH_ONNXRUNTIME_ROOT) where it has
# libonnxruntime_providers_cuda.so, else the cuda cells are skipped with the reason. CUDA 13, cuDNN 9 and nvJPEG come
# from the machine or pip's nvidia-* wheels (scripts/gpu/bundle_env.sh puts their folders on LD_LIBRARY_PATH;
# nvJPEG also from torchvision's bundled copy, or INFERBENCH_NVJPEG_LIBRARY).
# Leaves in OUT_DIR: pipeline_cells.tar.gz (log.txt, environment.txt, plans.txt, results.db, summary.txt,
# compare.txt, table.md) and, to read at once, table.md and log.txt. Each step says ok or FAILED (why) and the
# rest goes on; the exit status is 0 only when every step ran.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${1:-${OUT:-}}
if [[ -z $out ]]; then
  echo "usage: scripts/gpu/pipeline_cells.sh OUT_DIR (or set OUT)" >&2
  exit 2
fi
mkdir -p "$out" || { echo "pipeline_cells: cannot create $out" >&2; exit 2; }
dist=${INFERBENCH_DIST:-$root/dist}
threads=${PIPELINE_THREADS:-8}
budget=${PIPELINE_CELLS_BUDGET_S:-470}
work=$(mktemp -d /tmp/pipeline-cells.XXXXXX)
results=$work/results
mkdir -p "$results"
inferbench=$dist/inferbench
failures=()
exec > >(tee "$results/log.txt") 2>&1

# Seconds left of the budget, less what the reports after the runs need.
left() { echo $((budget - SECONDS)); }

# step NAME COMMAND...: runs it, says ok or FAILED with its exit status, and goes on.
step() {
  local name=$1
  shift
  echo "== $name ($(date -u +%T), ${SECONDS}s in)"
  "$@"
  local rc=$?
  if [[ $rc -eq 0 ]]; then
    echo "== $name: ok"
  else
    [[ $rc -eq 124 || $rc -eq 137 ]] && echo "== $name: stopped at its time limit; the cells it finished are stored"
    echo "== $name: FAILED (exit $rc)"
    failures+=("$name (exit $rc)")
  fi
  return 0
}

pack_and_finish() {
  cp "$results/table.md" "$out/table.md" 2>/dev/null
  echo
  if [[ ${#failures[@]} -eq 0 ]]; then
    echo "pipeline_cells: every step ran; results in $out/pipeline_cells.tar.gz"
  else
    echo "pipeline_cells: ${#failures[@]} step(s) FAILED:"
    printf '  - %s\n' "${failures[@]}"
  fi
  cp "$results/log.txt" "$out/log.txt" 2>/dev/null
  tar -czf "$out/pipeline_cells.tar.gz" -C "$results" . || echo "pipeline_cells: tar failed" >&2
  rm -rf "$work"  # the models and images written for the run
  [[ ${#failures[@]} -eq 0 ]]
  exit $?
}

check_bundle() {
  [[ -x $inferbench ]] || { echo "pipeline_cells: $inferbench missing: run scripts/bundle.sh where inferbench is built and carry dist/ here (or set INFERBENCH_DIST)"; return 1; }
  [[ -f $dist/libinferbench_pipeline_cuda.so ]] \
    || echo "pipeline_cells: no $dist/libinferbench_pipeline_cuda.so (the bundle was built without nvcc): the preprocess gpu cells will be skipped with that reason"
  return 0
}

# ONNX Runtime with the CUDA provider: the bundle's, else pip's onnxruntime-gpu capi/ folder.
choose_onnxruntime() {
  if [[ -f $dist/lib/libonnxruntime_providers_cuda.so ]]; then
    echo "ONNX Runtime: the bundle's ($dist/lib, with its CUDA provider)"
    return 0
  fi
  local capi
  capi=$(python3 -c 'import os, onnxruntime; print(os.path.join(os.path.dirname(onnxruntime.__file__), "capi"))' 2>/dev/null)
  if [[ -n $capi && -f $capi/libonnxruntime_providers_cuda.so ]] && ls "$capi"/libonnxruntime.so* >/dev/null 2>&1; then
    export INFERBENCH_ONNXRUNTIME_ROOT=$capi
    echo "ONNX Runtime: pip's $(python3 -c 'import onnxruntime; print(onnxruntime.__version__)' 2>/dev/null) at $capi (INFERBENCH_ONNXRUNTIME_ROOT)"
    return 0
  fi
  if [[ -n $capi && -f $capi/libonnxruntime_providers_cuda.so ]]; then
    echo "ONNX Runtime: pip's $capi has the CUDA provider but no libonnxruntime.so.1.x (the runtime's core): the cuda cells will be skipped with the reason; bundle with scripts/fetch-onnxruntime.sh --with-cuda"
  else
    echo "ONNX Runtime: no CUDA provider in $dist/lib nor in a pip onnxruntime-gpu package (${capi:-none installed}): the cuda cells will be skipped with the reason"
  fi
  return 1
}

# nvJPEG: the variable, else the loader's cache and pip's nvidia wheels (on LD_LIBRARY_PATH by bundle_env.sh, found
# by the module itself), else torchvision's bundled copy, named for the module.
choose_nvjpeg() {
  if [[ -n ${INFERBENCH_NVJPEG_LIBRARY:-} ]]; then
    echo "nvJPEG: $INFERBENCH_NVJPEG_LIBRARY (INFERBENCH_NVJPEG_LIBRARY)"
    return 0
  fi
  local found
  found=$(ldconfig -p 2>/dev/null | awk '/libnvjpeg\.so\.1[23] /{print $NF; exit}')
  [[ -z $found ]] && found=$(for d in ${LD_LIBRARY_PATH//:/ }; do ls "$d"/libnvjpeg.so.1[23]* 2>/dev/null; done | head -n1)
  [[ -z $found ]] && found=$(ls /usr/local/cuda*/lib64/libnvjpeg.so.1[23]* /usr/local/cuda*/targets/*/lib/libnvjpeg.so.1[23]* 2>/dev/null | head -n1)
  [[ -z $found ]] && found=$(python3 - <<'PY' 2>/dev/null
import glob, os, site, sys
roots = site.getsitepackages() + [site.getusersitepackages()] + [p for p in sys.path if p.endswith("site-packages")]
hits = sorted({h for r in roots for h in glob.glob(os.path.join(r, "**", "libnvjpeg*.so*"), recursive=True)})
print(hits[0] if hits else "")
PY
)
  if [[ -z $found ]]; then
    echo "nvJPEG: not found (no CUDA toolkit, nvidia wheel or torchvision copy): the preprocess gpu cells will be skipped with the reason"
    return 1
  fi
  export INFERBENCH_NVJPEG_LIBRARY=$found
  echo "nvJPEG: $found"
}

environment() {
  {
    echo "date: $(date -u +%FT%TZ)"
    echo "bundle: $dist ($("$inferbench" --version 2>&1 | head -n1))"
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1 || echo "nvidia-smi failed"
    echo "CPU: $(nproc) cores,$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
    echo "CPU stages' threads: $threads"
    choose_onnxruntime
    choose_nvjpeg
    echo "GPU stages module: $(ls "$dist"/libinferbench_pipeline_cuda.so 2>/dev/null || echo missing)"
    echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
    echo "INFERBENCH_ONNXRUNTIME_ROOT=${INFERBENCH_ONNXRUNTIME_ROOT:-}"
    echo "== list backends"
    "$inferbench" list backends --format md 2>&1
  } > "$results/environment.txt"
  cat "$results/environment.txt"
}

write_plans() {
  local common="backends: [onnxruntime]
devices: [cuda:0]
precisions: [fp32]
batch_sizes: [1, 32]
warmup: 1s
warmup_iterations: 2
duration: 3s
min_iterations: 5
timeout: 2m
telemetry_enabled: false
model_cache: $work/models"
  printf 'name: network-only\nmodels: [resnet50, yolov3]\n%s\n' "$common" > "$work/network.yaml"
  for model in resnet50 yolov3; do
    printf 'name: pipeline-%s\nmodels: [%s]\n%s\npipeline:\n  images: synthetic\n  image_count: 64\n  image_size: 640x480\n  image_format: jpeg\n  jpeg_quality: 90\n  preprocess: [cpu, gpu]\n  postprocess: cpu\n  threads: %s\n  mode: [sequential, overlapped]\n  queue_depth: 2\n' \
      "$model" "$model" "$common" "$threads" > "$work/pipeline-$model.yaml"
  done
  for plan in "$work"/network.yaml "$work"/pipeline-*.yaml; do
    echo "# $(basename "$plan")"
    cat "$plan"
    echo
  done > "$results/plans.txt"
  "$inferbench" run "$work/pipeline-resnet50.yaml" --dry-run 2>&1
}

# run_plan PLAN CAP_S: the plan into results.db, at most CAP_S seconds and never past the budget's reserve.
run_plan() {
  local plan=$1 cap=$2 limit
  limit=$(( $(left) - 45 ))
  (( limit > cap )) && limit=$cap
  if (( limit < 20 )); then
    echo "pipeline_cells: no time left for $(basename "$plan") (${SECONDS}s of ${budget}s used)"
    return 124
  fi
  echo "(at most ${limit}s)"
  timeout --kill-after=15 "$limit" "$inferbench" run "$plan" --db "$results/results.db" --quiet
}

reports() {
  "$inferbench" summary --db "$results/results.db" --run all > "$results/summary.txt" 2>&1
  local rc=$?
  "$inferbench" summary --db "$results/results.db" --run all --format md >> "$results/summary.txt" 2>&1
  cat "$results/summary.txt"
  return $rc
}

compare() {
  # The pipeline cells against the network-only cells (where this inferbench's compare pairs them), then the
  # runs side by side.
  {
    echo "== inferbench compare --db results.db --run all"
    timeout 60 "$inferbench" compare --db "$results/results.db" --run all 2>&1
  } > "$results/compare.txt"
  local rc=$?
  cat "$results/compare.txt"
  return $rc
}

table() {
  python3 - "$results/results.db" > "$results/table.md" <<'PY'
# The H200 table from the store: per cell images/s over its measured window, mean end-to-end time per batch, each
# stage's mean time per batch (its place), the GPU's idle share (1 - union of the infer spans / window) and the
# pipeline's throughput against the network-only cell of the same model and batch.
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
STAGES = ["read", "decode", "resize", "normalize", "infer", "postprocess", "nms"]
rows = db.execute("""SELECT benchmark_id, model, device, batch_size, status, COALESCE(reason, ''), settings_json
                     FROM benchmarks ORDER BY benchmark_id""").fetchall()

def measured(bid, batch):
    its = db.execute("SELECT start_ns, e2e_ns FROM iterations WHERE benchmark_id = ? ORDER BY iteration", (bid,)).fetchall()
    if not its:
        return None
    window = max(s + e for s, e in its) - its[0][0]
    return {"n": len(its), "images_s": batch * len(its) / (window / 1e9) if window > 0 else None,
            "e2e_ms": sum(e for _, e in its) / len(its) / 1e6, "window": window, "start": its[0][0]}

def fmt(v, digits=1):
    return "n/a" if v is None else f"{v:.{digits}f}"

network = {}
cells = []
for bid, model, device, batch, status, reason, settings in rows:
    pipe = json.loads(settings).get("pipeline") or {}
    m = measured(bid, batch) if status == "ok" else None
    if not pipe:
        network[(model, device, batch)] = m
        cells.append((bid, model, device, batch, "network only", "-", status, reason, m, {}, None))
        continue
    stages, places, spans = {}, {}, []
    for stage, place, start, end, it in db.execute(
            "SELECT stage, place, start_ns, end_ns, iteration FROM pipeline_stages WHERE benchmark_id = ?", (bid,)):
        stages.setdefault(stage, []).append(end - start)
        places[stage] = place
        if stage == "infer":
            spans.append((start, end))
    idle = None
    if m and spans and m["window"] > 0 and device.startswith("cuda"):
        spans.sort()
        busy, cur_s, cur_e = 0, None, None
        for s, e in spans:
            if cur_e is None or s > cur_e:
                if cur_e is not None:
                    busy += cur_e - cur_s
                cur_s, cur_e = s, e
            else:
                cur_e = max(cur_e, e)
        busy += cur_e - cur_s
        idle = 1 - busy / m["window"]
    per_stage = {s: (sum(v) / len(v) / 1e6, places[s]) for s, v in stages.items()}
    cells.append((bid, model, device, batch, f"pre {pipe.get('preprocess', '?')}/post {pipe.get('postprocess', '?')}",
                  pipe.get("mode", "?"), status, reason, m, per_stage, idle))

print("# Pipeline cells: ONNX Runtime CUDA, synthetic 640x480 JPEG images\n")
print("images/s: batch x batches / measured window; e2e: mean per batch; stages: mean ms per batch (place); "
      "GPU idle: 1 - union of the infer spans / window; vs network: pipeline images/s / the network-only cell's.\n")
head = ["model", "batch", "stages", "mode", "status", "images/s", "e2e ms", "vs network"] + STAGES + ["GPU idle"]
print("| " + " | ".join(head) + " |")
print("|" + "---|" * len(head))
for bid, model, device, batch, where, mode, status, reason, m, per_stage, idle in cells:
    if status != "ok" or m is None:
        print(f"| {model} | {batch} | {where} | {mode} | {status}: {reason} |" + " |" * (len(head) - 5))
        continue
    net = network.get((model, device, batch))
    ratio = (m["images_s"] / net["images_s"]) if (where != "network only" and net and net["images_s"] and m["images_s"]) else None
    stage_cells = [f"{per_stage[s][0]:.2f} ({per_stage[s][1]})" if s in per_stage else "-" for s in STAGES]
    print(f"| {model} | {batch} | {where} | {mode} | ok ({m['n']} batches) | {fmt(m['images_s'])} | {fmt(m['e2e_ms'], 2)} | "
          f"{'-' if ratio is None else f'{ratio:.2f}'} | " + " | ".join(stage_cells) + f" | {'-' if idle is None else f'{idle:.0%}'} |")
PY
  local rc=$?
  cat "$results/table.md"
  return $rc
}

step "bundle" check_bundle || true
[[ -x $inferbench ]] || pack_and_finish
source "$root/scripts/gpu/bundle_env.sh"
step "environment" environment
step "plans (and the dry run of one)" write_plans
step "network-only cells" run_plan "$work/network.yaml" 110
step "resnet50 pipeline cells" run_plan "$work/pipeline-resnet50.yaml" 150
step "yolov3 pipeline cells" run_plan "$work/pipeline-yolov3.yaml" 180
step "summary" reports
step "compare" compare
step "table" table
pack_and_finish
