#!/bin/bash
# tests/fuzz/driver_selftest.sh: the fuzz driver reports findings. A target
# with planted bugs (driver_selftest_target.cc) must exit nonzero on a failed
# check, a segfault and a hang (--timeout), each time writing the input to
# --artifact_dir/crash-*; on harmless seeds it must run the requested number
# of executions and exit 0.
set -u
bin="$1"
work="${TEST_TMPDIR:-$(mktemp -d)}/selftest"
fail() { echo "FAIL: $*"; exit 1; }

mkdir -p "$work/seeds"
printf 'hello' > "$work/seeds/a"
printf 'world!' > "$work/seeds/b"
out=$("$bin" --runs 500 --seed 3 --artifact_dir "$work" "$work/seeds" 2>&1) || fail "harmless run failed: $out"
grep -q "executions=500 " <<<"$out" || fail "no execution count: $out"

for planted in ABORT SEGV HANG; do
  rm -rf "$work/$planted" && mkdir -p "$work/$planted/crashes"
  printf '%sxyz' "$planted" > "$work/$planted/seed"
  "$bin" --runs 10 --timeout 2 --artifact_dir "$work/$planted/crashes" "$work/$planted/seed" \
    > "$work/$planted/log" 2>&1
  rc=$?
  [ "$rc" -ne 0 ] || fail "$planted: exit code 0"
  grep -q "==kiln-fuzz== finding" "$work/$planted/log" || fail "$planted: no finding reported: $(cat "$work/$planted/log")"
  crash=$(ls "$work/$planted/crashes"/crash-* 2>/dev/null | head -1)
  [ -n "$crash" ] || fail "$planted: no crash file"
  cmp -s "$crash" "$work/$planted/seed" || fail "$planted: the crash file is not the input"
  echo "ok: $planted -> exit $rc, $(basename "$crash")"
done
echo PASS
