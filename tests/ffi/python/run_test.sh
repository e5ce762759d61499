#!/bin/bash
# Runs python/examples/resnet_mini.py, the FFI program written with the kiln
# Python package (ctypes over libkiln.so, NumPy), against libkiln.so.
#   run_test.sh LIBKILN_SO KILN_INCLUDE DLPACK_INCLUDE MODEL.onnx INPUT.npy EXPECTED.npy
# The include arguments are accepted for a uniform interface and not used.
set -euo pipefail
for f in "$(dirname "${BASH_SOURCE[0]}")"/{.,..}/ffi_common.sh "${TEST_SRCDIR:-/x}/${TEST_WORKSPACE:-kiln}/tests/ffi/ffi_common.sh" \
         "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../ffi_common.sh"; do
  if [[ -f "$f" ]]; then source "$f"; break; fi
done
declare -F ffi_setup >/dev/null || { echo "FAIL: tests/ffi/ffi_common.sh not found" >&2; exit 1; }
ffi_setup python run_test.sh -- "$@"
ffi_package python kiln/__init__.py

# The system interpreter first (Debian's, with python3-numpy), then PATH.
find_tool PYTHON /usr/bin/python3 python3
"$PYTHON" -c 'import numpy' 2>/dev/null || die "$PYTHON has no NumPy (Debian: python3-numpy)"
mkdir -p "$tmp/pkg"
cp -rL "$pkg/kiln" "$pkg/examples" "$tmp/pkg/"

echo "== running examples/resnet_mini.py with $("$PYTHON" --version 2>&1)"
export KILN_LIBRARY="$tmp/lib/libkiln.so" PYTHONPATH="$tmp/pkg" PYTHONDONTWRITEBYTECODE=1
"$PYTHON" -u "$tmp/pkg/examples/resnet_mini.py" "$model" "$input" "$expected" "$tmp/work" \
  || die "the Python program failed (exit $?)"
