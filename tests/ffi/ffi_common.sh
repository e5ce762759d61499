# tests/ffi/ffi_common.sh — sourced by each language's run_test.sh:
#
#   source "$(ffi_common_path)"            (see the two lines at the top of each run_test.sh)
#   ffi_setup rust Cargo.toml src/main.rs -- "$@"
#
# ffi_setup LANG MARKER... -- LIBKILN_SO KILN_INCLUDE DLPACK_INCLUDE MODEL INPUT EXPECTED
# checks the six arguments and sets:
#   lib model input expected   absolute paths (each must exist)
#   inc_flags                  -I flags: the include roots of KILN_INCLUDE (a root,
#                              a header inside it whose dirname twice is the root,
#                              or roots joined by ':') and DLPACK_INCLUDE (may be "")
#   src                        the language's source directory (holding every MARKER):
#                              next to the script, in LANG/ below it (Bazel runs the
#                              script as tests/ffi/<lang>_test), or in the runfiles
#   tmp                        $TEST_TMPDIR/ffi_LANG (else a new temp dir), fresh,
#                              with lib/libkiln.so (a copy: the runfiles entry may be
#                              a symlink with another name) and work/
# ffi_package DIR MARKER sets pkg to the repository's top-level package folder
# DIR (python, rust or go: the language packages whose example programs the
# Rust, Go and Python tests run), found in the runfiles or, for a run by hand,
# three levels above the script; MARKER is a file it must hold.
# die MESSAGE fails the test; find_tool VAR DEFAULT NAME picks a toolchain program
# ($VAR, else DEFAULT when executable, else NAME on PATH) or fails: a missing
# toolchain is a failure, never a skip.

ffi_lang=ffi
die() { echo "${ffi_lang}_test: FAIL: $*" >&2; exit 1; }
abspath() { if [[ "$1" == /* ]]; then echo "$1"; else echo "$PWD/$1"; fi; }

find_tool() {  # find_tool VAR DEFAULT NAME
  local var=$1 default=$2 name=$3 value=${!1:-}
  if [[ -z "$value" ]]; then
    if [[ -x "$default" ]]; then value=$default; else value="$(command -v "$name" || true)"; fi
  fi
  [[ -n "$value" && -x "$value" ]] || die "$name not found ($var=${!1:-}, $default, PATH=$PATH)"
  printf -v "$var" '%s' "$value"
  export "${var?}"
}

# A program linked with -lkiln records libkiln's SONAME (libkiln.so.0): the
# copy answers to that name too.
soname_link() {  # soname_link DIR/libX.so
  local s; s=$(objdump -p "$1" | sed -n 's/^ *SONAME *//p')
  if [[ -n "$s" && "$s" != "$(basename "$1")" ]]; then ln -sf "$(basename "$1")" "$(dirname "$1")/$s"; fi
}

ffi_setup() {
  ffi_lang=$1
  shift
  local markers=()
  while [[ $# -gt 0 && "$1" != "--" ]]; do markers+=("$1"); shift; done
  [[ $# -gt 0 ]] && shift
  [[ $# -eq 6 ]] || die "usage: run_test.sh LIBKILN_SO KILN_INCLUDE DLPACK_INCLUDE MODEL.onnx INPUT.npy EXPECTED.npy (got $# args)"
  lib="$(abspath "$1")"
  model="$(abspath "$4")"; input="$(abspath "$5")"; expected="$(abspath "$6")"
  local kiln_inc=$2 dlpack_inc=$3 r roots
  inc_flags=()
  IFS=':' read -r -a roots <<< "$kiln_inc"
  for r in "${roots[@]}"; do
    [[ -n "$r" ]] || continue
    if [[ -f "$r" ]]; then r="$(dirname "$(dirname "$r")")"; fi
    inc_flags+=("-I$(abspath "$r")")
  done
  [[ -n "$dlpack_inc" ]] && inc_flags+=("-I$(abspath "$dlpack_inc")")

  local here d m ok
  here="$(dirname "${BASH_SOURCE[1]}")"
  src=""
  for d in "$here" "$here/$ffi_lang" \
           "${TEST_SRCDIR:-/nonexistent}/${TEST_WORKSPACE:-kiln}/tests/ffi/$ffi_lang" \
           "$(dirname "$(readlink -f "${BASH_SOURCE[1]}")")"; do
    ok=1
    for m in "${markers[@]}"; do [[ -f "$d/$m" ]] || ok=0; done
    if (( ok )); then src="$(abspath "$d")"; break; fi
  done
  [[ -n "$src" ]] || die "cannot find ${markers[*]} next to ${BASH_SOURCE[1]}"

  local f
  for f in "$lib" "$model" "$input" "$expected"; do [[ -f "$f" ]] || die "missing file: $f"; done
  tmp="${TEST_TMPDIR:-}"
  [[ -n "$tmp" ]] || tmp="$(mktemp -d)"
  tmp="$(abspath "$tmp")/ffi_$ffi_lang"
  rm -rf "$tmp"
  mkdir -p "$tmp/lib" "$tmp/work" "$tmp/home"
  cp -L "$lib" "$tmp/lib/libkiln.so"
  soname_link "$tmp/lib/libkiln.so"
  export LD_LIBRARY_PATH="$tmp/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
}

ffi_package() {  # ffi_package DIR MARKER
  local d script
  script="${BASH_SOURCE[1]}"
  pkg=""
  for d in "${TEST_SRCDIR:-/nonexistent}/${TEST_WORKSPACE:-kiln}/$1" \
           "$(dirname "$script")/../../../$1" \
           "$(dirname "$(readlink -f "$script")")/../../../$1"; do
    if [[ -f "$d/$2" ]]; then pkg="$(abspath "$d")"; break; fi
  done
  [[ -n "$pkg" ]] || die "cannot find the $1 package ($1/$2) for ${script}"
}
