#!/usr/bin/env bash
# On a host of several GPUs, from the bundle of scripts/bundle.sh in dist/ (built with
# scripts/fetch-onnxruntime.sh --with-cuda): one small plan measured on each GPU alone (sequential, one GPU at a
# time), then on every GPU at once (parallel: per_device), and each GPU's throughput alone vs together printed,
# with the CPUs each worker was pinned to. Results (both stores, the summaries, the table) in $OUT.
#   scripts/gpu/per_device.sh [BACKEND] [MODEL] [PRECISION] [BATCH]     e.g. onnxruntime resnet50 fp16 8
set -uo pipefail
backend=${1:-onnxruntime}
model=${2:-resnet50}
precision=${3:-fp16}
batch=${4:-8}
out=${OUT:-/tmp/gpu-per-device}
dist=$PWD/dist
mkdir -p "$out"
source scripts/gpu/bundle_env.sh
ib=$dist/inferbench
$ib --version
gpus=$(nvidia-smi -L | grep -c '^GPU ')
if [ "$gpus" -lt 1 ]; then echo "per_device.sh: nvidia-smi lists no GPU" >&2; exit 1; fi
devices=$(seq -s, -f 'cuda:%g' 0 $((gpus - 1)))
echo "GPUs: $gpus ($devices); CPUs: $(nproc); NUMA nodes: $(ls -d /sys/devices/system/node/node* 2>/dev/null | wc -l)"
nvidia-smi topo -m 2>/dev/null | head -$((gpus + 2))
common=(--backend "$backend" --model "$model" --precision "$precision" --batch "$batch"
        --duration 20s --warmup 5s --set repeats=2 --set idle_baseline=0s --quiet)
rm -f "$out"/alone.db "$out"/together.db
# Alone: one GPU at a time, nothing else running.
for ((i = 0; i < gpus; i++)); do
  $ib run "${common[@]}" --device "cuda:$i" --name "alone cuda:$i" --db "$out/alone.db" || echo "alone cuda:$i: exit $?"
done
# Together: every GPU at once, each worker pinned to its GPU's nearest CPUs.
$ib run "${common[@]}" --device "$devices" --parallel per_device --name together --db "$out/together.db" ||
  echo "together: exit $?"
$ib summary --db "$out/alone.db" --format csv --columns device,throughput_per_s,p50_ms,power_mean_w > "$out/alone.csv"
$ib summary --db "$out/together.db" --format csv --columns device,throughput_per_s,p50_ms,power_mean_w,note > "$out/together.csv"
python3 - "$out" <<'PY' | tee "$out/per_device.txt"
import csv, sqlite3, sys
out = sys.argv[1]
def rows(name):
    with open(f"{out}/{name}.csv") as f:
        return {r["device"]: r for r in csv.DictReader(f)}
alone, together = rows("alone"), rows("together")
db = sqlite3.connect(f"{out}/together.db")
pinned = dict(db.execute("SELECT device, group_concat(DISTINCT cpu_affinity) FROM benchmarks GROUP BY device"))
print(f"{'device':8} {'alone inf/s':>12} {'together inf/s':>15} {'together/alone':>15}  pinned to")
for device in sorted(set(alone) | set(together), key=lambda d: (len(d), d)):
    a = float(alone[device]["throughput_per_s"]) if device in alone and alone[device]["throughput_per_s"] else None
    t = float(together[device]["throughput_per_s"]) if device in together and together[device]["throughput_per_s"] else None
    ratio = f"{t / a:.3f}" if a and t else "?"
    print(f"{device:8} {a if a is not None else '?':>12} {t if t is not None else '?':>15} {ratio:>15}  {pinned.get(device) or 'not pinned'}")
PY
(cd "$out" && tar czf per-device.tgz alone.db together.db alone.csv together.csv per_device.txt)
