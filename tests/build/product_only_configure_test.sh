#!/usr/bin/env bash
# `make run`'s configure (VACC_BUILD_TESTS=OFF, the options the Makefile gives it) needs none
# of the tests' packages: it succeeds with GoogleTest and Google Benchmark made unfindable,
# defines the product's targets and none of the tests', the main job's RTL model and no other
# config's, and neither bootstraps the generator nor verilates the tests' RTL. The
# product's sources are batched (cmake/VaccUnityBuild.cmake) by relative includes only, so that
# ccache keys do not depend on where the checkout is. `make test` on such a tree (configure-all)
# then turns the tests and every bundled config's model on.
#   product_only_configure_test.sh SOURCE_DIR CMAKE
set -euo pipefail
src=$1
cmake=$2
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

read -r -a run_options <<<"$(make -s --no-print-directory -C "$src" print-run-configure)"
[[ " ${run_options[*]} " == *" -DVACC_BUILD_TESTS=OFF "* ]] || fail "make run configures with tests: ${run_options[*]}"
"$cmake" -S "$src" -B "$tree" -G Ninja -DCMAKE_BUILD_TYPE=Release "${run_options[@]}" \
  -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON -DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON \
  >"$tree/configure.log" 2>&1 || { cat "$tree/configure.log"; fail "configure failed"; }

targets=$(ninja -C "$tree" -t targets all | sed 's/:.*//')
for t in vacc python/vacc/_vacc; do
  grep -q "^$t" <<<"$targets" || fail "no target $t"
done
# (The tests' stand-in model is defined, outside `all`, whatever is configured.)
models=$(grep -o '^simulator/rtl/models/[a-z_0-9]*-' <<<"$targets" | grep -v /standin- | sort -u |
  tr '\n' ' ')
[[ $models == "simulator/rtl/models/default- " ]] || fail "make run's tree builds the RTL models of: $models"
for t in tests/ bench/bench_ ; do
  if grep -q "^$t" <<<"$targets"; then fail "a test target configured: $(grep "^$t" <<<"$targets" | head -1)"; fi
done
[[ ! -e "$tree/hw/bootstrap" ]] || fail "the generator was bootstrapped while configuring"
if grep -q "Executing Verilator" "$tree/configure.log"; then fail "Verilator ran while configuring"; fi
batches=$(find "$tree" -path '*/vacc_unity/*.cc')
[[ -n $batches ]] || fail "no batched sources (vacc_unity/*.cc)"
if grep -h '^#include' $batches | grep -v '^#include "\.\./'; then
  fail "a batch includes a source by an absolute path"
fi
# Every source of the graph library is in exactly one batch.
for f in "$src"/compiler/graph/*.cc; do
  n=$(grep -h "/compiler/graph/$(basename "$f")\"" $batches | wc -l)
  [[ $n -eq 1 ]] || fail "$(basename "$f") is in $n batches"
done
# `make test` on that tree (configure-all) switches the tests on and builds every bundled
# config's model.
make -s --no-print-directory -C "$src" configure-all BUILD_DIR="$tree" \
  CMAKE_FLAGS="-DCMAKE_BUILD_TYPE=Release -DCMAKE_DISABLE_FIND_PACKAGE_GTest=OFF -DCMAKE_DISABLE_FIND_PACKAGE_benchmark=OFF" \
  >"$tree/configure_all.log" 2>&1 || { cat "$tree/configure_all.log"; fail "configure-all failed"; }
all_models=$(ninja -C "$tree" -t targets all | grep -o '^simulator/rtl/models/[a-z_0-9]*-' |
  grep -v /standin- | sort -u | tr '\n' ' ')
[[ $all_models == "simulator/rtl/models/default- simulator/rtl/models/small- simulator/rtl/models/wide- " ]] ||
  fail "after configure-all the tree builds the RTL models of: $all_models"
grep -qx 'VACC_BUILD_TESTS:BOOL=ON' "$tree/CMakeCache.txt" || fail "configure-all left the tests off"
echo "product-only configure: models $models; $(wc -l <<<"$batches") batches, $(grep -c . <<<"$targets") targets, no tests"
