#!/bin/bash
# Builds the tests/ffi/rust crate (no dependencies, offline) against libkiln.so
# and runs it.
#   run_test.sh LIBKILN_SO KILN_INCLUDE DLPACK_INCLUDE MODEL.onnx INPUT.npy EXPECTED.npy
# The include arguments are accepted for a uniform interface and not used: the
# crate declares the C ABI by hand.
set -euo pipefail

die() { echo "rust_test: FAIL: $*" >&2; exit 1; }
[[ $# -eq 6 ]] || die "usage: $0 LIBKILN_SO KILN_INCLUDE DLPACK_INCLUDE MODEL.onnx INPUT.npy EXPECTED.npy (got $# args)"

abspath() { if [[ "$1" == /* ]]; then echo "$1"; else echo "$PWD/$1"; fi; }

lib="$(abspath "$1")"
model="$(abspath "$4")"; input="$(abspath "$5")"; expected="$(abspath "$6")"

# The crate: next to this script, or in rust/ below it (Bazel runs a copy of
# the script named after the test, one directory up).
here="$(dirname "${BASH_SOURCE[0]}")"
src=""
for d in "$here" "$here/rust" "${TEST_SRCDIR:-/nonexistent}/${TEST_WORKSPACE:-kiln}/tests/ffi/rust" \
         "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")"; do
  if [[ -f "$d/Cargo.toml" && -f "$d/src/main.rs" ]]; then src="$(abspath "$d")"; break; fi
done
[[ -n "$src" ]] || die "cannot find the crate (Cargo.toml, src/main.rs) next to $0"

# The toolchain: the Debian cargo/rustc first (no rustup proxy, which needs a
# home directory), then whatever is on PATH. Missing is a failure, not a skip.
if [[ -z "${CARGO:-}" ]]; then
  if [[ -x /usr/bin/cargo ]]; then CARGO=/usr/bin/cargo
  else CARGO="$(command -v cargo || true)"; fi
fi
[[ -n "$CARGO" && -x "$CARGO" ]] || die "cargo not found (CARGO=${CARGO:-}, /usr/bin/cargo, PATH=$PATH)"
if [[ -z "${RUSTC:-}" ]]; then
  if [[ "$CARGO" == /usr/bin/cargo && -x /usr/bin/rustc ]]; then RUSTC=/usr/bin/rustc
  else RUSTC="$(command -v rustc || true)"; fi
fi
[[ -n "$RUSTC" && -x "$RUSTC" ]] || die "rustc not found (looked at /usr/bin/rustc and PATH=$PATH)"
command -v cc >/dev/null 2>&1 || die "cc (the linker rustc uses) not found on PATH ($PATH)"
export RUSTC

for f in "$lib" "$model" "$input" "$expected"; do [[ -f "$f" ]] || die "missing file: $f"; done

tmp="${TEST_TMPDIR:-}"
[[ -n "$tmp" ]] || tmp="$(mktemp -d)"
tmp="$(abspath "$tmp")/ffi_rust"
rm -rf "$tmp"; mkdir -p "$tmp/lib" "$tmp/work" "$tmp/home"

# The library may be a runfiles symlink with another name: copy it.
cp -L "$lib" "$tmp/lib/libkiln.so"

# The source tree is read-only in the sandbox: build a copy.
mkdir -p "$tmp/crate/src"
cp -L "$src/Cargo.toml" "$src/build.rs" "$tmp/crate/"
[[ -f "$src/Cargo.lock" ]] && cp -L "$src/Cargo.lock" "$tmp/crate/"
cp -L "$src/src/"*.rs "$tmp/crate/src/"
chmod -R u+w "$tmp/crate"

export HOME="${HOME:-$tmp/home}"
export CARGO_HOME="$tmp/cargo_home"
export CARGO_TARGET_DIR="$tmp/target"
export KILN_LIB_DIR="$tmp/lib"
export CARGO_NET_OFFLINE=true

echo "== building with $("$CARGO" --version) / $("$RUSTC" --version)"
(cd "$tmp/crate" && "$CARGO" build --offline --release) || die "the Rust program did not build"

echo "== running"
export LD_LIBRARY_PATH="$tmp/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
"$CARGO_TARGET_DIR/release/kiln_ffi_test" "$model" "$input" "$expected" "$tmp/work" \
  || die "the Rust program failed (exit $?)"
