#!/usr/bin/python3
"""Summarizes the accelerator timelines `vacc bench model --timeline DIR` writes: per device
program (named after its first step; consecutive accelerator steps run as one program unless
compiled with --program-per-layer), its cycles and how many of them each track (load, compute,
compute: GEMM, compute: ALU, store) was busy, so that the unit that bounds a layer can be read
off without opening each trace.

Usage: tools/timeline_summary.py DIR [--json]

A track's busy cycles are the union of its instructions' [start_cycle, end_cycle) intervals;
'idle GEMM' is the step's cycles minus the GEMM track's busy cycles. The widest track is the
one the layer waits on when it is not the GEMM core (DRAM for loads and stores, the ALU for
requantization and pooling).
"""
import json
import os
import sys


def busy_cycles(intervals):
    total, end = 0, -1
    for start, stop in sorted(intervals):
        if stop <= end:
            continue
        total += stop - max(start, end)
        end = stop
    return total


def summarize(path):
    with open(path) as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    names, spans, cycles = {}, {}, 0
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            names[e["tid"]] = e["args"]["name"]
        elif e.get("ph") == "X" and "start_cycle" in e.get("args", {}):
            a = e["args"]
            spans.setdefault(e["tid"], []).append((a["start_cycle"], a["end_cycle"]))
            cycles = max(cycles, a["end_cycle"])
    busy = {names.get(tid, str(tid)): busy_cycles(iv) for tid, iv in spans.items()}
    return cycles, busy


def main():
    args = [a for a in sys.argv[1:] if a != "--json"]
    if len(args) != 1 or not os.path.isdir(args[0]):
        sys.exit("usage: tools/timeline_summary.py DIR [--json]  (DIR from vacc bench model "
                 "--timeline DIR)")
    rows = []
    for name in sorted(os.listdir(args[0])):
        if name.endswith(".json"):
            cycles, busy = summarize(os.path.join(args[0], name))
            rows.append({"step": name[:-5], "cycles": cycles, "busy": busy})
    if "--json" in sys.argv:
        print(json.dumps(rows, indent=1))
        return
    tracks = ["load", "compute: GEMM", "compute: ALU", "store"]
    print(f"{'program (first step)':60} {'cycles':>9} " + " ".join(f"{t:>14}" for t in tracks) +
          f" {'idle GEMM':>10}  widest")
    for r in rows:
        b = r["busy"]
        widest = max(tracks, key=lambda t: b.get(t, 0))
        print(f"{r['step'][:60]:60} {r['cycles']:>9} " +
              " ".join(f"{b.get(t, 0):>14}" for t in tracks) +
              f" {r['cycles'] - b.get('compute: GEMM', 0):>10}  {widest}")
    total = sum(r["cycles"] for r in rows)
    gemm = sum(r["busy"].get("compute: GEMM", 0) for r in rows)
    print(f"\n{len(rows)} programs, {total} cycles, GEMM busy {gemm}, idle GEMM {total - gemm}")


if __name__ == "__main__":
    main()
