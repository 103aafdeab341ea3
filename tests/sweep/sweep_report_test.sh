#!/usr/bin/env bash
# DIR/report.html rendered by headless Chromium (Debian's chromium): the DOM after its script
# ran holds, per workload, the two Pareto scatter plots with points and a highlighted front,
# the roofline with its roof and layers, the per-layer bars, and the sortable table; the
# screenshot is a real picture (not one flat colour).
# Usage: sweep_report_test.sh VACC SOURCE_DIR
set -u
vacc=$1
src=$2
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../cli/expect.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/vacc-sweep-report-XXXXXX")
trap 'rm -rf "$work"' EXIT

cat >"$work/r.yaml" <<EOF
name: report
base: $src/configs/small.yaml
axes:
  gemm.block_in: [8, 16]
  memory.bus_bits: [64, 128]
workloads:
  - bench: resnet18-convs
    layers: [C9, C12]
  - model: $src/models/fashion_mnist_cnn.onnx
    name: fmnist
    calibration: $src/models/fashion_mnist_samples.npy
EOF
expect "sweep" 0 "8 ok" -- "$vacc" sweep "$work/r.yaml" -o "$work/out"

chrome=(chromium --headless --no-sandbox --disable-gpu --disable-background-networking
        --disable-extensions --no-first-run --user-data-dir="$work/profile" --hide-scrollbars)
page=file://$work/out/report.html
timeout 180 "${chrome[@]}" --dump-dom "$page" >"$work/dom.html" 2>"$work/chrome.err"
expect "chromium rendered the page" 0 "</html>" -- cat "$work/dom.html"
expect "its script ran" 0 'data-report="ready"' -- cat "$work/dom.html"
expect "the table is sortable" 0 'data-sortable="ready"' -- cat "$work/dom.html"

# Every plot is there and has marks.
expect "plots with marks" 0 "ok" -- /usr/bin/python3 - "$work/dom.html" <<'EOF'
import re, sys
dom = open(sys.argv[1]).read()
svgs = dict(re.findall(r'<svg class="plot[^"]*" id="([^"]+)"(.*?)</svg>', dom, re.S))
for w in range(2):  # two workloads
    for kind in ("pareto-area", "pareto-energy"):
        body = svgs[f"{kind}-{w}"]
        assert body.count('<circle class="pt') == 4, (kind, w)     # 4 points ran
        assert '<circle class="pt front"' in body, (kind, w)        # a front
        assert 'data-tip="point ' in body and "gemm.block_in=" in body  # hover labels
    roof = svgs[f"roofline-{w}"]
    assert 'class="roof"' in roof and '<circle class="pt layer"' in roof, w
    bars = svgs[f"layers-{w}"]
    assert bars.count('<rect class="bar s') >= 3, w
    heights = [float(h) for h in re.findall(r'<rect class="bar s\d" x="[^"]+" y="[^"]+" width="[^"]+" height="([^"]+)"', bars)]
    assert max(heights) > 10, heights  # bars are drawn, not empty
rows = re.findall(r'<tr class="ok">', dom)
assert len(rows) == 8, len(rows)
print("ok")
EOF

timeout 180 "${chrome[@]}" --window-size=1400,2200 --screenshot="$work/shot.png" "$page" \
  >/dev/null 2>>"$work/chrome.err"
expect "screenshot is a picture" 0 "ok" -- /usr/bin/python3 - "$work/shot.png" <<'EOF'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, width, height = 8, b"", 0, 0
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        width, height = struct.unpack(">II", body[:8])
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
raw = zlib.decompress(idat)
assert (width, height) == (1400, 2200), (width, height)
# A blank page filters to a handful of byte values; plots, text and colours give many.
assert len(set(raw)) > 64, len(set(raw))
print("ok")
EOF

expect_summary
