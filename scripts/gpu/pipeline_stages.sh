#!/usr/bin/env bash
# The GPU pipeline stages on a GPU host, against the CPU and independent references, with their throughput.
#   scripts/gpu/pipeline_stages.sh [OUT_DIR]        (default: $OUT)
# Needs build/gpu-pack, built elsewhere by scripts/gpu/pack_pipeline_stages.sh and carried here (or a folder named
# by INFERBENCH_GPU_PACK): bench/pipeline_gpu_stages, the CUDA module beside it, lib/. nvJPEG comes from this
# machine: CUDA 13's libnvjpeg.so.13, else PyTorch's nvidia wheels or torchvision's bundled copy (searched; or set
# INFERBENCH_NVJPEG_LIBRARY). python3 with NumPy, torch and torchvision (Pillow if present) writes the test JPEG
# files and checks the results (scripts/gpu/pipeline_stages_reference.py says what and within which tolerances).
# Leaves in OUT_DIR (5 files):
#   log.txt           everything printed, each step's start and its "ok" or "FAILED (why)"
#   environment.txt   GPU, driver, CUDA, the nvJPEG used, python packages, the pack's commit
#   gpu_stages.json   what the GPU program measured: decode per file, resize GPU vs host arithmetic, NMS, SSD, times
#   reference.json    the comparisons with Pillow/torchvision and torchvision's timings
#   summary.md        the tables, and every failed check by name
#   gpu_stages.first-run.json  only where the GPU program crashed or hung: what it wrote before (it is then run
#                     once more on the good images alone)
# Exit status: 0 when every step ran and every check passed, else 1 (the failures listed at the end).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${1:-${OUT:-}}
if [[ -z $out ]]; then
  echo "usage: scripts/gpu/pipeline_stages.sh OUT_DIR (or set OUT)" >&2
  exit 2
fi
mkdir -p "$out" || { echo "pipeline_stages: cannot create $out" >&2; exit 2; }
pack=${INFERBENCH_GPU_PACK:-$root/build/gpu-pack}
work=$(mktemp -d /tmp/pipeline-stages.XXXXXX)
failures=()

# step NAME COMMAND...: runs it, says ok or FAILED with its exit status, and goes on.
step() {
  local name=$1
  shift
  echo "== $name"
  "$@"
  local rc=$?
  if [[ $rc -eq 0 ]]; then
    echo "== $name: ok"
  else
    echo "== $name: FAILED (exit $rc)"
    failures+=("$name (exit $rc)")
  fi
  return $rc
}

finish() {
  echo
  if [[ ${#failures[@]} -eq 0 ]]; then
    echo "pipeline_stages: every step ran and every check passed; results in $out"
    exit 0
  fi
  echo "pipeline_stages: ${#failures[@]} step(s) FAILED:"
  printf '  - %s\n' "${failures[@]}"
  [[ -f $out/summary.md ]] && grep -E '^- (FAILED|the GPU program)' "$out/summary.md" | sed 's/^/    /'
  exit 1
}

# The first nvJPEG found: the variable, the loader's cache, CUDA's folders, then python packages (nvidia wheels,
# torchvision's bundled copy).
find_nvjpeg() {
  if [[ -n ${INFERBENCH_NVJPEG_LIBRARY:-} ]]; then
    echo "$INFERBENCH_NVJPEG_LIBRARY"
    return 0
  fi
  local found
  found=$(ldconfig -p 2>/dev/null | awk '/libnvjpeg\.so\.1[23] /{print $NF; exit}')
  [[ -z $found ]] && found=$(ls /usr/local/cuda*/lib64/libnvjpeg.so.13* /usr/local/cuda*/targets/*/lib/libnvjpeg.so.13* \
                               /usr/local/cuda*/lib64/libnvjpeg.so.12* 2>/dev/null | head -n1)
  [[ -z $found ]] && found=$(python3 - <<'PY' 2>/dev/null
import glob, os, site, sys
roots = site.getsitepackages() + [site.getusersitepackages()] + [p for p in sys.path if p.endswith("site-packages")]
hits = sorted({h for r in roots for h in glob.glob(os.path.join(r, "**", "libnvjpeg*.so*"), recursive=True)})
hits.sort(key=lambda h: (".so.13" not in h, "nvidia" not in h))
print(hits[0] if hits else "")
PY
)
  [[ -n $found ]] || return 1
  echo "$found"
}

environment() {
  {
    echo "date: $(date -u +%FT%TZ)"
    echo "pack: $pack (commit $(cat "$pack/commit.txt" 2>/dev/null || echo unknown))"
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1 || echo "nvidia-smi failed"
    echo "nvcc: $(nvcc --version 2>/dev/null | tail -n1 || echo none)"
    python3 -c 'import sys, numpy, torch, torchvision; print("python", sys.version.split()[0], "numpy", numpy.__version__, "torch", torch.__version__, "torchvision", torchvision.__version__, "cuda", torch.version.cuda)' 2>&1
    python3 -c 'import PIL; print("Pillow", PIL.__version__)' 2>&1 || true
    echo "nvJPEG: ${INFERBENCH_NVJPEG_LIBRARY:-not found}"
    echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
    echo "CPU: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
  } | tee "$out/environment.txt"
}

check_pack() {
  local missing=0
  for f in pipeline_gpu_stages libinferbench_pipeline_cuda.so; do
    [[ -f $pack/$f ]] || { echo "pipeline_stages: $pack/$f missing: run scripts/gpu/pack_pipeline_stages.sh where inferbench is built and carry build/gpu-pack"; missing=1; }
  done
  [[ $missing -eq 0 ]] || return 1
  ldd "$pack/pipeline_gpu_stages" | grep 'not found' && { echo "pipeline_stages: libraries above are missing from $pack/lib"; return 1; }
  return 0
}

main() {
nvidia_dirs=$(python3 - <<'PY' 2>/dev/null || true
import glob, os, site
roots = site.getsitepackages() + [site.getusersitepackages()]
print(":".join(sorted({os.path.dirname(p) for r in roots for p in glob.glob(os.path.join(r, "nvidia", "**", "lib*.so*"), recursive=True)})))
PY
)
export LD_LIBRARY_PATH="$pack/lib${nvidia_dirs:+:$nvidia_dirs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if nvjpeg=$(find_nvjpeg); then
  export INFERBENCH_NVJPEG_LIBRARY=$nvjpeg
  export LD_LIBRARY_PATH="$(dirname "$nvjpeg"):$LD_LIBRARY_PATH"
else
  echo "pipeline_stages: no libnvjpeg found (ldconfig, /usr/local/cuda*/lib64, python packages); the GPU decode will say why it cannot run"
fi

step environment environment
step "the pack" check_pack || finish
step "test images" python3 "$root/scripts/gpu/pipeline_stages_reference.py" images "$work/images" || finish
ls -l "$work/images" | tail -n +2 | awk '{print "  " $5, $9}'
# At most 5 minutes (it needs well under one): a hang is reported as one (exit 124), not a silent end.
step "GPU stages (bench/pipeline_gpu_stages)" timeout 300 "$pack/pipeline_gpu_stages" --images "$work/images" \
  --work "$work/run" --repeats 20
rc=$?
[[ $rc -eq 124 ]] && echo "pipeline_stages: the GPU program did not finish in 300 s (a hang): its parts done so far are kept"
if [[ $rc -ge 124 ]]; then
  # A crash or a hang: once more without the bad files (zz_*), so that the rest is still measured; what the first
  # run wrote before it died is kept as gpu_stages.first-run.json.
  echo "pipeline_stages: once more with the good images only"
  [[ -f $work/run/gpu_stages.json ]] && cp "$work/run/gpu_stages.json" "$out/gpu_stages.first-run.json"
  mkdir -p "$work/good"
  cp "$work/images"/img_*.jpg "$work/good/"
  mv "$work/run" "$work/run-crashed"
  step "GPU stages on the good images only" timeout 240 "$pack/pipeline_gpu_stages" --images "$work/good" \
    --work "$work/run" --repeats 10
fi
if [[ -f $work/run/gpu_stages.json ]]; then
  cp "$work/run/gpu_stages.json" "$out/"
  step "comparison with Pillow and torchvision" python3 "$root/scripts/gpu/pipeline_stages_reference.py" compare \
    "$work/images" "$work/run" "$out/reference.json" "$out/summary.md"
else
  echo "pipeline_stages: the GPU program wrote no gpu_stages.json (see its reason above): nothing to compare"
  failures+=("no GPU results to compare")
fi
rm -rf "$work"
finish
}

# Everything printed also goes to log.txt; the status is main's.
main 2>&1 | tee "$out/log.txt"
exit "${PIPESTATUS[0]}"
