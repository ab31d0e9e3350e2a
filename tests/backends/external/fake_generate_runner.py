#!/usr/bin/env python3
"""Stands in for runners/torch_generate.py in the C++ tests, without PyTorch: the real runner_protocol (copied beside
it) serves the generation commands, and a made-up model answers them. Each sequence's next token is
(previous * 31 + 7) % 4096, starting from its prompt's last token; steps take about 0.2 ms.

$FAKE_GENERATE_SCENARIO picks a misbehaviour: "ok" (none), "short" (one step too few), "wall_clock" (steps timed with
time.time_ns()), "fail" (an error line while generating), "stop" (waits for SIGTERM after the first step and stops
early, as the real runner's stopping criterion does).
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner_protocol as rp  # noqa: E402

SCENARIO = os.environ.get("FAKE_GENERATE_SCENARIO", "ok")


def describe(_args):
    header = rp.base_header("fake-transformers", "0.1", "cpu", "cpu")
    header.update(devices=["cpu"], precisions={"cpu": ["fp32"]})
    return header


class FakeModel:
    def __init__(self):
        self.prompts = []
        self.output_tokens = 0

    def prepare(self, prompts, output_tokens, _sampling, _seed):
        self.prompts, self.output_tokens = prompts, output_tokens

    def generate(self, stop):
        start_ns = time.monotonic_ns()
        tokens = [row[-1] for row in self.prompts]
        steps = []
        count = self.output_tokens - (1 if SCENARIO == "short" else 0)
        for step in range(count):
            time.sleep(0.0002)
            tokens = [(t * 31 + 7) % 4096 for t in tokens]
            clock = time.time_ns() if SCENARIO == "wall_clock" else time.monotonic_ns()
            steps.append((clock, tokens))
            if SCENARIO == "fail" and step == 1:
                raise rp.RunnerError("fake runner: out of memory at step 2")
            if SCENARIO == "stop" and step == 0:
                deadline = time.monotonic() + 10
                while not stop.requested and time.monotonic() < deadline:
                    time.sleep(0.005)
            if stop.requested:
                break
        return start_ns, steps


def run(request, _args, session):
    session.ready({**rp.base_header("fake-transformers", "0.1", "cpu", "cpu"),
                   "request_generation": request.get("generation")})
    model = FakeModel()
    session.serve_generations(model.prepare, model.generate)


if __name__ == "__main__":
    sys.exit(rp.main(sys.modules[__name__]))
