#!/usr/bin/env bash
# `vacc tune` as a user runs it, with its own tuning database (VACC_CACHE_DIR): tune the bundled
# model on small, check the JSON against the log it wrote (every task's best is the log's
# lowest cycles for its workload, never above the heuristic's), resume, then compile and run
# with the result and see the tuned schedules in the per-layer table; and one case per error.
# mpi: `mpirun -n 2 vacc tune` gives the same trials, trial for trial, as one process with as many
# workers; the other rank measured some of them; rank 0's error ends the run.
# Usage: tune_test.sh VACC SOURCE_DIR [run mpi]
set -uo pipefail
vacc=$1
src=$2
parts=${3:-run}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export VACC_CACHE_DIR=$tmp/cache
source "$src/tests/cli/expect.sh"
model=$src/models/fashion_mnist_cnn.onnx

if [[ $parts == *run* ]]; then
  "$vacc" tune "$model" --config small -o "$tmp/fm.log" --trials 10 --strategy random --json \
    >"$tmp/tune.json" 2>"$tmp/tune.err"
  expect tune_ran 0 'ok' -- /usr/bin/python3 - "$tmp/tune.json" "$tmp/fm.log" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
trials = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
assert report["measured"] == len(trials) > 0, (report["measured"], len(trials))
for t in report["tasks"]:
    mine = [x for x in trials if x["workload"] == t["workload"]]
    assert len(mine) == t["measured"] <= 10, t
    good = [x["cycles"] for x in mine if "cycles" in x]
    assert t["best_cycles"] == min(good), t
    heur = [x["cycles"] for x in mine if x["heuristic"]]
    assert len(heur) == 1 and t["heuristic_cycles"] == heur[0] >= t["best_cycles"], t
assert report["tuned_cycles"] <= report["heuristic_cycles"]
print("ok")
PY
  expect tune_resumes 0 '"measured": 0' -- "$vacc" tune "$model" --config small -o "$tmp/fm.log" \
    --trials 10 --strategy random --json
  expect tune_db_written 0 'fm' -- bash -c "ls $tmp/cache/tuning/*.jsonl && echo fm"
  expect run_uses_db 0 'accel.*tuned h' -- "$vacc" run --sim --engine perf --config small
  expect run_without_db 0 'accel.*heuristic h' -- "$vacc" run --sim --engine perf --config small \
    --no-tuning-db
  expect compile_with_log 0 'wrote' -- "$vacc" compile "$model" --config small \
    --tuning-log "$tmp/fm.log" --no-tuning-db -o "$tmp/fm.vpkg" -q

  # One case per error.
  expect err_no_model 1 'give a model \(MODEL.onnx\) or --bench resnet18-convs' -- \
    "$vacc" tune -o "$tmp/x.log"
  expect err_bench 1 "--bench resnet50: the benchmark vacc tune knows is resnet18-convs" -- \
    "$vacc" tune --bench resnet50 -o "$tmp/x.log"
  expect err_strategy 1 "--strategy 'best': choose random, grid, anneal or model" -- \
    "$vacc" tune "$model" --strategy best -o "$tmp/x.log"
  expect err_trials 1 '--trials 0: tune at least one trial per task' -- \
    "$vacc" tune "$model" --trials 0 -o "$tmp/x.log"
  expect err_missing_model 1 'nope.onnx: no such model file' -- \
    "$vacc" tune "$tmp/nope.onnx" -o "$tmp/x.log"
  printf 'not a trial\n' >"$tmp/bad.log"
  expect err_bad_log 1 "bad.log:1: not JSON" -- \
    "$vacc" tune "$model" --config small -o "$tmp/bad.log" --trials 2
  expect err_tuning_log_missing 1 '--tuning-log .*none.log: no such file' -- \
    "$vacc" compile "$model" --tuning-log "$tmp/none.log" -o "$tmp/y.vpkg"
  # A log whose schedule names a loop order that does not exist.
  head -1 "$tmp/fm.log" | sed 's/"resident":[0-9]/"resident":5/' >"$tmp/bad_order.log"
  expect err_tuning_log_resident 1 \
    "bad_order.log:1: field 'schedule': field 'resident' = 5 must be 0 \(none\), 1 \(weights\) or 2 \(inputs\)" \
    -- "$vacc" compile "$model" --config small --tuning-log "$tmp/bad_order.log" -o "$tmp/z.vpkg"
fi

if [[ $parts == *mpi* ]]; then
  "$vacc" tune "$model" --config small -o "$tmp/one.log" --trials 12 -j 2 --no-db-update \
    >/dev/null 2>&1
  expect tune_mpi 0 '[1-9][0-9]* of them on the other 1 MPI rank' -- mpirun --allow-run-as-root \
    --oversubscribe -n 2 "$vacc" tune "$model" --config small -o "$tmp/mpi.log" --trials 12 -j 1 \
    --no-db-update
  expect tune_mpi_same_trials 0 'ok' -- /usr/bin/python3 - "$tmp/one.log" "$tmp/mpi.log" <<'PY'
import json, sys
def trials(path):
    return [(t["workload"], json.dumps(t["schedule"], sort_keys=True), t.get("cycles"), t["error"])
            for t in map(json.loads, open(path))]
one, mpi = trials(sys.argv[1]), trials(sys.argv[2])
workloads = {t[0] for t in one}  # the model's, and its other folding and fusion forms
assert len(one) == 12 * len(workloads) and one == mpi, (len(one), len(mpi), len(workloads))
print("ok")
PY
  expect tune_mpi_rank1_workers 0 'tune-rank1-worker-0.log' -- ls "$tmp/mpi.log.workers"
  # Rank 0's error ends every rank, with its message.
  expect err_mpi_no_model 1 'nope.onnx: no such model file' -- mpirun --allow-run-as-root \
    --oversubscribe -n 2 "$vacc" tune "$tmp/nope.onnx" --config small -o "$tmp/x.log" --trials 2
fi
expect_summary
