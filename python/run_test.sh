#!/bin/bash
# Tests the kiln Python package (python/README.md) against the SDK's libkiln.so.
#
#   run_test.sh MODE LIBKILN_SO KILN_H DLPACK_INCLUDE MODEL.onnx INPUT.npy EXPECTED.npy
#
# MODE source: python/tests (pytest when the interpreter has it, else
#   unittest) on a copy of the sources, KILN_LIBRARY=LIBKILN_SO; then the
#   example program and a short run of the overhead benchmark.
# MODE wheel: builds a wheel with KILN_SDK=<the SDK holding LIBKILN_SO>
#   (pip wheel --no-build-isolation --no-index: offline, the system's
#   setuptools), installs it with pip into a fresh directory, checks that the
#   package loads its own bundled copy of the library (no KILN_LIBRARY, no
#   LD_LIBRARY_PATH) and runs python/tests and the example against it.
# KILN_H is the SDK's include/kiln/kiln.h (its dirname twice is the include
# root); DLPACK_INCLUDE holds dlpack/dlpack.h. The interpreter is
# $PYTHON, else /usr/bin/python3 (Debian's, with python3-numpy); a missing
# interpreter, NumPy or (for wheel) pip fails the test, never skips it.
set -euo pipefail
die() { echo "python_test: FAIL: $*" >&2; exit 1; }
abspath() { if [[ "$1" == /* ]]; then echo "$1"; else echo "$PWD/$1"; fi; }

[[ $# -eq 7 ]] || die "usage: run_test.sh MODE LIBKILN_SO KILN_H DLPACK_INCLUDE MODEL INPUT EXPECTED"
mode=$1
lib=$(abspath "$2")
include=$(dirname "$(dirname "$(abspath "$3")")")
dlpack=${4:+$(abspath "$4")}
model=$(abspath "$5"); input=$(abspath "$6"); expected=$(abspath "$7")
for f in "$lib" "$model" "$input" "$expected" "$include/kiln/kiln.h"; do
  [[ -f "$f" ]] || die "missing file: $f"
done

# The package sources: next to this script (a checkout) or in the runfiles.
src=""
for d in "$(dirname "${BASH_SOURCE[0]}")" "${TEST_SRCDIR:-/x}/${TEST_WORKSPACE:-kiln}/python" \
         "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")"; do
  if [[ -f "$d/kiln/__init__.py" && -f "$d/pyproject.toml" ]]; then src=$(abspath "$d"); break; fi
done
[[ -n "$src" ]] || die "cannot find the package sources next to ${BASH_SOURCE[0]}"

PYTHON=${PYTHON:-/usr/bin/python3}
[[ -x "$PYTHON" ]] || PYTHON=$(command -v python3 || true)
[[ -n "$PYTHON" && -x "$PYTHON" ]] || die "python3 not found"
"$PYTHON" -c 'import numpy' 2>/dev/null || die "$PYTHON has no NumPy (Debian: python3-numpy)"

# A program linked with -lkiln records libkiln's SONAME (libkiln.so.0): the
# copy answers to that name too.
soname_link() {  # soname_link DIR/libX.so
  local s; s=$(objdump -p "$1" | sed -n 's/^ *SONAME *//p')
  if [[ -n "$s" && "$s" != "$(basename "$1")" ]]; then ln -sf "$(basename "$1")" "$(dirname "$1")/$s"; fi
}
tmp=${TEST_TMPDIR:-$(mktemp -d)}
tmp=$(abspath "$tmp")/python_$mode
rm -rf "$tmp"
mkdir -p "$tmp/work"
# The runfiles are read-only symlinks: work on a copy.
cp -rL "$src" "$tmp/src"
chmod -R u+w "$tmp/src"
rm -f "$tmp/src/kiln/_lib/"*.so
export PYTHONDONTWRITEBYTECODE=1
export KILN_TEST_MODEL=$model KILN_TEST_INPUT=$input KILN_TEST_EXPECTED=$expected
export KILN_INCLUDE=$include${dlpack:+:$dlpack} TEST_TMPDIR=$tmp/work

run_tests() {  # run_tests: python/tests with whatever `import kiln` finds
  if "$PYTHON" -c 'import pytest' 2>/dev/null; then
    echo "== pytest ($("$PYTHON" -m pytest --version 2>&1 | head -1))"
    (cd "$tmp/src/tests" && "$PYTHON" -m pytest -q -p no:cacheprovider .) || die "python/tests failed"
  else
    echo "== unittest (no pytest for $PYTHON; Debian: python3-pytest)"
    (cd "$tmp/src/tests" && "$PYTHON" -m unittest discover -s . -v) || die "python/tests failed"
  fi
  echo "== examples/resnet_mini.py"
  "$PYTHON" "$tmp/src/examples/resnet_mini.py" "$model" "$input" "$expected" "$tmp/work" \
    || die "examples/resnet_mini.py failed"
}

echo "== $("$PYTHON" --version 2>&1), NumPy $("$PYTHON" -c 'import numpy; print(numpy.__version__)')"
case "$mode" in
  source)
    export KILN_LIBRARY=$lib PYTHONPATH=$tmp/src
    run_tests
    echo "== bench/run_overhead.py (a smoke run; the figures mean nothing here)"
    # A local SDK for the C side: the include root and this lib/.
    mkdir -p "$tmp/sdk/lib"
    ln -s "$include" "$tmp/sdk/include"
    cp -L "$lib" "$tmp/sdk/lib/libkiln.so"
    soname_link "$tmp/sdk/lib/libkiln.so"
    "$PYTHON" "$tmp/src/bench/run_overhead.py" --sdk "$tmp/sdk" --model "$model" --input "$input" \
      --runs 20 --rounds 1 || die "bench/run_overhead.py failed"
    ;;
  wheel)
    "$PYTHON" -m pip --version >/dev/null 2>&1 || die "$PYTHON has no pip (Debian: python3-pip)"
    "$PYTHON" -c 'import setuptools, wheel' 2>/dev/null \
      || die "$PYTHON lacks setuptools or wheel (Debian: python3-setuptools python3-wheel)"
    # An SDK prefix as KILN_SDK expects it: lib/libkiln.so (+ libkiln_runtime.so).
    mkdir -p "$tmp/sdk/lib"
    cp -L "$lib" "$tmp/sdk/lib/libkiln.so"
    [[ -f "$(dirname "$lib")/libkiln_runtime.so" ]] && cp -L "$(dirname "$lib")/libkiln_runtime.so" "$tmp/sdk/lib/"
    export PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 HOME=$tmp/home
    echo "== pip wheel (KILN_SDK=$tmp/sdk)"
    KILN_SDK=$tmp/sdk "$PYTHON" -m pip wheel -q --no-build-isolation --no-deps -w "$tmp/dist" "$tmp/src" \
      || die "pip wheel ./python failed"
    whl=$(ls "$tmp/dist"/kiln-*.whl)
    [[ "$whl" == *linux_* ]] || die "the wheel should be tagged for a platform (it carries libkiln.so): $whl"
    echo "== pip install $(basename "$whl")"
    "$PYTHON" -m pip install -q --no-deps --target "$tmp/site" "$whl" 2>&1 | grep -v "WARNING: Running pip as" || true
    [[ -f "$tmp/site/kiln/_lib/libkiln.so" ]] || die "the installed package has no kiln/_lib/libkiln.so"
    unset KILN_LIBRARY LD_LIBRARY_PATH
    export PYTHONPATH=$tmp/site
    loaded=$(cd "$tmp" && "$PYTHON" -c 'import kiln; print(kiln.library_path())')
    [[ "$loaded" == "$tmp/site/kiln/_lib/libkiln.so" ]] || die "kiln loaded $loaded, not its bundled library"
    echo "   kiln loads $loaded"
    # The tests import `kiln` from the installed copy, not from the sources.
    rm -rf "$tmp/src/kiln"
    run_tests
    ;;
  *) die "unknown MODE '$mode' (source or wheel)" ;;
esac
echo "python_test ($mode): PASS"
