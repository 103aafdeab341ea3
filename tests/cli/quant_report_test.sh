#!/usr/bin/env bash
# `vacc quant-report` and `vacc run --float`'s worst layers, on the bundled Fashion-MNIST CNN
# (calibrated and compared on bundled images): the text table, --json (checked for consistency:
# the ranking sorted by SQNR with float inputs, every layer's clipped share a fraction), the
# HTML page with its plot, and one case per diagnostic. The figures themselves are held to an
# independent computation by tests/graph/quant_report_test.cc.
# Usage: quant_report_test.sh VACC SOURCE_DIR
set -uo pipefail
vacc=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$src/tests/cli/expect.sh"
model=$src/models/fashion_mnist_cnn.onnx
samples=$src/models/fashion_mnist_samples.npy
py=/usr/bin/python3

expect report-text 0 "most costly layers \(lowest SQNR with float inputs" -- \
  "$vacc" quant-report "$model" --calibration "$samples"
expect report-table 0 "Conv\+Relu" -- "$vacc" quant-report "$model" --calibration "$samples"
# fc1's Relu reaches only fc2: unsigned levels, marked and explained; none with the option off.
expect report-unsigned 0 "^\(f u\): unsigned levels, real \(q \+ 128\) \* 2\^-f" -- \
  "$vacc" quant-report "$model" --calibration "$samples"
expect report-signed 0 "^0 unsigned$" -- bash -c "out=\$('$vacc' quant-report '$model' \
  --calibration '$samples' --unsigned-activations off) && \
  echo \"\$(grep -c -e ' u)' -e 'unsigned levels' <<<\"\$out\") unsigned\""
"$vacc" quant-report "$model" --calibration "$samples" --input "$samples" --json \
  --html "$tmp/report.html" >"$tmp/report.json" 2>&1
expect report-json 0 "ok" -- "$py" -c '
import json, math, sys
j = json.load(open(sys.argv[1]))
layers = j["layers"]
assert len(layers) >= 5, len(layers)
by_name = {l["name"]: l for l in layers}
ranked = [by_name[n]["sqnr_float_inputs_db"] for n in j["ranking"]]
finite = [v for v in ranked if v is not None]
assert finite == sorted(finite), ranked
for l in layers:
    assert 0 <= l["clipped"] <= 1, l
    assert l["min"] <= l["max"], l
    assert l["zero_point"] in (0, -128), l
    assert math.isclose(l["int8_max"], (127 - l["zero_point"]) * 2.0 ** -l["frac_bits"],
                        rel_tol=1e-6), l
assert any("weights" in l for l in layers)
assert j["outputs"][0]["cosine"] > 0.99, j["outputs"]
assert j["input_batches"] == 256, j["input_batches"]
print("ok")' "$tmp/report.json"
expect report-html 0 "<svg" -- cat "$tmp/report.html"
expect report-html-rows 0 "<tr class=\"worst\">" -- cat "$tmp/report.html"
"$py" -c 'import numpy as np, sys; np.save(sys.argv[2], np.load(sys.argv[1])[:1])' "$samples" "$tmp/one.npy"
expect run-float-worst 0 "^worst   the layers int8 costs most on this input .*: [^ ]+ \([A-Za-z+]+\) [0-9.]+ dB" -- \
  "$vacc" run --sim --engine fsim "$model" --input "$tmp/one.npy" --float
expect run-float-worst-json 0 "ok" -- bash -c "'$vacc' run --sim --engine fsim '$model' --input '$tmp/one.npy' --float --json | $py -c 'import json,sys; w=json.load(sys.stdin)[\"float\"][\"worst_layers\"]; assert len(w)==3 and all(\"sqnr_float_inputs_db\" in l for l in w); print(\"ok\")'"
# Diagnostics.
expect error-report-no-model 1 "^error: $tmp/nosuch.onnx: no such model file" -- \
  "$vacc" quant-report "$tmp/nosuch.onnx"
touch "$tmp/m.vpkg"
expect error-report-package 1 "^error: $tmp/m.vpkg: vacc quant-report takes a float ONNX model \(.onnx\)" -- \
  "$vacc" quant-report "$tmp/m.vpkg"
expect error-report-qdq 1 "^error: $src/models/fashion_mnist_qdq.onnx: the model is quantized already \(QuantizeLinear/DequantizeLinear\) and runs with its own scales; quant-report compares vacc's own quantization with the float model: give the float model" -- \
  "$vacc" quant-report "$src/models/fashion_mnist_qdq.onnx"
"$py" -c 'import numpy as np, sys; np.save(sys.argv[1], np.zeros((2, 3, 5), np.float32))' "$tmp/bad.npy"
expect error-report-input-shape 1 "^error: $tmp/bad.npy: sample inputs must be float32 \[M, 1,28,28\] for input '[^']+', got f4 \[2,3,5\]" -- \
  "$vacc" quant-report "$model" --input "$tmp/bad.npy"
"$py" -c 'import numpy as np, sys; np.save(sys.argv[1], np.zeros((0, 1, 28, 28), np.float32))' "$tmp/none.npy"
expect error-report-input-empty 1 "^error: $tmp/none.npy: holds 0 samples, fewer than the batch size 1" -- \
  "$vacc" quant-report "$model" --input "$tmp/none.npy"
expect error-report-html 1 "^error: $tmp/nodir/r.html: cannot write the HTML report" -- \
  "$vacc" quant-report "$model" --html "$tmp/nodir/r.html"
expect error-report-batch 1 "^error: --batch 0: must be at least 1" -- \
  "$vacc" quant-report "$model" --batch 0
# Bias correction (off by default) is a pass of its own in the compile log.
expect compile-bias-correction 0 "correct_bias +[0-9.]+ ms  [1-9][0-9]* layers corrected" -- \
  "$vacc" compile "$model" -o "$tmp/m2.vpkg" --bias-correction on
expect compile-bias-correction-off 0 "^no correct_bias pass$" -- bash -c \
  "'$vacc' compile '$model' -o '$tmp/m3.vpkg' | grep -q correct_bias || echo no correct_bias pass"
expect error-bias-correction 1 "^error: --bias-correction 'yes': choose on or off" -- \
  "$vacc" quant-report "$model" --bias-correction yes
# Precision fallback: --keep-float is stated in the report; --max-layer-loss keeps exactly the
# layers the report (on the calibration inputs) shows below the bound.
expect report-keep-float 0 "kept in float on the CPU \(1\): /conv3/Conv" -- \
  "$vacc" quant-report "$model" --keep-float /conv3/Conv
expect report-keep-float-json 0 '"kept_float": true' -- \
  "$vacc" quant-report "$model" --keep-float /conv3/Conv --json
"$vacc" quant-report "$model" --json >"$tmp/calib_report.json" 2>&1
below=$("$py" -c '
import json, sys
j = json.load(open(sys.argv[1]))
names = sorted(l["name"] for l in j["layers"] if l["ops"] != "input" and l["sqnr_float_inputs_db"] is not None and l["sqnr_float_inputs_db"] < 33)
assert names, "no layer below 33 dB: pick another bound"
print(", ".join(names))' "$tmp/calib_report.json")
expect compile-max-layer-loss 0 "max_layer_loss +[0-9.]+ ms  [0-9]+ layers? below 33 dB SQNR kept in float: ${below}\$" -- \
  "$vacc" compile "$model" -o "$tmp/m4.vpkg" --max-layer-loss 33
expect run-keep-float 0 "float .*cosine 0\.99" -- \
  "$vacc" run --sim --engine fsim "$model" --input "$tmp/one.npy" --keep-float /conv3/Conv --float
expect error-keep-float 1 "^error: --keep-float 'nosuch': model '[^']+' has no layer of that name \(\`vacc quant-report\` lists them\)" -- \
  "$vacc" compile "$model" -o "$tmp/m5.vpkg" --keep-float nosuch
expect error-max-layer-loss 1 "^error: --max-layer-loss 'abc': give the lowest SQNR a layer may keep, in dB above 0 \(e.g. 30\)" -- \
  "$vacc" compile "$model" -o "$tmp/m6.vpkg" --max-layer-loss abc
expect_summary
