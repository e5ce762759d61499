#!/usr/bin/env bash
# //tests/onnx:conformance_cuda_test: a few ONNX backend cases through the
# CUDA path without a GPU: run_conformance ($1) compiles each for
# "cuda -arch=sm_90", builds the artifact's CUDA C for the host, and runs it
# in a session on cuda:0 through the fake driver ($KILN_CUDA_DRIVER, set by
# the BUILD rule) that runs those host kernels; every case must pass.
# The cases are also exported (--export_dir) and replayed by device_run ($2,
# `device_run conformance`, what tests/cuda/device_check.sh runs on a GPU
# machine): every exported case must pass there too, and a wrong expected
# value and a corrupt artifact must each fail their own case only.
# Without the CUDA toolkit (no NVRTC) there is no CUDA C to run: it skips.
set -u
runner="$1"
device_run="$2"
shift 2
tmp="${TEST_TMPDIR:-/tmp}"
log="$tmp/conformance_cuda.log"
export_dir="$tmp/export"
rm -rf "$export_dir"
"$runner" --target="cuda -arch=sm_90" --device=cuda:0 --emulate_cuda \
  --export_dir="$export_dir" --export_host_kernels "$@" > "$log" 2>&1
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

# The export: one folder per passing case, nothing staged left behind.
exported=$(find "$export_dir" -mindepth 1 -maxdepth 1 -type d -name 'node__*' | wc -l)
staged=$(find "$export_dir" -mindepth 1 -maxdepth 1 -name '.*' | wc -l)
echo "exported $exported cases ($staged staged folders left)"
[[ $exported -eq $passed && $staged -eq 0 ]] || { echo "FAILED: expected $passed exported cases"; exit 1; }
grep -q '^input .* sequence ' "$export_dir"/node__test_sequence_insert_at_front/set_0.txt ||
  { echo "FAILED: the sequence input is not in the manifest"; exit 1; }

replay="$tmp/replay.log"
# Replays every exported case through the fake driver; sets rc.
run_replay() {
  "$device_run" conformance "$export_dir" cuda:0 60 > "$replay" 2>&1
  rc=$?
  cat "$replay"
}
run_replay
[[ $rc -eq 0 ]] || { echo "FAILED: device_run conformance exited $rc"; exit 1; }
grep -q "^conformance on cuda:0: $passed of $passed cases pass, 0 fail" "$replay" ||
  { echo "FAILED: the replay does not pass every exported case"; exit 1; }

# A wrong expected value (the last float of test_relu's output set to 100)
# and a truncated artifact (test_identity's): those two cases fail, with
# reasons; every other case still passes (the runner starts a fresh process
# after the artifact's failure).
relu="$export_dir/node__test_relu/set_0_out_0.npy"
size=$(stat -c %s "$relu")
printf '\x00\x00\xc8\x42' | dd of="$relu" bs=1 seek=$((size - 4)) conv=notrunc status=none
model="$export_dir/node__test_identity/model_0.so"
head -c 4096 "$model" > "$model.cut" && mv "$model.cut" "$model"
run_replay
[[ $rc -eq 1 ]] || { echo "FAILED: expected exit 1 with two failing cases, got $rc"; exit 1; }
grep -q '^FAIL node__test_relu: set 0: output 0: element .* expected 100 ' "$replay" ||
  { echo "FAILED: the wrong expected value is not reported"; exit 1; }
grep -q '^FAIL node__test_identity: model_0.so: ' "$replay" ||
  { echo "FAILED: the truncated artifact is not reported"; exit 1; }
grep -q "^conformance on cuda:0: $((passed - 2)) of $passed cases pass, 2 fail" "$replay" ||
  { echo "FAILED: other cases were affected"; exit 1; }
echo "PASSED"
