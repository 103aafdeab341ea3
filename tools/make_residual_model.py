#!/usr/bin/python3
"""Writes the small residual CNN the end-to-end tests compile: two 3x3 convolutions with a
skip connection (a residual add), seeded random weights, plus calibration and test inputs.

  tools/make_residual_model.py --out tests/e2e/data
"""
import argparse
import os

import numpy as np
import torch


class Residual(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(16, 32, 3, padding=1)
        self.conv1 = torch.nn.Conv2d(32, 32, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(32, 32, 3, padding=1)
        self.head = torch.nn.Linear(32 * 8 * 8, 16)

    def forward(self, x):
        x = torch.relu(self.stem(x))
        y = torch.relu(self.conv1(x))
        y = self.conv2(y)
        x = torch.relu(x + y)
        return self.head(torch.flatten(x, 1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(0)
    model = Residual().eval()
    x = torch.randn(1, 16, 8, 8)
    torch.onnx.export(model, x, os.path.join(args.out, "residual_cnn.onnx"), opset_version=13,
                      input_names=["input"], output_names=["logits"])
    rng = np.random.default_rng(0)
    np.save(os.path.join(args.out, "residual_calib.npy"),
            rng.standard_normal((16, 16, 8, 8)).astype(np.float32))
    np.save(os.path.join(args.out, "residual_inputs.npy"),
            rng.standard_normal((4, 16, 8, 8)).astype(np.float32))


if __name__ == "__main__":
    main()
