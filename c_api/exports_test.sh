#!/usr/bin/env bash
# Checks what a kiln shared library exports (DESIGN.md §7): only kiln_*
# symbols (nm -D --defined-only), every function its public header declares
# (found by preprocessing the header, so nothing is listed twice by hand), and
# none of the internal kiln_ helpers.
#
#   exports_test.sh LIB.so HEADER.h INCLUDE_DIR
set -euo pipefail
so=$1
header=$2
include_dir=$3
name=$(basename "$so")
fail=0

symbols=$(nm -D --defined-only "$so" | awk 'NF >= 3 { print $3 }' | sort -u)
others=$(printf '%s\n' "$symbols" | grep -v '^kiln_' || true)
if [[ -n "$others" ]]; then
  echo "FAIL: $name exports symbols outside kiln_*:"
  printf '  %s\n' $others | head -50
  fail=1
fi

declared=$(printf '#include "%s"\n' "$header" | cc -std=c11 -E -P -I"$include_dir" -x c - |
  grep -oE '\bkiln_[a-z0-9_]+[[:space:]]*\(' | sed -E 's/[[:space:]]*\($//' | sort -u)
if [[ -z "$declared" ]]; then
  echo "FAIL: found no kiln_ function in $header"
  exit 1
fi
missing=$(comm -23 <(printf '%s\n' "$declared") <(printf '%s\n' "$symbols"))
if [[ -n "$missing" ]]; then
  echo "FAIL: $name does not export these functions of $(basename "$header"):"
  printf '  %s\n' $missing
  fail=1
fi
undeclared=$(comm -13 <(printf '%s\n' "$declared") <(printf '%s\n' "$symbols"))
if [[ -n "$undeclared" ]]; then
  echo "FAIL: $name exports kiln_ symbols no public header declares:"
  printf '  %s\n' $undeclared
  fail=1
fi
# Versioned: the SONAME is NAME.N, and a file of that name lies beside NAME
# (the SDK's lib/ holds libX.so.N and the development link libX.so).
soname=$(objdump -p "$so" | sed -n 's/^ *SONAME *//p')
if [[ ! "$soname" =~ ^${name//./\\.}\.[0-9]+$ ]]; then
  echo "FAIL: $name has SONAME '$soname', not $name.N"
  fail=1
elif [[ ! -f "$(dirname "$so")/$soname" ]]; then
  echo "FAIL: no $soname beside $name"
  fail=1
fi
echo "$name (SONAME $soname): $(printf '%s\n' "$symbols" | wc -l) symbols exported, $(printf '%s\n' "$declared" | wc -l) functions declared by $(basename "$header")"
exit $fail
