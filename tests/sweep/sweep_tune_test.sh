#!/usr/bin/env bash
# A sweep that tunes each point (spec key `tune`): every row carries its cycles under the
# heuristic's schedules beside the tuned ones; the heuristic's are what `vacc bench model` gives
# for that point's config with no tuning (an independent run of the compile path), the tuned
# ones never more, tuning_gain their ratio, and both Pareto fronts are marked.
# Usage: sweep_tune_test.sh VACC SOURCE_DIR
set -u
vacc=$1
src=$2
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../cli/expect.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/vacc-sweep-tune-XXXXXX")
trap 'rm -rf "$work"' EXIT
export VACC_CACHE_DIR=$work/cache   # no tuning database of the user's

cat >"$work/t.yaml" <<EOF
name: tuned
base: $src/configs/small.yaml
axes:
  gemm.block_out: [8, 16]
tune:
  trials: 6
  strategy: random
workloads:
  - model: $src/models/fashion_mnist_cnn.onnx
    name: fmnist
EOF
"$vacc" sweep "$work/t.yaml" -o "$work/out" -j 2 >"$work/out.txt" 2>&1
expect "tuned sweep runs" 0 "2 rows: 2 ok" -- cat "$work/out.txt"
expect "summary compares the rankings" 0 "fmnist: tuned, the fastest point is" -- cat "$work/out.txt"
for point in 0 1; do
  bo=$((8 * (point + 1)))
  sed "s/block_out: 8/block_out: $bo/" "$src/configs/small.yaml" >"$work/p$point.yaml"
  "$vacc" bench model "$src/models/fashion_mnist_cnn.onnx" --config "$work/p$point.yaml" \
    --engine perf --no-tuning-db --json >"$work/p$point.json" 2>/dev/null
done
expect "heuristic cycles are the untuned compile's" 0 "ok" -- /usr/bin/python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
rows = {r["point"]: r for r in json.load(open(f"{work}/out/results.json"))["results"]}
for point in (0, 1):
    r = rows[point]
    bench = json.load(open(f"{work}/p{point}.json"))
    assert r["heuristic_cycles"] == bench["total"]["cycles"], (r["heuristic_cycles"], bench["total"])
    # The tuner ranks each layer's schedules in a run of that layer alone, where the tuned one is
    # never slower; in the model's run a tensor's place in DRAM shifts a layer's cycles by a
    # few (bursts against their boundaries), so the whole model is held to within 1 %.
    assert r["cycles"] <= 1.01 * r["heuristic_cycles"], r
    assert abs(r["tuning_gain"] - r["heuristic_cycles"] / r["cycles"]) < 1e-9, r
    assert r["tune_trials"] > 0
    for key in ("pareto_heuristic_latency_area", "pareto_heuristic_latency_energy"):
        assert r[key] in (0, 1), r
print("ok")
PY
expect_summary
