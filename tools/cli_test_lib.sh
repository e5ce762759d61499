# tools/cli_test_lib.sh: the helpers the CLI shell tests share (sourced by
# cli_test.sh and cli_user_test.sh, which set $tmp and $fail first).

# Under a sanitizer config (.bazelrc puts ASAN_OPTIONS / UBSAN_OPTIONS in the
# test environment; tools/dev/kiln.sh test-sanitizers) every report goes to a
# file of its own under $tmp/sanitizer_reports, whatever the command's
# stderr was sent to: a report from a command whose failure a test expects
# (exit 1 is also ASan's exit code) or whose output it throws away still
# fails the test, in sanitizer_reports() below.
san_dir="$tmp/sanitizer_reports"
if [[ -n "${ASAN_OPTIONS:-}" || -n "${UBSAN_OPTIONS:-}" ]]; then
  mkdir -p "$san_dir"
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$san_dir/asan"
  export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}log_path=$san_dir/ubsan"
fi
sanitizer_reports() {  # sets fail=1 and prints them when any report was written
  local f found=0
  for f in "$san_dir"/*; do
    [[ -f "$f" ]] || continue
    echo "FAIL: a sanitizer report ($f):"
    cat "$f"
    found=1
  done
  (( found )) && fail=1
  return 0
}
check() {  # check DESCRIPTION COMMAND...: the command must succeed
  local what=$1
  shift
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if (( rc != 0 )); then
    echo "FAIL: $what: exit $rc"
    cat "$tmp/out" "$tmp/err"
    fail=1
    return 1
  fi
}
expect_error() {  # expect_error CODE TEXT COMMAND...: exit CODE, TEXT on stderr
  local code=$1 text=$2
  shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if (( rc != code )) || ! grep -qF -- "$text" "$tmp/err"; then
    echo "FAIL: '$*' should exit $code with '$text' on stderr; got exit $rc:"
    cat "$tmp/err"
    fail=1
  fi
}
