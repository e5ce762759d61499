#!/bin/bash
# Builds tests/ffi/go (cgo, standard library only, offline) against libkiln.so
# and runs it.
#   run_test.sh LIBKILN_SO KILN_INCLUDE DLPACK_INCLUDE MODEL.onnx INPUT.npy EXPECTED.npy
# KILN_INCLUDE: the include root (the directory holding kiln/), a header inside
# it (<root>/kiln/kiln.h: its dirname twice is taken), or several roots joined
# by ':'. DLPACK_INCLUDE: the directory holding dlpack/dlpack.h, or empty.
set -euo pipefail
for f in "$(dirname "${BASH_SOURCE[0]}")"/{.,..}/ffi_common.sh "${TEST_SRCDIR:-/x}/${TEST_WORKSPACE:-kiln}/tests/ffi/ffi_common.sh" \
         "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../ffi_common.sh"; do
  if [[ -f "$f" ]]; then source "$f"; break; fi
done
declare -F ffi_setup >/dev/null || { echo "FAIL: tests/ffi/ffi_common.sh not found" >&2; exit 1; }
ffi_setup go go.mod main.go -- "$@"

# The toolchain: the Debian go first, then PATH.
find_tool GO /usr/bin/go go
command -v "${CC:-cc}" >/dev/null 2>&1 || die "C compiler '${CC:-cc}' (needed by cgo) not found on PATH ($PATH)"
mkdir -p "$tmp/src"
cflags="-g -O2 ${inc_flags[*]}"

# The source tree is read-only in the sandbox: build a copy.
cp -L "$src/go.mod" "$src/"*.go "$tmp/src/"
chmod -R u+w "$tmp/src"

export HOME="${HOME:-$tmp/home}"
export GOCACHE="$tmp/gocache"
export GOPATH="$tmp/gopath"
export GOMODCACHE="$tmp/gopath/pkg/mod"
export GOENV=off
export GOFLAGS=-mod=mod
export GO111MODULE=on
export GOPROXY=off
export GOSUMDB=off
export GOTOOLCHAIN=local
export CGO_ENABLED=1
export CGO_CFLAGS="$cflags"
export CGO_LDFLAGS="-L$tmp/lib -Wl,-rpath,$tmp/lib"

echo "== building with $("$GO" version)"
echo "   CGO_CFLAGS=$CGO_CFLAGS"
echo "   CGO_LDFLAGS=$CGO_LDFLAGS"
(cd "$tmp/src" && "$GO" build -o "$tmp/kilnffi" .) || die "the Go program did not build"

echo "== running"
"$tmp/kilnffi" "$model" "$input" "$expected" "$tmp/work" || die "the Go program failed (exit $?)"
