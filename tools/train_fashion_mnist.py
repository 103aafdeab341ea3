#!/usr/bin/python3
"""Trains vacc's bundled model: a small CNN on Fashion-MNIST, exported to ONNX.

Reads the IDX files of Debian's dataset-fashion-mnist package, trains a seeded CNN for a few
epochs on the CPU, reports its float test accuracy and writes, under --out (models/ by default):

  fashion_mnist_cnn.onnx          the model (opset 13, input "input" N x 1 x 28 x 28 float32)
  fashion_mnist_samples.npy       the first --samples test images, float32 NCHW, normalized
  fashion_mnist_labels.npy        their labels, int64
  fashion_mnist_logits.npy        PyTorch's float32 outputs for those samples (a reference
                                  for vacc's float executor)

With --reference-only, trains nothing: loads the weights of an existing
fashion_mnist_cnn.onnx into the same network and rewrites the samples, labels and logits.

Channel counts are multiples of 16 (the accelerator's default block size) except the first
convolution's single input channel. The input is normalized as (pixel / 255 - MEAN) / STD;
the same constants are recorded in the ONNX model's metadata (vacc.mean, vacc.std) so that
the C++ side normalizes the raw test set exactly like this script.
"""

import argparse
import gzip
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

DATASET_DIR = "/usr/share/datasets/fashion-mnist"
MEAN = 0.2860
STD = 0.3530


def read_idx(path):
    """Reads a gzipped IDX file (images: N x 28 x 28 uint8, labels: N uint8)."""
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic = int.from_bytes(data[0:4], "big")
    ndim = magic & 0xFF
    if (magic >> 8) != 0x08:
        sys.exit(f"{path}: not an unsigned-byte IDX file (magic {magic:#x})")
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load_split(dataset_dir, prefix):
    images = read_idx(os.path.join(dataset_dir, f"{prefix}-images-idx3-ubyte.gz"))
    labels = read_idx(os.path.join(dataset_dir, f"{prefix}-labels-idx1-ubyte.gz"))
    x = (images.astype(np.float32) / 255.0 - MEAN) / STD
    return torch.from_numpy(x[:, None, :, :].copy()), torch.from_numpy(labels.astype(np.int64))


class Net(nn.Module):
    """conv(1->16) relu pool, conv(16->32) relu pool, conv(32->32) relu, dense 1568->64->10."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.conv3 = nn.Conv2d(32, 32, 3, padding=1)
        self.fc1 = nn.Linear(32 * 7 * 7, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = F.relu(self.conv3(x))
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return self.fc2(x)


def accuracy(model, x, y, batch=1000):
    model.eval()
    correct = 0
    with torch.no_grad():
        for i in range(0, len(x), batch):
            correct += (model(x[i:i + batch]).argmax(1) == y[i:i + batch]).sum().item()
    return 100.0 * correct / len(x)


def load_onnx_weights(model, onnx_path):
    """Copies the initializers of an exported model back into `model` (same names)."""
    import onnx
    from onnx import numpy_helper
    weights = {t.name: numpy_helper.to_array(t) for t in onnx.load(onnx_path).graph.initializer}
    state = {k: torch.from_numpy(weights[k].copy()) for k in model.state_dict()}
    model.load_state_dict(state)


def write_samples(model, test_x, test_y, out, count):
    model.eval()
    with torch.no_grad():
        logits = model(test_x[:count]).numpy().astype(np.float32)
    np.save(os.path.join(out, "fashion_mnist_samples.npy"),
            test_x[:count].numpy().astype(np.float32))
    np.save(os.path.join(out, "fashion_mnist_labels.npy"),
            test_y[:count].numpy().astype(np.int64))
    np.save(os.path.join(out, "fashion_mnist_logits.npy"), logits)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default=DATASET_DIR, help="directory of the IDX .gz files")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "models"))
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--samples", type=int, default=256)
    parser.add_argument("--reference-only", action="store_true",
                        help="rewrite samples and PyTorch logits for the existing model")
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    for name in ("train-images-idx3-ubyte.gz", "t10k-images-idx3-ubyte.gz"):
        if not os.path.exists(os.path.join(args.dataset, name)):
            sys.exit(f"{args.dataset}/{name} is missing: install dataset-fashion-mnist "
                     "(apt-get install dataset-fashion-mnist) or pass --dataset DIR")
    train_x, train_y = load_split(args.dataset, "train")
    test_x, test_y = load_split(args.dataset, "t10k")

    model = Net()
    if args.reference_only:
        onnx_path = os.path.join(args.out, "fashion_mnist_cnn.onnx")
        load_onnx_weights(model, onnx_path)
        print(f"float test accuracy of {onnx_path}: {accuracy(model, test_x, test_y):.2f}%")
        write_samples(model, test_x, test_y, args.out, args.samples)
        return
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(
        opt, T_max=args.epochs * ((len(train_x) + args.batch - 1) // args.batch))
    gen = torch.Generator().manual_seed(args.seed)
    for epoch in range(args.epochs):
        model.train()
        start = time.time()
        perm = torch.randperm(len(train_x), generator=gen)
        total = 0.0
        for i in range(0, len(train_x), args.batch):
            idx = perm[i:i + args.batch]
            loss = F.cross_entropy(model(train_x[idx]), train_y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item() * len(idx)
        print(f"epoch {epoch + 1}/{args.epochs}: loss {total / len(train_x):.4f}, "
              f"test accuracy {accuracy(model, test_x, test_y):.2f}% "
              f"({time.time() - start:.0f} s)", flush=True)

    acc = accuracy(model, test_x, test_y)
    print(f"float test accuracy: {acc:.2f}% on {len(test_x)} images")

    os.makedirs(args.out, exist_ok=True)
    onnx_path = os.path.join(args.out, "fashion_mnist_cnn.onnx")
    model.eval()
    torch.onnx.export(model, test_x[:1], onnx_path, opset_version=13,
                      input_names=["input"], output_names=["logits"],
                      dynamic_axes={"input": {0: "N"}, "logits": {0: "N"}})
    import onnx
    m = onnx.load(onnx_path)
    for key, value in (("vacc.mean", f"{MEAN}"), ("vacc.std", f"{STD}"),
                       ("vacc.float_accuracy", f"{acc:.2f}")):
        entry = m.metadata_props.add()
        entry.key, entry.value = key, value
    onnx.checker.check_model(m)
    onnx.save(m, onnx_path)
    write_samples(model, test_x, test_y, args.out, args.samples)
    print(f"wrote {onnx_path} and {args.samples} samples")


if __name__ == "__main__":
    main()
