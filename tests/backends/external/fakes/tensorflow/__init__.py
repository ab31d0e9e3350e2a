"""A stand-in for tensorflow with the frozen-graph API surface runners/tensorflow_runner.py uses;
tests only. The 'graph' has one input input:0 of shape [None, 4] float32 and sums it per sample.
"""

import contextlib
import types

import numpy

__version__ = "0.0-fake"


class _DType:  # pylint: disable=too-few-public-methods
    as_numpy_dtype = numpy.float32


class _Shape:  # pylint: disable=too-few-public-methods
    def __init__(self, dims):
        self._dims = dims

    def as_list(self):
        return list(self._dims)


class _Tensor:
    def __init__(self, value, name=""):
        self.value, self.name = value, name
        self.shape = _Shape(getattr(value, "shape", [None, 4]))
        self.dtype = _DType()

    def numpy(self):
        return numpy.asarray(self.value)


class _GraphDef:
    def __init__(self):
        self.data = b""

    def ParseFromString(self, data):  # noqa: N802  (TensorFlow's name)
        self.data = data


class _Graph:  # pylint: disable=too-few-public-methods
    def get_tensor_by_name(self, name):
        if name not in ("input:0", "output:0"):
            raise KeyError(f"The name '{name}' refers to a Tensor which does not exist")
        tensor = _Tensor(None, name)
        tensor.shape = _Shape([None, 4])
        return tensor


class _Wrapped:
    def __init__(self, body):
        body()
        self.graph = _Graph()

    def prune(self, feeds, fetches):
        if len(feeds) != 1 or len(fetches) != 1:
            raise ValueError("the fake graph has one input and one output")

        def pruned(x):
            value = x.numpy()
            if value.dtype != numpy.float32 or value.shape[1:] != (4,):
                raise ValueError(f"bad input {value.dtype} {value.shape}")
            return [_Tensor(value.sum(axis=1))]
        return pruned


def _list_physical_devices(_kind=None):
    return []


config = types.SimpleNamespace(
    list_physical_devices=_list_physical_devices,
    threading=types.SimpleNamespace(set_intra_op_parallelism_threads=lambda n: None))
compat = types.SimpleNamespace(v1=types.SimpleNamespace(
    GraphDef=_GraphDef, wrap_function=lambda body, _signature: _Wrapped(body),
    import_graph_def=lambda graph_def, name="": None))


def device(_name):
    return contextlib.nullcontext()


def constant(array):
    return _Tensor(numpy.asarray(array))
