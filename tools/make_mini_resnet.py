#!/usr/bin/python3
"""Writes the miniature ResNet the end-to-end tests compile: a 3-channel 7x7 stride-2 stem
(the layer vacc folds im2col-style), max pooling, a basic block with a residual add, global
average pooling and a dense head, with seeded random weights, plus calibration and test inputs.

  tools/make_mini_resnet.py --out tests/e2e/data
"""
import argparse
import os

import numpy as np
import torch


class MiniResNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 16, 7, stride=2, padding=3, bias=False)
        self.bn = torch.nn.BatchNorm2d(16)
        self.pool = torch.nn.MaxPool2d(3, stride=2, padding=1)
        self.conv1 = torch.nn.Conv2d(16, 16, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(16, 16, 3, padding=1)
        self.head = torch.nn.Linear(16, 10)

    def forward(self, x):
        x = self.pool(torch.relu(self.bn(self.stem(x))))
        y = self.conv2(torch.relu(self.conv1(x)))
        x = torch.relu(x + y)
        x = torch.nn.functional.adaptive_avg_pool2d(x, 1)
        return self.head(torch.flatten(x, 1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(0)
    model = MiniResNet()
    with torch.no_grad():  # statistics that are not the identity, so folding them matters
        model.bn.running_mean.uniform_(-0.5, 0.5)
        model.bn.running_var.uniform_(0.5, 2.0)
    model.eval()
    x = torch.randn(1, 3, 32, 32)
    torch.onnx.export(model, x, os.path.join(args.out, "mini_resnet.onnx"), opset_version=13,
                      input_names=["input"], output_names=["logits"])
    rng = np.random.default_rng(0)
    np.save(os.path.join(args.out, "mini_resnet_calib.npy"),
            rng.standard_normal((16, 3, 32, 32)).astype(np.float32))
    np.save(os.path.join(args.out, "mini_resnet_inputs.npy"),
            rng.standard_normal((4, 3, 32, 32)).astype(np.float32))


if __name__ == "__main__":
    main()
