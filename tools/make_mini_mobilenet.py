#!/usr/bin/python3
"""Writes the miniature MobileNetV2 the end-to-end tests compile: a stride-2 stem, inverted
residual blocks (1x1 expansion, 3x3 depthwise, 1x1 projection, ReLU6 between them, a residual
add) at channel counts that are not multiples of the accelerator's blocks (24-channel and
stride-2 depthwise layers), two grouped convolutions (4 groups of 3 channels, 2 groups of 16),
global average pooling and a dense head, with seeded random weights, plus calibration and
test inputs.

  tools/make_mini_mobilenet.py --out tests/e2e/data
"""
import argparse
import os

import numpy as np
import torch
from torch import nn


def conv_bn(inp, out, kernel, stride=1, groups=1, relu6=True):
    layers = [nn.Conv2d(inp, out, kernel, stride, kernel // 2, groups=groups, bias=False),
              nn.BatchNorm2d(out)]
    if relu6:
        layers.append(nn.ReLU6())
    return layers


class InvertedResidual(nn.Module):
    def __init__(self, inp, out, stride, expand):
        super().__init__()
        hidden = inp * expand
        layers = conv_bn(inp, hidden, 1) if expand != 1 else []
        layers += conv_bn(hidden, hidden, 3, stride, groups=hidden)
        layers += conv_bn(hidden, out, 1, relu6=False)
        self.body = nn.Sequential(*layers)
        self.residual = stride == 1 and inp == out

    def forward(self, x):
        y = self.body(x)
        return x + y if self.residual else y


class MiniMobileNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            *conv_bn(3, 16, 3, stride=2),
            InvertedResidual(16, 8, 1, 1),
            InvertedResidual(8, 12, 2, 3),   # 24-channel depthwise, stride 2
            InvertedResidual(12, 12, 1, 4),  # 48-channel depthwise, residual add
            *conv_bn(12, 32, 3, groups=4),   # groups of 3 input channels
            *conv_bn(32, 32, 3, groups=2),   # groups of 16 channels
            *conv_bn(32, 64, 1))
        self.head = nn.Linear(64, 10)

    def forward(self, x):
        x = nn.functional.adaptive_avg_pool2d(self.features(x), 1)
        return self.head(torch.flatten(x, 1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(0)
    model = MiniMobileNet()
    with torch.no_grad():  # statistics that are not the identity, so folding them matters
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
    model.eval()
    x = torch.randn(1, 3, 32, 32)
    torch.onnx.export(model, x, os.path.join(args.out, "mini_mobilenet.onnx"), opset_version=13,
                      input_names=["input"], output_names=["logits"])
    rng = np.random.default_rng(0)
    np.save(os.path.join(args.out, "mini_mobilenet_calib.npy"),
            rng.standard_normal((16, 3, 32, 32)).astype(np.float32))
    np.save(os.path.join(args.out, "mini_mobilenet_inputs.npy"),
            rng.standard_normal((4, 3, 32, 32)).astype(np.float32))


if __name__ == "__main__":
    main()
