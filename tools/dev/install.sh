#!/usr/bin/env bash
# Installs kiln for C (and other FFI) users under PREFIX:
#   PREFIX/bin/kiln                      the command line
#   PREFIX/include/kiln/*.h              kiln.h, kiln_runtime.h and the runtime headers
#   PREFIX/lib/libkiln.so                compiler + runtime (C ABI)
#   PREFIX/lib/libkiln_runtime.so        runtime only
#   PREFIX/lib/pkgconfig/kiln.pc, kiln_runtime.pc
# then: PKG_CONFIG_PATH=PREFIX/lib/pkgconfig cc main.c $(pkg-config --cflags --libs kiln)
#
#   tools/dev/install.sh PREFIX      (builds with --config=opt first)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BAZEL="${BAZEL:-bazel}"
if [[ $# -ne 1 ]]; then
  sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
prefix=$1
cd "$ROOT"
"$ROOT/tools/dev/install_deps.sh"
"$BAZEL" build --config=opt //c_api:sdk //tools:kiln
bin="$("$BAZEL" info --config=opt bazel-bin 2>/dev/null)"
mkdir -p "$prefix/bin" "$prefix/include/kiln" "$prefix/lib/pkgconfig"
install -m 0644 "$bin"/c_api/sdk/include/kiln/*.h "$prefix/include/kiln/"
install -m 0755 "$bin/c_api/sdk/lib/libkiln.so" "$bin/c_api/sdk/lib/libkiln_runtime.so" "$prefix/lib/"
install -m 0644 "$bin"/c_api/sdk/lib/pkgconfig/*.pc "$prefix/lib/pkgconfig/"
install -m 0755 "$bin/tools/kiln" "$prefix/bin/kiln"
echo "installed kiln into $prefix (PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --libs kiln)"
