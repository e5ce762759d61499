#!/usr/bin/env bash
# //tests/onnx:conformance_test: runs run_conformance ($1) with the remaining
# arguments, and leaves the measured table and counts among the test's
# undeclared outputs (bazel-testlogs/tests/onnx/conformance_test/test.outputs/).
set -u
runner="$1"
shift
extra=()
if [[ -n "${TEST_UNDECLARED_OUTPUTS_DIR:-}" ]]; then
  extra+=("--table=${TEST_UNDECLARED_OUTPUTS_DIR}/onnx_conformance.md")
  extra+=("--counts=${TEST_UNDECLARED_OUTPUTS_DIR}/passing.txt")
fi
exec "$runner" "$@" "${extra[@]}"
