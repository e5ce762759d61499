#!/usr/bin/env bash
# kiln developer entry point.
#
#   tools/dev/kiln.sh test [bazel test flags...]   install deps, then `bazel test //...`
#   tools/dev/kiln.sh demo [demo args...]          install deps, then run the demo
#
# `tools/dev/kiln.sh test` is the README's test command and what CI (.ci/run) runs.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"

BAZEL="${BAZEL:-bazel}"

usage() {
  sed -n '2,7p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

install_deps() {
  "$ROOT/tools/dev/install_deps.sh"
}

# The main job at this stage: parse and type-check the bundled examples (a
# ResNet-style block and a transformer block in the text format), print them
# with their inferred types, optimize and fuse the ResNet block, and lower each
# fused function to loop IR and machine code, and compile it into one shared
# library (docs/artifact.md). Later issues grow this into compiling and
# running a bundled ONNX model.
run_demo() {
  local files=("$ROOT/examples/resnet_block.kir" "$ROOT/examples/transformer_block.kir")
  if [[ $# -gt 0 ]]; then files=("$@"); fi
  "$BAZEL" build --config=opt //tools:kiln
  local kiln
  kiln="$("$BAZEL" info --config=opt bazel-bin 2>/dev/null)/tools/kiln"
  for f in "${files[@]}"; do
    echo "==== $f"
    "$kiln" print --types "$f"
  done
  echo "==== summary"
  "$kiln" check "${files[@]}"
  echo "==== default O3 pipeline on ${files[0]}"
  "$kiln" opt "${files[0]}" --opt-level 3 --timing
  echo "==== every fused function of ${files[0]} lowered to a kernel (loop IR), then to machine code"
  "$kiln" lower "${files[0]}" --timing
  "$kiln" lower "${files[0]}" --emit asm --timing > /dev/null
  local out="${TMPDIR:-/tmp}/kiln_demo"
  mkdir -p "$out"
  echo "==== ${files[0]} compiled into one shared library: $out/model.so"
  "$kiln" compile "${files[0]}" -o "$out/model.so" --timing
}

cmd="${1:-}"
[[ $# -gt 0 ]] && shift
case "$cmd" in
  test)
    install_deps
    exec "$BAZEL" test //... "$@"
    ;;
  demo)
    install_deps
    run_demo "$@"
    ;;
  -h|--help|help|"")
    usage
    [[ -n "$cmd" ]]
    ;;
  *)
    echo "kiln.sh: unknown command '$cmd'" >&2
    usage >&2
    exit 2
    ;;
esac
