#!/usr/bin/env bash
# `vacc bench model` and the utilization of `vacc run` on the bundled model, checked against
# figures recomputed here from the JSON: the total is the sum of the layers, each layer's
# ideal is the larger of its compute and DRAM bounds, no layer beats its ideal, utilization
# counts the model's own MACs (conv1's single input channel, not the 16 it is padded to), and
# the text table agrees with the JSON. Usage: bench_model_test.sh VACC SOURCE_DIR
set -uo pipefail
vacc=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$src/tests/cli/expect.sh"
model=$src/models/fashion_mnist_cnn.onnx

check_bench_json() {
  /usr/bin/python3 - "$1" <<'PY'
import json, math, sys
j = json.load(open(sys.argv[1]))
peak, bw = j["peak_macs_per_cycle"], j["dram_bytes_per_cycle"]
layers, t = j["layers"], j["total"]
assert len(layers) == 5 == t["accel_steps"], "3 convolutions and 2 dense layers"
for l in layers:
    assert l["compute_cycles"] == math.ceil(l["macs"] / peak), l
    assert l["dram_cycles"] == math.ceil(l["dram_bytes"] / bw), l
    assert l["ideal_cycles"] == max(l["compute_cycles"], l["dram_cycles"]), l
    assert l["bound"] == ("dram" if l["dram_cycles"] > l["compute_cycles"] else "compute"), l
    assert 0 < l["macs"] <= l["executed_macs"], l
    assert l["cycles"] >= l["ideal_cycles"], l
    assert abs(l["ratio_to_ideal"] - l["cycles"] / l["ideal_cycles"]) < 1e-9, l
    assert abs(l["utilization"] - l["macs"] / (l["cycles"] * peak)) < 1e-12, l
conv1 = layers[0]  # the first accelerator step: the model's first convolution
assert conv1["macs"] == 28 * 28 * 16 * 1 * 3 * 3, conv1          # the model's own
assert conv1["executed_macs"] == 28 * 28 * 16 * 16, conv1       # 3x3 window folded: 9 channels padded to 16
for k in ("macs", "executed_macs", "dram_bytes", "compute_cycles", "dram_cycles",
          "ideal_cycles", "cycles"):
    assert t[k] == sum(l[k] for l in layers), k
assert t["ratio_to_ideal"] >= 1
assert abs(t["utilization"] - t["macs"] / (t["cycles"] * peak)) < 1e-12
print("total", t["cycles"], "ideal", t["ideal_cycles"], "macs", t["macs"])
PY
}

check_run_json() {
  /usr/bin/python3 - "$1" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))["profile"]
peak = 256  # config default
accel = [l for l in j["layers"] if l["where"] == "accel"]
conv1 = accel[0]  # the model's first convolution
assert conv1["macs"] == 28 * 28 * 16 * 9 and conv1["executed_macs"] == 28 * 28 * 16 * 16, conv1
assert abs(conv1["utilization"] - conv1["macs"] / (conv1["cycles"] * peak)) < 1e-12, conv1
t = j["total"]
assert t["macs_accel"] == sum(l["macs"] for l in accel)
assert t["executed_macs_accel"] == sum(l["executed_macs"] for l in accel)
assert t["macs_accel"] < t["executed_macs_accel"]
assert abs(t["utilization"] - t["macs_accel"] / (t["cycles"] * peak)) < 1e-12
print("ok")
PY
}

# The model's own MACs: 28*28*16*9 + 14*14*32*16*9 + 7*7*32*32*9 + 1568*64 + 64*10.
"$vacc" bench model "$model" --engine perf --json >"$tmp/perf.json" 2>"$tmp/err"
expect bench-model-perf-json 0 "^total [0-9]+ ideal [0-9]+ macs 1568640" -- check_bench_json "$tmp/perf.json"
total=$(/usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['total']['cycles'])" "$tmp/perf.json")
# rtl's counter, in the text table; perf is calibrated to equal it on this model.
expect bench-model-rtl-text 0 "; $total cycles, [0-9.]+x ideal, utilization" -- \
  "$vacc" bench model "$model" --engine rtl
expect bench-model-columns 0 "MACs +executed +DRAM bytes +cycles +ideal +bound +x ideal +util" -- \
  "$vacc" bench model "$model" --engine fsim
expect bench-model-fsim-no-cycles 0 "cycles: - \(engine fsim counts none\)" -- \
  "$vacc" bench model "$model" --engine fsim
expect bench-model-bad-engine 1 "^error: --engine 'gpu': choose rtl" -- \
  "$vacc" bench model "$model" --engine gpu
expect bench-model-no-file 1 "no such model file" -- "$vacc" bench model "$tmp/none.onnx"
# One timeline per device program (consecutive accelerator steps run as one), named after its
# first step and layer, each a trace of the program's instructions.
"$vacc" bench model "$model" --engine perf --timeline "$tmp/tl" >/dev/null 2>"$tmp/err"
expect bench-model-timelines 0 "^ok" -- /usr/bin/python3 - "$tmp/tl" "$tmp/perf.json" <<'PY'
import glob, json, os, sys
files = sorted(glob.glob(os.path.join(sys.argv[1], "*.json")))
layers = [l for l in json.load(open(sys.argv[2]))["layers"] if l["program"] == l["index"]]
assert len(files) == len(layers), (files, len(layers))
for f, l in zip(files, layers):
    assert os.path.basename(f).startswith("%03d_" % l["index"]), (f, l["index"])
    events = json.load(open(f))["traceEvents"]
    assert any(e.get("ph") == "X" and e["name"].startswith("gemm") for e in events), f
print("ok")
PY
# tools/timeline_summary.py over those timelines: each program's cycles (its steps' shares
# added up) are its last instruction's end (the counter, within a cycle or two), no track
# busier than the program is long, the GEMM track at least a GEMM cycle per executed tile
# product.
expect timeline-summary 0 "^ok" -- /usr/bin/python3 - "$src/tools/timeline_summary.py" "$tmp/tl" \
    "$tmp/perf.json" <<'PY'
import json, subprocess, sys
rows = json.loads(subprocess.run([sys.argv[1], sys.argv[2], "--json"], check=True,
                                 capture_output=True, text=True).stdout)
programs = {}
for l in json.load(open(sys.argv[3]))["layers"]:
    p = programs.setdefault(l["program"], {"cycles": 0, "executed_macs": 0})
    p["cycles"] += l["cycles"]
    p["executed_macs"] += l["executed_macs"]
layers = [programs[k] for k in sorted(programs)]
assert len(rows) == len(layers), (len(rows), len(layers))
for r, l in zip(rows, layers):
    assert abs(r["cycles"] - l["cycles"]) <= 2, (r, l)
    assert all(0 < b <= r["cycles"] for b in r["busy"].values()), r
    assert r["busy"]["compute: GEMM"] >= l["executed_macs"] // 256, (r, l)
print("ok")
PY
expect timeline-summary-no-dir 1 "usage: tools/timeline_summary.py DIR" -- \
  "$src/tools/timeline_summary.py" "$tmp/none"
expect bench-model-timeline-fsim 1 "^error: --timeline needs --engine rtl or perf" -- \
  "$vacc" bench model "$model" --engine fsim --timeline "$tmp/tl2"

"$vacc" run --sim --engine perf --json >"$tmp/run.json" 2>"$tmp/err"
expect run-util-model-macs 0 "^ok" -- check_run_json "$tmp/run.json"
expect run-table-executed 0 "MACs +executed +cycles +util" -- \
  "$vacc" run --sim --engine fsim

expect_summary
