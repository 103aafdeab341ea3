#!/usr/bin/env bash
# Runs the `vacc` command as a user would (README "A first session") and checks its output
# and exit codes. Usage: cli_test.sh VACC SOURCE_DIR
set -uo pipefail
vacc=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$src/tests/cli/expect.sh"

expect help 0 "config" -- "$vacc" --help
expect config-check 0 "peak +256 MACs/cycle = 51.2 GOPS at 100 MHz" -- "$vacc" config check "$src/configs/default.yaml"
expect config-by-name 0 "GEMM core +1 x 32 x 32" -- "$vacc" config check wide
expect config-json 0 '"peak_macs_per_cycle": 64' -- "$vacc" config check small --json
expect config-bad 1 "^error: .*not_pow2_block.yaml: key 'gemm.block_out': must be a power of two" -- \
  "$vacc" config check "$src/tests/error/config/not_pow2_block.yaml"
expect config-missing 1 "^error: config 'nosuch' not found" -- "$vacc" config check nosuch
expect asm 0 "12 instructions" -- "$vacc" asm "$src/programs/dense_relu.s" -o "$tmp/dense.vprog"
expect disasm 0 "^gemm uops=0:4 loop=1,4 acc=0,1 inp=0,0 wgt=0,4" -- "$vacc" disasm "$tmp/dense.vprog"
expect disasm-file 0 "" -- "$vacc" disasm "$tmp/dense.vprog" -o "$tmp/dense.s"
expect reasm 0 "12 instructions" -- "$vacc" asm "$tmp/dense.s" -o "$tmp/again.vprog"
expect same-bytes 0 "" -- cmp "$tmp/dense.vprog" "$tmp/again.vprog"
expect asm-raw 0 "12 instructions" -- "$vacc" asm "$src/programs/dense_relu.s" -o "$tmp/dense.bin"
expect disasm-raw 0 "^finish pop_next" -- "$vacc" disasm "$tmp/dense.bin"
expect sim 0 "macs +4096" -- "$vacc" sim "$tmp/dense.vprog" --engine fsim
expect sim-json 0 '"macs": 4096' -- "$vacc" sim "$src/programs/dense_relu.s" --json
expect sim-dump 0 "macs" -- "$vacc" sim "$tmp/dense.vprog" --dump "out=$tmp/out.npy"
expect dump-file 0 "" -- test -s "$tmp/out.npy"
expect sim-bad-region 1 "no region 'nope' \(regions: x, w, bias, out, uops, insns\)" -- \
  "$vacc" sim "$tmp/dense.vprog" --dump "nope=$tmp/x.npy"
expect sim-wrong-config 1 "was built for config 'default'" -- "$vacc" sim "$tmp/dense.vprog" --config small
expect sim-bad-engine 1 "unknown engine 'gpu'" -- "$vacc" sim "$tmp/dense.vprog" --engine gpu
expect sim-perf 0 "macs +4096" -- "$vacc" sim "$tmp/dense.vprog" --engine perf
expect sim-perf-cycles 0 "GEMM utilization" -- "$vacc" sim "$tmp/dense.vprog" --engine perf
expect sim-perf-timeline 0 "" -- "$vacc" sim "$tmp/dense.vprog" --engine perf --timeline "$tmp/t.json"
expect perf-timeline-file 0 "vacc accelerator \(perf\)" -- cat "$tmp/t.json"
expect sim-timing-only 0 '"cycles": [1-9]' -- \
  "$vacc" sim "$tmp/dense.vprog" --engine perf --timing-only --json
expect sim-timing-only-fsim 1 "^error: --timing-only needs --engine perf" -- \
  "$vacc" sim "$tmp/dense.vprog" --engine fsim --timing-only
expect sim-wave-perf 1 "^error: --wave needs --engine rtl" -- \
  "$vacc" sim "$tmp/dense.vprog" --engine perf --wave "$tmp/w.fst"
expect sim-perf-deadlock 1 "deadlock" -- "$vacc" sim "$src/tests/error/sim/deadlock.s" --engine perf
expect sim-op-limit 1 "^error: instruction [0-9]+ \(.*\): the run reaches [0-9]+ operations, over its limit of 5 " -- \
  "$vacc" sim "$tmp/dense.vprog" --engine fsim --cycle-limit 5
expect sim-no-limit 0 "macs +4096" -- "$vacc" sim "$tmp/dense.vprog" --engine fsim --cycle-limit 0
expect sim-default-limit 1 "over its limit of 200000000 " -- \
  "$vacc" sim "$src/tests/error/sim/operation_limit.s" --engine fsim
expect run-cycle-limit 1 "^error: step [0-9]+ \('[^']+', vacc\.[A-Za-z]+\): instruction [0-9]+ .*over its limit of 100 " -- \
  "$vacc" run --sim --engine fsim --cycle-limit 100
expect run-perf 0 "accelerator cycles" -- "$vacc" run --sim --engine perf
expect run-timing-only 0 "timing only: no outputs were computed" -- \
  "$vacc" run --sim --engine perf --timing-only
expect run-timing-only-check 1 "^error: --timing-only computes no outputs" -- \
  "$vacc" run --sim --engine perf --timing-only --check
# A symbolic dimension beyond the batch is bound by --input's shape, never silently by --batch
# (tests/cli/data from tools/make_symbolic_seq_model.py).
expect run-symbolic-dims 0 "output  f32 \\[2,5,8\\]" -- \
  "$vacc" run --sim --engine fsim "$src/tests/cli/data/symbolic_seq.onnx" \
  --input "$src/tests/cli/data/batch2_seq5.npy"
expect run-symbolic-unbound 1 "^error: .*symbolic_seq.onnx: graph input 'x' has a symbolic dimension 1 \\('seq'\\) that nothing binds.*--input X.npy" -- \
  "$vacc" run --sim --engine fsim "$src/tests/cli/data/symbolic_seq.onnx" --batch 2
# A model exported with a fixed batch of 4 (every dimension fixed), given an input of that
# batch, runs as it is and as a compiled package, with the same outputs
# (tests/cli/data from tools/make_fixed_batch_model.py).
fixed4=$src/tests/cli/data/fixed_batch4.onnx
x4=$src/tests/cli/data/batch4_c16.npy
expect run-fixed-batch 0 "^float +the float model on the CPU.*cosine 0\\.99" -- \
  "$vacc" run --sim --engine fsim "$fixed4" --input "$x4" --float --output "$tmp/fixed4_onnx.npy"
expect compile-fixed-batch 0 "wrote $tmp/fixed4.vpkg" -- \
  "$vacc" compile "$fixed4" --config default -o "$tmp/fixed4.vpkg"
expect run-fixed-batch-package 0 "" -- \
  "$vacc" run --sim --engine fsim "$tmp/fixed4.vpkg" --input "$x4" --output "$tmp/fixed4_pkg.npy"
expect fixed-batch-same-output 0 "" -- cmp "$tmp/fixed4_onnx.npy" "$tmp/fixed4_pkg.npy"
expect run-fixed-batch-other 1 "^error: .*fixed_batch4.onnx: a batch of 2 was asked for, but every graph input's first dimension is fixed \\(input 'x' is \\[4,16,8,8\\]\\)" -- \
  "$vacc" run --sim --engine fsim "$fixed4" --batch 2
expect calibrate 0 "progen +20 +20 \(100.0%, bound 5%\)" -- \
  "$vacc" calibrate --config small --workloads progen --seeds 20
expect fuzz-perf 0 "30 of 30 programs on perf match fsim" -- \
  "$vacc" fuzz-cosim --config small --engine perf --seeds 30
expect sim-rtl-no-build 1 "^error: no RTL model for config 'tiny_wide_out'.*--no-build forbids building one" -- \
  env VACC_CACHE_DIR="$tmp/cache" "$vacc" sim "$src/programs/dense_relu.s" --engine rtl \
  --config "$src/tests/rtl/configs/tiny_wide_out.yaml" --no-build
expect calibrate-bad 1 "^error: --workloads: unknown workload 'nope'" -- \
  "$vacc" calibrate --config small --workloads nope
expect asm-error 1 "^error: .*unknown_region.s:2:15: unknown region 'weights'" -- \
  "$vacc" asm "$src/tests/error/asm/unknown_region.s" -o "$tmp/x.vprog"
expect sim-deadlock 1 "deadlock" -- "$vacc" sim "$src/tests/error/sim/deadlock.s"
# 17 bytes: never a whole number of instructions (README.md's length changes with every edit).
printf 'not a program 17\n' > "$tmp/not_a_program.bin"
expect not-a-program 1 "not a whole number of 16-byte instructions" -- "$vacc" disasm "$tmp/not_a_program.bin"
expect asm-missing 1 "^error: /nonexistent/x.s: cannot open assembly file" -- \
  "$vacc" asm /nonexistent/x.s -o "$tmp/x.vprog"
expect bench-layers-missing 1 "^error: /nonexistent/l.yaml: cannot open the --layers-file" -- \
  "$vacc" bench resnet18-convs --config small --engine fsim --layers-file /nonexistent/l.yaml

# --fallback gpu: without a GPU a clear message and a failing status; with one, a run.
expect fallback-bad 1 "^error: --fallback 'tpu': choose cpu or gpu" -- \
  "$vacc" run --sim --engine fsim --fallback tpu
if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; then
  expect fallback-gpu 0 "CPU steps: gpu \(" -- "$vacc" run --sim --engine fsim --fallback gpu
else
  expect fallback-gpu-absent 1 "^error: --fallback gpu: no GPU: libcuda\.so\.1 cannot be loaded .*--fallback cpu" -- \
    "$vacc" run --sim --engine fsim --fallback gpu
fi
expect_summary
