#!/usr/bin/env python3
"""Makes tests/cli/data: symbolic_seq.onnx, one Relu over x [batch, seq, 8] whose batch and seq
are symbolic (dim_param), and batch2_seq5.npy, an input of shape [2, 5, 8] that binds both.
The CLI test runs the model with and without the input (vacc binds dimension 0 from --batch,
any other symbolic dimension only from --input's shape)."""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "tests", "cli", "data"))
    args = p.parse_args()
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "seq", 8])
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "symbolic_seq", [x], [y])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="vacc tests")
    m.ir_version = 8
    onnx.checker.check_model(m)
    os.makedirs(args.out, exist_ok=True)
    onnx.save(m, os.path.join(args.out, "symbolic_seq.onnx"))
    x = np.linspace(-1, 1, 2 * 5 * 8, dtype=np.float32).reshape(2, 5, 8)
    np.save(os.path.join(args.out, "batch2_seq5.npy"), x)


if __name__ == "__main__":
    main()
