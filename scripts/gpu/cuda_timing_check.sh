#!/usr/bin/env bash
# On a GPU machine with PyTorch (its LibTorch with CUDA), the bundle of scripts/bundle.sh in dist/: the CUDA paths of
# the torch and torch-aoti backends (H2D / compute or graph replay / D2H timed by backends/cuda_timing over the
# linked runtime's table), with and without CUDA graphs and device-resident inputs. Results land in $OUT.
#   scripts/gpu/cuda_timing_check.sh
set -uo pipefail
out=${OUT:-/tmp/gpu-check}
mkdir -p "$out"
scripts/gpu/verify.sh "$out/v" build > "$out/build.txt" 2>&1; echo "build exit $?"; tail -3 "$out/build.txt"
export LD_LIBRARY_PATH=$PWD/dist/lib
export XDG_CACHE_HOME=/tmp/ib-cache
ib=dist/inferbench
$ib --version
$ib list backends 2>&1 | grep -A3 "^torch " | head -8
$ib run --db "$out/r.db" --model resnet50 --backend torch --device cuda:0 --precision fp32,fp16 --batch 1,32 \
  --duration 2s --warmup 500ms --set backend_options.torch.cuda_graph=false,true \
  --set backend_options.torch.device_resident=false,true 2>&1 | tail -45
$ib summary --db "$out/r.db" --format csv --columns all > "$out/summary.csv"
$ib run --db "$out/r.db" --model resnet50 --backend torch-aoti --device cuda:0 --precision fp16 --batch 32 \
  --duration 2s 2>&1 | tail -12
$ib summary --db "$out/r.db" --format csv --columns all > "$out/summary-all.csv"
tar czf "$out/gpu-check.tgz" -C "$out" r.db summary.csv summary-all.csv build.txt 2>/dev/null
