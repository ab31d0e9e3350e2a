#!/usr/bin/env bash
# On a GPU machine, from the bundle of scripts/bundle.sh in dist/ (built with scripts/fetch-llama-cpp.sh --cuda and
# scripts/build-llama-server.sh, so that dist/bin/llama-server loads dist/lib/libggml-cuda.so): the serving sweep of
# plans/gpu-serving.yaml against llama.cpp's server with every layer on the GPU, its GPU sampled for energy, then the
# summary, the findings and the report. Results in $OUT (a .tgz).
#   scripts/gpu/serving_sweep.sh [SLOTS]        the server's parallel slots (default 64, the sweep's highest load)
set -uo pipefail
slots=${1:-64}
out=${OUT:-/tmp/gpu-serving}
dist=$PWD/dist
mkdir -p "$out"
source scripts/gpu/bundle_env.sh
ib=$dist/inferbench
[ -x "$dist/bin/llama-server" ] || { echo "serving_sweep: no $dist/bin/llama-server; bundle after scripts/build-llama-server.sh" >&2; exit 1; }
[ -f "$dist/lib/libggml-cuda.so" ] || echo "serving_sweep: no libggml-cuda.so in $dist/lib: the server runs on the CPU" >&2
# Each slot holds -c / parallel tokens: the plan's prompt and output (512 + 128) for every slot.
context=$((slots * 640))
command="env -C $dist/lib ../bin/llama-server -m {model} --host {host} --port {port} -ngl 99 --parallel $slots -c $context --no-ui"
$ib run plans/gpu-serving.yaml --db "$out/serving.db" --set "backend_options.openai.server_command=$command" 2>&1 | tail -40
$ib summary --db "$out/serving.db" --format csv --columns all > "$out/serving-summary.csv"
$ib summary --db "$out/serving.db" > "$out/serving-summary.txt" 2>&1
$ib explain --db "$out/serving.db" > "$out/serving-explain.txt" 2>&1
$ib report --db "$out/serving.db" --out "$out/report" > /dev/null 2>&1 || echo "serving_sweep: report failed" >&2
(cd "$out" && tar czf serving-sweep.tgz serving.db serving-summary.csv serving-summary.txt serving-explain.txt report)
