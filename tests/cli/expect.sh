# Shared by the command-line test scripts: `expect NAME STATUS PATTERN -- command...` runs the
# command and checks its exit status (0, or non-zero for any other STATUS) and that its output
# matches the extended regex PATTERN. Counts into $pass and $failures; `expect_summary` prints
# the closing line and returns non-zero on any failure.
pass=0
failures=0

expect() {
  local name=$1 want=$2 pattern=$3
  shift 4
  local out status
  out=$("$@" 2>&1)
  status=$?
  if [[ ( $want == 0 && $status != 0 ) || ( $want != 0 && $status == 0 ) ]]; then
    echo "FAIL $name: exit status $status, wanted $([[ $want == 0 ]] && echo 0 || echo non-zero)"
    echo "$out" | head -30
    failures=$((failures + 1))
  elif ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL $name: output does not match /$pattern/"
    echo "$out" | head -30
    failures=$((failures + 1))
  else
    pass=$((pass + 1))
  fi
}

expect_summary() {
  echo "$pass passed, $failures failed"
  [[ $failures == 0 ]]
}
