#!/usr/bin/env bash
# `vacc compile`, `vacc run` and `vacc eval` as a user runs them (README), and one case per
# diagnostic a user can reach from the command line. Usage: e2e_cli_test.sh VACC SOURCE_DIR
set -uo pipefail
vacc=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$src/tests/cli/expect.sh"

model=$src/models/fashion_mnist_cnn.onnx
# The bundled default: sample 0 is an ankle boot.
expect run-bundled 0 "predicted class 9 \(Ankle boot\); label 9 \(Ankle boot\)" -- \
  "$vacc" run --sim --engine fsim
expect run-table 0 "vacc.QConv +accel" -- "$vacc" run --sim --engine fsim
expect run-rtl-cycles 0 "accelerator cycles .* utilization" -- "$vacc" run --sim --engine rtl
expect run-sample 0 "label 1 \(Trouser\)" -- "$vacc" run --sim --engine fsim --sample 2
expect run-json 0 '"where": "accel"' -- "$vacc" run --sim --engine fsim --json
expect run-check 0 "^check +all 12 step outputs equal the compiler's reference execution bit for bit" -- \
  "$vacc" run --sim --engine fsim --check --sample 4
expect run-check-rtl 0 "^check +all 12 step outputs equal" -- "$vacc" run --sim --engine rtl --check
expect run-float 0 "^float +the float model on the CPU.*cosine 0\.9" -- "$vacc" run --sim --engine fsim --float
expect run-float-output 0 "^wrote $tmp/float.npy \(the float model's output\)" -- \
  "$vacc" run --sim --engine fsim --float-output "$tmp/float.npy"
expect float-output-file 0 "" -- test -s "$tmp/float.npy"
expect run-transitions 0 "^total: [0-9]+ steps, 5 on the accelerator in [1-5] programs?, [1-9][0-9]* host<->accelerator transitions" -- \
  "$vacc" run --sim --engine fsim
expect run-json-transitions 0 '"transitions": [1-9]' -- "$vacc" run --sim --engine fsim --json
expect run-json-programs 0 '"programs": [1-4],' -- "$vacc" run --sim --engine fsim --json
expect run-program-per-layer 0 "5 on the accelerator in 5 programs" -- \
  "$vacc" run --sim --engine fsim --program-per-layer
expect compile 0 "wrote $tmp/m.vpkg .*5 on the accelerator" -- \
  "$vacc" compile "$model" --config default -o "$tmp/m.vpkg" --dump-ir "$tmp/ir"
expect dump-graph 0 "" -- test -s "$tmp/ir/graph/15_pack_layout.txt"
expect dump-layer 0 "" -- bash -c "ls $tmp/ir/layers/*conv1*/*.tir >/dev/null && ls $tmp/ir/layers/*/commands.txt >/dev/null"
# Each device program's stream: the three convolutions in one, each step marked.
expect dump-programs 0 "^3$" -- bash -c "grep -c '^# step' $tmp/ir/programs/002_*conv1*.asm"
expect dump-programs-weights 0 "^#   weights moved to WGT \[[0-9]+, [0-9]+\), apart from" -- \
  grep -h "^#   weights" $tmp/ir/programs/002_*conv1*.asm
expect compile-json 0 '"accelerator_steps": 5' -- "$vacc" compile "$model" -o "$tmp/m2.vpkg" --json
# make_npy OUT SHAPE FIRST COUNT: float32 .npy of shape SHAPE (a Python tuple) holding COUNT
# floats of the bundled samples from float FIRST on (plain bash: no NumPy needed).
samples=$src/models/fashion_mnist_samples.npy
samples_header=$((10 + $(od -An -tu2 -j8 -N2 "$samples")))
make_npy() {
  local out=$1 shape=$2 first=$3 count=$4
  local dict="{'descr': '<f4', 'fortran_order': False, 'shape': $shape, }"
  local total=$(( (10 + ${#dict} + 1 + 63) / 64 * 64 ))
  local pad=$(( total - 10 - ${#dict} - 1 ))
  local len=$(( total - 10 ))
  { printf '\x93NUMPY\x01\x00'; printf "\\x$(printf %02x $((len & 255)))\\x$(printf %02x $((len >> 8)))";
    printf '%s%*s\n' "$dict" $pad ''
    tail -c +$((samples_header + 4 * first + 1)) "$samples" | head -c $((4 * count)); } > "$out"
}
make_npy "$tmp/one.npy" "(1, 1, 28, 28)" $((5 * 784)) 784
make_npy "$tmp/four.npy" "(4, 1, 28, 28)" 0 $((4 * 784))
make_npy "$tmp/bad.npy" "(14, 14)" 0 196
if [[ -f $tmp/one.npy ]]; then
  expect run-package 0 "arg-max per row: " -- \
    "$vacc" run --sim --engine fsim "$tmp/m.vpkg" --input "$tmp/one.npy" --output "$tmp/y.npy"
  expect output-file 0 "" -- test -s "$tmp/y.npy"
  expect run-onnx-batch 0 "arg-max per row: 9 2 1 1" -- \
    "$vacc" run --sim --engine fsim "$model" --input "$tmp/four.npy"
  expect error-input-shape 1 "^error: $tmp/bad.npy: holds an array of shape \[14,14\] but input 'input' of $tmp/m.vpkg needs \[1,1,28,28\]" -- \
    "$vacc" run --sim --engine fsim "$tmp/m.vpkg" --input "$tmp/bad.npy"
fi
# A model quantized by its author (QDQ): its own scales, nothing to calibrate.
qdq=$src/models/fashion_mnist_qdq.onnx
if [[ -f $tmp/one.npy ]]; then
  expect run-qdq 0 "^total: [0-9]+ steps, 5 on the accelerator" -- \
    "$vacc" run --sim --engine fsim "$qdq" --input "$tmp/one.npy"
fi
expect compile-qdq 0 "calibration data .*none: the model's own scales" -- \
  "$vacc" compile "$qdq" -o "$tmp/qdq.vpkg"
expect error-qdq-calibration 1 "^error: $qdq: the model is quantized already \(QuantizeLinear/DequantizeLinear\) and runs with its own scales; drop --calibration" -- \
  "$vacc" compile "$qdq" -o "$tmp/qdq2.vpkg" --calibrate-method mse
# Calibration methods.
expect compile-entropy 0 "calibrate .*entropy" -- \
  "$vacc" compile "$model" -o "$tmp/e.vpkg" --calibrate-method entropy
expect compile-align-scales 0 "align_scales .* [1-9][0-9]* layers rescaled to fill their int8 grids" -- \
  "$vacc" compile "$model" -o "$tmp/al.vpkg" --align-scales on
expect error-align-scales 1 "^error: --align-scales 'maybe': choose on or off" -- \
  "$vacc" compile "$model" -o "$tmp/al2.vpkg" --align-scales maybe
expect compile-equalize 0 "equalize_channels .* [1-9][0-9]* layers' output channels balanced against their readers" -- \
  "$vacc" compile "$model" -o "$tmp/eq.vpkg" --equalize on
expect error-equalize 1 "^error: --equalize 'maybe': choose on or off" -- \
  "$vacc" compile "$model" -o "$tmp/eq2.vpkg" --equalize maybe
# Unsigned levels cost nothing on the accelerator: the bundled CNN (fc1's Relu is stored
# unsigned) takes the same cycles and DRAM bytes on perf with and without them.
"$vacc" bench model "$model" --engine perf --json --unsigned-activations on >"$tmp/ua_on.json"
"$vacc" bench model "$model" --engine perf --json --unsigned-activations off >"$tmp/ua_off.json"
expect unsigned-activations-same-cycles 0 "^same$" -- /usr/bin/python3 -c '
import json, sys
on, off = (json.load(open(p))["total"] for p in sys.argv[1:3])
assert on["accel_steps"] == off["accel_steps"] > 0, (on, off)
print("same" if (on["cycles"], on["dram_bytes"]) == (off["cycles"], off["dram_bytes"]) else on)
' "$tmp/ua_on.json" "$tmp/ua_off.json"
# ... and the same command lists but for their numbers (constants, addresses): the offsets
# live in the biases, not in extra instructions.
for u in on off; do
  "$vacc" compile "$model" -o "$tmp/ua_$u.vpkg" -q --unsigned-activations $u --dump-ir "$tmp/ir_$u" \
    >/dev/null
done
expect unsigned-activations-same-commands 0 "^same$" -- bash -c "
  a=\$(cat '$tmp'/ir_on/layers/*/commands.txt | sed 's/[-0-9]\+/N/g')
  b=\$(cat '$tmp'/ir_off/layers/*/commands.txt | sed 's/[-0-9]\+/N/g')
  [[ -n \$a && \$a == \$b ]] && ! cmp -s '$tmp/ua_on.vpkg' '$tmp/ua_off.vpkg' && echo same"
expect error-unsigned-activations 1 "^error: --unsigned-activations 'maybe': choose on or off" -- \
  "$vacc" compile "$model" -o "$tmp/ua.vpkg" --unsigned-activations maybe
# Exact weight scales: each of the five accelerator layers' requantizations multiplies by a
# vector of per-channel multipliers (an ALU mul with a vector operand, which power-of-two scales
# never have); a word other than pow2 or exact is refused.
"$vacc" compile "$model" -o "$tmp/ws.vpkg" -q --weight-scales exact --dump-ir "$tmp/ir_ws" >/dev/null
expect weight-scales-exact 0 "^5 multiplied, 0 before$" -- bash -c "
  m=\$(grep -l 'alu.mul .*src=' '$tmp'/ir_ws/layers/*/commands.txt | wc -l)
  n=\$(grep -l 'alu.mul .*src=' '$tmp'/ir_on/layers/*/commands.txt | wc -l)
  echo \"\$m multiplied, \$n before\""
expect error-weight-scales 1 "^error: --weight-scales 'float': choose pow2 or exact" -- \
  "$vacc" compile "$model" -o "$tmp/ws2.vpkg" --weight-scales float
expect compile-rounding-hessian 0 "input_hessians .* [1-9][0-9]* layers' input Hessians over" -- \
  "$vacc" compile "$model" -o "$tmp/rh.vpkg" --rounding hessian
expect error-rounding 1 "^error: --rounding 'adaround': choose nearest, hessian or learned" -- \
  "$vacc" compile "$model" -o "$tmp/rh2.vpkg" --rounding adaround
expect compile-rounding-learned 0 "weights' rounding learned in [1-9][0-9]* of [1-9][0-9]* layers" -- \
  "$vacc" compile "$model" -o "$tmp/rl.vpkg" --rounding learned
expect error-rounding-seconds 1 "^error: --rounding-seconds 'soon': give the learned rounding's time in seconds above 0" -- \
  "$vacc" compile "$model" -o "$tmp/rl2.vpkg" --rounding learned --rounding-seconds soon
expect error-rounding-seconds-without-learned 1 "^error: --rounding-seconds 30 needs --rounding learned \(the rounding is hessian\)" -- \
  "$vacc" compile "$model" -o "$tmp/rl3.vpkg" --rounding hessian --rounding-seconds 30
expect error-calibrate-method 1 "^error: --calibrate-method 'kl': choose minmax, percentile, mse or entropy" -- \
  "$vacc" compile "$model" -o "$tmp/e2.vpkg" --calibrate-method kl
expect error-percentile-method 1 "^error: --percentile 99.9 needs --calibrate-method percentile \(the method is minmax\)" -- \
  "$vacc" run --sim --engine fsim --percentile 99.9
# Diagnostics.
expect error-no-target 1 "^error: vacc run: choose where accelerator steps run: --sim" -- \
  "$vacc" run
expect error-no-model 1 "^error: $tmp/nosuch.onnx: no such model file" -- \
  "$vacc" run --sim "$tmp/nosuch.onnx"
echo "not a model" > "$tmp/model.txt"
expect error-unknown-model 1 "^error: $tmp/model.txt: unknown model file: expected an ONNX model" -- \
  "$vacc" run --sim "$tmp/model.txt"
expect error-package-config 1 "^error: $tmp/m.vpkg: the package was compiled for config 'default', whose accelerator differs from config 'small'" -- \
  "$vacc" run --sim --engine fsim --config small "$tmp/m.vpkg"
cp "$tmp/m.vpkg" "$tmp/corrupt.vpkg"
printf '\x55' | dd of="$tmp/corrupt.vpkg" bs=1 seek=3000 conv=notrunc status=none
expect error-package-corrupt 1 "^error: $tmp/corrupt.vpkg: corrupt package \(checksum mismatch\)" -- \
  "$vacc" run --sim --engine fsim "$tmp/corrupt.vpkg"
echo "garbage" > "$tmp/garbage.vpkg"
expect error-package-magic 1 "^error: $tmp/garbage.vpkg: not a vacc package \(bad magic" -- \
  "$vacc" run --sim "$tmp/garbage.vpkg"
expect error-float-output-package 1 "^error: --float-output runs the float model: give the .onnx model rather than the package" -- \
  "$vacc" run --sim --engine fsim "$tmp/m.vpkg" --float-output "$tmp/f2.npy"
expect error-engine 1 "^error: --engine 'gpu': choose rtl .* or fsim" -- "$vacc" run --sim --engine gpu
expect run-cpu-llvm 0 "predicted class 9 \(Ankle boot\); label 9 \(Ankle boot\)" -- \
  "$vacc" run --sim --engine fsim --cpu llvm
expect error-cpu-unknown 1 "^error: --cpu 'gpu': choose reference or llvm" -- \
  "$vacc" run --sim --engine fsim --cpu gpu
expect error-fpga-no-xclbin 1 "^error: vacc run --fpga: give the bitstream with --xclbin FILE" -- \
  env -u VACC_XCLBIN "$vacc" run --fpga
expect error-fpga-no-board 1 "^error: .*xclbin" -- "$vacc" run --fpga --xclbin "$tmp/nosuch.xclbin"
expect error-compile-not-onnx 1 "^error: $tmp/m.vpkg: vacc compile takes an ONNX model" -- \
  "$vacc" compile "$tmp/m.vpkg"
expect error-eval-not-onnx 1 "^error: $tmp/m.vpkg: vacc eval compares int8 with float and takes the ONNX model" -- \
  "$vacc" eval "$tmp/m.vpkg"

expect_summary
