"""A stand-in for onnxruntime with the API surface runners/onnxruntime_runner.py uses; tests only.

The session 'runs' a fixed model with one input ["batch", 3, 8, 8] float and sums it per sample.
"""

import numpy

__version__ = "0.0-fake"


def get_available_providers():
    return ["CPUExecutionProvider"]


class GraphOptimizationLevel:  # pylint: disable=too-few-public-methods
    ORT_ENABLE_ALL = 99


class SessionOptions:  # pylint: disable=too-few-public-methods
    def __init__(self):
        self.intra_op_num_threads = 0
        self.graph_optimization_level = None


class NodeArg:  # pylint: disable=too-few-public-methods
    def __init__(self, name, shape, type_name):
        self.name, self.shape, self.type = name, shape, type_name


class InferenceSession:
    def __init__(self, path, sess_options=None, providers=None):
        with open(path, "rb"):
            pass
        if providers != ["CPUExecutionProvider"]:
            raise RuntimeError(f"fake session got providers {providers}")
        self.options = sess_options

    def get_inputs(self):
        return [NodeArg("input", ["batch", 3, 8, 8], "tensor(float)")]

    def run(self, _output_names, feeds):
        x = feeds["input"]
        if x.dtype != numpy.float32 or x.shape[1:] != (3, 8, 8) or x.min() < -1 or x.max() >= 1:
            raise RuntimeError(f"fake session got a bad input {x.dtype} {x.shape}")
        return [x.sum(axis=(1, 2, 3))]
