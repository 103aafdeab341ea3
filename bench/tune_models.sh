#!/usr/bin/env bash
# Whole models tuned: each model on each config with `vacc tune` (its own log, the database
# left alone), then per (model, config): the heuristic's and the tuned cycles summed over the
# model's accelerator layers, how many workloads gained, and none lost (the tuner measures the
# heuristic's point first); trials, seconds and trials per second; how many workloads were
# alternative folding/fusion forms, and which sites the tuned cycles took off the heuristic's.
# Usage: bench/tune_models.sh VACC OUT_DIR TRIALS JOBS MODEL.onnx... -- CONFIG...
# e.g.   bench/tune_models.sh build/vacc /tmp/tm 48 2 /tmp/m/resnet18.onnx /tmp/m/mobilenet_v2.onnx \
#          -- default small wide tests/perf/configs/b8x16_bus128.yaml tests/perf/configs/batch2.yaml
# TUNE_FLAGS in the environment go to every `vacc tune` (e.g. TUNE_FLAGS=--tails).
set -euo pipefail
vacc=$1 out=$2 trials=$3 jobs=$4
shift 4
models=()
while [[ $# -gt 0 && $1 != -- ]]; do models+=("$1"); shift; done
shift
configs=("$@")
mkdir -p "$out"
printf '%-16s %-14s %9s %5s %12s %12s %7s %7s %7s %8s %8s  %s\n' model config workloads alt heuristic tuned gain gained trials seconds trials/s 'graph choices off the heuristic'
for m in "${models[@]}"; do
  for c in "${configs[@]}"; do
    name=$(basename "$m" .onnx)-$(basename "$c" .yaml)
    # A config of batch B runs the model at batch B.
    batch=$(sed -n 's/^ *batch: *\([0-9]*\).*/\1/p' "$( [[ -f $c ]] && echo "$c" || echo configs/$c.yaml )" | head -1)
    "$vacc" tune "$m" --config "$c" --batch "${batch:-1}" -o "$out/$name.log" --trials "$trials" \
      -j "$jobs" --json --no-db-update ${TUNE_FLAGS:-} >"$out/$name.json"
    /usr/bin/python3 - "$out/$name.json" "$(basename "$m" .onnx)" "$(basename "$c" .yaml)" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
tasks = r["tasks"]
gained = sum(1 for t in tasks if t["best_cycles"] < t["heuristic_cycles"])
lost = [t["workload"] for t in tasks if t["best_cycles"] > t["heuristic_cycles"]]
assert not lost, lost
alt = sum(1 for t in tasks if t.get("alternative"))
off = [f'{c["node"]} {c["choice"]}' for c in r.get("graph_choices", []) if not c["heuristic"]]
print(f'{sys.argv[2]:<16} {sys.argv[3]:<14} {len(tasks):>9} {alt:>5} {r["heuristic_cycles"]:>12} '
      f'{r["tuned_cycles"]:>12} {r["heuristic_cycles"] / r["tuned_cycles"]:>6.3f}x '
      f'{gained:>7} {r["measured"]:>7} {r["seconds"]:>8.1f} {r["trials_per_second"]:>8.1f}  '
      f'{"; ".join(off) or "-"}')
PY
  done
done
