#!/usr/bin/env bash
# Shows that abi_test.sh can fail: moves one struct member in a copy of the
# runtime baseline (the first member at bit offset 64 goes to 96) and expects
# abi_test.sh to report an incompatible change.
#
#   abi_mutation_test.sh ABI_TEST.sh INCLUDE_DIR LIB.so BASELINE.abi
set -euo pipefail
abi_test=$1
include_dir=$2
so=$3
baseline=$4
tmp=${TEST_TMPDIR:-$(mktemp -d)}
mutated="$tmp/mutated.abi"
sed "0,/layout-offset-in-bits='64'/s//layout-offset-in-bits='96'/" "$baseline" > "$mutated"
if cmp -s "$baseline" "$mutated"; then
  echo "FAIL: the baseline has no struct member at bit offset 64 to move"
  exit 1
fi
if out=$("$abi_test" "$include_dir" "$so" "$mutated" 2>&1); then
  echo "FAIL: abi_test.sh accepted a baseline with a moved struct member:"
  echo "$out"
  exit 1
fi
if ! grep -q "changed incompatibly" <<<"$out"; then
  echo "FAIL: abi_test.sh failed, but not with an incompatible-change report:"
  echo "$out"
  exit 1
fi
echo "PASS: a moved struct member is reported:"
grep -E "offset changed" <<<"$out" | head -3
