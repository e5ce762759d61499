#!/bin/bash
# Builds tests/ffi/c/main.c against libkiln.so and runs it.
#   run_test.sh LIBKILN_SO KILN_INCLUDE DLPACK_INCLUDE MODEL.onnx INPUT.npy EXPECTED.npy
# KILN_INCLUDE: the include root (the directory holding kiln/), a header inside
# it (<root>/kiln/kiln.h: its dirname twice is taken), or several roots joined
# by ':'. DLPACK_INCLUDE: the directory holding dlpack/dlpack.h, or empty.
set -euo pipefail

die() { echo "c_test: FAIL: $*" >&2; exit 1; }
[[ $# -eq 6 ]] || die "usage: $0 LIBKILN_SO KILN_INCLUDE DLPACK_INCLUDE MODEL.onnx INPUT.npy EXPECTED.npy (got $# args)"

abspath() { if [[ "$1" == /* ]]; then echo "$1"; else echo "$PWD/$1"; fi; }

lib="$(abspath "$1")"; kiln_inc="$2"; dlpack_inc="$3"
model="$(abspath "$4")"; input="$(abspath "$5")"; expected="$(abspath "$6")"

# The sources: next to this script, or in c/ below it (Bazel runs a copy of
# the script named after the test, one directory up).
here="$(dirname "${BASH_SOURCE[0]}")"
src=""
for d in "$here" "$here/c" "${TEST_SRCDIR:-/nonexistent}/${TEST_WORKSPACE:-kiln}/tests/ffi/c" \
         "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")"; do
  if [[ -f "$d/main.c" ]]; then src="$(abspath "$d")"; break; fi
done
[[ -n "$src" ]] || die "cannot find main.c next to $0"

# The toolchain must be there: a missing compiler is a failure, not a skip.
CC="${CC:-cc}"
command -v "$CC" >/dev/null 2>&1 || die "C compiler '$CC' not found on PATH ($PATH)"

for f in "$lib" "$model" "$input" "$expected"; do [[ -f "$f" ]] || die "missing file: $f"; done

tmp="${TEST_TMPDIR:-}"
[[ -n "$tmp" ]] || tmp="$(mktemp -d)"
tmp="$(abspath "$tmp")/ffi_c"
rm -rf "$tmp"; mkdir -p "$tmp/lib" "$tmp/work"

# The library may be a runfiles symlink with another name: copy it.
cp -L "$lib" "$tmp/lib/libkiln.so"

# Include dirs.
inc_flags=()
IFS=':' read -r -a roots <<< "$kiln_inc"
for r in "${roots[@]}"; do
  [[ -n "$r" ]] || continue
  if [[ -f "$r" ]]; then r="$(dirname "$(dirname "$r")")"; fi
  r="$(abspath "$r")"
  inc_flags+=("-I$r")
  # The runtime headers (kiln/runtime.h, status.h, npy.h) live in
  # runtime_c/include; find them beside c_api/include when they are not here.
  if [[ ! -f "$r/kiln/runtime.h" && -f "$r/../../runtime_c/include/kiln/runtime.h" ]]; then
    inc_flags+=("-I$(cd "$r/../../runtime_c/include" && pwd)")
  fi
done
[[ -n "$dlpack_inc" ]] && inc_flags+=("-I$(abspath "$dlpack_inc")")

# An SDK tree (lib/pkgconfig/kiln.pc beside the library): build the way a C
# user of an installed kiln does, with pkg-config.
pc_dir="$(dirname "$(abspath "$1")")/pkgconfig"
if [[ -f "$pc_dir/kiln.pc" ]]; then
  command -v pkg-config >/dev/null 2>&1 || die "pkg-config not found (Debian package pkg-config)"
  flags=$(PKG_CONFIG_PATH="$pc_dir" pkg-config --cflags --libs kiln) || die "pkg-config kiln failed"
  echo "== building main.c with $CC and pkg-config: $flags"
  # shellcheck disable=SC2086
  (set -x; "$CC" -std=c11 -Wall -Wextra -Werror "$src/main.c" $flags \
    ${dlpack_inc:+-I"$(abspath "$dlpack_inc")"} -lm -o "$tmp/ffi_c") || die "the C program did not build"
else
  echo "== building main.c with $CC"
  (set -x; "$CC" -std=c11 -Wall -Wextra -Werror "${inc_flags[@]}" "$src/main.c" \
    -L"$tmp/lib" -lkiln -lm -Wl,-rpath,"$tmp/lib" -o "$tmp/ffi_c") || die "the C program did not build"
fi

echo "== running"
export LD_LIBRARY_PATH="$tmp/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
"$tmp/ffi_c" "$model" "$input" "$expected" "$tmp/work" || die "the C program failed (exit $?)"
