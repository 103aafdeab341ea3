#!/usr/bin/python3
"""Exports torchvision models and a transformer encoder block (seeded random weights) for vacc's fidelity tests.

For each model writes, under --out (not committed; CTest's fixture writes build/fidelity-models):

  <name>.onnx              opset 13, input "input" (1 x 3 x 224 x 224 float32 for the CNNs,
                           299 x 299 for inception_v3)
  <name>_input.npy         one seeded random input
  <name>_output.npy        PyTorch's float32 output for it
  <name>_inputs.npy        --test-inputs seeded random inputs, [K, *input shape]
  <name>_outputs.npy       PyTorch's float32 outputs for them, [K, *output shape]
  <name>_calib.npy         --calib-inputs other seeded inputs for int8 calibration, [M, *input shape]

--models takes torchvision.models constructors (resnet18, mobilenet_v2, mobilenet_v3_small,
googlenet, squeezenet1_0, ...), "encoder": torch.nn.TransformerEncoderLayer (batch_first,
GELU, d_model 64, 4 heads, feed-forward 128) on 1 x 16 x 64 token embeddings, and
"attention": the same block written out (multi-head self-attention, a ReLU feed-forward, no
layer norm) from MatMul, Softmax, Slice, Reshape and Transpose alone; "lstm", "gru" and "rnn":
two-layer recurrent networks (torch.nn.LSTM bidirectional, GRU one direction, RNN with ReLU
bidirectional; 16 features, hidden 32, learned initial states) over 12 steps (batch first, as
vacc's calibration and batch binding read the first axis; PyTorch transposes to the sequence
first for ONNX) with a linear head on the last step.

Without Debian's python3-torch it writes <out>/TORCH_ABSENT, says so and exits with 77
(CTest's skip code), so that the tests reading the exports skip and say why.
"""

import argparse
import os
import sys

DEFAULT_MODELS = ("resnet18,mobilenet_v2,mobilenet_v3_small,googlenet,squeezenet1_0,encoder,"
                  "attention,lstm,gru,rnn")


def images(torch, n, gen, size=224):
    """Random images with the structure of photographs rather than white noise: low-resolution
    noise upsampled (smooth regions and edges), a random contrast and brightness per image and
    channel, and some fine noise. Statistically, white-noise inputs are all the same image: a
    network's output then hardly depends on which one it sees, and int8-sized input noise
    moves it as much as the input does."""
    low = torch.randn(n, 3, 14, 14, generator=gen)
    x = torch.nn.functional.interpolate(low, size=(size, size), mode="bilinear", align_corners=False)
    x = x / x.std(dim=(2, 3), keepdim=True)
    contrast = torch.rand(n, 3, 1, 1, generator=gen) + 0.5
    brightness = torch.rand(n, 3, 1, 1, generator=gen) - 0.5
    return contrast * x + brightness + 0.2 * torch.randn(n, 3, size, size, generator=gen)


def calibrate_batch_norms(model, torch, seed, size=224):
    """Random BatchNorm scales and shifts, and running statistics measured on random inputs.

    torchvision's initialization leaves every BatchNorm an identity on its running statistics
    (mean 0, variance 1), which no trained network has: through a deep network the signal then
    collapses, and the output hardly depends on the input (MobileNetV2's logits agreed to five
    digits across inputs). Statistics measured on inputs keep each layer's output normalized,
    so that the output varies with the input as a trained network's does; random scales and
    shifts keep folding them into the convolutions non-trivial.
    """
    gen = torch.Generator().manual_seed(seed + 100)
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.reset_running_stats()
            m.momentum = None  # a cumulative average over the batches below
            m.weight.data.uniform_(0.5, 1.5, generator=gen)
            m.bias.data.uniform_(-0.1, 0.1, generator=gen)
    model.train()
    with torch.no_grad():
        for _ in range(2):
            model(images(torch, 8, gen, size))
    # A channel that random weights leave almost silent would have its noise amplified by its
    # tiny variance, which no trained network does (its scale shrinks instead): each channel's
    # variance is floored at its layer's mean.
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_var.copy_(torch.maximum(m.running_var, m.running_var.mean()))
    model.eval()


def attention_block(torch, d=64, heads=4):
    class Attention(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = torch.nn.Linear(d, 3 * d)
            self.out = torch.nn.Linear(d, d)
            self.ff1 = torch.nn.Linear(d, 2 * d)
            self.ff2 = torch.nn.Linear(2 * d, d)

        def forward(self, x):
            b, t, _ = x.shape
            qkv = self.qkv(x)
            q, k, v = (qkv[..., i * d:(i + 1) * d].reshape(b, t, heads, d // heads).transpose(1, 2)
                       for i in range(3))
            scores = torch.softmax(q @ k.transpose(-1, -2) / (d // heads) ** 0.5, dim=-1)
            a = (scores @ v).transpose(1, 2).reshape(b, t, d)
            y = x + self.out(a)
            return y + self.ff2(torch.relu(self.ff1(y)))

    return Attention()


def recurrent_model(torch, kind, features=16, hidden=32):
    class Recurrent(torch.nn.Module):
        def __init__(self):
            super().__init__()
            dirs = 1 if kind == "gru" else 2
            if kind == "lstm":
                self.r = torch.nn.LSTM(features, hidden, num_layers=2, bidirectional=True,
                                       batch_first=True)
            elif kind == "gru":
                self.r = torch.nn.GRU(features, hidden, num_layers=2, batch_first=True)
            else:
                self.r = torch.nn.RNN(features, hidden, num_layers=2, nonlinearity="relu",
                                      bidirectional=True, batch_first=True)
            self.h0 = torch.nn.Parameter(0.5 * torch.randn(2 * dirs, 1, hidden))
            self.c0 = torch.nn.Parameter(0.5 * torch.randn(2 * dirs, 1, hidden))
            self.head = torch.nn.Linear(dirs * hidden, 10)

        def forward(self, x):
            y, _ = self.r(x, (self.h0, self.c0) if kind == "lstm" else self.h0)
            return self.head(y[:, -1])

    return Recurrent()


def build(name, seed, torch, torchvision):
    """The model in eval mode and its input shape."""
    torch.manual_seed(seed)
    if name == "attention":
        return attention_block(torch).eval(), (1, 32, 64)
    if name in ("lstm", "gru", "rnn"):
        return recurrent_model(torch, name).eval(), (1, 12, 16)
    if name == "encoder":
        model = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128,
                                                 dropout=0.0, activation="gelu",
                                                 batch_first=True)
        return model.eval(), (1, 16, 64)
    ctor = getattr(torchvision.models, name)
    kwargs = {"weights": None}
    size = 224
    if name == "googlenet":
        kwargs.update(aux_logits=False, init_weights=True)
    if name == "inception_v3":  # its stride-2 stem needs 299 x 299 images
        kwargs.update(aux_logits=False, init_weights=True)
        size = 299
    model = ctor(**kwargs)
    calibrate_batch_norms(model, torch, seed, size)
    return model, (1, 3, size, size)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--models", default=DEFAULT_MODELS,
                        help="comma-separated torchvision.models constructors or 'encoder'")
    parser.add_argument("--test-inputs", type=int, default=4)
    parser.add_argument("--calib-inputs", type=int, default=4)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    absent = os.path.join(args.out, "TORCH_ABSENT")
    try:
        import numpy as np
        import torch
        import torchvision
    except ImportError as e:
        with open(absent, "w") as f:
            f.write(f"{e}\n")
        print(f"skipped: {e} (install Debian's python3-torch and python3-torchvision)")
        sys.exit(77)
    if os.path.exists(absent):
        os.remove(absent)
    torch.set_num_threads(args.threads)
    for name in args.models.split(","):
        model, shape = build(name, args.seed, torch, torchvision)
        gen = torch.Generator().manual_seed(args.seed + 1)
        if len(shape) == 4:  # images
            inputs = images(torch, args.test_inputs, gen, shape[-1]).unsqueeze(1)
            calib = images(torch, args.calib_inputs, gen, shape[-1]).unsqueeze(1)
        else:  # token embeddings or a sequence of feature vectors
            inputs = torch.randn(args.test_inputs, *shape, generator=gen)
            calib = torch.randn(args.calib_inputs, *shape, generator=gen)
        with torch.no_grad():
            outputs = torch.stack([model(x) for x in inputs])
        path = os.path.join(args.out, f"{name}.onnx")
        torch.onnx.export(model, inputs[0], path, opset_version=13, input_names=["input"],
                          output_names=["output"])

        def save(suffix, t):
            np.save(os.path.join(args.out, f"{name}_{suffix}.npy"), t.numpy().astype(np.float32))

        save("input", inputs[0])
        save("output", outputs[0])
        save("inputs", inputs)
        save("outputs", outputs)
        save("calib", calib)
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
