#!/usr/bin/python3
"""Exports torchvision's ResNet-18 and MobileNetV2 (seeded random weights) for vacc's fidelity tests.

With --models, others of torchvision.models too (e.g. squeezenet1_0, for the CPU benchmarks).

For each model writes, under --out (not committed; e.g. build-graph/model-cache):

  <name>.onnx              opset 13, input "input" 1 x 3 x 224 x 224 float32
  <name>_input.npy         one seeded random input
  <name>_output.npy        PyTorch's float32 output for it
  <name>_calib.npy         4 more seeded inputs for int8 calibration

tests/graph/torchvision_fidelity_test.cc reads them (and says so, skipping, when absent).
"""

import argparse
import os

import numpy as np
import torch
import torchvision


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--models", default="resnet18,mobilenet_v2",
                        help="comma-separated torchvision.models constructors")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    os.makedirs(args.out, exist_ok=True)
    for name in args.models.split(","):
        ctor = getattr(torchvision.models, name)
        torch.manual_seed(args.seed)
        model = ctor(weights=None).eval()
        # Random BatchNorm statistics, so that folding them is not trivially exact.
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
        gen = torch.Generator().manual_seed(args.seed + 1)
        x = torch.randn(1, 3, 224, 224, generator=gen)
        calib = torch.randn(4, 1, 3, 224, 224, generator=gen)
        with torch.no_grad():
            y = model(x)
        path = os.path.join(args.out, f"{name}.onnx")
        torch.onnx.export(model, x, path, opset_version=13, input_names=["input"],
                          output_names=["output"])
        np.save(os.path.join(args.out, f"{name}_input.npy"), x.numpy().astype(np.float32))
        np.save(os.path.join(args.out, f"{name}_output.npy"), y.numpy().astype(np.float32))
        np.save(os.path.join(args.out, f"{name}_calib.npy"), calib.numpy().astype(np.float32))
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
