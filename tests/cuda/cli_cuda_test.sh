#!/usr/bin/env bash
# The kiln tool on GPU artifacts without a GPU: compile --target cuda, info
# (text and --json) shows the device code, run/bench/debug --device: the CPU
# refuses a GPU artifact, cuda:0 without a driver says so, a bad --device is a
# usage error, a CPU artifact on cuda:0 is refused. Skips without NVRTC.
set -uo pipefail
kiln="tools/kiln"
tmp="${TEST_TMPDIR:-/tmp}/cli_cuda_test"
mkdir -p "$tmp"
export KILN_CUDA_DRIVER=/nonexistent/libcuda.so.1
fail() { echo "FAIL: $*"; exit 1; }
cat > "$tmp/m.kir" << 'KIR'
#[version = "0.1"]
def @main(%x: Tensor[(2, 45), float32], %y: Tensor[(2, 45), float32]) {
  nn.relu(add(%x, %y))
}
KIR
if ! "$kiln" compile "$tmp/m.kir" --target "cuda -arch=sm_90" -o "$tmp/gpu.so" > "$tmp/compile.log" 2>&1; then
  if grep -q "NVRTC is not available" "$tmp/compile.log"; then echo "SKIP: no NVRTC"; exit 0; fi
  cat "$tmp/compile.log"; fail "compile --target cuda"
fi
"$kiln" info "$tmp/gpu.so" > "$tmp/info.txt" || fail "info"
info=$(cat "$tmp/info.txt")
[[ "$info" == *"target:   cuda -arch=sm_90"* ]] || { echo "$info"; fail "info target"; }
[[ "$info" == *"device:   cuda (runs with --device cuda:N): PTX compute_90"* ]] || { echo "$info"; fail "info device"; }
[[ "$info" == *"fused_add_nn_relu<<<(1, 1, 1), (96, 1, 1)>>>(const float32*, const float32*, float32*)"* ]] ||
  { echo "$info"; fail "info kernel launch"; }
json=$("$kiln" info "$tmp/gpu.so" --json) || fail "info --json"
[[ "$json" == *'"ptx_arch": "compute_90"'* ]] || { echo "$json"; fail "info --json device_code"; }
out=$("$kiln" run "$tmp/gpu.so" --random-inputs 2>&1) && fail "a GPU artifact ran on the CPU"
[[ "$out" == *'compiled for "cuda -arch=sm_90": its kernels run on a CUDA device'* ]] || { echo "$out"; fail "run on the CPU"; }
out=$("$kiln" bench "$tmp/gpu.so" 2>&1) && fail "a GPU artifact was timed on the CPU"
[[ "$out" == *'its kernels run on a CUDA device'* ]] || { echo "$out"; fail "bench on the CPU"; }
out=$("$kiln" run "$tmp/gpu.so" --random-inputs --device cuda:0 2>&1) && fail "ran without a driver"
[[ "$out" == *"a session on cuda:0: no CUDA driver: /nonexistent/libcuda.so.1 not found"* ]] || { echo "$out"; fail "no driver"; }
out=$("$kiln" debug "$tmp/gpu.so" --dump-dir "$tmp/d" --device cuda 2>&1) && fail "debug without a driver"
[[ "$out" == *"no CUDA driver"* ]] || { echo "$out"; fail "debug no driver"; }
out=$("$kiln" run "$tmp/gpu.so" --random-inputs --device gpu0 2>&1); rc=$?
[[ $rc -eq 2 && "$out" == *"--device gpu0: expected cpu, cuda or cuda:N"* ]] || { echo "$rc $out"; fail "bad --device"; }
"$kiln" compile "$tmp/m.kir" -o "$tmp/cpu.so" > /dev/null 2>&1 || fail "compile for the CPU"
out=$("$kiln" run "$tmp/cpu.so" --random-inputs --device cuda:0 2>&1) && fail "a CPU artifact ran on cuda:0"
[[ "$out" == *"compiled for the CPU"*"--target cuda"* ]] || { echo "$out"; fail "CPU artifact on cuda:0"; }
"$kiln" run "$tmp/cpu.so" --random-inputs --device cpu --quiet > /dev/null || fail "--device cpu"
echo PASS
