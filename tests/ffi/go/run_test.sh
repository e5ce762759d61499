#!/bin/bash
# Builds tests/ffi/go (cgo, standard library only, offline) against libkiln.so
# and runs it.
#   run_test.sh LIBKILN_SO KILN_INCLUDE DLPACK_INCLUDE MODEL.onnx INPUT.npy EXPECTED.npy
# KILN_INCLUDE: the include root (the directory holding kiln/), a header inside
# it (<root>/kiln/kiln.h: its dirname twice is taken), or several roots joined
# by ':'. DLPACK_INCLUDE: the directory holding dlpack/dlpack.h, or empty.
set -euo pipefail

die() { echo "go_test: FAIL: $*" >&2; exit 1; }
[[ $# -eq 6 ]] || die "usage: $0 LIBKILN_SO KILN_INCLUDE DLPACK_INCLUDE MODEL.onnx INPUT.npy EXPECTED.npy (got $# args)"

abspath() { if [[ "$1" == /* ]]; then echo "$1"; else echo "$PWD/$1"; fi; }

lib="$(abspath "$1")"; kiln_inc="$2"; dlpack_inc="$3"
model="$(abspath "$4")"; input="$(abspath "$5")"; expected="$(abspath "$6")"

# The sources: next to this script, or in go/ below it (Bazel runs a copy of
# the script named after the test, one directory up).
here="$(dirname "${BASH_SOURCE[0]}")"
src=""
for d in "$here" "$here/go" "${TEST_SRCDIR:-/nonexistent}/${TEST_WORKSPACE:-kiln}/tests/ffi/go" \
         "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")"; do
  if [[ -f "$d/go.mod" && -f "$d/main.go" ]]; then src="$(abspath "$d")"; break; fi
done
[[ -n "$src" ]] || die "cannot find go.mod and main.go next to $0"

# The toolchain: the Debian go first, then PATH. Missing is a failure, not a skip.
if [[ -z "${GO:-}" ]]; then
  if [[ -x /usr/bin/go ]]; then GO=/usr/bin/go
  else GO="$(command -v go || true)"; fi
fi
[[ -n "$GO" && -x "$GO" ]] || die "go not found (GO=${GO:-}, /usr/bin/go, PATH=$PATH)"
command -v "${CC:-cc}" >/dev/null 2>&1 || die "C compiler '${CC:-cc}' (needed by cgo) not found on PATH ($PATH)"

for f in "$lib" "$model" "$input" "$expected"; do [[ -f "$f" ]] || die "missing file: $f"; done

tmp="${TEST_TMPDIR:-}"
[[ -n "$tmp" ]] || tmp="$(mktemp -d)"
tmp="$(abspath "$tmp")/ffi_go"
rm -rf "$tmp"; mkdir -p "$tmp/lib" "$tmp/work" "$tmp/home" "$tmp/src"

# The library may be a runfiles symlink with another name: copy it.
cp -L "$lib" "$tmp/lib/libkiln.so"

# Include dirs.
cflags="-g -O2"
IFS=':' read -r -a roots <<< "$kiln_inc"
for r in "${roots[@]}"; do
  [[ -n "$r" ]] || continue
  if [[ -f "$r" ]]; then r="$(dirname "$(dirname "$r")")"; fi
  r="$(abspath "$r")"
  cflags+=" -I$r"
  # The runtime headers (kiln/runtime.h, status.h, npy.h) live in
  # runtime_c/include; find them beside c_api/include when they are not here.
  if [[ ! -f "$r/kiln/runtime.h" && -f "$r/../../runtime_c/include/kiln/runtime.h" ]]; then
    cflags+=" -I$(cd "$r/../../runtime_c/include" && pwd)"
  fi
done
[[ -n "$dlpack_inc" ]] && cflags+=" -I$(abspath "$dlpack_inc")"

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
export LD_LIBRARY_PATH="$tmp/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
"$tmp/kilnffi" "$model" "$input" "$expected" "$tmp/work" || die "the Go program failed (exit $?)"
