#!/bin/bash
# Builds and runs go/examples/resnet_mini, the FFI program written with the
# kiln Go package (cgo, standard library only, offline), against libkiln.so.
#   run_test.sh LIBKILN_SO KILN_INCLUDE DLPACK_INCLUDE MODEL.onnx INPUT.npy EXPECTED.npy
# KILN_INCLUDE: the include root (the directory holding kiln/), a header inside
# it (<root>/kiln/kiln.h: its dirname twice is taken), or several roots joined
# by ':'. DLPACK_INCLUDE: the directory holding dlpack/dlpack.h, or empty. The
# package finds libkiln.so through pkg-config (`#cgo pkg-config: kiln`): this
# script writes a kiln.pc for the library and the include roots given.
set -euo pipefail
for f in "$(dirname "${BASH_SOURCE[0]}")"/{.,..}/ffi_common.sh "${TEST_SRCDIR:-/x}/${TEST_WORKSPACE:-kiln}/tests/ffi/ffi_common.sh" \
         "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../ffi_common.sh"; do
  if [[ -f "$f" ]]; then source "$f"; break; fi
done
declare -F ffi_setup >/dev/null || { echo "FAIL: tests/ffi/ffi_common.sh not found" >&2; exit 1; }
ffi_setup go run_test.sh -- "$@"
ffi_package go kiln.go

# The toolchain: the Debian go first, then PATH.
find_tool GO /usr/bin/go go
find_tool PKG_CONFIG /usr/bin/pkg-config pkg-config
command -v "${CC:-cc}" >/dev/null 2>&1 || die "C compiler '${CC:-cc}' (needed by cgo) not found on PATH ($PATH)"

# The source tree is read-only in the sandbox: build a copy.
cp -rL "$pkg" "$tmp/src"
chmod -R u+w "$tmp/src"
mkdir -p "$tmp/pkgconfig"
cat > "$tmp/pkgconfig/kiln.pc" <<PC
Name: kiln
Description: libkiln.so for tests/ffi
Version: 0.1.0
Cflags: ${inc_flags[*]}
Libs: -L$tmp/lib -Wl,-rpath,$tmp/lib -lkiln
PC

export HOME="${HOME:-$tmp/home}"
export GOCACHE="$tmp/gocache" GOPATH="$tmp/gopath" GOMODCACHE="$tmp/gopath/pkg/mod" GOENV=off
export GOFLAGS=-mod=mod GO111MODULE=on GOPROXY=off GOSUMDB=off GOTOOLCHAIN=local CGO_ENABLED=1
export PKG_CONFIG_PATH="$tmp/pkgconfig"

echo "== building with $("$GO" version); pkg-config kiln: $("$PKG_CONFIG" --cflags --libs kiln)"
(cd "$tmp/src" && "$GO" build -o "$tmp/resnet_mini" ./examples/resnet_mini) || die "the Go program did not build"

echo "== running"
"$tmp/resnet_mini" "$model" "$input" "$expected" "$tmp/work" || die "the Go program failed (exit $?)"
