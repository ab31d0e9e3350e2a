#!/usr/bin/env python3
"""runners/torch_export.py and runners/model_specs.py on this CPU (Debian's PyTorch 1.13, no transformers,
no timm): spec syntax, cache keys, hits and misses, TorchScript and ONNX export of a small model, and the
error paths with their exit codes (2 bad input, 1 a failure while exporting, 3 this PyTorch cannot do it),
each a single JSON line with the error and the traceback's last lines.
"""

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNERS = os.environ.get("INFERBENCH_RUNNERS", os.path.join(HERE, "..", "..", "runners"))
sys.path.insert(0, RUNNERS)
import model_specs  # noqa: E402

HAVE_TRANSFORMERS = importlib.util.find_spec("transformers") is not None
FACTORY = """
import torch

class Tiny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)

    def forward(self, image):
        return self.conv(image).relu()

def make_model():
    return Tiny(), torch.rand(2, 3, 16, 16)

def broken():
    raise ValueError("no weights for this model")

class Attention(torch.nn.Module):  # torchvision's ViT blocks: batch-first multi-head attention
    def __init__(self):
        super().__init__()
        self.attention = torch.nn.MultiheadAttention(16, 2, batch_first=True)

    def forward(self, tokens):
        return self.attention(tokens, tokens, tokens, need_weights=False)[0]

def make_attention():
    return Attention(), torch.rand(2, 5, 16)
"""


def export(*args, cache):
    done = subprocess.run([sys.executable, os.path.join(RUNNERS, "torch_export.py"), "--cache-dir", cache, *args],
                          capture_output=True, text=True, check=False, timeout=600)
    lines = done.stdout.strip().splitlines()
    return done.returncode, json.loads(lines[-1]) if lines else {}, done.stderr


class Specs(unittest.TestCase):
    def test_kinds(self):
        self.assertEqual(model_specs.parse_spec("resnet50").kind, "zoo")
        self.assertEqual(model_specs.parse_spec("torchvision:resnet18"), model_specs.Spec("torchvision:resnet18",
                                                                                          "torchvision", "resnet18"))
        self.assertEqual(model_specs.parse_spec("hf:google/vit-base-patch16-224").name, "google/vit-base-patch16-224")
        spec = model_specs.parse_spec("python:models/my.py:make_model")
        self.assertEqual((spec.kind, spec.path, spec.name), ("python", "models/my.py", "make_model"))

    def test_bad_syntax_says_how_to_write_it(self):
        for text, words in (("keras:resnet50", "unknown library 'keras'"), ("timm:", "name is missing"),
                            ("python:my.py", "python:PATH.py:FACTORY"), ("vgg16", "neither a zoo model"),
                            ("missing.pt", "not found")):
            with self.assertRaises(model_specs.SpecError) as caught:
                model_specs.parse_spec(text)
            self.assertIn(words, str(caught.exception))

    def test_hf_configs_are_shipped_and_unknown_ones_listed(self):
        self.assertTrue(os.path.isfile(model_specs.hf_config_path("bert-large-uncased")))
        self.assertTrue(os.path.isfile(model_specs.hf_config_path("google/vit-base-patch16-224")))
        with self.assertRaises(model_specs.SpecError) as caught:
            model_specs.hf_config_path("llama-70b")
        self.assertIn("bert-base-uncased", str(caught.exception))

    def test_zoo_bert_takes_the_sequence_length(self):
        resolved = model_specs.resolve(model_specs.parse_spec("bert-base"), 1, {"seq_len": "32"})
        self.assertEqual([(i.name, i.dtype, i.shape) for i in resolved.inputs],
                         [(n, "int64", (32,)) for n in ("input_ids", "attention_mask", "token_type_ids")])
        ids, mask, types = model_specs.make_inputs(resolved, 3, 7)
        self.assertEqual(tuple(ids.shape), (3, 32))
        self.assertTrue(bool((mask == 1).all()) and int(types.max()) <= 1 and int(ids.max()) < 1000)

    def test_factory_inputs_are_tiled_to_the_batch(self):
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "tiny.py")
            with open(path, "w", encoding="utf-8") as stream:
                stream.write(FACTORY)
            resolved = model_specs.resolve(model_specs.parse_spec(f"python:{path}:make_model"), 1, {})
        self.assertEqual([(i.name, i.shape) for i in resolved.inputs], [("image", (3, 16, 16))])
        (x,) = model_specs.make_inputs(resolved, 5, 1)
        self.assertEqual(tuple(x.shape), (5, 3, 16, 16))
        self.assertTrue(bool((x[2] == resolved.example[0][0]).all()))


class Export(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()  # pylint: disable=consider-using-with
        self.cache = os.path.join(self.folder.name, "cache")
        self.factory = os.path.join(self.folder.name, "tiny.py")
        with open(self.factory, "w", encoding="utf-8") as stream:
            stream.write(FACTORY)

    def tearDown(self):
        self.folder.cleanup()

    def test_onnx_and_torchscript_then_cache_hits(self):
        spec = f"python:{self.factory}:make_model"
        code, first, err = export("--spec", spec, "--format", "onnx", "--batch", "dynamic", cache=self.cache)
        self.assertEqual(code, 0, err)
        self.assertFalse(first["cache_hit"])
        self.assertGreater(first["seconds"], 0)
        self.assertEqual(first["inputs"], [{"name": "image", "dtype": "float32", "shape": [-1, 3, 16, 16]}])
        self.assertTrue(first["path"].endswith(".onnx") and os.path.isfile(first["path"]))
        with open(first["path"] + ".key.json", encoding="utf-8") as stream:
            self.assertEqual(json.load(stream)["source"]["spec"], spec)
        code, again, _ = export("--spec", spec, "--format", "onnx", "--batch", "dynamic", cache=self.cache)
        self.assertEqual((code, again["cache_hit"], again["path"]), (0, True, first["path"]))
        self.assertGreaterEqual(again["seconds"], 0.0)
        code, batch4, _ = export("--spec", spec, "--format", "torchscript", "--batch", "4", cache=self.cache)
        self.assertEqual(code, 0)
        self.assertFalse(batch4["cache_hit"])
        self.assertEqual(batch4["inputs"][0]["shape"], [4, 3, 16, 16])
        import torch  # pylint: disable=import-outside-toplevel
        self.assertEqual(tuple(torch.jit.load(batch4["path"])(torch.rand(4, 3, 16, 16)).shape), (4, 4, 14, 14))

    def test_multi_head_attention_exports_to_onnx(self):
        # In eval mode under no_grad it would take PyTorch's fused fast path, which the ONNX exporter cannot write
        # (torchvision:vit_b_16 failed so).
        code, answer, err = export("--spec", f"python:{self.factory}:make_attention", "--format", "onnx",
                                   "--batch", "dynamic", cache=self.cache)
        self.assertEqual(code, 0, err)
        import onnx  # pylint: disable=import-outside-toplevel
        ops = {node.op_type for node in onnx.load(answer["path"]).graph.node}
        self.assertIn("MatMul", ops)
        self.assertIn("Softmax", ops)

    def test_the_key_covers_options_and_file_contents(self):
        spec = f"python:{self.factory}:make_model"
        _, first, _ = export("--spec", spec, "--format", "torchscript", cache=self.cache)
        _, seeded, _ = export("--spec", spec, "--format", "torchscript", "--option", "seed=7", cache=self.cache)
        self.assertNotEqual(first["path"], seeded["path"])
        self.assertEqual(seeded["key"]["options"], {"seed": "7"})
        with open(self.factory, "a", encoding="utf-8") as stream:
            stream.write("\n# edited\n")
        _, edited, _ = export("--spec", spec, "--format", "torchscript", cache=self.cache)
        self.assertFalse(edited["cache_hit"])
        self.assertNotEqual(edited["key"]["source"]["file_sha256"], first["key"]["source"]["file_sha256"])

    def test_bad_input_exits_2_with_one_line(self):
        for spec in ("keras:resnet50", "torchvision:no_such_net", "missing.pt", f"python:{self.factory}:absent"):
            code, answer, err = export("--spec", spec, "--format", "onnx", cache=self.cache)
            self.assertEqual(code, 2, (spec, answer, err))
            self.assertEqual(set(answer), {"error", "traceback_tail"})
            self.assertNotIn("\n", answer["error"])
        code, answer, _ = export("--spec", "mobilenet", "--format", "onnx", "--batch", "0", cache=self.cache)
        self.assertEqual(code, 2)
        self.assertIn("--batch 0", answer["error"])

    def test_a_factory_that_raises_exits_1_with_its_traceback(self):
        code, answer, err = export("--spec", f"python:{self.factory}:broken", "--format", "onnx", cache=self.cache)
        self.assertEqual(code, 1)
        self.assertIn("broken() raised ValueError: no weights for this model", answer["error"])
        self.assertIn("ValueError: no weights for this model", answer["traceback_tail"][-1])
        self.assertTrue(any("tiny.py" in line for line in answer["traceback_tail"]))
        self.assertIn("Traceback", err)

    def test_what_this_pytorch_cannot_do_exits_3(self):
        import torch  # pylint: disable=import-outside-toplevel
        if not hasattr(getattr(torch, "_inductor", None), "aoti_compile_and_package"):
            code, answer, _ = export("--spec", "mobilenet", "--format", "pt2", cache=self.cache)
            self.assertEqual(code, 3)
            self.assertIn("aoti_compile_and_package (PyTorch >= 2.6", answer["error"])
        if not torch.cuda.is_available():
            code, answer, _ = export("--spec", "mobilenet", "--format", "onnx", "--device", "cuda:0",
                                     cache=self.cache)
            self.assertEqual(code, 3)
            self.assertIn("has no CUDA device cuda:0", answer["error"])
        if not HAVE_TRANSFORMERS:
            code, answer, _ = export("--spec", "hf:bert-base-uncased", "--format", "onnx", cache=self.cache)
            self.assertEqual(code, 3)
            self.assertIn("transformers not importable by", answer["error"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
