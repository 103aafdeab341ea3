#!/usr/bin/python3
"""Writes the ONNX models of the CPU-backend benchmark (bench/cpu_backend.cc, bench/ort_cpu.js):
a ResNet-18-like 3x3 convolution (1x64x56x56 -> 64 channels, pad 1) and a 1024x1024 dense
layer (MatMul of a 1024x1024 activation by a 1024x1024 weight, and Gemm with batch 1), with
seeded random weights as initializers.

  /usr/bin/python3 bench/make_cpu_bench_models.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(graph, path):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.save(model, path)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((64, 64, 3, 3)).astype(np.float32) * 0.05, "w")
    b = numpy_helper.from_array(rng.standard_normal(64).astype(np.float32), "b")
    conv = helper.make_node("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1], kernel_shape=[3, 3])
    save(helper.make_graph([conv], "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64, 56, 56])],
                           [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64, 56, 56])], [w, b]),
         os.path.join(out, "conv3x3_56x56x64.onnx"))
    wd = numpy_helper.from_array(rng.standard_normal((1024, 1024)).astype(np.float32) * 0.03, "w")
    mm = helper.make_node("MatMul", ["x", "w"], ["y"])
    save(helper.make_graph([mm], "dense", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1024, 1024])],
                           [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1024, 1024])], [wd]),
         os.path.join(out, "matmul_1024.onnx"))
    bd = numpy_helper.from_array(rng.standard_normal(1024).astype(np.float32), "b")
    gemm = helper.make_node("Gemm", ["x", "w", "b"], ["y"], transB=1)
    save(helper.make_graph([gemm], "gemv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1024])],
                           [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1024])], [wd, bd]),
         os.path.join(out, "gemm_1x1024x1024.onnx"))


if __name__ == "__main__":
    main()
