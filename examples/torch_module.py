#!/usr/bin/python3
"""Compile a PyTorch module for the accelerator and check it against PyTorch.

    PYTHONPATH=build/python /usr/bin/python3 examples/torch_module.py [--engine fsim|perf]

The module is exported to ONNX in memory (Debian's torch 1.13 has no torch.compile), quantized
to int8 with calibration images, and run on a simulator; the float model too, on the CPU.
"""

import argparse

import numpy as np
import torch

import vacc
import vacc.torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
            torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2))
        self.classifier = torch.nn.Linear(32 * 8 * 8, 10)

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engine", default="perf")
    ap.add_argument("--config", default="default")
    args = ap.parse_args()

    torch.manual_seed(0)
    net = Net().eval()
    rng = np.random.default_rng(0)
    calib = torch.from_numpy(rng.normal(size=(64, 3, 32, 32)).astype(np.float32))
    x = torch.from_numpy(rng.normal(size=(1, 3, 32, 32)).astype(np.float32))

    int8 = vacc.torch.compile(net, x, config=args.config, calibration=calib, engine=args.engine)
    fp32 = vacc.torch.compile(net, x, config=args.config, float=True)
    with torch.no_grad():
        want = net(x)
    got, got_float = int8(x), fp32(x)

    p = int8.package
    print("compiled %s: %d steps, %d on the accelerator (config '%s')"
          % (p.model, p.steps, p.accelerator_steps, p.config_name))
    print(int8.last_result.profile.table)
    cos = torch.nn.functional.cosine_similarity(got.flatten(), want.flatten(), dim=0)
    print("PyTorch   ", np.array2string(want.numpy()[0], precision=3))
    print("vacc int8 ", np.array2string(got.numpy()[0], precision=3))
    print("int8 vs PyTorch: max |diff| %.4f (output max %.4f), cosine %.5f, arg-max %s"
          % ((got - want).abs().max(), want.abs().max(), cos,
             "agrees" if got.argmax() == want.argmax() else "DIFFERS"))
    print("float vs PyTorch: max |diff| %.2e" % (got_float - want).abs().max())
    ok = cos > 0.99 and torch.allclose(got_float, want, rtol=1e-4, atol=1e-4)
    print("OK" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
