#!/usr/bin/env bash
# Runner for kiln_filecheck_test (//:defs.bzl):
#   filecheck_test.sh TOOL SRC FILECHECK EXPECT_FAIL N_FC_ARGS [FC_ARGS...] [TOOL_ARGS...]
# Runs `TOOL TOOL_ARGS SRC | FILECHECK FC_ARGS SRC`. With EXPECT_FAIL=1 the tool
# must exit non-zero and its stderr is checked with `FILECHECK --check-prefix=ERR`.
set -euo pipefail

if (( $# < 5 )); then
  echo "usage: $0 TOOL SRC FILECHECK EXPECT_FAIL N_FC_ARGS [FC_ARGS...] [TOOL_ARGS...]" >&2
  exit 2
fi
tool=$1 src=$2 filecheck=$3 expect_fail=$4 n_fc=$5
shift 5
fc_args=("${@:1:n_fc}")
shift "$n_fc"
tool_args=("$@")

for f in "$tool" "$src" "$filecheck"; do
  if [[ ! -e "$f" ]]; then
    echo "filecheck_test: missing runfile: $f (cwd $PWD)" >&2
    exit 2
  fi
done

tmp="${TEST_TMPDIR:-$(mktemp -d)}"
echo "+ $tool ${tool_args[*]} $src | FileCheck ${fc_args[*]} $src" >&2

if [[ "$expect_fail" == "1" ]]; then
  rc=0
  "$tool" "${tool_args[@]}" "$src" >"$tmp/stdout" 2>"$tmp/stderr" || rc=$?
  if (( rc == 0 )); then
    echo "filecheck_test: FAIL: expected the tool to fail (expect_fail = True), it exited 0." >&2
    echo "--- stdout ---" >&2
    cat "$tmp/stdout" >&2
    exit 1
  fi
  echo "filecheck_test: tool exited $rc as expected; checking stderr with --check-prefix=ERR" >&2
  "$filecheck" --check-prefix=ERR "${fc_args[@]}" "$src" --input-file="$tmp/stderr"
else
  # pipefail: a failing tool fails the test even if FileCheck would accept its output.
  set +e
  "$tool" "${tool_args[@]}" "$src" | "$filecheck" "${fc_args[@]}" "$src"
  status=("${PIPESTATUS[@]}")
  set -e
  if (( status[0] != 0 )); then
    echo "filecheck_test: FAIL: the tool exited ${status[0]} (for error-message tests use" \
         "expect_fail = True and ERR: lines)." >&2
    exit 1
  fi
  exit "${status[1]}"
fi
