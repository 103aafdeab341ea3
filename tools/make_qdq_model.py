#!/usr/bin/python3
"""Quantizes an ONNX CNN into the QDQ form ONNX Runtime's quantize_static writes, in numpy.

vacc runs such a model with its own scales (docs/quantization.md). ONNX Runtime is not a
Debian package, so this script does what its static QDQ quantization does, with the same
choices:

  - activations: min/max calibration over --calib images; uint8 with a zero point
    (asymmetric, ONNX Runtime's default) or, with --symmetric, int8 with zero point 0;
    scale = (max - min) / 255 with the range widened to include 0 (symmetric: max|x| / 127);
  - weights: int8, symmetric, one scale per output channel (max|w[c]| / 127, axis 0);
  - biases: int32 at the scale input scale x weight scale, zero point 0;
  - QuantizeLinear -> DequantizeLinear pairs on every Conv and Gemm input, after each Relu
    (a Conv or Gemm followed by a Relu is quantized after the Relu) and on the model's
    output; MaxPool and Flatten reuse their input's parameters, as ONNX Runtime does.

It also evaluates the QDQ model in numpy (float64 arithmetic with ONNX's QuantizeLinear /
DequantizeLinear: round half to even, saturate), an independent reference of the QDQ
arithmetic for vacc's tests, and writes:

  <out>.onnx               the QDQ model (opset 13, the source's metadata kept)
  <out>_reference.npy      its outputs on --inputs, from the numpy evaluation

Supported source operators: Conv, Relu, MaxPool, Flatten, Gemm (transB), which is what the
bundled Fashion-MNIST model uses:

  tools/make_qdq_model.py models/fashion_mnist_cnn.onnx --out models/fashion_mnist_qdq \\
      --inputs models/fashion_mnist_samples.npy
"""

import argparse
import gzip
import os

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

FASHION_MNIST = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"


def conv2d(x, w, b, pads, strides):
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    x = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh = (x.shape[2] - kh) // strides[0] + 1
    ow = (x.shape[3] - kw) // strides[1] + 1
    cols = np.empty((n, c, kh, kw, oh, ow), dtype=np.float64)
    for i in range(kh):
        for j in range(kw):
            cols[:, :, i, j] = x[:, :, i:i + strides[0] * oh:strides[0],
                                 j:j + strides[1] * ow:strides[1]]
    y = np.einsum("nckluv,ockl->nouv", cols, w)
    return y + b.reshape(1, -1, 1, 1)


def max_pool(x, kernel, strides):
    n, c, h, w = x.shape
    oh = (h - kernel[0]) // strides[0] + 1
    ow = (w - kernel[1]) // strides[1] + 1
    y = np.full((n, c, oh, ow), -np.inf)
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            y = np.maximum(y, x[:, :, i:i + strides[0] * oh:strides[0],
                                j:j + strides[1] * ow:strides[1]])
    return y


def quantize(x, scale, zp, dtype):
    info = np.iinfo(dtype)
    return np.clip(np.rint(x / scale) + zp, info.min, info.max).astype(dtype)


def dequantize(q, scale, zp):
    return (q.astype(np.float64) - zp) * scale


def attrs(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def run(model, x, observe=None, qdq=None):
    """Evaluates the source model (qdq=None) or its QDQ form (qdq: parameters by value name)."""
    values = {model.graph.input[0].name: x.astype(np.float64)}
    consts = {i.name: numpy_helper.to_array(i).astype(np.float64) for i in model.graph.initializer}

    def fake_quant(name):
        if qdq and name in qdq["act"]:
            s, z, dt = qdq["act"][name]
            values[name] = dequantize(quantize(values[name], s, z, dt), s, z)

    fake_quant(model.graph.input[0].name)
    for node in model.graph.node:
        a = attrs(node)
        ins = [values[i] if i in values else consts[i] for i in node.input]
        op = node.op_type
        if op in ("Conv", "Gemm") and qdq:
            w_name, b_name = node.input[1], node.input[2]
            ws, wq = qdq["w"][w_name]
            ins[1] = dequantize(wq, ws.reshape((-1,) + (1,) * (wq.ndim - 1)), 0)
            bs, bq = qdq["b"][b_name]
            ins[2] = dequantize(bq, bs, 0)
        if op == "Conv":
            y = conv2d(ins[0], ins[1], ins[2], a.get("pads", [0, 0, 0, 0]), a.get("strides", [1, 1]))
        elif op == "Relu":
            y = np.maximum(ins[0], 0)
        elif op == "MaxPool":
            y = max_pool(ins[0], a["kernel_shape"], a.get("strides", [1, 1]))
        elif op == "Flatten":
            y = ins[0].reshape(ins[0].shape[0], -1)
        elif op == "Gemm":
            assert a.get("transB", 0) == 1 and not a.get("transA", 0)
            y = ins[0] @ ins[1].T + ins[2]
        else:
            raise SystemExit(f"{node.name or op}: {op} is not supported by this script")
        values[node.output[0]] = y
        if observe:
            observe(node.output[0], y)
        fake_quant(node.output[0])
    return values[model.graph.output[0].name]


def activation_params(lo, hi, symmetric):
    # Scales as the model stores them (float32), so that the reference computes with the same.
    if symmetric:
        m = max(abs(lo), abs(hi))
        return float(np.float32(m / 127 if m > 0 else 1.0)), 0, np.int8
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = float(np.float32((hi - lo) / 255 if hi > lo else 1.0))
    zp = int(np.clip(np.rint(-lo / scale), 0, 255))
    return scale, zp, np.uint8


def calibration_images(count, source_npy):
    if os.path.exists(FASHION_MNIST):
        with gzip.open(FASHION_MNIST) as f:
            raw = np.frombuffer(f.read(), dtype=np.uint8, offset=16)
        images = raw.reshape(-1, 1, 28, 28)[:count].astype(np.float32)
        return (images / 255 - 0.286) / 0.353, f"{count} training images of {FASHION_MNIST}"
    x = np.load(source_npy)[:count]
    return x, f"{len(x)} images of {source_npy} (dataset-fashion-mnist absent)"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--out", required=True, help="output path without .onnx")
    parser.add_argument("--inputs", required=True, help="inputs (.npy) for the reference outputs")
    parser.add_argument("--calib", type=int, default=500)
    parser.add_argument("--symmetric", action="store_true",
                        help="int8 activations with zero point 0 instead of uint8")
    args = parser.parse_args()
    model = onnx.load(args.model)
    calib, calib_source = calibration_images(args.calib, args.inputs)

    ranges = {}

    def observe(name, y):
        lo, hi = ranges.get(name, (np.inf, -np.inf))
        ranges[name] = (min(lo, float(y.min())), max(hi, float(y.max())))

    observe(model.graph.input[0].name, calib)
    run(model, calib, observe)

    # Which values carry Q/DQ, and with which parameters: each Conv/Gemm input and output (after
    # a following Relu), the model's input and output; MaxPool and Flatten share their input's.
    producers = {o: n for n in model.graph.node for o in n.output}
    consumers = {}
    for n in model.graph.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    act = {}
    for name, (lo, hi) in ranges.items():
        users = consumers.get(name, [])
        if len(users) == 1 and users[0].op_type == "Relu":
            continue  # quantized after the Relu
        p = producers.get(name)
        if p is not None and p.op_type in ("MaxPool", "Flatten"):
            act[name] = act[p.input[0]]
        else:
            act[name] = activation_params(lo, hi, args.symmetric)
    consts = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    weights, biases = {}, {}
    for n in model.graph.node:
        if n.op_type not in ("Conv", "Gemm"):
            continue
        w = consts[n.input[1]].astype(np.float64)
        m = np.abs(w.reshape(w.shape[0], -1)).max(axis=1)
        ws = np.where(m > 0, m / 127, 1.0).astype(np.float32).astype(np.float64)
        weights[n.input[1]] = (ws, quantize(w, ws.reshape((-1,) + (1,) * (w.ndim - 1)), 0, np.int8))
        bs = (act[n.input[0]][0] * ws).astype(np.float32).astype(np.float64)
        biases[n.input[2]] = (bs, quantize(consts[n.input[2]].astype(np.float64), bs, 0, np.int32))
    qdq = {"act": act, "w": weights, "b": biases}

    # The QDQ graph: every quantized value v becomes Q(v) -> DQ -> v_dequantized, which its
    # consumers read; the model's output keeps its name on the last DequantizeLinear.
    out_name = model.graph.output[0].name
    inits = []

    def const(name, array):
        inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def source(name):  # the float value as its producer writes it
        return f"{name}_float" if name == out_name else name

    def qdq_pair(name):
        s, z, dt = act[name]
        sn = const(f"{name}_scale", np.float32(s))
        zn = const(f"{name}_zero_point", np.array(z, dtype=dt))
        dq_out = out_name if name == out_name else f"{name}_dequantized"
        return [helper.make_node("QuantizeLinear", [source(name), sn, zn], [f"{name}_quantized"],
                                 name=f"{name}_Q"),
                helper.make_node("DequantizeLinear", [f"{name}_quantized", sn, zn], [dq_out],
                                 name=f"{name}_DQ")]

    def dequantized_const(name, scale, codes, zp_dtype):
        return helper.make_node(
            "DequantizeLinear",
            [const(f"{name}_quantized", codes), const(f"{name}_scale", scale.astype(np.float32)),
             const(f"{name}_zero_point", np.zeros(len(scale), dtype=zp_dtype))],
            [f"{name}_dequantized"], name=f"{name}_DQ", axis=0)

    graph_nodes = qdq_pair(model.graph.input[0].name)
    for n in model.graph.node:
        new = onnx.NodeProto()
        new.CopyFrom(n)
        for k, i in enumerate(new.input):
            if i in weights:
                graph_nodes.append(dequantized_const(i, *weights[i], np.int8))
            elif i in biases:
                graph_nodes.append(dequantized_const(i, *biases[i], np.int32))
            elif i not in act:
                continue
            new.input[k] = f"{i}_dequantized"
        for k, o in enumerate(new.output):
            new.output[k] = source(o)
        graph_nodes.append(new)
        for o in n.output:
            if o in act:
                graph_nodes += qdq_pair(o)
    graph = helper.make_graph(graph_nodes, model.graph.name + "_qdq", list(model.graph.input),
                              list(model.graph.output), inits)
    qmodel = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                               producer_name="vacc tools/make_qdq_model.py")
    for p in model.metadata_props:
        qmodel.metadata_props.append(p)
    meta = qmodel.metadata_props.add()
    meta.key, meta.value = "vacc.qdq_calibration", calib_source
    onnx.checker.check_model(qmodel)
    onnx.save(qmodel, args.out + ".onnx")

    x = np.load(args.inputs)
    reference = run(model, x, qdq=qdq).astype(np.float32)
    np.save(args.out + "_reference.npy", reference)
    float_out = run(model, x)
    agree = (reference.argmax(1) == float_out.argmax(1)).mean()
    print(f"wrote {args.out}.onnx and {args.out}_reference.npy ({len(x)} inputs; calibrated on "
          f"{calib_source}; QDQ arg-max agrees with float on {100 * agree:.1f} %)")


if __name__ == "__main__":
    main()
