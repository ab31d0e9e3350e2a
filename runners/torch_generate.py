#!/usr/bin/env python3
"""inferbench runner for decoder generation with Hugging Face transformers: a LlamaForCausalLM built from a model
folder (config.json + model.safetensors, local files only, never the hub), generate() with a static KV cache, greedy
or seeded sampling, exactly output_tokens steps per sequence (end-of-sequence ignored). --mode eager runs PyTorch
eager; --mode compile runs the forward pass under torch.compile. inferbench's backends torch-generate and
torch-generate-compile. Protocol: docs/external-runner-protocol.md ("Generation").
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner_protocol as rp  # noqa: E402  (found next to this script)

DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}
COMPILE_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


def import_frameworks():
    """(torch, transformers), or FrameworkMissing saying which is absent (exit 3: inferbench tries the next
    interpreter, then skips the cell with the reason)."""
    try:
        import transformers  # pylint: disable=import-outside-toplevel
    except ImportError as error:
        missing = "PyTorch" if getattr(error, "name", "") == "torch" else "transformers"
        raise rp.FrameworkMissing(f"{missing} is not installed for {sys.executable} (pip install torch transformers; "
                                  "Debian has no python3-transformers)") from None
    import torch  # pylint: disable=import-outside-toplevel
    return torch, transformers


def describe(args):
    torch, transformers = import_frameworks()
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    header = rp.base_header("transformers", transformers.__version__, "cpu", rp.cpu_name())
    header.update(devices=devices, precisions={kind: list(DTYPES) for kind in devices},
                  notes={f"{kind}/{p}": "transformers runs fp32, fp16 and bf16 weights" for kind in devices
                         for p in ("int8", "fp8", "int4")})
    if args.mode == "compile" and not hasattr(torch, "compile"):
        header["unavailable"] = f"torch.compile needs PyTorch >= 2.0; this is {torch.__version__}"
    return header


def load_model(torch, transformers, request):
    folder = request["model"]
    if not os.path.isfile(os.path.join(folder, "config.json")):
        raise rp.RunnerError(f"{folder}: not a Hugging Face model folder (no config.json)")
    config = transformers.AutoConfig.from_pretrained(folder, local_files_only=True)
    if config.model_type != "llama":
        raise rp.RunnerError(f"{folder}/config.json: model_type is '{config.model_type}', not 'llama': this runner "
                             "builds LlamaForCausalLM")
    dtype = getattr(torch, DTYPES[request["precision"]])
    # transformers 4.56 renamed torch_dtype to dtype; an unknown keyword would silently go to the config.
    version = tuple(int(p) for p in transformers.__version__.split(".")[:2] if p.isdigit())
    dtype_key = "dtype" if version >= (4, 56) else "torch_dtype"
    model = transformers.LlamaForCausalLM.from_pretrained(folder, local_files_only=True, **{dtype_key: dtype})
    return model.to(request["device"]).eval()


class StepClock:
    """generate()'s streamer: put() gets the prompt first, then every step's new tokens (one per sequence), already
    copied to the host by generate() (next_tokens.cpu()). Each step's time is time.monotonic_ns() read right there,
    after torch.cuda.synchronize() on CUDA: a step's time so includes its forward pass, the logits processors (the
    seeded draw), the token choice and the tokens' copy to the host, plus generate()'s bookkeeping between the
    previous step's put() and this forward pass (cache position update, stopping criteria). Nothing is printed while
    the generation runs."""

    def __init__(self, torch, cuda):
        self._torch = torch
        self._cuda = cuda
        self.steps = []
        self._prompt_seen = False

    def put(self, value):
        if self._cuda:
            self._torch.cuda.synchronize()
        end_ns = time.monotonic_ns()
        if not self._prompt_seen:  # generate() hands the prompt over first: not a step
            self._prompt_seen = True
            return
        self.steps.append((end_ns, value.reshape(-1).tolist()))

    def end(self):
        """Called once the generation is over; nothing to do."""


def seeded_sampler(torch, seed):
    """A logits processor drawing each sequence's token from softmax(logits) with inferbench's splitmix64 draws
    (runner_protocol.splitmix64_uniforms): the chosen token keeps its logit, every other gets -inf, and greedy
    decoding then takes it. Only the batch's draws go to the device; nothing comes back."""
    draws = rp.splitmix64_uniforms(seed)

    def process(_input_ids, scores):
        # In float64, as the C++ engines sum the probabilities (backends/token_choice).
        cumulative = torch.softmax(scores.double(), dim=-1).cumsum(dim=-1)
        u = torch.tensor([[next(draws)] for _ in range(scores.shape[0])], dtype=torch.float64)
        chosen = torch.searchsorted(cumulative, u.to(scores.device), right=True).clamp_(max=scores.shape[-1] - 1)
        kept = torch.full_like(scores, float("-inf"))
        return kept.scatter_(1, chosen, scores.gather(1, chosen))

    return process


class Generator:
    """One model and its prepared prompts; generate() is one whole generation."""

    def __init__(self, torch, transformers, model, request, compiled):
        self.torch, self.transformers, self.model = torch, transformers, model
        self.device = request["device"]
        self.cuda = self.device.startswith("cuda")
        self.compiled = compiled
        self.inputs = None
        self.kwargs = {}
        self.seed = 0
        self.sampling = "greedy"

    def prepare(self, prompts, output_tokens, sampling, seed):
        """Untimed: the prompts on the device and the generate() arguments. The static cache (input + output tokens
        per sequence) is allocated by the first generation (the harness's warm-up) and reused by the next ones."""
        torch = self.torch
        ids = torch.tensor(prompts, dtype=torch.long, device=self.device)
        self.inputs = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
        self.sampling, self.seed = sampling, seed
        config = dict(max_new_tokens=output_tokens, min_new_tokens=output_tokens, do_sample=False,
                      cache_implementation="static", num_beams=1, top_k=None, top_p=None, temperature=None,
                      eos_token_id=None, pad_token_id=0, return_dict_in_generate=False)
        # No end-of-sequence at all (not only none before min_new_tokens): a suppressed EOS logit would change the
        # tokens. generate()'s own compilation of static-cache decoding is off: eager is eager, and compile mode
        # compiles the forward pass itself (below).
        if "disable_compile" in self.transformers.GenerationConfig().to_dict():
            config["disable_compile"] = True
        self.kwargs = config

    def generate(self, stop):
        clock = StepClock(self.torch, self.cuda)
        processors = self.transformers.LogitsProcessorList()
        if self.sampling == "seeded":
            processors.append(seeded_sampler(self.torch, self.seed))  # the same draws every generation
        stopping = self.transformers.StoppingCriteriaList([lambda *_args, **_kw: stop.requested])
        start_ns = time.monotonic_ns()
        with self.torch.inference_mode():
            self.model.generate(**self.inputs, **self.kwargs, streamer=clock, logits_processor=processors,
                                stopping_criteria=stopping)
        return start_ns, clock.steps


def run(request, args, session):
    torch, transformers = import_frameworks()
    if not request.get("generation"):
        raise rp.RunnerError("this runner generates tokens: the cell needs input_tokens and output_tokens")
    if request["precision"] not in DTYPES:
        raise rp.RunnerError(f"transformers runs fp32, fp16 or bf16 weights, not {request['precision']}")
    threads = rp.option_count(request["options"], "threads")
    if threads:
        torch.set_num_threads(threads)
    torch.manual_seed(request["seed"])
    metrics = []
    begin = time.monotonic_ns()
    model = load_model(torch, transformers, request)
    metrics.append({"name": "model_build_ns", "value": time.monotonic_ns() - begin, "unit": "ns"})
    compiled = args.mode == "compile"
    if compiled:
        mode = request["options"].get("compile_mode", "reduce-overhead")
        if mode not in COMPILE_MODES:
            raise rp.RunnerError(f"option compile_mode: '{mode}' is not one of {', '.join(COMPILE_MODES)}")
        # Compiled on its first calls, i.e. in the harness's warm-up generations (a prefill and a decode shape).
        model.forward = torch.compile(model.forward, mode=mode, fullgraph=True, dynamic=False)
    device_name = torch.cuda.get_device_name(request["device"]) if request["device"].startswith("cuda") else rp.cpu_name()
    header = rp.base_header("transformers", transformers.__version__, request["device"], device_name)
    header["metrics"] = metrics
    header["torch_version"] = torch.__version__
    session.ready(header)
    generator = Generator(torch, transformers, model, request, compiled)
    session.serve_generations(generator.prepare, generator.generate)


if __name__ == "__main__":
    sys.exit(rp.main(sys.modules[__name__]))
