#!/usr/bin/env python3
"""Makes tests/cli/data: fixed_batch4.onnx, a 3x3 convolution (16 -> 16 channels, bias) and a
Relu over x [4, 16, 8, 8] whose every dimension is fixed, as torch.onnx.export writes a model
exported at batch 4 without dynamic_axes; and batch4_c16.npy, an input of that shape. The CLI
test runs the model on that input directly and through `vacc compile` (both must agree)."""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "tests", "cli", "data"))
    args = p.parse_args()
    rng = np.random.default_rng(4)
    w = (rng.standard_normal((16, 16, 3, 3)) * 0.1).astype(np.float32)
    b = (rng.standard_normal(16) * 0.1).astype(np.float32)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16, 8, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 16, 8, 8])
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["y"], name="relu"),
    ]
    g = helper.make_graph(nodes, "fixed_batch4", [x], [y],
                          [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="vacc tests")
    m.ir_version = 8
    onnx.checker.check_model(m)
    os.makedirs(args.out, exist_ok=True)
    onnx.save(m, os.path.join(args.out, "fixed_batch4.onnx"))
    np.save(os.path.join(args.out, "batch4_c16.npy"),
            rng.standard_normal((4, 16, 8, 8)).astype(np.float32))


if __name__ == "__main__":
    main()
