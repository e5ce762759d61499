#!/usr/bin/env bash
# Installs kiln for C (and other FFI) users under PREFIX:
#   PREFIX/bin/kiln                      the command line
#   PREFIX/include/kiln/*.h              kiln.h, kiln_runtime.h and the runtime headers
#   PREFIX/include/dlpack/dlpack.h       the DLPack header kiln's headers include
#   PREFIX/lib/libkiln.so.VERSION        compiler + runtime (C ABI), stripped,
#     with the links libkiln.so.0 (its SONAME) and libkiln.so (for -lkiln)
#   PREFIX/lib/libkiln_runtime.so.VERSION  runtime only, stripped, with the
#     links libkiln_runtime.so.0 and libkiln_runtime.so
#   PREFIX/lib/pkgconfig/kiln.pc, kiln_runtime.pc
#   PREFIX/share/man/man1/kiln.1         the man page (kiln help --man)
# then: PKG_CONFIG_PATH=PREFIX/lib/pkgconfig cc main.c $(pkg-config --cflags --libs kiln)
#
#   tools/dev/install.sh PREFIX      (builds with --config=opt first)
#   KILN_INSTALL_NO_BUILD=1 KILN_SDK=DIR KILN_BIN=FILE tools/dev/install.sh PREFIX
#                                    (installs an SDK folder and kiln binary already built;
#                                     what //tools:install_test does)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BAZEL="${BAZEL:-bazel}"
if [[ $# -ne 1 ]]; then
  sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
prefix=$1
cd "$ROOT"
if [[ -z "${KILN_INSTALL_NO_BUILD:-}" ]]; then
  "$ROOT/tools/dev/install_deps.sh"
  "$BAZEL" build --config=opt //c_api:sdk //tools:kiln
  bin="$("$BAZEL" info --config=opt bazel-bin 2>/dev/null)"
  sdk="$bin/c_api/sdk"
  kiln="$bin/tools/kiln"
else
  sdk=${KILN_SDK:?KILN_SDK: the c_api/sdk folder to install}
  kiln=${KILN_BIN:?KILN_BIN: the kiln binary to install}
fi
version=$("$kiln" --version | sed -n 's/^kiln \([0-9][0-9.]*\) .*/\1/p')
[[ -n "$version" ]] || { echo "install.sh: cannot read the version of $kiln" >&2; exit 1; }
mkdir -p "$prefix/bin" "$prefix/include/kiln" "$prefix/include/dlpack" "$prefix/lib/pkgconfig" \
  "$prefix/share/man/man1"
install -m 0644 "$sdk"/include/kiln/*.h "$prefix/include/kiln/"
install -m 0644 "$sdk/include/dlpack/dlpack.h" "$prefix/include/dlpack/"
# The real file carries the full version; the SONAME link (what programs
# record and load) and the development link (what -lkiln finds) point at it.
# Stripped of symbols and debug information (the dynamic symbol table, all a
# program links against, stays).
for lib in kiln kiln_runtime; do
  major=$(objdump -p "$sdk/lib/lib$lib.so" | sed -n 's/^ *SONAME *lib[a-z_]*\.so\.\([0-9]*\)$/\1/p')
  if [[ -z "$major" ]]; then
    # Not (yet) versioned: installed under its own name.
    rm -f "$prefix/lib/lib$lib.so"
    install -m 0755 "$sdk/lib/lib$lib.so" "$prefix/lib/lib$lib.so"
    strip --strip-unneeded "$prefix/lib/lib$lib.so"
    continue
  fi
  [[ "$version" == "$major".* ]] || {
    echo "install.sh: lib$lib.so's SONAME major $major does not match version $version" >&2; exit 1; }
  real="lib$lib.so.$version"
  rm -f "$prefix/lib/lib$lib.so" "$prefix/lib/lib$lib.so.$major" "$prefix/lib/$real"
  install -m 0755 "$sdk/lib/lib$lib.so" "$prefix/lib/$real"
  strip --strip-unneeded "$prefix/lib/$real"
  ln -s "$real" "$prefix/lib/lib$lib.so.$major"
  ln -s "lib$lib.so.$major" "$prefix/lib/lib$lib.so"
done
install -m 0644 "$sdk"/lib/pkgconfig/*.pc "$prefix/lib/pkgconfig/"
install -m 0755 "$kiln" "$prefix/bin/kiln"
strip "$prefix/bin/kiln"
"$prefix/bin/kiln" help --man >"$prefix/share/man/man1/kiln.1"
echo "installed kiln $version into $prefix (PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --libs kiln; man -l $prefix/share/man/man1/kiln.1)"
