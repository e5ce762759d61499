# tools/cli_test_lib.sh: the helpers the CLI shell tests share (sourced by
# cli_test.sh and cli_user_test.sh, which set $tmp and $fail first).
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
