#!/bin/bash
# Tests the kiln Rust crates (rust/README.md): `cargo test --offline` on the
# workspace (kiln-sys: the declarations against the headers; kiln: the safe
# API end to end on examples/resnet_mini.onnx against NumPy's outputs, and
# its doc tests, among them the compile_fail test that Session is not Sync).
#
#   run_test.sh LIBKILN_SO KILN_H DLPACK_INCLUDE MODEL.onnx INPUT.npy EXPECTED.npy
#
# KILN_H is the SDK's include/kiln/kiln.h (its dirname twice is the include
# root); DLPACK_INCLUDE holds dlpack/dlpack.h. The toolchain: $CARGO, else
# Debian's /usr/bin/cargo (with /usr/bin/rustc and /usr/bin/rustdoc, not a
# rustup proxy), else cargo on PATH; a missing one fails the test. Nothing is
# downloaded: the crates have no dependencies outside this workspace.
set -euo pipefail
die() { echo "rust_test: FAIL: $*" >&2; exit 1; }
abspath() { if [[ "$1" == /* ]]; then echo "$1"; else echo "$PWD/$1"; fi; }

[[ $# -eq 6 ]] || die "usage: run_test.sh LIBKILN_SO KILN_H DLPACK_INCLUDE MODEL INPUT EXPECTED"
lib=$(abspath "$1")
include=$(dirname "$(dirname "$(abspath "$2")")")
dlpack=${3:+$(abspath "$3")}
model=$(abspath "$4"); input=$(abspath "$5"); expected=$(abspath "$6")
for f in "$lib" "$model" "$input" "$expected" "$include/kiln/kiln.h"; do
  [[ -f "$f" ]] || die "missing file: $f"
done

src=""
for d in "$(dirname "${BASH_SOURCE[0]}")" "${TEST_SRCDIR:-/x}/${TEST_WORKSPACE:-kiln}/rust" \
         "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")"; do
  if [[ -f "$d/Cargo.toml" && -f "$d/kiln-sys/src/lib.rs" ]]; then src=$(abspath "$d"); break; fi
done
[[ -n "$src" ]] || die "cannot find the workspace next to ${BASH_SOURCE[0]}"

CARGO=${CARGO:-}
if [[ -z "$CARGO" ]]; then
  if [[ -x /usr/bin/cargo ]]; then CARGO=/usr/bin/cargo; else CARGO=$(command -v cargo || true); fi
fi
[[ -n "$CARGO" && -x "$CARGO" ]] || die "cargo not found (Debian: cargo)"
if [[ "$CARGO" == /usr/bin/cargo ]]; then
  export RUSTC=${RUSTC:-/usr/bin/rustc} RUSTDOC=${RUSTDOC:-/usr/bin/rustdoc}
fi
command -v "${CC:-cc}" >/dev/null 2>&1 || die "C compiler '${CC:-cc}' (the linker, and the header checks) not found"

# A program linked with -lkiln records libkiln's SONAME (libkiln.so.0): the
# copy answers to that name too.
soname_link() {  # soname_link DIR/libX.so
  local s; s=$(objdump -p "$1" | sed -n 's/^ *SONAME *//p')
  if [[ -n "$s" && "$s" != "$(basename "$1")" ]]; then ln -sf "$(basename "$1")" "$(dirname "$1")/$s"; fi
}
tmp=${TEST_TMPDIR:-$(mktemp -d)}
tmp=$(abspath "$tmp")/rust
rm -rf "$tmp"
mkdir -p "$tmp/lib" "$tmp/home" "$tmp/work"
# The runfiles are read-only symlinks: build a copy.
cp -rL "$src" "$tmp/crates"
chmod -R u+w "$tmp/crates"
rm -rf "$tmp/crates/target"
cp -L "$lib" "$tmp/lib/libkiln.so"
soname_link "$tmp/lib/libkiln.so"

export HOME=${HOME:-$tmp/home}
export CARGO_HOME=$tmp/cargo_home CARGO_TARGET_DIR=$tmp/target CARGO_NET_OFFLINE=true
export KILN_LIB_DIR=$tmp/lib KILN_INCLUDE_DIR=$include DLPACK_INCLUDE_DIR=$dlpack
# Doc tests are linked without the crates' rpath: they find the library here.
export LD_LIBRARY_PATH=$tmp/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export KILN_TEST_MODEL=$model KILN_TEST_INPUT=$input KILN_TEST_EXPECTED=$expected
export TEST_TMPDIR=$tmp/work

echo "== $("$CARGO" --version) / $("${RUSTC:-rustc}" --version)"
(cd "$tmp/crates" && "$CARGO" test --offline --workspace --all-targets) || die "cargo test failed"
(cd "$tmp/crates" && "$CARGO" test --offline --workspace --doc) || die "the doc tests failed"
echo "rust_test: PASS"
