#!/usr/bin/python3
"""vacc's int8 against PyTorch's own post-training quantization, on the same networks and inputs.

For each torchvision model (built as tools/export_torchvision.py builds them: seeded weights,
BatchNorm statistics measured on image-like inputs, as a trained network's are), on the same
--calib-inputs calibration images and --test-inputs test images:

  PyTorch PTQ  FX graph mode (prepare_fx / convert_fx) with get_default_qconfig_mapping("onednn"):
               per-channel int8 weights, 8-bit histogram-calibrated activations (Debian's torch
               has the onednn and qnnpack engines, not fbgemm);
  vacc         `vacc compile MODEL.onnx --calibration CALIB.npy` (plus any options after --),
               each test input run with `vacc run --sim --engine fsim PACKAGE --input X --json`
               (accelerator steps on fsim, the rest on the CPU);

and prints one Markdown row per model: each one's cosine similarity to PyTorch's float output
(mean and smallest over the test inputs) and on how many inputs its arg-max (top-1) agrees with
float's.

  /usr/bin/python3 bench/ptq_vs_pytorch.py [--vacc build/vacc] [--models resnet18,mobilenet_v2]
      [--test-inputs 16] [--calib-inputs 4] [--threads 1] [-- VACC_COMPILE_OPTION ...]
"""

import argparse
import copy
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def exporter():
    """tools/export_torchvision.py as a module: its model builder and image-like inputs."""
    spec = importlib.util.spec_from_file_location(
        "export_torchvision", os.path.join(HERE, "..", "tools", "export_torchvision.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cosine(a, b):
    a, b = np.asarray(a, np.float64).ravel(), np.asarray(b, np.float64).ravel()
    return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))


def pytorch_ptq(torch, model, calib, tests):
    from torch.ao.quantization import get_default_qconfig_mapping
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx
    torch.backends.quantized.engine = "onednn"
    prepared = prepare_fx(copy.deepcopy(model), get_default_qconfig_mapping("onednn"),
                          example_inputs=(calib[0],))
    with torch.no_grad():
        for x in calib:
            prepared(x)
        quantized = convert_fx(prepared)
        return [quantized(x).numpy() for x in tests]


def vacc_int8(vacc, onnx_path, calib_npy, tests, tmp, extra):
    pkg = os.path.join(tmp, "model.vpkg")
    subprocess.run([vacc, "compile", onnx_path, "--calibration", calib_npy, "-o", pkg, "-q",
                    *extra], check=True, stdout=subprocess.DEVNULL)
    outs = []
    for x in tests:
        path = os.path.join(tmp, "x.npy")
        np.save(path, x.numpy().astype(np.float32))
        run = subprocess.run([vacc, "run", "--sim", "--engine", "fsim", pkg, "--input", path,
                              "--json"], check=True, capture_output=True, text=True)
        outs.append(np.array(json.loads(run.stdout)["output"]["values"], dtype=np.float32))
    return outs


def score(outs, want):
    cos = [cosine(o, w) for o, w in zip(outs, want)]
    agree = sum(int(np.argmax(o) == np.argmax(w)) for o, w in zip(outs, want))
    return cos, agree


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vacc", default=os.path.join(HERE, "..", "build", "vacc"))
    parser.add_argument("--models", default="resnet18,mobilenet_v2")
    parser.add_argument("--test-inputs", type=int, default=16)
    parser.add_argument("--calib-inputs", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    import torch
    import torchvision
    torch.set_num_threads(args.threads)
    ex = exporter()
    n = args.test_inputs
    print(f"vacc compile options: {' '.join(extra) or '(defaults)'}; {args.calib_inputs} "
          f"calibration inputs, {n} test inputs", flush=True)
    print("| model | vacc int8 cosine mean / min | vacc top-1 agrees | PyTorch PTQ cosine "
          "mean / min | PyTorch top-1 agrees | seconds (vacc, PyTorch) |")
    print("|---|---|---|---|---|---|", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            model, shape = ex.build(name, args.seed, torch, torchvision)
            gen = torch.Generator().manual_seed(args.seed + 1)
            tests = ex.images(torch, n, gen, shape[-1]).unsqueeze(1)
            calib = ex.images(torch, args.calib_inputs, gen, shape[-1]).unsqueeze(1)
            with torch.no_grad():
                want = [model(x).numpy() for x in tests]
            onnx_path = os.path.join(tmp, f"{name}.onnx")
            torch.onnx.export(model, tests[0], onnx_path, opset_version=13,
                              input_names=["input"], output_names=["output"])
            calib_npy = os.path.join(tmp, f"{name}_calib.npy")
            np.save(calib_npy, calib.numpy().astype(np.float32))
            t0 = time.time()
            v_cos, v_agree = score(vacc_int8(args.vacc, onnx_path, calib_npy, tests, tmp, extra),
                                   want)
            t1 = time.time()
            p_cos, p_agree = score(pytorch_ptq(torch, model, calib, tests), want)
            t2 = time.time()
            print(f"| {name} | {np.mean(v_cos):.4f} / {min(v_cos):.4f} | {v_agree} of {n} | "
                  f"{np.mean(p_cos):.4f} / {min(p_cos):.4f} | {p_agree} of {n} | "
                  f"{t1 - t0:.0f}, {t2 - t1:.0f} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
