#!/usr/bin/env bash
# Reruns the ONNX conformance suites outside the Bazel sandbox and rewrites
# docs/onnx_conformance.md (the table) and tests/onnx/passing.txt (the pass
# counts //tests/onnx:conformance_test holds the tree to: the ratchet).
#
#   tests/onnx/update_conformance.sh            # after an improvement: raise the counts
#   tests/onnx/update_conformance.sh --force    # also when a count went down (say why in
#                                               # the commit message)
#   JOBS=4 BAZEL_FLAGS="--config=opt" tests/onnx/update_conformance.sh
#
# Without --force, a run in which some suite passes fewer cases than recorded
# rewrites only the table and leaves passing.txt alone (and exits 1).
set -euo pipefail

force=0
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "update_conformance.sh: unknown argument '$arg'" >&2; exit 2 ;;
  esac
done

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
jobs="${JOBS:-2}"
# shellcheck disable=SC2086  # BAZEL_FLAGS is a list of flags
bazel build ${BAZEL_FLAGS:-} //tests/onnx:run_conformance
# shellcheck disable=SC2086
bin="$(bazel info ${BAZEL_FLAGS:-} bazel-bin)/tests/onnx/run_conformance"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/kiln_update_conformance.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

status=0
"$bin" --jobs="$jobs" \
  --tolerances=tests/onnx/tolerances.txt \
  --ratchet=tests/onnx/passing.txt \
  --table="$tmp/onnx_conformance.md" \
  --counts="$tmp/passing.txt" || status=$?

if [[ $status -ne 0 && $status -ne 1 ]]; then
  echo "update_conformance.sh: run_conformance failed (exit $status); nothing rewritten" >&2
  exit "$status"
fi
cp "$tmp/onnx_conformance.md" docs/onnx_conformance.md
echo "update_conformance.sh: wrote docs/onnx_conformance.md"
if [[ $status -eq 1 && $force -eq 0 ]]; then
  echo "update_conformance.sh: a pass count dropped (above); tests/onnx/passing.txt left as is" \
       "(fix the regression, or rerun with --force to lower the recorded counts)" >&2
  exit 1
fi
cp "$tmp/passing.txt" tests/onnx/passing.txt
echo "update_conformance.sh: wrote tests/onnx/passing.txt:"
grep -v '^#' tests/onnx/passing.txt
