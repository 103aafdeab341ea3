#!/usr/bin/env bash
# `mpirun -n 2 vacc tune`: rank 0 tunes, both ranks' workers measure. The same seed and batch
# (two workers in one process against one worker on each of two ranks) give the same trials,
# trial for trial, as one process; the other rank measured some of them; rank 0's error ends
# the run.
# Usage: tune_mpi_test.sh VACC SOURCE_DIR
set -uo pipefail
vacc=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export VACC_CACHE_DIR=$tmp/cache
source "$src/tests/cli/expect.sh"
model=$src/models/fashion_mnist_cnn.onnx

"$vacc" tune "$model" --config small -o "$tmp/one.log" --trials 12 -j 2 --no-db-update \
  >/dev/null 2>&1
expect tune_mpi 0 '[1-9][0-9]* of them on the other 1 MPI rank' -- mpirun --allow-run-as-root --oversubscribe \
  -n 2 "$vacc" tune "$model" --config small -o "$tmp/mpi.log" --trials 12 -j 1 --no-db-update
expect tune_mpi_same_trials 0 'ok' -- /usr/bin/python3 - "$tmp/one.log" "$tmp/mpi.log" <<'PY'
import json, sys
def trials(path):
    return [(t["workload"], json.dumps(t["schedule"], sort_keys=True), t.get("cycles"), t["error"])
            for t in map(json.loads, open(path))]
one, mpi = trials(sys.argv[1]), trials(sys.argv[2])
assert len(one) == 60 and one == mpi, (len(one), len(mpi))
print("ok")
PY
expect tune_mpi_rank1_workers 0 'tune-rank1-worker-0.log' -- ls "$tmp/mpi.log.workers"
# Rank 0's error ends every rank, with its message.
expect err_mpi_no_model 1 'nope.onnx: no such model file' -- mpirun --allow-run-as-root \
  --oversubscribe -n 2 "$vacc" tune "$tmp/nope.onnx" --config small -o "$tmp/x.log" --trials 2
expect_summary
