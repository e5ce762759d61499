#!/usr/bin/env bash
# tools/dev/install.sh on the built SDK and kiln binary, into a fresh prefix:
# the libraries (versioned: libX.so.VERSION, the SONAME link libX.so.N, the
# development link libX.so), stripped libraries and binary with their exports kept,
# the DLPack header beside kiln's, the man page (groff reads it), and a C
# program built with pkg-config against the prefix that runs and finds libkiln.
#
#   install_test.sh INSTALL_SH KILN SDK_KILN_H
set -uo pipefail
install_sh=$1 kiln=$2 kiln_h=$3
sdk=$(cd "$(dirname "$kiln_h")/../.." && pwd)
tmp=${TEST_TMPDIR:-$(mktemp -d)}
prefix="$tmp/prefix"
fail=0
err() { echo "FAIL: $*"; fail=1; }
if ! KILN_INSTALL_NO_BUILD=1 KILN_SDK="$sdk" KILN_BIN="$kiln" bash "$install_sh" "$prefix" \
    > "$tmp/install.log" 2>&1; then
  echo "FAIL: install.sh:"; cat "$tmp/install.log"; exit 1
fi
lib="$prefix/lib"
version=$("$kiln" --version | sed -n 's/^kiln \([0-9.]*\) .*/\1/p')
# Each library is versioned: libX.so -> libX.so.N -> libX.so.VERSION, the
# real file with the SONAME libX.so.N (N: the major version).
major=${version%%.*}
installed=()
for l in libkiln libkiln_runtime; do
  f="$lib/$l.so.$version"
  [[ -L "$lib/$l.so" && "$(readlink "$lib/$l.so")" == "$l.so.$major" ]] ||
    err "lib/$l.so is not a link to $l.so.$major"
  [[ -L "$lib/$l.so.$major" && "$(readlink "$lib/$l.so.$major")" == "$l.so.$version" ]] ||
    err "lib/$l.so.$major is not a link to $l.so.$version"
  [[ -f "$f" && ! -L "$f" ]] || { err "no $f"; continue; }
  # Captured, not piped into 'grep -q': with pipefail, grep leaving early
  # kills the writer with SIGPIPE and the pipeline fails on a match.
  headers=$(objdump -p "$f")
  grep -q "SONAME *$l\.so\.$major\$" <<< "$headers" || err "$f has not the SONAME $l.so.$major"
  installed+=("$f")
done
libkiln=${installed[0]}
for f in "${installed[@]}" "$prefix/bin/kiln"; do
  [[ -f "$f" ]] || { err "$f missing"; continue; }
  sections=$(readelf -S "$f")
  if grep -q '\.symtab\|\.debug_info' <<< "$sections"; then err "$f is not stripped"; fi
done
# Stripped, the SDK's whole API is still exported.
exports=$(nm -D --defined-only "$libkiln")
grep -q ' T kiln_model_compile$' <<< "$exports" ||
  err "the stripped libkiln exports no kiln_model_compile"
[[ -f "$prefix/include/dlpack/dlpack.h" && -f "$prefix/include/kiln/kiln.h" ]] ||
  err "include/dlpack/dlpack.h or include/kiln/kiln.h missing"
man="$prefix/share/man/man1/kiln.1"
if [[ ! -s "$man" ]]; then
  err "no man page at share/man/man1/kiln.1"
elif command -v groff > /dev/null; then
  groff -man -Tutf8 -ww -z "$man" 2> "$tmp/groff.err"
  [[ ! -s "$tmp/groff.err" ]] || { err "groff warns about kiln.1:"; head -3 "$tmp/groff.err"; }
fi
# A user's program: only the prefix's headers (with the shipped dlpack.h,
# not /usr/include's: -nostdinc is too much for libc, so check it is the one
# used) and pkg-config's flags.
cat > "$tmp/main.c" << 'C'
#include <stdio.h>
#include <kiln/kiln.h>
int main(void) {
  printf("%s %u %d\n", kiln_version(), kiln_api_version(), (int)sizeof(DLTensor) > 0);
  return kiln_api_version() >= KILN_API_VERSION ? 0 : 1;
}
C
flags=$(PKG_CONFIG_PATH="$lib/pkgconfig" pkg-config --cflags --libs kiln) || err "pkg-config kiln failed"
# shellcheck disable=SC2086
cc -std=c11 -H "$tmp/main.c" -o "$tmp/main" $flags 2> "$tmp/cc.err" || { err "cc:"; cat "$tmp/cc.err"; }
grep -q "include/dlpack/dlpack.h" "$tmp/cc.err" && ! grep -q "/usr/include/dlpack/dlpack.h" "$tmp/cc.err" ||
  { err "the program did not use the shipped dlpack.h:"; grep dlpack "$tmp/cc.err"; }
if [[ -x "$tmp/main" ]]; then
  soname=$(objdump -p "$libkiln" | sed -n 's/^ *SONAME *//p')
  dynamic=$(readelf -d "$tmp/main")
  grep -q "(NEEDED) *Shared library: \[$soname\]" <<< "$dynamic" ||
    err "the program does not record libkiln's SONAME $soname"
  out=$(env -u LD_LIBRARY_PATH "$tmp/main") || err "the program failed: $out"
  [[ "$out" == "$version "* ]] || err "the program printed '$out'"
fi
if (( fail )); then exit 1; fi
echo "PASS: install.sh (kiln $version into a prefix)"
