#!/usr/bin/python3
"""Re-run Yosys on every sample of hw/synth/resource_samples.yaml and write the new numbers.

The sweep's resource model is fitted to these samples (sweep/resources.h); when the RTL changes
they must be measured again on it. Each sample's `config` is synthesized with
`vacc hw synth --config C --part xc7z020 --json` (two at a time), and its `yosys` line is
replaced in place; names, configs and comments stay as they are. The header's date line says
when the RTL was last measured: give --rtl-note to replace it.

  tools/resynth_resource_samples.py --vacc build/vacc [--jobs 2] [--only NAME,...]
"""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile

SAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "hw", "synth",
                       "resource_samples.yaml")


def synth(vacc, name, config, workdir):
    path = os.path.join(workdir, name + ".yaml")
    with open(path, "w") as f:  # the sample's flow mapping, named
        f.write("{name: " + name + ", " + config.strip()[1:] + "\n")
    out = subprocess.run([vacc, "hw", "synth", "--config", path, "--part", "xc7z020", "--json"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{name}: vacc hw synth failed:\n{out.stderr}")
    r = json.loads(out.stdout)
    return (f"{{lut: {r['luts']}, ff: {r['ffs']}, dsp: {r['dsps']}, ramb36: {r['ramb36']}, "
            f"ramb18: {r['ramb18']}}}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vacc", required=True)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", default="", help="comma-separated sample names")
    ap.add_argument("--samples", default=SAMPLES)
    ap.add_argument("--rtl-note", default="",
                    help="replaces 'on the RTL of hw/rtl as of ...' up to the next ')' or line end")
    args = ap.parse_args()
    text = open(args.samples).read()
    entries = re.findall(r"- name: (\S+)\n\s+config: (\{.*\})\n\s+yosys: (\{.*\})", text)
    only = set(filter(None, args.only.split(",")))
    todo = [(n, c) for n, c, _ in entries if not only or n in only]
    if only - {n for n, _ in todo}:
        sys.exit(f"no sample named {sorted(only - {n for n, _ in todo})}")
    with tempfile.TemporaryDirectory() as work, \
            concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = dict(zip([n for n, _ in todo],
                           pool.map(lambda nc: synth(args.vacc, nc[0], nc[1], work), todo)))
    for name, yosys in results.items():
        text, n = re.subn(rf"(- name: {re.escape(name)}\n\s+config: \{{.*\}}\n\s+yosys: )\{{.*\}}",
                          lambda m: m.group(1) + yosys, text)
        assert n == 1, name
        print(f"{name}: {yosys}")
    if args.rtl_note:
        text = re.sub(r"on the RTL of hw/rtl as of [^\n]*", "on the RTL of hw/rtl as of " +
                      args.rtl_note, text, count=1)
    open(args.samples, "w").write(text)


if __name__ == "__main__":
    main()
