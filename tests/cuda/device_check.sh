#!/usr/bin/env bash
# tests/cuda/device_check.sh — the CUDA checks a machine with an NVIDIA GPU runs.
#
# The lent GPU machine has the NVIDIA driver, nvcc and PyTorch, but no Bazel or
# LLVM of kiln's: build here, carry the files, run there (docs/cuda.md).
#
#   tests/cuda/device_check.sh --prepare   # here: fills tests/cuda/carry/ (git-ignored)
#   tests/cuda/device_check.sh             # there, from the repository root:
#                                          # writes $OUT/summary.txt (default OUT=/tmp/kiln_cuda)
#
# What it runs: the driver and device (nvidia-smi), runtime_c's
# cuda_device_test (device memory, copies, kiln's generated fused_add
# launched and its outputs checked), and the reference for the dense target:
# PyTorch's fp16 4096^3 matmul (cuBLAS) in TFLOP/s. Exit status: nonzero when
# a kiln check fails (the reference is informational).
set -u
here="$(cd "$(dirname "$0")" && pwd)"
carry="$here/carry"

if [[ "${1:-}" == "--prepare" ]]; then
  set -e
  cd "$here/../.."
  flock -o /tmp/kiln-bazel.lock bazel build //runtime_c:cuda_device_test
  mkdir -p "$carry"
  install -m 0755 "$(bazel info bazel-bin 2>/dev/null)/runtime_c/cuda_device_test" "$carry/"
  install -m 0644 runtime_c/testdata/cuda_fused_add.ptx "$carry/"
  ls -l "$carry"
  exit 0
fi

OUT="${OUT:-/tmp/kiln_cuda}"
mkdir -p "$OUT"
summary="$OUT/summary.txt"
: > "$summary"
status=0
say() { echo "$*" | tee -a "$summary"; }

say "# kiln device check, $(date -u +%FT%TZ), $(uname -m)"
if command -v nvidia-smi > /dev/null; then
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1 | tee -a "$summary"
else
  say "nvidia-smi: not found"
fi

say "## runtime_c cuda_device_test"
if [[ -x "$carry/cuda_device_test" ]]; then
  "$carry/cuda_device_test" "$carry/cuda_fused_add.ptx" > "$OUT/cuda_device_test.log" 2>&1
  rc=$?
  tee -a "$summary" < "$OUT/cuda_device_test.log"
  say "cuda_device_test exit $rc"
  [[ $rc -eq 0 ]] || status=1
  grep -q "SKIP (device part)" "$OUT/cuda_device_test.log" && { say "no device seen: FAILED"; status=1; }
else
  say "missing $carry/cuda_device_test (run --prepare on the build machine and carry tests/cuda/carry)"
  status=1
fi

say "## reference: PyTorch fp16 matmul 4096^3 (cuBLAS)"
if command -v python3 > /dev/null; then
  timeout 300 python3 - >> "$summary" 2>&1 << 'PY' || say "reference failed"
import time
try:
    import torch
except Exception as e:
    print("no torch:", e); raise SystemExit(0)
if not torch.cuda.is_available():
    print("torch sees no GPU"); raise SystemExit(0)
n = 4096
a = torch.randn(n, n, device="cuda", dtype=torch.float16)
b = torch.randn(n, n, device="cuda", dtype=torch.float16)
for _ in range(10): a @ b
torch.cuda.synchronize()
best = 1e9
for _ in range(5):
    t0 = time.perf_counter()
    for _ in range(20): a @ b
    torch.cuda.synchronize()
    best = min(best, (time.perf_counter() - t0) / 20)
print(f"{torch.cuda.get_device_name()}: torch {torch.__version__}, fp16 {n}^3 matmul "
      f"{best * 1e3:.3f} ms, {2 * n ** 3 / best / 1e12:.1f} TFLOP/s (best of 5 x 20)")
PY
else
  say "python3: not found"
fi
say "exit $status"
exit $status
