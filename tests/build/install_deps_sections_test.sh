#!/usr/bin/env bash
# scripts/install-deps: --run asks for the product's section of scripts/packages.txt only, the
# default for both sections, and an unknown option is refused by name.
#   install_deps_sections_test.sh SOURCE_DIR
set -euo pipefail
src=$1
deps=$src/scripts/install-deps
run=$("$deps" --run --list)
all=$("$deps" --list)
fail() { echo "FAIL: $*" >&2; exit 1; }

# Every package once; the product's section is the start of the whole list.
[[ -z $(sort <<<"$all" | uniq -d) ]] || fail "a package listed twice: $(sort <<<"$all" | uniq -d)"
[[ "$all" == "$run"* ]] || fail "--run is not the first section of the full list"
# The sections, read independently of the script: names after "[test]" are the tests'.
tests=$(awk '/^\[test\]/ {t = 1; next} t && !/^[[:space:]]*#/ && NF {print $1}' \
  "$src/scripts/packages.txt")
[[ -n $tests ]] || fail "packages.txt has no [test] section"
for pkg in $tests; do
  grep -qx "$pkg" <<<"$run" && fail "--run asks for the tests' package $pkg"
  grep -qx "$pkg" <<<"$all" || fail "the full list lacks the tests' package $pkg"
done
# (python3-dev: the Python module's headers, once found only through the tests' packages)
for pkg in verilator libsystemc-dev llvm-14-dev libonnx-dev pybind11-dev python3-dev; do
  grep -qx "$pkg" <<<"$run" || fail "--run lacks the product's package $pkg"
done

set +e
msg=$("$deps" --tests 2>&1)
rc=$?
set -e
[[ $rc -eq 2 ]] || fail "unknown option: exit $rc, expected 2"
grep -q "unknown option '--tests'" <<<"$msg" || fail "unknown option not named: $msg"
echo "install-deps: $(wc -l <<<"$run") product packages, $(wc -l <<<"$all") in all"
