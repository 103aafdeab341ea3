#!/usr/bin/python3
"""A ResNet-18 run on the perf engine from Python (`import vacc`) against the same run through
the `vacc` command: wall time of the whole process, each pinned to core 0, median of --runs.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_vs_cli.py [--build build] [--runs 5]

Both load the same package (compiled once by `vacc compile`) and input and run it with
`--engine perf` on the CPU reference kernels; the Python process includes importing vacc and
numpy. Also prints the run itself (the executor's seconds) in both. Target: Python at most 5%
more wall time than the command. The model is exported once into BUILD/model-cache by
tools/export_torchvision.py (Debian's torch and torchvision).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)

PY_RUN = """
import sys, time, numpy as np, vacc
pkg = vacc.Package.load(sys.argv[1])
r = pkg.run(np.load(sys.argv[2]), engine="perf")
print(r.seconds, r.profile.total["cycles"])
"""


def timed(cmd, env=None):
    t0 = time.perf_counter()
    p = subprocess.run(["taskset", "-c", "0", *cmd], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), p.stderr))
    return wall, p.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(SRC, "build"))
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    exe = os.path.join(args.build, "vacc")
    cache = os.path.join(args.build, "model-cache")
    onnx = os.path.join(cache, "resnet18.onnx")
    x = os.path.join(cache, "resnet18_input.npy")
    calib = os.path.join(cache, "resnet18_calib.npy")
    if not os.path.exists(onnx) or not os.path.exists(calib):
        subprocess.run([sys.executable, os.path.join(SRC, "tools", "export_torchvision.py"),
                        "--models", "resnet18", "--out", cache], check=True)
    pkg = os.path.join(cache, "resnet18_bench.vpkg")
    subprocess.run([exe, "compile", onnx, "--calibration", calib, "-o", pkg, "-q"], check=True)

    env = dict(os.environ, PYTHONPATH=os.path.join(args.build, "python"))
    cli_walls, py_walls, cli_runs, py_runs = [], [], [], []
    for _ in range(args.runs):  # interleaved, so that both see the same machine
        wall, out = timed([exe, "run", "--sim", "--engine", "perf", pkg, "--input", x, "--json"])
        j = json.loads(out)
        cli_walls.append(wall)
        cli_runs.append(j["run_seconds"])
        cycles = j["profile"]["total"]["cycles"]
        wall, out = timed([sys.executable, "-c", PY_RUN, pkg, x], env=env)
        seconds, py_cycles = out.split()
        py_walls.append(wall)
        py_runs.append(float(seconds))
        assert int(py_cycles) == cycles, (py_cycles, cycles)
    cli_w, py_w = statistics.median(cli_walls), statistics.median(py_walls)
    print("ResNet-18, --engine perf, %d runs each (median), pinned to core 0; %d cycles in both"
          % (args.runs, cycles))
    print("  vacc run (command)   wall %.3f s   run %.3f s" % (cli_w, statistics.median(cli_runs)))
    print("  Package.run (Python) wall %.3f s   run %.3f s" % (py_w, statistics.median(py_runs)))
    print("  Python / command: wall %+.1f%%, run %+.1f%% (target: wall at most +5%%)"
          % (100 * (py_w / cli_w - 1),
             100 * (statistics.median(py_runs) / statistics.median(cli_runs) - 1)))
    return 0 if py_w <= 1.05 * cli_w else 1


if __name__ == "__main__":
    raise SystemExit(main())
