#!/usr/bin/env bash
# Whole float models on the LLVM CPU backend (`vacc bench model --float`) against ONNX Runtime
# (bench/ort_cpu.js) in the same run: each model pinned to one core with one thread, then to
# two cores with two threads. Each side takes the median of RUNS warm runs, vacc and ORT one
# right after the other, ROUNDS times (3) in turn; the table gives the median over the rounds
# of each side's median (and vacc's fastest run) and their ratio vacc/ORT (below 1.0: vacc is
# faster), so that a burst of other work on the machine weighs on both sides alike.
#
#   /usr/bin/python3 tools/export_torchvision.py --out DIR --models resnet18,mobilenet_v2,squeezenet1_0
#   mkdir -p /tmp/ortbench && (cd /tmp/ortbench && npm install --ignore-scripts onnxruntime-node)
#   bench/cpu_models_vs_ort.sh build/vacc /tmp/ortbench/node_modules DIR/resnet18.onnx ... [RUNS [ROUNDS]]
set -euo pipefail
vacc=$1
node_modules=$2
shift 2
runs=50
rounds=3
numbers=()
models=()
for a in "$@"; do
  if [[ $a =~ ^[0-9]+$ ]]; then numbers+=("$a"); else models+=("$a"); fi
done
[[ ${#numbers[@]} -ge 1 ]] && runs=${numbers[0]}
[[ ${#numbers[@]} -ge 2 ]] && rounds=${numbers[1]}
median() { tr ' ' '\n' | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
here=$(cd "$(dirname "$0")" && pwd)
printf '%-22s %7s %12s %12s %12s %8s\n' model threads "vacc ms" "vacc min" "ORT ms" vacc/ORT
for threads in 1 2; do
  cores=$([[ $threads == 1 ]] && echo 0 || echo 0,1)
  for m in "${models[@]}"; do
    shape=$(/usr/bin/python3 -c "
import onnx, sys
g = onnx.load(sys.argv[1]).graph
init = {i.name for i in g.initializer}
x = [i for i in g.input if i.name not in init][0]
print(','.join(str(d.dim_value or 1) for d in x.type.tensor_type.shape.dim))" "$m")
    vmeds=() vmins=() omeds=()
    for ((r = 0; r < rounds; ++r)); do
      read -r vmed vmin < <(taskset -c "$cores" "$vacc" bench model "$m" --float --threads "$threads" \
        --runs "$runs" --json |
        /usr/bin/python3 -c "import json,sys; j=json.load(sys.stdin); print(j['median_seconds']*1e3, j['min_seconds']*1e3)")
      o=$(NODE_PATH=$node_modules taskset -c "$cores" node "$here/ort_cpu.js" "$m" --threads "$threads" \
        --iters "$runs" --shape "$shape" | sed -E 's/.*median ([0-9.]+) ms.*/\1/')
      vmeds+=("$vmed") vmins+=("$vmin") omeds+=("$o")
    done
    vmed=$(echo "${vmeds[*]}" | median)
    vmin=$(echo "${vmins[*]}" | tr ' ' '\n' | sort -g | head -1)
    o=$(echo "${omeds[*]}" | median)
    printf '%-22s %7d %12.2f %12.2f %12.2f %8.2f\n' "$(basename "$m" .onnx)" "$threads" "$vmed" "$vmin" "$o" \
      "$(/usr/bin/python3 -c "print($vmed / $o)")"
  done
done
