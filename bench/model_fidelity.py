#!/usr/bin/python3
"""The fidelity table of bench/RESULTS.md: int8 on the accelerator against PyTorch's float.

For each model exported by tools/export_torchvision.py into DIR (the model_exports CTest
fixture writes build/fidelity-models), compiles it as `vacc compile` does (calibrated on the
export's calibration inputs, --calibrate-method METHOD), runs every test input with
`vacc run --sim --engine fsim PACKAGE --input X --json` (accelerator steps on fsim, the rest
on the CPU) and prints one Markdown row: the smallest cosine similarity to PyTorch's float
output over the inputs, on how many inputs the arg-max agrees, the steps on the accelerator
and on the CPU, the host<->accelerator transitions, and the share of the model's MACs the
accelerator runs.

  /usr/bin/python3 bench/model_fidelity.py build/vacc build/fidelity-models [MODEL ...] [--calibrate-method M]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

MODELS = ["resnet18", "mobilenet_v2", "mobilenet_v3_small", "googlenet", "squeezenet1_0",
          "attention", "encoder"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("vacc")
    parser.add_argument("dir")
    parser.add_argument("models", nargs="*", default=MODELS)
    parser.add_argument("--calibrate-method", default="minmax")
    parser.add_argument("--config", default="default")
    args = parser.parse_args()
    print("| model | cosine (min) | top-1 agrees | steps accel / CPU | transitions | MACs on accel |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models:
            base = os.path.join(args.dir, name)
            if not os.path.exists(base + ".onnx"):
                print(f"| {name} | (no export in {args.dir}) | | | | |")
                continue
            pkg = os.path.join(tmp, name + ".vpkg")
            subprocess.run([args.vacc, "compile", base + ".onnx", "--config", args.config,
                            "--calibration", base + "_calib.npy", "--calibrate-method",
                            args.calibrate_method, "-o", pkg, "-q"], check=True,
                           stdout=subprocess.DEVNULL)
            inputs, outputs = np.load(base + "_inputs.npy"), np.load(base + "_outputs.npy")
            cosines, agree = [], 0
            for i, x in enumerate(inputs):
                path = os.path.join(tmp, "x.npy")
                np.save(path, x.astype(np.float32))
                run = subprocess.run([args.vacc, "run", "--sim", "--engine", "fsim", pkg,
                                      "--input", path, "--json"], check=True,
                                     capture_output=True, text=True)
                j = json.loads(run.stdout)
                got = np.array(j["output"]["values"], dtype=np.float64)
                want = outputs[i].astype(np.float64).ravel()
                cosines.append(got @ want / np.linalg.norm(got) / np.linalg.norm(want))
                agree += int(got.argmax() == want.argmax())
            t = j["profile"]["total"]
            accel = t["accel_steps"]
            share = t["macs_accel"] / max(1, t["macs_accel"] + t["macs_cpu"])
            print(f"| {name} | {min(cosines):.5f} | {agree} of {len(inputs)} | "
                  f"{accel} / {t['steps'] - accel} | {t['transitions']} | {100 * share:.1f} % |",
                  flush=True)


if __name__ == "__main__":
    sys.exit(main())
