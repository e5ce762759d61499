#!/usr/bin/env bash
# Per-component benchmarks (tools/bench/components.py): builds every benchmark
# binary and the kiln tool, then measures them as ratios to references taken in
# the same run, and compares with the baseline of the build's mode
# (tools/bench/baselines/components.<fastbuild|opt>.json). docs/benchmarks.md.
#
#   tools/bench/components.sh [--config=opt] [components.py options]
#   tools/bench/components.sh --short --check            # what CI runs
#   tools/bench/components.sh --short --update-baseline  # a deliberate new baseline
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
BAZEL="${BAZEL:-bazel}"
config=()
build=fastbuild
if [[ "${1:-}" == "--config=opt" ]]; then
  config=(--config=opt)
  build=opt
  shift
fi
mapfile -t targets < <(python3 tools/bench/components.py --print-targets)
"$BAZEL" build "${config[@]}" "${targets[@]}" 2>&1 | grep -E "ERROR|error:" >&2 || true
bin="$("$BAZEL" info "${config[@]}" bazel-bin 2>/dev/null)"
[[ -x "$bin/tools/kiln" ]] || { echo "components.sh: the build failed" >&2; exit 1; }
exec python3 tools/bench/components.py --bin-dir "$bin" --kiln "$bin/tools/kiln" \
  --build "$build" "$@"
