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

# ---------------------------------------------------------------------------
# DEMO — TO BE FINISHED by the engineer who writes //tools:kiln_demo.
# Set KILN_DEMO_TARGET / KILN_DEMO_ARGS to the real demo; run_demo runs
#   bazel run --config=opt $KILN_DEMO_TARGET -- "${KILN_DEMO_ARGS[@]}" "$@"
# once that target exists. Until then it builds //... and says so.
KILN_DEMO_TARGET="//tools:kiln_demo"
KILN_DEMO_ARGS=(examples/)   # e.g. (examples/resnet18.onnx) — to be decided
# ---------------------------------------------------------------------------
run_demo() {
  if "$BAZEL" query "$KILN_DEMO_TARGET" >/dev/null 2>&1; then
    exec "$BAZEL" run --config=opt "$KILN_DEMO_TARGET" -- "${KILN_DEMO_ARGS[@]}" "$@"
  fi
  "$BAZEL" build //...
  echo "kiln demo: demo not yet wired ($KILN_DEMO_TARGET does not exist yet; see tools/dev/kiln.sh)."
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
