#!/bin/bash
# Runs tests/ffi/python/main.py (ctypes, standard library only) against
# libkiln.so.
#   run_test.sh LIBKILN_SO KILN_INCLUDE DLPACK_INCLUDE MODEL.onnx INPUT.npy EXPECTED.npy
# The include arguments are accepted for a uniform interface and not used.
set -euo pipefail
for f in "$(dirname "${BASH_SOURCE[0]}")"/{.,..}/ffi_common.sh "${TEST_SRCDIR:-/x}/${TEST_WORKSPACE:-kiln}/tests/ffi/ffi_common.sh" \
         "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../ffi_common.sh"; do
  if [[ -f "$f" ]]; then source "$f"; break; fi
done
declare -F ffi_setup >/dev/null || { echo "FAIL: tests/ffi/ffi_common.sh not found" >&2; exit 1; }
ffi_setup python main.py -- "$@"

# The system interpreter first (no NumPy needed), then PATH.
find_tool PYTHON /usr/bin/python3 python3
cp -L "$src/main.py" "$tmp/main.py"

echo "== running with $("$PYTHON" --version 2>&1)"
export KILN_LIB="$tmp/lib/libkiln.so"
export PYTHONDONTWRITEBYTECODE=1
"$PYTHON" -u "$tmp/main.py" "$model" "$input" "$expected" "$tmp/work" \
  || die "the Python program failed (exit $?)"
