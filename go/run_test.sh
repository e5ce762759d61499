#!/bin/bash
# Tests the kiln Go package (go/README.md): go vet and go test (cgo, the
# standard library only, offline) against the SDK's libkiln.so, found the way
# a user's build finds it: pkg-config's kiln.pc (`#cgo pkg-config: kiln`).
#
#   run_test.sh LIBKILN_SO KILN_H DLPACK_INCLUDE MODEL.onnx INPUT.npy EXPECTED.npy
#
# LIBKILN_SO sits in an SDK's lib/ with pkgconfig/kiln.pc beside it; KILN_H
# is the SDK's include/kiln/kiln.h; DLPACK_INCLUDE holds dlpack/dlpack.h. The
# toolchain: $GO, else Debian's /usr/bin/go, else go on PATH (Go 1.19+); a
# missing one fails the test. GOPROXY=off: nothing is downloaded.
set -euo pipefail
die() { echo "go_test: FAIL: $*" >&2; exit 1; }
abspath() { if [[ "$1" == /* ]]; then echo "$1"; else echo "$PWD/$1"; fi; }

[[ $# -eq 6 ]] || die "usage: run_test.sh LIBKILN_SO KILN_H DLPACK_INCLUDE MODEL INPUT EXPECTED"
lib=$(abspath "$1")
pc=$(dirname "$lib")/pkgconfig/kiln.pc
include=$(dirname "$(dirname "$(abspath "$2")")")
dlpack=${3:+$(abspath "$3")}
model=$(abspath "$4"); input=$(abspath "$5"); expected=$(abspath "$6")
for f in "$lib" "$pc" "$model" "$input" "$expected" "$include/kiln/kiln.h"; do
  [[ -f "$f" ]] || die "missing file: $f"
done

src=""
for d in "$(dirname "${BASH_SOURCE[0]}")" "${TEST_SRCDIR:-/x}/${TEST_WORKSPACE:-kiln}/go" \
         "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")"; do
  if [[ -f "$d/go.mod" && -f "$d/kiln.go" ]]; then src=$(abspath "$d"); break; fi
done
[[ -n "$src" ]] || die "cannot find the package next to ${BASH_SOURCE[0]}"

GO=${GO:-}
if [[ -z "$GO" ]]; then
  if [[ -x /usr/bin/go ]]; then GO=/usr/bin/go; else GO=$(command -v go || true); fi
fi
[[ -n "$GO" && -x "$GO" ]] || die "go not found (Debian: golang-go)"
command -v "${CC:-cc}" >/dev/null 2>&1 || die "C compiler '${CC:-cc}' (needed by cgo) not found"
command -v pkg-config >/dev/null 2>&1 || die "pkg-config not found (Debian: pkg-config)"

# A program linked with -lkiln records libkiln's SONAME (libkiln.so.0): the
# copy answers to that name too.
soname_link() {  # soname_link DIR/libX.so
  local s; s=$(objdump -p "$1" | sed -n 's/^ *SONAME *//p')
  if [[ -n "$s" && "$s" != "$(basename "$1")" ]]; then ln -sf "$(basename "$1")" "$(dirname "$1")/$s"; fi
}
tmp=${TEST_TMPDIR:-$(mktemp -d)}
tmp=$(abspath "$tmp")/go
rm -rf "$tmp"
mkdir -p "$tmp/sdk/lib/pkgconfig" "$tmp/home" "$tmp/work"
# An SDK prefix in the temporary directory (kiln.pc is relocatable:
# prefix=${pcfiledir}/../..), and a copy of the read-only sources.
cp -rL "$include" "$tmp/sdk/include"
cp -L "$lib" "$tmp/sdk/lib/libkiln.so"
soname_link "$tmp/sdk/lib/libkiln.so"
cp -L "$pc" "$tmp/sdk/lib/pkgconfig/kiln.pc"
cp -rL "$src" "$tmp/src"
chmod -R u+w "$tmp"

export HOME=${HOME:-$tmp/home}
export GOCACHE=$tmp/gocache GOPATH=$tmp/gopath GOMODCACHE=$tmp/gopath/pkg/mod GOENV=off
export GOFLAGS=-mod=mod GO111MODULE=on GOPROXY=off GOSUMDB=off GOTOOLCHAIN=local CGO_ENABLED=1
export PKG_CONFIG_PATH=$tmp/sdk/lib/pkgconfig
if [[ -n "$dlpack" && "$dlpack" != /usr/include ]]; then export CGO_CFLAGS="-g -O2 -I$dlpack"; fi
export KILN_TEST_MODEL=$model KILN_TEST_INPUT=$input KILN_TEST_EXPECTED=$expected TEST_TMPDIR=$tmp/work

echo "== $("$GO" version); pkg-config kiln: $(pkg-config --cflags --libs kiln)"
(cd "$tmp/src" && "$GO" vet ./...) || die "go vet failed"
(cd "$tmp/src" && "$GO" test -count=1 -v ./...) || die "go test failed"
echo "go_test: PASS"
