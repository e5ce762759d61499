#!/usr/bin/env bash
# The guides quote code. A fenced code block whose first line is a comment
# naming a file of this package,
#
#   ```cpp
#   // tests/dev_guides/clamp_add_op.cc
#   absl::Status RegisterClampAddOp() {
#   ...
#   ```
#
# (`#` instead of `//` for BUILD and shell text), must appear in that file,
# verbatim and contiguous, after that first line. A block that names no such
# file is prose and is not checked. So when the code changes, the guide
# that quotes it fails here until it is updated.
#
#   guide_snippets_test.sh GUIDE.md...
set -uo pipefail
tmp=${TEST_TMPDIR:-$(mktemp -d)}
fail=0
checked=0

check_block() {  # check_block GUIDE LINE SOURCE BLOCK_FILE
  local guide=$1 at=$2 src=$3 block=$4
  if [[ ! -f "$src" ]]; then
    echo "FAIL: $guide:$at quotes $src, which is not a data dependency of this test (or does not exist)"
    fail=1
    return
  fi
  local haystack needle
  haystack=$(cat "$src")
  needle=$(cat "$block")
  if [[ -z "$needle" ]]; then
    echo "FAIL: $guide:$at: empty block quoting $src"
    fail=1
  elif [[ "$haystack" != *"$needle"* ]]; then
    echo "FAIL: $guide:$at: this block is not (or no longer) in $src:"
    cat "$block"
    fail=1
  fi
  checked=$((checked + 1))
}

for guide in "$@"; do
  lineno=0
  in_block=0
  first=0
  src=""
  start=0
  while IFS= read -r line || [[ -n "$line" ]]; do
    lineno=$((lineno + 1))
    if [[ "$line" == '```'* ]]; then
      if ((in_block)); then
        [[ -n "$src" ]] && check_block "$guide" "$start" "$src" "$tmp/block"
        in_block=0
      else
        in_block=1
        first=1
        src=""
        start=$lineno
        : >"$tmp/block"
      fi
      continue
    fi
    ((in_block)) || continue
    if ((first)); then
      first=0
      if [[ "$line" =~ ^(//|#)\ (tests/dev_guides/[A-Za-z0-9_./-]+)$ ]]; then
        src=${BASH_REMATCH[2]}
        continue
      fi
    fi
    [[ -n "$src" ]] && printf '%s\n' "$line" >>"$tmp/block"
  done <"$guide"
  if ((in_block)); then
    echo "FAIL: $guide: a code block is not closed"
    fail=1
  fi
done

if ((checked < 8)); then
  echo "FAIL: only $checked quoted blocks found; the guides quote more than that"
  fail=1
fi
if ((fail)); then exit 1; fi
echo "guide_snippets_test: $checked quoted blocks match their files"
