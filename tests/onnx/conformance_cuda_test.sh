#!/usr/bin/env bash
# //tests/onnx:conformance_cuda_test: a few ONNX backend cases through the
# CUDA path without a GPU: run_conformance ($1) compiles each for
# "cuda -arch=sm_90", builds the artifact's CUDA C for the host, and runs it
# in a session on cuda:0 through the fake driver ($KILN_CUDA_DRIVER, set by
# the BUILD rule) that runs those host kernels; every case must pass.
# Without the CUDA toolkit (no NVRTC) there is no CUDA C to run: it skips.
set -u
runner="$1"
shift
log="${TEST_TMPDIR:-/tmp}/conformance_cuda.log"
"$runner" --target="cuda -arch=sm_90" --device=cuda:0 --emulate_cuda "$@" > "$log" 2>&1
rc=$?
cat "$log"
if grep -q "NVRTC is not available" "$log"; then
  echo "SKIP: kiln was built without the CUDA toolkit (NVRTC)"
  exit 0
fi
[[ $rc -eq 0 ]] || { echo "FAILED: run_conformance exited $rc"; exit 1; }
total=$(grep -c '^\[ *[0-9]*/[0-9]*\]' "$log")
passed=$(grep -c '^\[ *[0-9]*/[0-9]*\] pass ' "$log")
echo "$passed of $total cases pass on cuda:0 (emulated)"
[[ $total -gt 0 && $passed -eq $total ]] || { echo "FAILED: not every case passes"; exit 1; }
