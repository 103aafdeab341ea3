#!/usr/bin/python3
"""Checks one ISA extension in the bundled extension sweep's results.csv: every point with the
extension on against its twin with it off (same workload, GEMM shape and other extensions).

    extension_pairs.py RESULTS EXT --pairs N [--without EXT2,...] [--slack S]
                       [--faster-below R --min-faster K] [--ff]

Asserts N pairs; on takes at most S x off's cycles; on takes fewer than R x off's cycles on at
least K pairs; on costs more LUTs (and FFs with --ff). --without keeps only the rows where
those extensions are off. Prints "ok".
"""
import argparse
import csv

EXTENSIONS = ["alu_clip", "alu_hold", "gemm_assign", "alu_shr_clip"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("ext")
    ap.add_argument("--pairs", type=int, required=True)
    ap.add_argument("--without", default="")
    ap.add_argument("--slack", type=float, default=1.0)
    ap.add_argument("--faster-below", type=float, default=1.0)
    ap.add_argument("--min-faster", type=int, default=1)
    ap.add_argument("--ff", action="store_true")
    args = ap.parse_args()
    without = [e for e in args.without.split(",") if e]
    others = [e for e in EXTENSIONS if e != args.ext and e not in without]
    by = {}
    for r in csv.DictReader(open(args.results)):
        if any(r["extensions." + e] != "off" for e in without):
            continue
        key = (r["workload"], r["gemm.block_in"], r["gemm.block_out"],
               *(r["extensions." + e] for e in others))
        by.setdefault(key, {})[r["extensions." + args.ext]] = r
    faster = 0
    for key, pair in by.items():
        off, on = pair["off"], pair["on"]
        assert int(on["cycles"]) <= args.slack * int(off["cycles"]), (key, on["cycles"],
                                                                       off["cycles"])
        assert float(on["lut"]) > float(off["lut"]), (key, on["lut"], off["lut"])
        if args.ff:
            assert float(on["ff"]) > float(off["ff"]), (key, on["ff"], off["ff"])
        faster += int(on["cycles"]) < args.faster_below * int(off["cycles"])
    assert len(by) == args.pairs and faster >= args.min_faster, (len(by), faster)
    print("ok")


if __name__ == "__main__":
    main()
