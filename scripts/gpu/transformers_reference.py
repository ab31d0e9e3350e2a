#!/usr/bin/env python3
"""A plain transformers timing of one generation cell, to set beside inferbench's torch-generate figures.

Loads a Hugging Face model folder (what inferbench writes for a zoo decoder: config.json + model.safetensors) with
LlamaForCausalLM, local files only, and times generate() with a static KV cache, greedy, exactly --output tokens per
sequence (end-of-sequence ignored), with CUDA events: an event before generate() and one at each step's tokens (the
streamer), read after the generation. The prompts are inferbench's (core/generation's generation_prompts: the same
splitmix64 draws), so the same folder and seed give the same work.

  TTFT   start event to step 0's event (the prefill and the first token)
  TPOT   (e2e - TTFT) / (output - 1)           e2e: start event to the last step's event
  tokens/s  batch x output / e2e;  decode tokens/s  batch x (output - 1) / (e2e - TTFT)

Each figure is the median over --repeats measured generations after --warmup ones (which compile, with --compile).

  python3 scripts/gpu/transformers_reference.py --model /path/llama-3.2-1b-s42-hf --batch 8 --input 128 \\
      --output 128 --precision bf16 [--compile] [--json out.json]
"""

import argparse
import json
import statistics
import sys

MASK = (1 << 64) - 1
FIRST_PROMPT_TOKEN = 16
RESERVED_TOP_TOKENS = 256


def splitmix64(state):
    state = (state + 0x9E3779B97F4A7C15) & MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return state, z ^ (z >> 31)


def generation_prompts(batch, input_tokens, vocab, seed):
    """core/generation.cpp's generation_prompts, draw for draw."""
    reserved = FIRST_PROMPT_TOKEN + RESERVED_TOP_TOKENS
    low = FIRST_PROMPT_TOKEN if vocab > 2 * reserved else 0
    high = vocab - RESERVED_TOP_TOKENS if vocab > 2 * reserved else vocab
    span = max(high - low, 1)
    state = (seed ^ 0x70726F6D70747321) & MASK
    ids = []
    for _ in range(batch * input_tokens):
        state, value = splitmix64(state)
        ids.append(low + value % span)
    return [ids[row * input_tokens:(row + 1) * input_tokens] for row in range(batch)]


class EventStreamer:
    """Records a CUDA event when each step's tokens are handed over (generate() gives the prompt first)."""

    def __init__(self, torch):
        self.torch = torch
        self.events = []
        self.prompt_seen = False

    def put(self, _value):
        if not self.prompt_seen:
            self.prompt_seen = True
            return
        event = self.torch.cuda.Event(enable_timing=True)
        event.record()
        self.events.append(event)

    def end(self):
        pass


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="a Hugging Face model folder (config.json + safetensors)")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--input", type=int, default=128, help="prompt tokens per sequence")
    parser.add_argument("--output", type=int, default=128, help="generated tokens per sequence (>= 2)")
    parser.add_argument("--precision", choices=("fp32", "fp16", "bf16"), default="bf16")
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--seed", type=int, default=42, help="the prompts' seed (inferbench's cell seed)")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--compile", action="store_true", help="the forward pass under torch.compile")
    parser.add_argument("--compile-mode", default="reduce-overhead")
    parser.add_argument("--json", help="also write the figures here")
    return parser.parse_args()


def load(args, torch, transformers):
    dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[args.precision]
    version = tuple(int(p) for p in transformers.__version__.split(".")[:2] if p.isdigit())
    key = "dtype" if version >= (4, 56) else "torch_dtype"
    model = transformers.LlamaForCausalLM.from_pretrained(args.model, local_files_only=True, **{key: dtype})
    model = model.to(args.device).eval()
    if args.compile:
        model.forward = torch.compile(model.forward, mode=args.compile_mode, fullgraph=True, dynamic=False)
    return model


def time_generation(model, inputs, kwargs, torch):
    streamer = EventStreamer(torch)
    start = torch.cuda.Event(enable_timing=True)
    start.record()
    model.generate(**inputs, **kwargs, streamer=streamer)
    torch.cuda.synchronize()
    steps_ms = [start.elapsed_time(event) for event in streamer.events]
    return steps_ms


def figures(steps_ms, batch, input_tokens):
    ttft, e2e = steps_ms[0], steps_ms[-1]
    output = len(steps_ms)
    return {"ttft_ms": ttft, "tpot_ms": (e2e - ttft) / (output - 1), "e2e_ms": e2e,
            "prefill_tokens_per_s": batch * input_tokens / (ttft / 1e3),
            "decode_tokens_per_s": batch * (output - 1) / ((e2e - ttft) / 1e3),
            "tokens_per_s": batch * output / (e2e / 1e3)}


def main():
    args = parse_args()
    if args.output < 2:
        sys.exit("--output must be 2 or more: TPOT needs a decode step")
    import torch  # pylint: disable=import-outside-toplevel
    import transformers  # pylint: disable=import-outside-toplevel
    if not torch.cuda.is_available():
        sys.exit("no CUDA device: this script times with CUDA events")
    torch.cuda.set_device(args.device)
    model = load(args, torch, transformers)
    prompts = generation_prompts(args.batch, args.input, model.config.vocab_size, args.seed)
    ids = torch.tensor(prompts, dtype=torch.long, device=args.device)
    inputs = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
    kwargs = dict(max_new_tokens=args.output, min_new_tokens=args.output, do_sample=False,
                  cache_implementation="static", eos_token_id=None, pad_token_id=0, top_k=None, top_p=None,
                  temperature=None)
    if "disable_compile" in transformers.GenerationConfig().to_dict():
        kwargs["disable_compile"] = True  # --compile compiles the forward pass itself; eager stays eager
    runs = []
    with torch.inference_mode():
        for _ in range(args.warmup):
            time_generation(model, inputs, kwargs, torch)
        torch.cuda.reset_peak_memory_stats()
        for _ in range(args.repeats):
            runs.append(figures(time_generation(model, inputs, kwargs, torch), args.batch, args.input))
    result = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
    result.update(model=args.model, batch=args.batch, input=args.input, output=args.output,
                  precision=args.precision, compile=args.compile, repeats=args.repeats,
                  peak_memory_gib=torch.cuda.max_memory_allocated() / 2**30,
                  device=torch.cuda.get_device_name(), torch=torch.__version__, transformers=transformers.__version__)
    print(f"{args.model} batch {args.batch} input {args.input} output {args.output} {args.precision}"
          f"{' compile' if args.compile else ' eager'}: TTFT {result['ttft_ms']:.2f} ms, TPOT {result['tpot_ms']:.3f} ms, "
          f"{result['tokens_per_s']:.0f} tokens/s ({result['decode_tokens_per_s']:.0f} decode), "
          f"peak {result['peak_memory_gib']:.2f} GiB  [median of {args.repeats}, {result['device']}]")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(result, out, indent=1)


if __name__ == "__main__":
    main()
