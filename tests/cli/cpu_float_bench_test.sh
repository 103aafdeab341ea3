#!/usr/bin/env bash
# `vacc bench model --float` and the CPU backend's kernel cache on disk, as a user meets them:
# the first process compiles every kernel and stores it, a second process compiles none and
# links all from the cache, a process of another thread count compiles only the kernels it plans
# otherwise, a damaged entry is reported and compiled again, and the float
# model's output with cached kernels equals the graph reference executor's. `vacc run` prints
# compile and run time apart. Usage: cpu_float_bench_test.sh VACC SOURCE_DIR
set -uo pipefail
vacc=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$src/tests/cli/expect.sh"
model=$src/models/fashion_mnist_cnn.onnx
export VACC_CACHE_DIR=$tmp/cache
# Dense convolutions are planned for the thread pool's size (compiler/ops/cpu/conv_nchwc_plan.h),
# so a kernel cached by a process of one thread count may not serve another: every process here
# runs one thread, but those that say otherwise.
export VACC_NUM_THREADS=1

field() {  # field FILE EXPR: a value of the JSON in FILE
  /usr/bin/python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"
}

# First process: everything compiled, nothing from the disk.
"$vacc" bench model "$model" --float --runs 20 --threads 1 --json >"$tmp/first.json" 2>"$tmp/first.err"
expect "first run succeeds" 0 "" -- test -s "$tmp/first.json"
compiled=$(field "$tmp/first.json" 'j["compile"]["compiled"]')
expect "first process compiles kernels" 0 "^ok" -- /usr/bin/python3 -c "
import json; j = json.load(open('$tmp/first.json')); c = j['compile']
assert c['compiled'] > 0 and c['disk_cache_hits'] == 0, c
assert j['runs'] == 20 and j['threads'] == 1, j
assert 0 < j['min_seconds'] <= j['median_seconds'] <= j['max_seconds'], j
assert abs(sum(o['median_seconds'] for o in j['ops']) - j['median_seconds']) < j['median_seconds']
print('ok')"
expect "entries are stored" 0 "^$compiled\$" -- bash -c "ls '$VACC_CACHE_DIR/cpu' | grep -c '\\.o\$'"

# Second process: nothing compiled, every kernel from the disk cache.
"$vacc" bench model "$model" --float --runs 20 --json >"$tmp/second.json"
expect "second process compiles nothing" 0 "^0 $compiled 0\$" -- \
  field "$tmp/second.json" '" ".join(str(j["compile"][k]) for k in ("compiled", "disk_cache_hits", "damaged_entries"))'

# A damaged entry: reported, compiled again, replaced.
entry=$(ls "$VACC_CACHE_DIR"/cpu/*.o | head -1)
head -c 100 "$entry" >"$tmp/short" && cp "$tmp/short" "$entry"
"$vacc" bench model "$model" --float --runs 20 --json >"$tmp/third.json" 2>"$tmp/third.err"
expect "damaged entry is reported" 0 "kernel cache entry .*\\.o is damaged \\(its size is not" -- cat "$tmp/third.err"
expect "damaged entry is compiled again" 0 "^1 $((compiled - 1)) 1\$" -- \
  field "$tmp/third.json" '" ".join(str(j["compile"][k]) for k in ("compiled", "disk_cache_hits", "damaged_entries"))'
"$vacc" bench model "$model" --float --runs 20 --json >"$tmp/fourth.json"
expect "replaced entry is used" 0 "^0 $compiled\$" -- \
  field "$tmp/fourth.json" '" ".join(str(j["compile"][k]) for k in ("compiled", "disk_cache_hits"))'
# A process of two threads compiles only the kernels planned otherwise for two threads, and
# stores them: a second one compiles nothing.
"$vacc" bench model "$model" --float --runs 5 --threads 2 --json >"$tmp/two.json"
expect "two threads compile only what they plan otherwise" 0 "^ok" -- field "$tmp/two.json" \
  "'ok' if j['threads'] == 2 and j['compile']['compiled'] < $compiled else j['compile']"
"$vacc" bench model "$model" --float --runs 5 --threads 2 --json >"$tmp/two_again.json"
expect "a second process of two threads compiles nothing" 0 "^0 0\$" -- \
  field "$tmp/two_again.json" '" ".join(str(j["compile"][k]) for k in ("compiled", "damaged_entries"))'

# The float output with the cached LLVM kernels equals the graph reference executor's (the
# bundled model on a bundled image).
"$vacc" run --sim --engine fsim --float --cpu llvm --json >"$tmp/llvm.json"
"$vacc" run --sim --engine fsim --float --cpu reference --json >"$tmp/ref.json"
expect "cached kernels equal the reference" 0 "^ok" -- /usr/bin/python3 -c "
import json
l = json.load(open('$tmp/llvm.json')); r = json.load(open('$tmp/ref.json'))
assert l['float']['cpu_kernels']['compiled'] == 0, l  # the bench above stored them
assert l['float']['cpu_kernels']['disk_cache_hits'] > 0, l
a, b = l['float']['values'], r['float']['values']
assert len(a) == len(b) == 10
scale = max(abs(x) for x in b)
assert all(abs(x - y) <= 1e-4 * scale for x, y in zip(a, b)), (a, b)
print('ok')"
expect "vacc run prints compile and run time apart" 0 \
  "time +CPU kernels: compile [0-9.]+ s \\(0 kernels compiled, [0-9]+ from the disk cache.*\\); run [0-9.]+ s" -- \
  "$vacc" run --sim --engine fsim --cpu llvm

expect "text report" 0 "20 warm runs: median [0-9.]+ ms, min [0-9.]+ ms, max [0-9.]+ ms" -- \
  "$vacc" bench model "$model" --float
if ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; then
  expect "--fallback gpu without a GPU" 1 "--fallback gpu: .*libcuda\\.so\\.1.*--fallback cpu" -- \
    "$vacc" bench model "$model" --float --fallback gpu
fi
# One case per message of the command.
expect "threads-without-float" 1 "^error: --threads and --runs need --float" -- \
  "$vacc" bench model "$model" --engine fsim --threads 2
expect "runs-zero" 1 "^error: --runs 0: must be at least 1" -- \
  "$vacc" bench model "$model" --float --runs 0
expect "threads-negative" 1 "^error: --threads -1: must be at least 1 \(0: one per core\)" -- \
  "$vacc" bench model "$model" --float --threads -1
"$vacc" compile "$model" -o "$tmp/m.vpkg" >/dev/null
expect "float-package" 1 "^error: --float benchmarks the float model: give the \.onnx model rather than the package" -- \
  "$vacc" bench model "$tmp/m.vpkg" --float
expect "fallback-bad" 1 "^error: --fallback 'tpu': choose cpu or gpu" -- \
  "$vacc" bench model "$model" --float --fallback tpu
expect_summary
