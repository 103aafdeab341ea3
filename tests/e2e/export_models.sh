#!/usr/bin/env bash
# The model_exports fixture: tools/export_torchvision.py into OUT once. A stamp holding the
# script's checksum skips the export when OUT already has this script's exports; 77 (CTest's
# skip) when Debian's python3-torch is absent. Usage: export_models.sh SOURCE_DIR OUT
set -euo pipefail
src=$1
out=$2
script=$src/tools/export_torchvision.py
stamp=$out/EXPORTED
sum=$(sha256sum "$script" | cut -d' ' -f1)
if [[ -f $stamp && $(cat "$stamp") == "$sum" ]]; then
  echo "exports in $out are up to date"
  exit 0
fi
mkdir -p "$out"
if [[ ! -x /usr/bin/python3 ]]; then
  echo "no /usr/bin/python3" > "$out/TORCH_ABSENT"
  echo "skipped: Debian's python3 (with python3-torch) is absent"
  exit 77
fi
status=0
/usr/bin/python3 "$script" --out "$out" || status=$?
[[ $status == 0 ]] && echo "$sum" > "$stamp"
exit $status
