"""Shared fixtures of the Python module's tests (run by ctest with PYTHONPATH=build/python,
VACC_EXE the `vacc` command and VACC_SOURCE_DIR the checkout). Every test compares the module
with an independent reference: the `vacc` command on the same files, or PyTorch."""

import os
import subprocess

import numpy as np
import onnx
import onnx.helper as oh
import onnx.numpy_helper
import pytest

import vacc

SRC = os.environ.get("VACC_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
EXE = os.environ.get("VACC_EXE", os.path.join(SRC, "build", "vacc"))
MODEL = os.path.join(SRC, "models", "fashion_mnist_cnn.onnx")
SAMPLES = os.path.join(SRC, "models", "fashion_mnist_samples.npy")


def cli(*args, check=True):
    """Runs the `vacc` command; returns (exit status, stdout, the message after 'error: ')."""
    p = subprocess.run([EXE, *map(str, args)], capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError("vacc %s failed:\n%s" % (" ".join(map(str, args)), p.stderr))
    err = p.stderr.strip()
    if err.startswith("error: "):
        err = err[len("error: "):]
    return p.returncode, p.stdout, err


def cli_error(*args):
    rc, _, err = cli(*args, check=False)
    assert rc == 1, "vacc %s: expected exit status 1, got %d" % (" ".join(map(str, args)), rc)
    return err


@pytest.fixture(scope="session")
def samples():
    return np.load(SAMPLES)


@pytest.fixture(scope="session")
def cnn_package():
    """The bundled Fashion-MNIST CNN compiled for the default config (as `vacc compile`)."""
    return vacc.compile(MODEL, "default")


def tiny_mlp(path=None, inputs=64, hidden=32, outputs=10, seed=0):
    """A two-layer perceptron (Gemm, Relu, Gemm) with seeded weights: a model that runs in
    about a millisecond. Written to `path` when given; returns the ModelProto."""
    rng = np.random.default_rng(seed)
    w1 = rng.normal(0, 0.2, (hidden, inputs)).astype(np.float32)
    b1 = rng.normal(0, 0.1, (hidden,)).astype(np.float32)
    w2 = rng.normal(0, 0.2, (outputs, hidden)).astype(np.float32)
    b2 = rng.normal(0, 0.1, (outputs,)).astype(np.float32)
    init = [onnx.numpy_helper.from_array(a, n) for a, n in
            [(w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2")]]
    nodes = [oh.make_node("Gemm", ["x", "w1", "b1"], ["h"], transB=1),
             oh.make_node("Relu", ["h"], ["r"]),
             oh.make_node("Gemm", ["r", "w2", "b2"], ["y"], transB=1)]
    g = oh.make_graph(nodes, "tiny_mlp",
                      [oh.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, inputs])],
                      [oh.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, outputs])],
                      init)
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    if path:
        onnx.save(m, str(path))
    return m


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("tiny") / "tiny_mlp.onnx"
    tiny_mlp(path)
    return str(path)
