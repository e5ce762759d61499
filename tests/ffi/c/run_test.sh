#!/bin/bash
# Builds tests/ffi/c/main.c against libkiln.so and runs it.
#   run_test.sh LIBKILN_SO KILN_INCLUDE DLPACK_INCLUDE MODEL.onnx INPUT.npy EXPECTED.npy
# With an SDK tree (lib/pkgconfig/kiln.pc beside the library) it builds the way
# a C user of an installed kiln does: cc main.c $(pkg-config --cflags --libs kiln).
set -euo pipefail
for f in "$(dirname "${BASH_SOURCE[0]}")"/{.,..}/ffi_common.sh "${TEST_SRCDIR:-/x}/${TEST_WORKSPACE:-kiln}/tests/ffi/ffi_common.sh" \
         "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../ffi_common.sh"; do
  if [[ -f "$f" ]]; then source "$f"; break; fi
done
declare -F ffi_setup >/dev/null || { echo "FAIL: tests/ffi/ffi_common.sh not found" >&2; exit 1; }
ffi_setup c main.c -- "$@"

find_tool CC /usr/bin/cc cc
pc_dir="$(dirname "$lib")/pkgconfig"
if [[ -f "$pc_dir/kiln.pc" ]]; then
  find_tool PKG_CONFIG /usr/bin/pkg-config pkg-config
  flags=$(PKG_CONFIG_PATH="$pc_dir" "$PKG_CONFIG" --cflags --libs kiln) || die "pkg-config kiln failed"
  echo "== building main.c with $CC and pkg-config: $flags"
  # shellcheck disable=SC2086
  (set -x; "$CC" -std=c11 -Wall -Wextra -Werror "$src/main.c" $flags -lm \
    -o "$tmp/ffi_c") || die "the C program did not build"
else
  echo "== building main.c with $CC"
  (set -x; "$CC" -std=c11 -Wall -Wextra -Werror "${inc_flags[@]}" "$src/main.c" \
    -L"$tmp/lib" -lkiln -lm -Wl,-rpath,"$tmp/lib" -o "$tmp/ffi_c") || die "the C program did not build"
fi

echo "== running"
"$tmp/ffi_c" "$model" "$input" "$expected" "$tmp/work" || die "the C program failed (exit $?)"
