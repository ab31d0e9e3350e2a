#!/usr/bin/env bash
# Runs on a GPU machine that has PyTorch (with its LibTorch and CUDA) but none of the CLI's build
# dependencies: builds the GPU backend modules there against that LibTorch, then measures.
#   1. here:  scripts/setup.sh && scripts/bundle.sh            (dist/: the CLI and its libraries)
#   2. there: scripts/gpu/verify.sh OUT_DIR STAGE...
# Stages: build (the torch and torch-aoti modules), reference (plain PyTorch figures), resnet50, sweep, bert, compute-check,
# overhead, device-times, telemetry, probe (measured ceilings beside PyTorch's), roofline, layers (per-layer
# times on the roofline), torch-vs-pytorch (every corpus model: the torch backend beside PyTorch's CUDA graph).
# Every result lands in OUT_DIR (results.db, logs, JSON).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dist=$root/dist
out=${1:?usage: verify.sh OUT_DIR STAGE...}
shift
mkdir -p "$out"
export LD_LIBRARY_PATH="$dist/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/inferbench-cache}
inferbench=$dist/inferbench

stage_build() {
    local torch_prefix
    torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
    cmake -S "$root" -B "$root/build/gpu" -G Ninja -DCMAKE_BUILD_TYPE=Release -DINFERBENCH_MODULES_ONLY=ON \
        -DINFERBENCH_WITH_ONNXRUNTIME=OFF -DINFERBENCH_FMT_INCLUDE_DIR="$dist/include" \
        -DINFERBENCH_JSON_INCLUDE_DIR="$dist/include" \
        -DCMAKE_PREFIX_PATH="$torch_prefix" >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; return 1; }
    # -k 0: a target that fails (say aoti_reference) leaves the others built; the modules decide the exit below.
    cmake --build "$root/build/gpu" -j "$(nproc)" -- -k 0 >"$out/build.log" 2>&1 || grep -m 20 error "$out/build.log"
    [ -f "$root/build/gpu/backends/libinferbench_backend_torch.so" ] ||
        { echo "verify: the torch module was not built; see $out/build.log" >&2; return 1; }
    # The LibTorch modules (torch, torch-aoti: the latter where this LibTorch has the AOTInductor loader).
    for module in torch torch-aoti; do
        if [ -f "$root/build/gpu/backends/libinferbench_backend_$module.so" ]; then
            cp "$root/build/gpu/backends/libinferbench_backend_$module.so" "$dist/backends/"
        fi
    done
    # torch-aoti's plain reference (scripts/gpu/torch_paths.py), built with it.
    if [ -f "$root/build/gpu/src/backends/torch_aoti/aoti_reference" ]; then
        cp "$root/build/gpu/src/backends/torch_aoti/aoti_reference" "$dist/"
    fi
    nvidia-smi -q >"$out/nvidia-smi-q.txt"
    "$inferbench" list backends | tee "$out/backends.txt"
}

stage_reference() {
    python3 "$root/scripts/gpu/reference.py" --script "$out/resnet50.pt" --batch 32 | tee "$out/reference.json"
}

run_plan() {  # NAME, then inferbench run arguments
    local name=$1
    shift
    "$inferbench" run --db "$out/results.db" --name "$name" "$@" 2>"$out/$name.progress.log" | tee "$out/$name.summary.txt"
}

stage_resnet50() {
    run_plan resnet50 "$root/plans/gpu-verify.yaml" --model resnet50
}

stage_sweep() {
    run_plan sweep "$root/plans/gpu-sweep.yaml"
}

stage_bert() {
    run_plan bert "$root/plans/gpu-verify.yaml" --model bert --batch 1,8,32
}

# The TorchScript module reference.py timed with CUDA events, measured by inferbench.
stage_compute_check() {
    cat >"$out/compute-check.yaml" <<PLAN
name: compute-check
models: [$out/resnet50.pt]
backends: [torch]
devices: [cuda:0]
precisions: [fp16]
batch_sizes: [32]
warmup: 1s
duration: 5s
backend_options:
  torch: {input_shape: 3x224x224, device_resident: [false, true]}
PLAN
    run_plan compute-check "$out/compute-check.yaml"
}

stage_overhead() {
    run_plan overhead --backend null --model null --device cuda:0 --batch 1 --duration 2s
    run_plan overhead-graph --backend torch --model resnet50 --device cuda:0 --precision fp16 --batch 1 \
        --duration 3s --set backend_options.torch.cuda_graph=true
}

# Telemetry on the real GPU: ResNet-50 fp16 batch 128 for 60 s sampled at 10 Hz and at 100 Hz (NVML),
# the summary with power, energy per inference, clocks and throttling, what NVML could not read, and
# the sampler's own CPU cost against this machine's NVML.
stage_telemetry() {
    local rate duration
    for rate in 10 100; do
        duration=$([ "$rate" = 10 ] && echo 60s || echo 30s)
        run_plan "telemetry-${rate}hz" --backend torch --model resnet50 --device cuda:0 --precision fp16 --batch 128 \
            --duration "$duration" --warmup 5s --set telemetry_rate_hz=$rate --set max_iterations=0
        "$inferbench" summary --db "$out/results.db" | tee "$out/telemetry-${rate}hz.summary.txt"
    done
    python3 -c 'import sqlite3, sys
for row in sqlite3.connect(sys.argv[1]).execute("SELECT benchmark_id, source, status, detail FROM telemetry_sources ORDER BY 1, 2"):
    print(*row, sep=" | ")' "$out/results.db" | tee "$out/telemetry-sources.txt"
     "$dist/telemetry_cost" 20 | tee "$out/telemetry-cost.txt"
}

# Measured ceilings (inferbench probe: CUDA-core FMA, DRAM/L2 bandwidth, cuBLASLt GEMMs) beside plain
# PyTorch's on the same GPU with the same sizes; the issue's bar: bf16, int8, fp8 GEMM and copy >= 95%.
stage_probe() {
    local cublaslt
    cublaslt=$(python3 "$root/scripts/gpu/probe_reference.py" --print-cublaslt 2>/dev/null || true)
    if [ -n "$cublaslt" ] && [ -z "${INFERBENCH_CUBLASLT_LIBRARY:-}" ]; then export INFERBENCH_CUBLASLT_LIBRARY="$cublaslt"; fi
    echo "cuBLASLt: ${INFERBENCH_CUBLASLT_LIBRARY:-found by inferbench itself}"
    "$inferbench" probe --device 0 --gemm-size 8192 --memory-size 1GiB --db "$out/results.db" --json \
        >"$out/probe.json" 2>"$out/probe.log" || { cat "$out/probe.log"; return 1; }
    "$inferbench" probe --device cpu --db "$out/results.db" | tee "$out/probe-cpu.txt"
    python3 "$root/scripts/gpu/probe_reference.py" --device 0 --gemm-size 8192 --copy-bytes $((1 << 30)) \
        --json "$out/probe-reference.json" --compare "$out/probe.json" | tee "$out/probe-compare.txt"
}

# Every stored GPU benchmark placed under the H200's datasheet and measured roofs.
stage_roofline() {
    # Plots need gnuplot; a GPU host without it prints the table, and the plots are drawn from results.db elsewhere.
    local plots=()
    command -v gnuplot >/dev/null && plots=(--out "$out/roofline")
    "$inferbench" roofline --db "$out/results.db" --run all "${plots[@]}" | tee "$out/roofline.txt"
}

# Per-layer times of ResNet-50 on LibTorch (each node timed with CUDA events in a separate eager run after
# the measured, graph-replayed loop), placed under the H200's roofs (measured ones too after `probe`).
stage_layers() {
    run_plan layers --backend torch --model resnet50 --device cuda:0 --precision fp16,fp32 --batch 1,32 \
        --duration 3s --warmup 1s --set backend_options.torch.layer_profile=20 --set backend_options.torch.cuda_graph=true
    "$inferbench" roofline --db "$out/results.db" --layers --top 8 | tee "$out/layers.txt"
}

# bench/torch_vs_pytorch.py: exports the corpus (scripts/corpus/export_corpus.py's models), then per model
# PyTorch's CUDA-graph replay of the nn.Module and the torch backend's GPU compute, fp16, batch 1 and 32.
stage_torch_vs_pytorch() {
    python3 "$root/bench/torch_vs_pytorch.py" --check --inferbench "$inferbench" --out "$out/torch-vs-pytorch" \
        --json "$out/torch-vs-pytorch.json" 2> >(tee "$out/torch-vs-pytorch.log" >&2) | tee "$out/torch-vs-pytorch.md"
}

stage_device_times() {
    python3 "$root/scripts/gpu/device_times.py" "$out/results.db" | tee "$out/device-times.txt"
}

for stage in "$@"; do
    echo "== $stage $(date -u +%T)"
    "stage_${stage//-/_}" || echo "stage $stage failed"
done
"$inferbench" summary --db "$out/results.db" --format csv >"$out/summary.csv" 2>/dev/null || true
