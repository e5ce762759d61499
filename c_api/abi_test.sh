#!/usr/bin/env bash
# The ABI check (DESIGN.md §7): the ABI of libkiln.so and libkiln_runtime.so,
# read from their DWARF with libabigail's abidw (exported interfaces and the
# types of the public headers only), must match the baselines kept in
# c_api/abi/. Removing or changing a function, or changing a type a function
# uses (a struct field moved, resized or inserted, an enum value changed, a
# parameter type), fails. Added functions pass, with a note to record them.
#
# A deliberate, compatible change (a field appended to a struct_size-prefixed
# options struct) is recorded by regenerating the baselines:
#   c_api/abi/update_baseline.sh
#
#   abi_test.sh INCLUDE_DIR LIB.so BASELINE.abi [LIB.so BASELINE.abi ...]
set -euo pipefail
include_dir=$1
shift
for tool in abidw abidiff; do
  if ! command -v "$tool" >/dev/null; then
    echo "FAIL: $tool is missing (Debian package abigail-tools; tools/dev/install_deps.sh installs it)"
    exit 1
  fi
done
tmp=${TEST_TMPDIR:-$(mktemp -d)}
fail=0
while (( $# >= 2 )); do
  so=$1
  baseline=$2
  shift 2
  name=$(basename "$so")
  current="$tmp/$name.abi"
  abidw --headers-dir "$include_dir" --drop-private-types --no-corpus-path \
    --exported-interfaces-only --no-elf-needed --no-show-locs --no-comp-dir-path \
    --out-file "$current" "$so"
  set +e
  report=$(abidiff "$baseline" "$current")
  rc=$?
  set -e
  # abidiff: bit 1 = error, bit 2 = usage error, bit 4 = ABI change,
  # bit 8 = incompatible change.
  if (( rc & 3 )); then
    echo "FAIL: abidiff could not compare $name with $baseline (exit $rc):"
    echo "$report"
    fail=1
    continue
  fi
  removed_or_changed=$(printf '%s\n' "$report" |
    grep -E 'changes summary:' | grep -vE ' 0 Removed, 0 Changed' | grep -vE '^\s*$' || true)
  removed_symbols=$(printf '%s\n' "$report" |
    grep -E 'symbols changes summary:' | grep -vE ' 0 Removed' || true)
  if (( rc & 8 )) || [[ -n "$removed_or_changed" || -n "$removed_symbols" ]]; then
    echo "FAIL: the ABI of $name changed incompatibly against $baseline:"
    echo "$report"
    echo "If the change is deliberate and compatible, record it: c_api/abi/update_baseline.sh"
    fail=1
  elif (( rc & 4 )); then
    echo "$name: functions added since the baseline (compatible); record them with c_api/abi/update_baseline.sh:"
    echo "$report"
  else
    echo "$name: ABI identical to $(basename "$baseline")"
  fi
done
exit $fail
