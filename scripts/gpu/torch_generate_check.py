#!/usr/bin/env python3
"""Checks runners/torch_generate.py on a host with transformers (the GPU host): drives it through the protocol as
inferbench's torch-generate backends do (the request on stdin, the commands on descriptor 3, the step lines back)
and holds its greedy tokens against plain transformers generate() on the same folder and prompts.

  python3 scripts/gpu/torch_generate_check.py --model FOLDER [--device cuda:0] [--mode eager|compile]
      [--precision fp32] [--batch 2] [--input 8] [--output 8] [--generations 3]

FOLDER: a Hugging Face model folder, e.g. the one inferbench writes for llama-tiny in its model cache. Prints each
generation's steps, TTFT and TPOT as the runner timed them, and exits 1 where the tokens differ.
"""

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(HERE, "..", "..", "runners", "torch_generate.py")
sys.path.insert(0, HERE)
from transformers_reference import generation_prompts  # noqa: E402  (inferbench's prompts)

COMMAND_FD = 3


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--mode", choices=("eager", "compile"), default="eager")
    parser.add_argument("--precision", choices=("fp32", "fp16", "bf16"), default="fp32")
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--input", type=int, default=8)
    parser.add_argument("--output", type=int, default=8)
    parser.add_argument("--generations", type=int, default=3)
    parser.add_argument("--seed", type=int, default=42)
    return parser.parse_args()


def plain_greedy(args, prompts):
    """transformers' own greedy tokens (dynamic cache, no runner): one list per sequence."""
    import torch  # pylint: disable=import-outside-toplevel
    import transformers  # pylint: disable=import-outside-toplevel
    dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[args.precision]
    model = transformers.LlamaForCausalLM.from_pretrained(args.model, local_files_only=True, torch_dtype=dtype)
    model = model.to(args.device).eval()
    ids = torch.tensor(prompts, device=args.device)
    with torch.inference_mode():
        out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=args.output,
                             min_new_tokens=args.output, do_sample=False, eos_token_id=None, pad_token_id=0)
    return out[:, args.input:].tolist()


class Runner:
    def __init__(self, args):
        read_end, self.commands = os.pipe()
        request = {"protocol_version": 1, "model": args.model, "batch_size": args.batch, "precision": args.precision,
                   "device": args.device, "warmup_ns": 0, "warmup_iterations": 0, "duration_ns": 0,
                   "min_iterations": 1, "max_iterations": 0, "seed": args.seed, "options": {},
                   "generation": {"input_tokens": args.input, "output_tokens": args.output, "sampling": "greedy"}}
        self.started = time.monotonic_ns()
        self.process = subprocess.Popen(  # pylint: disable=consider-using-with
            [sys.executable, RUNNER, "--mode", args.mode], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            pass_fds=(read_end,), preexec_fn=lambda: os.dup2(read_end, COMMAND_FD))
        os.close(read_end)
        self.process.stdin.write(json.dumps(request))
        self.process.stdin.close()

    def line(self):
        while True:
            text = self.process.stdout.readline()
            if not text:
                sys.exit(f"the runner ended (exit code {self.process.wait()})")
            if text.startswith("step "):
                return text.split()
            if text.startswith("{"):
                parsed = json.loads(text)
                if parsed.get("type") == "error":
                    sys.exit(f"the runner failed: {parsed['message']}")
                return parsed
            print("runner:", text.rstrip())

    def send(self, command):
        os.write(self.commands, (json.dumps(command) + "\n").encode())

    def generate(self):
        self.send({"type": "generate"})
        steps = []
        while True:
            line = self.line()
            if isinstance(line, list):
                steps.append((int(line[1]), [int(t) for t in line[2:]]))
            else:
                return line["start_ns"], steps


def main():
    args = parse_args()
    with open(os.path.join(args.model, "config.json"), encoding="utf-8") as file:
        config = json.load(file)
    prompts = generation_prompts(args.batch, args.input, config["vocab_size"], args.seed)
    runner = Runner(args)
    header = runner.line()
    print(f"header after {(time.monotonic_ns() - runner.started) / 1e9:.1f} s: {header['framework']} "
          f"{header['version']} on {header.get('device_name')}")
    runner.send({"type": "prepare", "batch": args.batch, "input_tokens": args.input, "output_tokens": args.output,
                 "sampling": "greedy", "seed": args.seed, "prompts": prompts})
    assert runner.line() == {"type": "prepared"}
    expected = plain_greedy(args, prompts)
    failed = False
    for generation in range(args.generations):
        start_ns, steps = runner.generate()
        ends = [end for end, _ in steps]
        ttft_ms = (ends[0] - start_ns) / 1e6
        tpot_ms = (ends[-1] - ends[0]) / 1e6 / max(len(ends) - 1, 1)
        tokens = [[step[b] for _, step in steps] for b in range(args.batch)]
        same = tokens == expected
        failed |= not same
        print(f"generation {generation}: {len(steps)} steps, TTFT {ttft_ms:.2f} ms, TPOT {tpot_ms:.3f} ms, tokens "
              f"{'equal plain transformers' if same else f'DIFFER: {tokens} against {expected}'}")
    os.close(runner.commands)
    print("runner's last line:", runner.line(), "exit code", runner.process.wait())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
