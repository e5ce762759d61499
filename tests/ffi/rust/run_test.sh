#!/bin/bash
# Builds and runs rust/kiln/examples/resnet_mini.rs, the FFI program written
# with the kiln crate (over kiln-sys; no crates from outside the repository,
# offline), against libkiln.so.
#   run_test.sh LIBKILN_SO KILN_INCLUDE DLPACK_INCLUDE MODEL.onnx INPUT.npy EXPECTED.npy
# The include arguments are accepted for a uniform interface and not used:
# kiln-sys declares the C ABI itself (and rust/ checks it against the headers).
set -euo pipefail
for f in "$(dirname "${BASH_SOURCE[0]}")"/{.,..}/ffi_common.sh "${TEST_SRCDIR:-/x}/${TEST_WORKSPACE:-kiln}/tests/ffi/ffi_common.sh" \
         "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../ffi_common.sh"; do
  if [[ -f "$f" ]]; then source "$f"; break; fi
done
declare -F ffi_setup >/dev/null || { echo "FAIL: tests/ffi/ffi_common.sh not found" >&2; exit 1; }
ffi_setup rust run_test.sh -- "$@"
ffi_package rust kiln/examples/resnet_mini.rs

# The toolchain: the Debian cargo/rustc first (no rustup proxy, which needs a
# home directory), then whatever is on PATH.
find_tool CARGO /usr/bin/cargo cargo
if [[ -z "${RUSTC:-}" && "$CARGO" == /usr/bin/cargo && -x /usr/bin/rustc ]]; then RUSTC=/usr/bin/rustc; fi
find_tool RUSTC /usr/bin/rustc rustc
command -v cc >/dev/null 2>&1 || die "cc (the linker rustc uses) not found on PATH ($PATH)"

# The source tree is read-only in the sandbox: build a copy.
cp -rL "$pkg" "$tmp/crates"
chmod -R u+w "$tmp/crates"
rm -rf "$tmp/crates/target"

export HOME="${HOME:-$tmp/home}"
export CARGO_HOME="$tmp/cargo_home" CARGO_TARGET_DIR="$tmp/target" CARGO_NET_OFFLINE=true
export KILN_LIB_DIR="$tmp/lib"

echo "== building the example with $("$CARGO" --version) / $("$RUSTC" --version)"
(cd "$tmp/crates" && "$CARGO" build --offline -p kiln --example resnet_mini) \
  || die "the Rust program did not build"

echo "== running"
"$CARGO_TARGET_DIR/debug/examples/resnet_mini" "$model" "$input" "$expected" "$tmp/work" \
  || die "the Rust program failed (exit $?)"
