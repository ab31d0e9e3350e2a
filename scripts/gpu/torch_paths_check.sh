#!/usr/bin/env bash
# Exercises every PyTorch model spec kind and runner mode once on a GPU machine with PyTorch >= 2.6,
# torchvision, timm and transformers (the H200 host), with short durations, so that what breaks there shows
# at once. Run from a checkout built there (scripts/setup.sh):
#   scripts/gpu/torch_paths_check.sh OUT_DIR
# About 20-30 minutes (most of it torch.compile's max-autotune and the AOTInductor compiles). It prints, and
# leaves in OUT_DIR:
#   environment.txt    PyTorch, CUDA, torchvision, timm, transformers versions; the GPU
#   export.jsonl       runners/torch_export.py per spec kind and format (pt2 dynamic / per batch, TorchScript,
#                      ONNX; a user's .pt2 checked and returned as it is): one JSON line each, with exit codes
#   specs.*            every spec kind on torch-eager (zoo, torchvision:, timm:, hf:, python:), fp16, batch 1
#   modes.*            torch-eager: CUDA graph off/on x precision_mode convert/autocast, channels_last, bf16
#   compile.*          torch-compile: compile_mode default / reduce-overhead / max-autotune, fp16
#   exported.*         specs on onnxruntime and torch through the ONNX files torch_export.py makes
#   bad-input.*        a factory that raises, an unknown hf: config and timm: model: failed cells with reasons
#   plan-error.txt     an unknown model library: the plan error with FILE:LINE:COL
#   failures.txt       every failed or skipped cell: its reason and the last lines of its stored output
#   results.db         everything above
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${1:?usage: torch_paths_check.sh OUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
inferbench=${INFERBENCH:-$root/build/release/inferbench}
[[ -x $inferbench ]] || { echo "torch_paths_check: $inferbench missing; run scripts/setup.sh first" >&2; exit 1; }
python=${PYTHON:-python3}
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-$out/cache}

"$python" - <<'PY' | tee "$out/environment.txt"
import importlib, torch
print("torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available())
if torch.cuda.is_available():
    print("gpu", torch.cuda.get_device_name(0), torch.cuda.get_device_capability(0))
for name in ("torchvision", "timm", "transformers", "onnx"):
    try:
        print(name, importlib.import_module(name).__version__)
    except ImportError as error:
        print(name, "missing:", error)
PY

cat > "$out/factory.py" <<'PY'
import torch


class Tiny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 16, 3, padding=1)
        self.head = torch.nn.Linear(16, 10)

    def forward(self, image):
        return self.head(self.conv(image).relu().mean((2, 3)))


def make_model():
    return Tiny(), torch.rand(2, 3, 64, 64)


def broken():
    raise ValueError("this factory raises on purpose")
PY

echo "== torch_export.py"
: > "$out/export.jsonl"
export_one() {  # arguments of torch_export.py
    local answer code
    answer=$("$python" "$root/runners/torch_export.py" --cache-dir "$out/export-cache" "$@" 2>>"$out/export.stderr.txt")
    code=$?
    echo "{\"args\": \"$*\", \"exit\": $code, \"answer\": ${answer:-null}}" | tee -a "$out/export.jsonl"
}
export_one --spec resnet50 --format pt2 --precision fp16 --batch dynamic --device cuda:0
export_one --spec resnet50 --format pt2 --precision fp16 --batch dynamic --device cuda:0   # cache hit
export_one --spec resnet50 --format pt2 --precision bf16 --batch 32 --device cuda:0
export_one --spec hf:bert-large-uncased --format pt2 --precision fp16 --batch 1 --device cuda:0 --seq-len 384 \
    --option hf_class=BertForQuestionAnswering
export_one --spec timm:convnext_tiny --format pt2 --precision bf16 --batch dynamic --device cuda:0
export_one --spec hf:google/vit-base-patch16-224 --format pt2 --precision fp16 --batch 1 --device cuda:0
export_one --spec "python:$out/factory.py:make_model" --format pt2 --batch dynamic --device cuda:0
export_one --spec torchvision:resnet18 --format torchscript --batch 8 --device cuda:0
export_one --spec torchvision:resnet18 --format onnx --batch dynamic --device cpu
export_one --spec bert --format onnx --batch dynamic --device cpu --seq-len 128
pt2=$(ls "$out"/export-cache/resnet50-*.pt2 2>/dev/null | head -1)
[[ -n $pt2 ]] && export_one --spec "$pt2" --format pt2 --device cuda:0   # a user's package, checked and returned
export_one --spec "python:$out/factory.py:broken" --format pt2 --device cuda:0   # exit 1 with the traceback

run_plan() {  # NAME, plan text
    local name=$1
    printf '%s\n' "$2" > "$out/$name.yaml"
    echo "== $name"
    "$inferbench" run "$out/$name.yaml" --db "$out/results.db" 2>"$out/$name.progress.log" | tee "$out/$name.summary.txt"
}
short='devices: [cuda:0]
warmup: 0.5s
duration: 2s
min_iterations: 5
timeout: 20m'

run_plan specs "name: specs
models: [resnet50, mobilenet, ssd-mobilenet, ssd-resnet34, 3d-unet, bert, yolov3, torchvision:resnet18,
         timm:convnext_tiny, hf:bert-large-uncased, \"hf:google/vit-base-patch16-224\",
         \"python:$out/factory.py:make_model\"]
backends: [torch-eager]
precisions: [fp16]
batch_sizes: [1]
$short"
run_plan modes "name: modes
models: [resnet50, hf:bert-base-uncased]
backends: [torch-eager]
precisions: [bf16]
batch_sizes: [1, 32]
backend_options:
  torch-eager: {cuda_graph: [false, true], precision_mode: [convert, autocast], channels_last: true}
$short"
run_plan compile "name: compile
models: [resnet50]
backends: [torch-compile]
precisions: [fp16]
batch_sizes: [32]
backend_options:
  torch-compile: {compile_mode: [default, reduce-overhead, max-autotune]}
$short"
run_plan exported "name: exported
models: [torchvision:resnet18, hf:bert-base-uncased]
backends: [onnxruntime, torch]
precisions: [fp32, fp16]
batch_sizes: [1]
$short"
run_plan bad-input "name: bad-input
models: [\"python:$out/factory.py:broken\", hf:no-such-config, timm:no_such_model, resnet50]
backends: [torch-eager]
precisions: [fp16]
batch_sizes: [1]
$short"

echo "== plan error"
printf 'models: [resnet50, keras:vgg16]\nbackends: [torch-eager]\n' > "$out/plan-error.yaml"
"$inferbench" run "$out/plan-error.yaml" --dry-run > "$out/plan-error.txt" 2>&1
echo "exit $?" >> "$out/plan-error.txt"
cat "$out/plan-error.txt"

echo "== failures and skips"
"$python" - "$out/results.db" <<'PY' | tee "$out/failures.txt"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for row in db.execute("""SELECT b.benchmark_id, r.name, b.model, b.backend, b.variant, b.precision, b.batch_size,
                                b.status, b.reason, b.stderr_tail FROM benchmarks b JOIN runs r USING (run_id)
                         WHERE b.status != 'ok' ORDER BY b.benchmark_id"""):
    bid, run, model, backend, variant, precision, batch, status, reason, tail = row
    print(f"#{bid} {run}: {model} {backend} {variant} {precision} b{batch}: {status}: {reason}")
    for line in (tail or "").strip().splitlines()[-6:]:
        print("    |", line)
PY
echo "== load times (model build, compile, capture are in load_ns)"
"$inferbench" summary --db "$out/results.db" --runs > "$out/runs.txt" 2>&1
echo "done: $out"
