#!/usr/bin/env python3
"""Writes small ONNX graphs as a seed corpus for onnx_program_fuzz: the shape subgraphs real exports
carry (Shape -> Gather -> Concat -> Reshape, ConstantOfShape, Range, Expand, Pad, Slice, Tile,
ScatterND masks, attention scales), each a starting point the fuzzer mutates.

Usage: make_program_seeds.py OUT_DIR    (needs the onnx Python package)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def const(name, values, dtype=np.int64):
    return numpy_helper.from_array(np.array(values, dtype=dtype), name)


def model(nodes, inits, inputs, outputs, opset=17):
    graph = helper.make_graph(nodes, "seed", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def x_input(shape=("batch", 3, 4, 4)):
    return helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))


def y_output():
    return helper.make_tensor_value_info("y", TensorProto.FLOAT, None)


def seeds():
    n = helper.make_node
    yield "reshape", model([n("Shape", ["x"], ["s"]), n("Gather", ["s", "zero"], ["b"]),
                            n("Unsqueeze", ["b", "axes"], ["b1"]), n("Concat", ["b1", "minus_one"], ["t"], axis=0),
                            n("Reshape", ["x", "t"], ["y"])],
                           [const("zero", 0), const("axes", [0]), const("minus_one", [-1])], [x_input()], [y_output()])
    yield "constant_of_shape", model([n("Shape", ["x"], ["s"]), n("ConstantOfShape", ["s"], ["c"],
                                      value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0])),
                                      n("Add", ["x", "c"], ["y"])], [], [x_input()], [y_output()])
    yield "range_expand", model([n("Shape", ["x"], ["s"]), n("Gather", ["s", "last"], ["d"]),
                                 n("Range", ["zero", "d", "one"], ["r"]), n("Cast", ["r"], ["rf"], to=1),
                                 n("Expand", ["rf", "s"], ["e"]), n("Mul", ["x", "e"], ["y"])],
                                [const("last", -1), const("zero", 0), const("one", 1)], [x_input()], [y_output()])
    yield "pad", model([n("Pad", ["x", "pads", "value"], ["y"], mode="constant")],
                       [const("pads", [0, 0, 1, 1, 0, 0, 1, -1]), const("value", 0.5, np.float32)], [x_input()],
                       [y_output()])
    yield "pad_reflect", model([n("Pad", ["x", "pads"], ["y"], mode="reflect")],
                               [const("pads", [0, 0, 1, 2, 0, 0, 2, 1])], [x_input()], [y_output()])
    yield "slice_tile", model([n("Slice", ["x", "starts", "ends", "axes", "steps"], ["s"]),
                               n("Tile", ["s", "reps"], ["y"])],
                              [const("starts", [-1, 0]), const("ends", [-1000, 3]), const("axes", [2, 3]),
                               const("steps", [-1, 2]), const("reps", [1, 2, 1, 3])], [x_input()], [y_output()])
    yield "scatter_nd_mask", model([n("Shape", ["x"], ["s"]), n("ConstantOfShape", ["s"], ["z"]),
                                    n("ScatterND", ["z", "idx", "upd"], ["m"]), n("Add", ["x", "m"], ["y"])],
                                   [const("idx", [[0, 1], [0, 2]]), const("upd", np.ones((2, 4, 4)), np.float32)],
                                   [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 4])], [y_output()])
    yield "attention_scale", model([n("Shape", ["x"], ["s"]), n("Gather", ["s", "last"], ["d"]),
                                    n("Cast", ["d"], ["df"], to=1), n("Sqrt", ["df"], ["sq"]),
                                    n("Div", ["x", "sq"], ["q"]), n("Softmax", ["q"], ["p"], axis=-1),
                                    n("IsNaN", ["p"], ["nan"]), n("Where", ["nan", "zero", "p"], ["y"])],
                                   [const("last", -1), const("zero", 0.0, np.float32)], [x_input()], [y_output()])
    yield "topk_gathernd", model([n("Flatten", ["x"], ["f"], axis=1), n("TopK", ["f", "k"], ["v", "i"], axis=1),
                                  n("Unsqueeze", ["i", "axes"], ["i3"]), n("GatherND", ["f", "i3"], ["g"], batch_dims=1),
                                  n("Add", ["g", "v"], ["y"])],
                                 [const("k", [3]), const("axes", [2])], [x_input()], [y_output()])
    yield "nonzero_mod", model([n("Greater", ["x", "zero"], ["g"]), n("NonZero", ["g"], ["nz"]),
                                n("Mod", ["nz", "three"], ["y"])],
                               [const("zero", 0.0, np.float32), const("three", 3)], [x_input()], [y_output()])
    yield "conv_pool", model([n("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
                              n("MaxPool", ["c"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
                              n("ReduceProd", ["p"], ["y"], axes=[2, 3], keepdims=1)],
                             [const("w", np.ones((2, 3, 3, 3)), np.float32)], [x_input()], [y_output()], opset=13)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, m in seeds():
        onnx.save(m, os.path.join(out, name + ".onnx"))


if __name__ == "__main__":
    main()
