#!/bin/bash
# Builds the tests/ffi/rust crate (no dependencies, offline) against libkiln.so
# and runs it.
#   run_test.sh LIBKILN_SO KILN_INCLUDE DLPACK_INCLUDE MODEL.onnx INPUT.npy EXPECTED.npy
# The include arguments are accepted for a uniform interface and not used: the
# crate declares the C ABI by hand.
set -euo pipefail
for f in "$(dirname "${BASH_SOURCE[0]}")"/{.,..}/ffi_common.sh "${TEST_SRCDIR:-/x}/${TEST_WORKSPACE:-kiln}/tests/ffi/ffi_common.sh" \
         "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../ffi_common.sh"; do
  if [[ -f "$f" ]]; then source "$f"; break; fi
done
declare -F ffi_setup >/dev/null || { echo "FAIL: tests/ffi/ffi_common.sh not found" >&2; exit 1; }
ffi_setup rust Cargo.toml src/main.rs -- "$@"

# The toolchain: the Debian cargo/rustc first (no rustup proxy, which needs a
# home directory), then whatever is on PATH.
find_tool CARGO /usr/bin/cargo cargo
if [[ -z "${RUSTC:-}" && "$CARGO" == /usr/bin/cargo && -x /usr/bin/rustc ]]; then RUSTC=/usr/bin/rustc; fi
find_tool RUSTC /usr/bin/rustc rustc
command -v cc >/dev/null 2>&1 || die "cc (the linker rustc uses) not found on PATH ($PATH)"

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
"$CARGO_TARGET_DIR/release/kiln_ffi_test" "$model" "$input" "$expected" "$tmp/work" \
  || die "the Rust program failed (exit $?)"
