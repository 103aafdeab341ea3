#!/usr/bin/env bash
# `vacc sweep` as a user runs it, on a 16-point spec (8 invalid, 4 excluded by a constraint,
# 4 run on two workloads):
#   run       the rows, their statuses and reasons, the exports
#   resume    a rerun computes nothing; a sweep killed mid-way resumes to the same results
#   kills     a sweep SIGKILLed at random moments VACC_SWEEP_KILLS times (default 3; make soak:
#             10), rerun after each, ends with the reference's results; a damaged database is
#             refused with its name
#   two       two processes on one DIR run every task once, with the same results
#   mpi       mpirun -n 2 gives the same results, rank 1 taking tasks
#   crash     a worker process killed mid-task costs that task (recorded with the signal), the
#             sweep goes on; --retry-failed runs it again
#   errors    another spec's DIR, an unreadable model, an unwritable DIR: named, nothing lost
#   extensions the bundled ISA-extension sweep: every point runs; with CLIP on each workload
#             takes no more cycles on any core shape (fewer on some) for more LUTs
# Usage: sweep_cli_test.sh VACC SOURCE_DIR [run resume kills two mpi crash errors extensions]
set -u
vacc=$1
src=$2
shift 2
parts=${*:-run resume kills two mpi crash errors}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../cli/expect.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/vacc-sweep-test-XXXXXX")
trap 'rm -rf "$work"' EXIT

spec=$work/t.yaml
cat >"$spec" <<EOF
name: t
base: $src/configs/small.yaml
axes:
  gemm.block_out: [8, 16]
  memory.bytes_per_cycle: [8, 16]   # 16 bytes per cycle on the 64-bit bus: invalid
  clock_mhz: [100, 200]
  memory.latency_cycles: [32, 64]
constraints:
  - dsp <= 150                      # 1x8x16 needs 179 DSPs: excluded
workloads:
  - bench: resnet18-convs
    layers: [C12]
  - model: $src/models/fashion_mnist_cnn.onnx
    name: fmnist
    calibration: $src/models/fashion_mnist_samples.npy
EOF

# The results without the wall-time columns (which differ from run to run).
figures() {
  /usr/bin/python3 - "$1" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for r in rows:
    for k in ("compile_s", "run_s"):
        r.pop(k, None)
    print(sorted(r.items()))
EOF
}

same_figures() { diff <(figures "$1") <(figures "$2"); }

count_rows() {  # FILE STATUS
  /usr/bin/python3 -c "import csv,sys; print(sum(r['status']==sys.argv[2] for r in csv.DictReader(open(sys.argv[1]))))" "$1" "$2"
}

ref=$work/ref
"$vacc" sweep "$spec" -o "$ref" -j 2 >"$work/ref.out" 2>&1
expect "reference sweep runs" 0 "32 rows: 8 ok, 0 failed, 16 invalid, 8 excluded, 0 pending" \
  -- cat "$work/ref.out"

if [[ $parts == *run* ]]; then
  expect "one row per point and workload" 0 "^33$" -- bash -c "wc -l <'$ref/results.csv'"
  expect "invalid rows name the key" 0 "^16$" -- count_rows "$ref/results.csv" invalid
  expect "invalid reason" 0 "key 'memory.bytes_per_cycle': must be a power of two between 1 and 8, got 16" \
    -- cat "$ref/results.csv"
  expect "excluded reason" 0 "constraint 'dsp <= 150' \(dsp 179\)" -- cat "$ref/results.csv"
  expect "ok rows" 0 "^8$" -- count_rows "$ref/results.csv" ok
  expect "utilization counts useful MACs" 0 "ok" -- /usr/bin/python3 - "$ref/results.csv" <<'EOF'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    if r["status"] != "ok":
        continue
    util = float(r["utilization"])
    expect = int(r["useful_macs"]) / (int(r["cycles"]) * int(r["peak_macs_per_cycle"]))
    assert abs(util - expect) < 1e-9, (util, expect)
    assert int(r["useful_macs"]) <= int(r["executed_macs"])
    # latency at the clock, energy split adding up
    assert abs(float(r["latency_ms"]) - int(r["cycles"]) / (float(r["clock_mhz"]) * 1e3)) < 1e-9
    parts = sum(float(r[k]) for k in ("energy_mac_uj", "energy_alu_uj", "energy_sram_uj",
                                      "energy_dram_uj", "energy_leakage_uj"))
    assert abs(parts - float(r["energy_uj"])) < 1e-6 * float(r["energy_uj"])
print("ok")
EOF
  expect "json export" 0 '"resource_model"' -- cat "$ref/results.json"
  expect "report written" 0 "<svg class=\"plot\"" -- cat "$ref/report.html"
  expect "json progress" 0 '"event": ?"finish"' -- "$vacc" sweep "$spec" -o "$ref" --json
fi

if [[ $parts == *resume* ]]; then
  expect "a rerun computes nothing" 0 "8 tasks, 8 done before" -- "$vacc" sweep "$spec" -o "$ref"
  out=$work/killed
  # Stop the sweep (SIGKILL: no clean-up) once its first task is in, then resume it.
  "$vacc" sweep "$spec" -o "$out" -j 1 --json >"$work/killed.out" 2>&1 &
  pid=$!
  for _ in $(seq 600); do
    grep -q '"event":"task"' "$work/killed.out" 2>/dev/null && break
    sleep 0.1
  done
  kill -9 $pid
  wait $pid 2>/dev/null
  expect "the killed sweep finished a task" 0 '"event":"task"' -- cat "$work/killed.out"
  expect "resumed sweep skips what is done" 0 "8 tasks, [1-7] done before" \
    -- "$vacc" sweep "$spec" -o "$out" -j 2
  expect "resumed results equal the reference" 0 "^$" \
    -- same_figures "$ref/results.csv" "$out/results.csv"
fi

if [[ $parts == *two* ]]; then
  out=$work/two
  "$vacc" sweep "$spec" -o "$out" -j 1 >"$work/two-a.out" 2>&1 &
  a=$!
  "$vacc" sweep "$spec" -o "$out" -j 1 >"$work/two-b.out" 2>&1 &
  b=$!
  wait $a
  sa=$?
  wait $b
  sb=$?
  expect "both processes succeed" 0 "^0 0$" -- echo "$sa $sb"
  expect "every task ran once" 0 "^8$" \
    -- bash -c "cat '$work/two-a.out' '$work/two-b.out' | grep -c '^\[[0-9]*/8\] run '"
  "$vacc" sweep "$spec" -o "$out" >/dev/null 2>&1  # the last finalize sees every result
  expect "two processes' results equal the reference" 0 "^$" \
    -- same_figures "$ref/results.csv" "$out/results.csv"
fi

if [[ $parts == *kills* ]]; then
  out=$work/kills
  kills=${VACC_SWEEP_KILLS:-3}
  RANDOM=7  # the same moments every run
  landed=0
  for k in $(seq "$kills"); do
    # SIGKILL the sweep (no clean-up; its workers see their pipes close) 0.1 to 0.9 s in,
    # while it plans, runs tasks, writes its database or its exports.
    "$vacc" sweep "$spec" -o "$out" -j 1 >"$work/kill$k.out" 2>&1 &
    pid=$!
    sleep "0.$(( RANDOM % 9 + 1 ))"
    kill -9 "$pid" 2>/dev/null && landed=$((landed + 1))
    wait "$pid" 2>/dev/null
  done
  expect "kills landed mid-run" 0 "^[1-9]" -- echo "$landed of $kills"
  expect "after $kills kills the sweep resumes and finishes" 0 "32 rows: 8 ok, 0 failed" \
    -- "$vacc" sweep "$spec" -o "$out" -j 2
  expect "killed and resumed results equal the reference" 0 "^$" \
    -- same_figures "$ref/results.csv" "$out/results.csv"
  damaged=$work/damaged
  mkdir -p "$damaged"
  head -c 4096 /dev/urandom >"$damaged/sweep.db"
  expect "a damaged database is refused" 1 \
    "sweep.db: the sweep database is damaged or not a sweep database .*delete $damaged to start over" \
    -- "$vacc" sweep "$spec" -o "$damaged"
fi

if [[ $parts == *mpi* ]]; then
  out=$work/mpi
  expect "mpirun -n 2" 0 "32 rows: 8 ok" -- mpirun --allow-run-as-root --oversubscribe -n 2 \
    "$vacc" sweep "$spec" -o "$out"
  expect "rank 1 ran tasks" 0 "rank1-worker-0.log" -- ls "$out/logs"
  expect "MPI results equal one process's" 0 "^$" \
    -- same_figures "$ref/results.csv" "$out/results.csv"
fi

if [[ $parts == *crash* ]]; then
  out=$work/crash
  "$vacc" sweep "$spec" -o "$out" -j 1 >"$work/crash.out" 2>&1 &
  pid=$!
  # Kill the worker process (not the sweep) while it runs a task.
  worker=""
  for _ in $(seq 600); do
    worker=$(pgrep -P $pid -f sweep-worker || true)
    [[ -n $worker ]] && break
    sleep 0.1
  done
  sleep 0.3
  [[ -n $worker ]] && kill -9 $worker
  wait $pid
  expect "the sweep survives its worker" 0 "32 rows: 7 ok, 1 failed" -- cat "$work/crash.out"
  expect "the task records the signal" 0 "the worker process killed by signal 9" \
    -- cat "$out/results.csv"
  expect "--retry-failed runs it again" 0 "32 rows: 8 ok, 0 failed" \
    -- "$vacc" sweep "$spec" -o "$out" --retry-failed
  expect "retried results equal the reference" 0 "^$" \
    -- same_figures "$ref/results.csv" "$out/results.csv"
fi

if [[ $parts == *errors* ]]; then
  other=$work/other.yaml
  sed 's/clock_mhz: \[100, 200\]/clock_mhz: [100, 300]/' "$spec" >"$other"
  before=$(md5sum <"$ref/results.csv")
  expect "another spec's DIR is refused" 1 "$ref/sweep.db: holds the results of another sweep spec \($spec" \
    -- "$vacc" sweep "$other" -o "$ref"
  expect "nothing was changed" 0 "^$before$" -- bash -c "md5sum <'$ref/results.csv'"
  expect "the first spec's results are intact" 0 "8 tasks, 8 done before" -- "$vacc" sweep "$spec" -o "$ref"
  sed "s|model: $src/models/fashion_mnist_cnn.onnx|model: $work/missing.onnx|" "$spec" >"$work/missing.yaml"
  expect "unreadable model" 1 "key 'workloads\[1\].model': cannot read $work/missing.onnx" \
    -- "$vacc" sweep "$work/missing.yaml" -o "$work/m"
  expect "nothing written for a bad spec" 1 "" -- test -e "$work/m"
  touch "$work/plain"
  expect "unwritable DIR" 1 "$work/plain/out: cannot create the sweep's output directory" \
    -- "$vacc" sweep "$spec" -o "$work/plain/out"
fi

if [[ $parts == *extensions* ]]; then
  ext=$work/extensions
  expect "the bundled ISA-extension sweep runs" 0 "128 rows: 128 ok, 0 failed" \
    -- "$vacc" sweep "$src/configs/sweeps/isa_extensions_sweep.yaml" -o "$ext"
  pairs="/usr/bin/python3 $src/tests/sweep/extension_pairs.py $ext/results.csv"
  # CLIP against its twin without the other extensions: never slower, faster somewhere.
  expect "CLIP: no more cycles, fewer somewhere, more LUTs" 0 "ok" \
    -- $pairs alu_clip --pairs 8 --without alu_hold,gemm_assign,alu_shr_clip
  # HOLD changes timing only. The heuristic's schedules follow its cost model, so a point may
  # take another schedule: none is more than 0.5 % slower (fashion-mnist on 8x8 without CLIP,
  # +0.41 %: conv3's schedule), several are at least 1 % faster, and it costs LUTs and FFs.
  expect "HOLD: at most 0.5 % more cycles, 1 % fewer somewhere, more LUTs and FFs" 0 "ok" \
    -- $pairs alu_hold --pairs 16 --without gemm_assign,alu_shr_clip --slack 1.005 --faster-below 0.99 \
    --min-faster 4 --ff
  # GEMM assign drops the resets before a tile's only GEMM (the heuristic's cost model leaves
  # the schedules as they were): never more cycles, at least 1 % fewer on several points (the
  # CNN's 1x1-like layers on cores of 16 input lanes), more LUTs.
  expect "GEMM assign: no more cycles, 1 % fewer somewhere, more LUTs" 0 "ok" \
    -- $pairs gemm_assign --pairs 32 --without alu_shr_clip --faster-below 0.99 --min-faster 4
  # SHR_CLIP fuses a per-channel requantization's shift and clip: the CNN's layers (per-channel
  # weights) take fewer cycles on every core shape; ResNet-18's benchmark layers requantize by
  # one shift and keep their commands. More LUTs than the twin without it where CLIP is on (the
  # shared clamp's multiplexers).
  expect "SHR_CLIP: no more cycles, 1 % fewer somewhere, more LUTs with CLIP" 0 "ok" \
    -- $pairs alu_shr_clip --pairs 32 --without alu_hold --faster-below 0.99 --min-faster 4
fi

expect_summary
