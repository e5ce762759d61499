#!/bin/bash
# Runs tests/ffi/python/main.py (ctypes, standard library only) against
# libkiln.so.
#   run_test.sh LIBKILN_SO KILN_INCLUDE DLPACK_INCLUDE MODEL.onnx INPUT.npy EXPECTED.npy
# The include arguments are accepted for a uniform interface and not used.
set -euo pipefail

die() { echo "python_test: FAIL: $*" >&2; exit 1; }
[[ $# -eq 6 ]] || die "usage: $0 LIBKILN_SO KILN_INCLUDE DLPACK_INCLUDE MODEL.onnx INPUT.npy EXPECTED.npy (got $# args)"

abspath() { if [[ "$1" == /* ]]; then echo "$1"; else echo "$PWD/$1"; fi; }

lib="$(abspath "$1")"
model="$(abspath "$4")"; input="$(abspath "$5")"; expected="$(abspath "$6")"

# The program: next to this script, or in python/ below it (Bazel runs a copy
# of the script named after the test, one directory up).
here="$(dirname "${BASH_SOURCE[0]}")"
src=""
for d in "$here" "$here/python" "${TEST_SRCDIR:-/nonexistent}/${TEST_WORKSPACE:-kiln}/tests/ffi/python" \
         "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")"; do
  if [[ -f "$d/main.py" ]]; then src="$(abspath "$d")"; break; fi
done
[[ -n "$src" ]] || die "cannot find main.py next to $0"

# The interpreter: the system one first (no NumPy needed), then PATH.
# Missing is a failure, not a skip.
if [[ -z "${PYTHON:-}" ]]; then
  if [[ -x /usr/bin/python3 ]]; then PYTHON=/usr/bin/python3
  else PYTHON="$(command -v python3 || true)"; fi
fi
[[ -n "$PYTHON" && -x "$PYTHON" ]] || die "python3 not found (PYTHON=${PYTHON:-}, /usr/bin/python3, PATH=$PATH)"

for f in "$lib" "$model" "$input" "$expected"; do [[ -f "$f" ]] || die "missing file: $f"; done

tmp="${TEST_TMPDIR:-}"
[[ -n "$tmp" ]] || tmp="$(mktemp -d)"
tmp="$(abspath "$tmp")/ffi_python"
rm -rf "$tmp"; mkdir -p "$tmp/lib" "$tmp/work"

# The library may be a runfiles symlink with another name: copy it.
cp -L "$lib" "$tmp/lib/libkiln.so"
cp -L "$src/main.py" "$tmp/main.py"

echo "== running with $("$PYTHON" --version 2>&1)"
export LD_LIBRARY_PATH="$tmp/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export KILN_LIB="$tmp/lib/libkiln.so"
export PYTHONDONTWRITEBYTECODE=1
"$PYTHON" -u "$tmp/main.py" "$model" "$input" "$expected" "$tmp/work" \
  || die "the Python program failed (exit $?)"
