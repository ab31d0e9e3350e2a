#!/usr/bin/env bash
# On a GPU machine, from the bundle of scripts/bundle.sh in dist/ (built with scripts/fetch-llama-cpp.sh --cuda and
# scripts/fetch-onnxruntime.sh --with-cuda; the torch module built there by scripts/gpu/verify.sh): the generation
# table of plans/gpu-generation.yaml for one model (llama-3.2-1b or llama-3.1-8b), then transformers timed by
# scripts/gpu/transformers_reference.py on the same Hugging Face folder, prompts and lengths. Results in $OUT.
#   scripts/gpu/generation_table.sh MODEL [BACKENDS]       e.g. llama-3.2-1b llamacpp,onnxruntime
set -uo pipefail
model=${1:?usage: generation_table.sh MODEL [BACKENDS]}
backends=${2:-llamacpp,onnxruntime,torch,torch-generate}
out=${OUT:-/tmp/gpu-generation}
dist=$PWD/dist
mkdir -p "$out"
source scripts/gpu/bundle_env.sh
ib=$dist/inferbench
$ib --version
$ib list backends 2>&1 | grep -E "^(llamacpp|onnxruntime|torch|torch-generate) " | head -8
$ib run plans/gpu-generation.yaml --model "$model" --backend "$backends" --db "$out/r.db" 2>&1 | tail -40
$ib summary --db "$out/r.db" --format csv --columns all > "$out/summary-$model.csv"
$ib explain --db "$out/r.db" > "$out/explain-$model.txt" 2>&1
# The same model with transformers and CUDA events, from the folder the torch-generate cells read.
for precision in fp16 bf16; do
  folder=$(ls -d "$XDG_CACHE_HOME"/inferbench/models/"$model"-s42-"$precision"-hf 2>/dev/null | head -1)
  [ -n "$folder" ] || continue
  for batch in 1 8 32; do
    for input in 128 1024; do
      python3 scripts/gpu/transformers_reference.py --model "$folder" --batch "$batch" --input "$input" \
        --output 128 --precision "$precision" --json "$out/transformers-$model-$precision-b$batch-in$input.json" 2>&1 | tail -2
    done
  done
done > "$out/transformers-$model.txt"
(cd "$out" && tar czf "generation-$model.tgz" r.db "summary-$model.csv" "explain-$model.txt" transformers-"$model"*)
