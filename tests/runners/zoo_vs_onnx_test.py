#!/usr/bin/env python3
"""The nn.Module zoo (runners/torch_models.py) against the ONNX zoo (src/models/zoo*.cpp), on this CPU:

- the same parameter count as `inferbench list models` states (the ONNX zoo's);
- every tensor of the module's state_dict has its ONNX initializer (same name through the model's
  onnx_name(), same shape) and every ONNX weight is used: the same layers;
- with the ONNX zoo's weights loaded, the module's outputs agree with inferbench's own run of the ONNX file
  (`inferbench models check FILE --backend onnxruntime --save DIR`: ONNX Runtime, the same inputs).

Each model runs at a reduced input size (`models export --image-size/--sequence-length`: the same layers and
weights), batch 1, so the whole test stays within a few minutes on 2 cores; the weights, and so the
parameter counts, are the published model's.
Needs python3-onnx (to read the initializers), torch, and the inferbench executable (INFERBENCH_EXE).
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNERS = os.environ.get("INFERBENCH_RUNNERS", os.path.join(HERE, "..", "..", "runners"))
EXE = os.environ.get("INFERBENCH_EXE", os.path.join(HERE, "..", "..", "build", "release", "inferbench"))
sys.path.insert(0, RUNNERS)

# name -> (export flags of the reduced size, the module's input size option, relative tolerance)
REDUCED = {
    "resnet50": (["--image-size", "64"], 1e-4),
    "mobilenet": (["--image-size", "64"], 1e-4),
    "ssd-mobilenet": (["--image-size", "128"], 1e-4),
    "ssd-resnet34": (["--image-size", "400"], 1e-4),
    "3d-unet": (["--image-size", "64"], 2e-4),  # PyTorch needs more than one voxel per instance norm: 2^3 at the bottleneck
    "bert": (["--sequence-length", "16"], 1e-4),
    "yolov3": (["--image-size", "64"], 1e-4),
}


def inferbench(*args, env=None):
    done = subprocess.run([EXE, *args], capture_output=True, text=True, env=env, check=False)
    if done.returncode not in (0, 1):
        raise AssertionError(f"inferbench {' '.join(args)} exited {done.returncode}: {done.stderr[-2000:]}")
    return done.stdout


def onnx_weights(path):
    import onnx  # pylint: disable=import-outside-toplevel
    from onnx import numpy_helper  # pylint: disable=import-outside-toplevel
    model = onnx.load(path)
    return {init.name: numpy_helper.to_array(init) for init in model.graph.initializer}


def load_onnx_weights(test, model, weights):
    """Copies every state_dict tensor from its initializer; fails on a missing, misshapen or unused one."""
    import torch  # pylint: disable=import-outside-toplevel
    import torch_models  # pylint: disable=import-outside-toplevel
    transposed = getattr(model, "onnx_linear_transposed", False)
    linear_weights = {f"{name}.weight" for name, module in model.named_modules()
                      if isinstance(module, torch.nn.Linear)}
    used = set()
    with torch.no_grad():
        for key, tensor in model.state_dict().items():
            if key.endswith("num_batches_tracked"):
                continue
            name = torch_models.onnx_tensor_name(model, key)
            test.assertIn(name, weights, f"{key}: no ONNX initializer {name}")
            value = weights[name]
            if transposed and key in linear_weights:
                value = value.T  # MatMul's [in, out]
            test.assertEqual(tuple(value.shape), tuple(tensor.shape), f"{key} ({name})")
            tensor.copy_(torch.from_numpy(np.array(value, copy=True)))
            used.add(name)
    unused = [n for n, v in weights.items() if n not in used and v.ndim >= 1 and not n.startswith("const.")]
    test.assertEqual(unused, [], "ONNX weights the module has no place for")


class ZooAgainstOnnx(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.TemporaryDirectory()  # pylint: disable=consider-using-with
        cls.env = dict(os.environ, XDG_CACHE_HOME=cls.folder.name)
        listed = json.loads(inferbench("list", "models", "--json", env=cls.env))
        rows = listed if isinstance(listed, list) else listed.get("rows", listed.get("models", []))
        cls.parameters = {row["name"]: int(row["parameters"]) for row in rows}

    @classmethod
    def tearDownClass(cls):
        cls.folder.cleanup()

    def check(self, name):
        import torch  # pylint: disable=import-outside-toplevel
        import torch_models  # pylint: disable=import-outside-toplevel
        flags, tolerance = REDUCED[name]
        model = torch_models.build_zoo_model(name, 42)
        self.assertEqual(torch_models.parameter_count(model), self.parameters[name], "parameter count")
        path = os.path.join(self.folder.name, f"{name}.onnx")
        inferbench("models", "export", name, "--out", path, *flags, env=self.env)
        load_onnx_weights(self, model, onnx_weights(path))
        saved = os.path.join(self.folder.name, name)
        inferbench("models", "check", path, "--backend", "onnxruntime", "--save", saved, "--quiet", env=self.env)
        inputs = [torch.from_numpy(np.array(np.load(os.path.join(saved, f"input.{n}.npy"))))
                  for n, _, _ in torch_models.input_specs(name)]
        with torch.no_grad():
            outputs = model(*inputs)
        outputs = [outputs] if torch.is_tensor(outputs) else list(outputs)
        self.assertEqual(len(outputs), len(torch_models.ZOO[name].outputs))
        for output_name, got in zip(torch_models.ZOO[name].outputs, outputs):
            expected = np.load(os.path.join(saved, f"reference.{output_name}.npy"))
            self.assertEqual(tuple(got.shape), expected.shape, output_name)
            error = float(np.abs(got.numpy() - expected).max()) / max(1.0, float(np.abs(expected).max()))
            print(f"{name} {output_name}: relative error {error:.2e}", flush=True)
            self.assertLessEqual(error, tolerance, output_name)
        del model


def add_tests():
    for zoo_name in REDUCED:
        setattr(ZooAgainstOnnx, f"test_{zoo_name.replace('-', '_')}", lambda self, n=zoo_name: self.check(n))


add_tests()

if __name__ == "__main__":
    unittest.main(verbosity=2)
