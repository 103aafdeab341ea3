#!/usr/bin/python3
"""Sweep two GEMM core shapes of a small accelerator on a model, from Python, and draw the
latency-vs-area Pareto front with matplotlib.

    PYTHONPATH=build/python /usr/bin/python3 examples/sweep_pareto.py [-o OUT_DIR] [--model M.onnx]

The sweep is `vacc sweep`'s (the same resumable database: a rerun only reads it back); the
rows come back as a pandas DataFrame. Writes OUT_DIR/pareto.png.
"""

import argparse
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

import vacc

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", default="/tmp/vacc_sweep_pareto")
    ap.add_argument("--model", default=os.path.join(HERE, "..", "models", "fashion_mnist_cnn.onnx"))
    ap.add_argument("-j", "--jobs", type=int, default=2)
    args = ap.parse_args()

    spec = {
        "name": "two-gemm-shapes",
        "base": "small",
        # Two GEMM core shapes (1x8x8 and 1x16x16), each with two scratchpad sizes.
        "axes": {"gemm.block_in": [8, 16], "gemm.block_out": [8, 16],
                 "buffers.wgt_kib": [8, 32]},
        "workloads": [{"model": os.path.abspath(args.model), "name": "model"}],
    }
    result = vacc.sweep(spec, args.out, jobs=args.jobs)
    df = result.results
    ok = df[df["status"] == "ok"]
    print(ok[["point", "label", "cycles", "latency_ms", "area_mm2", "energy_uj",
              "pareto_latency_area"]].to_string(index=False))

    front = ok[ok["pareto_latency_area"] == 1].sort_values("area_mm2")
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.scatter(ok["area_mm2"], ok["latency_ms"], color="0.6", label="design points")
    ax.plot(front["area_mm2"], front["latency_ms"], "o-", color="C3", label="Pareto front")
    for _, row in ok.iterrows():
        ax.annotate(row["label"].replace("gemm.", "").replace("buffers.", ""),
                    (row["area_mm2"], row["latency_ms"]), fontsize=6, xytext=(3, 3),
                    textcoords="offset points")
    ax.set_xlabel("area (mm²)")
    ax.set_ylabel("latency (ms)")
    ax.set_title("%s: latency vs area" % os.path.basename(args.model))
    ax.legend(loc="lower left")
    fig.tight_layout()
    png = os.path.join(args.out, "pareto.png")
    fig.savefig(png, dpi=120)
    print("%d points, %d on the Pareto front; wrote %s (database %s)"
          % (len(ok), len(front), png, result.database))


if __name__ == "__main__":
    main()
