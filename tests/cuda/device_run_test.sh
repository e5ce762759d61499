#!/usr/bin/env bash
# device_run (the program tests/cuda/device_check.sh runs on a GPU machine)
# on CPU artifacts of the same cases: prepared by prepare_device_check with
# --target llvm, checked against the interpreter's outputs, and timed; a GPU
# artifact on the CPU and a missing directory fail with a message.
set -euo pipefail
prepare="tests/cuda/prepare_device_check"
run="tests/cuda/device_run"
out="${TEST_TMPDIR:-/tmp}/device_run_test"
rm -rf "$out"
"$prepare" "$out" --target llvm --only dense_256_fp32,resnet_block,vm_control_flow,vm_symbolic_batch \
  > "$out.log" 2>&1 || { cat "$out.log"; exit 1; }
for c in dense_256_fp32 resnet_block vm_control_flow vm_symbolic_batch; do
  "$run" check "$out/$c" cpu | tee "$out/$c.txt"
  grep -q "output 0: .*: ok" "$out/$c.txt" || { echo "FAIL: $c"; exit 1; }
done
"$run" bench "$out/dense_256_fp32" cpu 3 33554432 | grep -q "TFLOP/s" || { echo "FAIL: bench"; exit 1; }
# A wrong expected output is reported (the check can fail).
cp "$out/dense_256_fp32/input_0.npy" "$out/dense_256_fp32/expected_0.npy"
if "$run" check "$out/dense_256_fp32" cpu > "$out/bad.txt" 2>&1; then
  echo "FAIL: a wrong expected output passed"; cat "$out/bad.txt"; exit 1
fi
grep -q "FAIL" "$out/bad.txt" || { cat "$out/bad.txt"; exit 1; }
# A GPU artifact on the CPU: refused with the reason.
"$prepare" "$out/gpu" --only dense_256_fp32 > "$out.log" 2>&1 || { cat "$out.log"; exit 1; }
if "$run" check "$out/gpu/dense_256_fp32" cpu > "$out/gpu.txt" 2>&1; then
  echo "FAIL: a GPU artifact ran on the CPU"; exit 1
fi
grep -q 'compiled for "cuda -arch=sm_90"' "$out/gpu.txt" || { cat "$out/gpu.txt"; exit 1; }
echo PASS
