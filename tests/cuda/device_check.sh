#!/usr/bin/env bash
# tests/cuda/device_check.sh — the CUDA checks a machine with an NVIDIA GPU runs.
#
# The lent GPU machine has the NVIDIA driver, nvcc and PyTorch, but no Bazel or
# LLVM of kiln's: everything is built here, carried, and only run there
# (docs/cuda.md). It builds nothing on the GPU machine.
#
#   tests/cuda/device_check.sh --prepare   # here: fills tests/cuda/carry/ (git-ignored)
#   tests/cuda/device_check.sh             # there, from the repository root (carry
#                                          # tests/cuda/carry): writes $OUT/summary.txt
#
# What it runs there, each step under a timeout:
#   1. the driver and device (nvidia-smi);
#   2. runtime_c's cuda_device_test (device memory, copies, kiln's generated
#      fused_add launched and its outputs checked);
#   3. device_run check on every prepared case (tests/cuda/prepare_device_check.cc:
#      the ResNet, MobileNet and BERT-style example blocks, dense 256 in fp32
#      and fp16, compiled for sm_90; dense fp16 also for sm_90a, whose GEMM tile
#      is on wgmma: the wide 128x256 tile, and with -wgmma-n=128,
#      -wgmma-swizzle=128, -wgmma-tma and -wgmma-ws its four alternatives): sessions on cuda:0 through the public
#      runtime API, every output against the interpreter's;
#   4. device_run bench: each case's time on cuda:0, and dense 4096^3 fp16 in
#      TFLOP/s (the issue's GEMM target; its tile products on tensor cores);
#   5. the references in the same run: PyTorch's fp16 and TF32 4096^3 matmuls (cuBLAS),
#      cuDNN's fp16 convs of the conv_r50_* cases, ResNet-50 at batch 1 as
#      the resnet50_* cases have it (BN folded; fp32, TF32, fp16) in eager
#      PyTorch, and, when torchvision is there, its ResNet-50 at batch 1;
#      then kiln's resnet50_* cases checked against PyTorch's output for
#      the same seeded weights and input;
#   6. the figure: dense 4096^3 fp16 as a share of cuBLAS's (step 5) and of
#      the tensor-core peak;
#   7. ONNX conformance on cuda:0: the backend cases that pass on the
#      emulated CUDA path here (run_conformance --export_dir, compiled for
#      sm_90, carried as conformance.tar.xz) replayed by `device_run
#      conformance` (docs/cuda.md "ONNX conformance on a GPU"), at most
#      $KILN_CONFORMANCE_TIMEOUT seconds (default 240) in all.
# Exit status: nonzero when a kiln check fails (the references and timings
# are informational).
set -u
here="$(cd "$(dirname "$0")" && pwd)"
carry="$here/carry"

if [[ "${1:-}" == "--prepare" ]]; then
  set -e
  cd "$here/../.."
  flock -o /tmp/kiln-bazel.lock bazel build //runtime_c:cuda_device_test //tests/cuda:device_run \
    //tests/cuda:prepare_device_check //tests/onnx:run_conformance //tests/cuda:libkiln_fake_cuda.so
  bin="$(flock -o /tmp/kiln-bazel.lock bazel info bazel-bin 2>/dev/null)"
  rm -rf "$carry"
  mkdir -p "$carry/lib"
  install -m 0755 "$bin/runtime_c/cuda_device_test" "$bin/tests/cuda/device_run" "$carry/"
  install -m 0644 runtime_c/testdata/cuda_fused_add.ptx "$carry/"
  # device_run's only library besides libc and libm.
  cp -L "$(ldconfig -p | awk '/libcjson.so.1 /{print $NF; exit}')" "$carry/lib/"
  # The cases go as one xz archive: what travels to the GPU machine (the
  # tracked tree and the carry together) must stay under 64 MiB.
  work="$(mktemp -d)"
  "$bin/tests/cuda/prepare_device_check" "$work/cases" --examples examples
  tar -C "$work" -cf - cases | xz -6 -T2 > "$carry/cases.tar.xz"
  rm -rf "$work"
  # The ONNX backend cases that pass on the emulated CUDA path, compiled for
  # sm_90 and written out with their data (a few minutes on 2 cores).
  conf="$(mktemp -d)"
  KILN_CUDA_DRIVER="$bin/tests/cuda/libkiln_fake_cuda.so" "$bin/tests/onnx/run_conformance" \
    --target="cuda -arch=sm_90" --device=cuda:0 --emulate_cuda --jobs=2 --quiet \
    --export_dir="$conf/conformance" > "$carry/conformance_prepare.txt" 2>&1
  cat "$carry/conformance_prepare.txt"
  tar -C "$conf" -cf - conformance | xz -6 -T2 > "$carry/conformance.tar.xz"
  rm -rf "$conf"
  du -sh "$carry" "$carry/cases.tar.xz" "$carry/conformance.tar.xz"
  exit 0
fi

OUT="${OUT:-/tmp/kiln_cuda}"
mkdir -p "$OUT"
summary="$OUT/summary.txt"
: > "$summary"
status=0
say() { echo "$*" | tee -a "$summary"; }
export LD_LIBRARY_PATH="$carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

say "# kiln device check, $(date -u +%FT%TZ), $(uname -m)"
if command -v nvidia-smi > /dev/null; then
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1 | tee -a "$summary"
else
  say "nvidia-smi: not found"
fi
if [[ ! -x "$carry/device_run" ]]; then
  say "missing $carry/device_run (run --prepare on the build machine and carry tests/cuda/carry)"
  exit 1
fi
# xz archives: tar -J, or Python's tarfile where the image lacks xz.
unpack() {
  tar -C "$2" -xJf "$1" 2> /dev/null ||
    python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$1" "$2"
}
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
unpack "$carry/cases.tar.xz" "$work" || { say "cannot unpack $carry/cases.tar.xz"; exit 1; }

say "## runtime_c cuda_device_test"
timeout 60 "$carry/cuda_device_test" "$carry/cuda_fused_add.ptx" > "$OUT/cuda_device_test.log" 2>&1
rc=$?
tee -a "$summary" < "$OUT/cuda_device_test.log"
say "cuda_device_test exit $rc"
[[ $rc -eq 0 ]] || status=1
grep -q "SKIP (device part)" "$OUT/cuda_device_test.log" && { say "no device seen: FAILED"; status=1; }

say "## the prepared cases on cuda:0 vs the interpreter (device_run check)"
for dir in "$work"/cases/*/; do
  name="$(basename "$dir")"
  [[ -f "$dir/expected_0.npy" ]] || continue
  tol="1e-3 1e-4"
  [[ "$name" == *fp16* || "$name" == *tf32* ]] && tol="2e-2 2e-2"
  timeout 120 "$carry/device_run" check "$dir" cuda:0 $tol > "$OUT/check_$name.log" 2>&1
  rc=$?
  tee -a "$summary" < "$OUT/check_$name.log"
  [[ $rc -eq 0 ]] || { say "$name: FAILED (exit $rc)"; status=1; }
done

say "## timings on cuda:0 (device_run bench; kiln's GPU schedules: fp16/bf16 GEMMs in the pipelined 128x128 tile (sm_90: mma.sync m16n8k16 with ldmatrix; the _sm90a cases: wgmma, the 128x256 tile with m64n256k16 where a GEMM has 256+ columns, the _n128 ones the 128x128 tile with m64n128k16, the _sw128 ones the wide tile in the 128-byte swizzled layout, the _tma ones that layout filled by TMA copies, the _ws ones by a producer warpgroup's), fp16/bf16 convs as implicit GEMMs on the same tile, other GEMMs and conv2d in shared-memory tiles, row reductions one warp per row, the rest one thread per output)"
for dir in "$work"/cases/*/; do
  name="$(basename "$dir")"
  if [[ "$name" == dense_4096_* ]]; then
    timeout 180 "$carry/device_run" bench "$dir" cuda:0 5 "$(cat "$dir/flops")" >> "$summary" 2>&1 ||
      say "$name: bench failed or timed out"
  elif [[ -f "$dir/flops" ]]; then
    timeout 60 "$carry/device_run" bench "$dir" cuda:0 20 "$(cat "$dir/flops")" >> "$summary" 2>&1 ||
      say "$name: bench failed or timed out"
  else
    timeout 60 "$carry/device_run" bench "$dir" cuda:0 20 >> "$summary" 2>&1 ||
      say "$name: bench failed or timed out"
  fi
done

say "## references: PyTorch on the same GPU"
if command -v python3 > /dev/null; then
  KILN_CASES="$work/cases" timeout 300 python3 - >> "$summary" 2>&1 << 'PY' || say "reference failed"
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
torch.backends.cuda.matmul.allow_tf32 = True
a32, b32 = a.float(), b.float()
for _ in range(5): a32 @ b32
torch.cuda.synchronize()
best = 1e9
for _ in range(5):
    t0 = time.perf_counter()
    for _ in range(10): a32 @ b32
    torch.cuda.synchronize()
    best = min(best, (time.perf_counter() - t0) / 10)
print(f"torch fp32 (TF32 allowed) {n}^3 matmul {best * 1e3:.3f} ms, "
      f"{2 * n ** 3 / best / 1e12:.1f} TFLOP/s (best of 5 x 10)")
# cuDNN's float16 convs (bias and relu not counted) for kiln's conv_* cases.
torch.backends.cudnn.benchmark = True
for name, c, hw, oc, k, s, p in [("conv_r50_3x3_28_fp16", 128, 28, 128, 3, 1, 1),
                                 ("conv_r50_3x3_7_fp16", 512, 7, 512, 3, 1, 1),
                                 ("conv_r50_stem_fp16", 3, 224, 64, 7, 2, 3)]:
    x = torch.randn(1, c, hw, hw, device="cuda", dtype=torch.float16)
    w = torch.randn(oc, c, k, k, device="cuda", dtype=torch.float16)
    for _ in range(10): torch.nn.functional.conv2d(x, w, stride=s, padding=p)
    torch.cuda.synchronize()
    best = 1e9
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(50): torch.nn.functional.conv2d(x, w, stride=s, padding=p)
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - t0) / 50)
    o = (hw + 2 * p - k) // s + 1
    print(f"torch cudnn {name}: {best * 1e6:.1f} us, "
          f"{2 * o * o * oc * c * k * k / best / 1e12:.2f} TFLOP/s (best of 5 x 50)")
torch.backends.cudnn.allow_tf32 = True
x = torch.randn(1, 128, 28, 28, device="cuda")
w = torch.randn(128, 128, 3, 3, device="cuda")
for _ in range(10): torch.nn.functional.conv2d(x, w, padding=1)
torch.cuda.synchronize()
best = 1e9
for _ in range(5):
    t0 = time.perf_counter()
    for _ in range(50): torch.nn.functional.conv2d(x, w, padding=1)
    torch.cuda.synchronize()
    best = min(best, (time.perf_counter() - t0) / 50)
print(f"torch cudnn conv_r50_3x3_28_fp32_tf32: {best * 1e6:.1f} us, "
      f"{2 * 28 * 28 * 128 * 128 * 9 / best / 1e12:.2f} TFLOP/s (best of 5 x 50, TF32 allowed)")
# ResNet-50 at batch 1 as kiln's resnet50_* cases have it (batch norm folded
# into the convs' biases; prepare_device_check.cc ResNet50), in eager
# PyTorch: float32 without and with TF32 convs, and float16. The same
# weights are written into each case's folder (input_<i>.npy, kiln's input
# order: x, then each conv's weight and bias in the order the generator
# makes them, then the dense layer's) with PyTorch's output as
# expected_0.npy, and a tolerance scaled to the output's largest magnitude,
# for `device_run check` after this block.
import os
import numpy as np
F = torch.nn.functional
def resnet50_convs():
    convs, c = [(3, 64, 7, 2)], 64  # (in channels, out channels, kernel, stride)
    blocks = []
    for stage, n in enumerate([3, 4, 6, 3]):
        width = 64 << stage
        for b in range(n):
            s = 2 if stage > 0 and b == 0 else 1
            first = len(convs)
            convs += [(c, width, 1, 1), (width, width, 3, s), (width, width * 4, 1, 1)]
            if b == 0: convs.append((c, width * 4, 1, s))
            blocks.append((first, b == 0))
            c = width * 4
    return convs, blocks
def resnet50_params(seed):
    # He-scaled weights (a block's last conv and its shortcut smaller, so
    # that the residual sums stay near 1 without batch norm), small biases.
    g = torch.Generator().manual_seed(seed)
    convs, blocks = resnet50_convs()
    last = {first + 2 for first, _ in blocks} | {first + 3 for first, down in blocks if down}
    params = [torch.randn(1, 3, 224, 224, generator=g)]
    for i, (c, oc, k, s) in enumerate(convs):
        scale = (2.0 / (c * k * k)) ** 0.5 * (0.3 if i in last else 1.0)
        params += [torch.randn(oc, c, k, k, generator=g) * scale, torch.randn(oc, generator=g) * 0.05]
    params += [torch.randn(1000, 2048, generator=g) * (1.0 / 2048) ** 0.5, torch.randn(1000, generator=g) * 0.05]
    return params
def resnet50_folded(params):
    convs, blocks = resnet50_convs()
    def conv(x, i):
        c, oc, k, s = convs[i]
        return F.conv2d(x, params[1 + 2 * i], params[2 + 2 * i], s, k // 2)
    def run(x):
        x = F.max_pool2d(F.relu(conv(x, 0)), 3, 2, 1)
        for first, down in blocks:
            y = conv(F.relu(conv(F.relu(conv(x, first)), first + 1)), first + 2)
            x = F.relu(y + (conv(x, first + 3) if down else x))
        return F.linear(x.mean((2, 3)), params[-2], params[-1])
    return run
cases = os.environ.get("KILN_CASES", "")
host_params = resnet50_params(0)
for label, dtype, tf32, rel in [("fp32", torch.float32, False, 1e-3), ("fp32_tf32", torch.float32, True, 3e-2),
                                ("fp16", torch.float16, True, 3e-2)]:
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    params = [p.to(device="cuda", dtype=dtype) for p in host_params]
    net = resnet50_folded(params)
    x = params[0]
    with torch.no_grad():
        if cases and os.path.isdir(f"{cases}/resnet50_{label}"):
            # The reference: float32 without TF32 for both float32 cases (the
            # TF32 one's tolerance allows for its 10-bit mantissa).
            torch.backends.cudnn.allow_tf32 = False
            torch.backends.cuda.matmul.allow_tf32 = False
            want = net(x).float().cpu().numpy().astype(np.float16 if dtype == torch.float16 else np.float32)
            torch.backends.cudnn.allow_tf32 = tf32
            torch.backends.cuda.matmul.allow_tf32 = tf32
            d = f"{cases}/resnet50_{label}"
            for i, p in enumerate(params):
                np.save(f"{d}/input_{i}.npy", np.ascontiguousarray(p.cpu().numpy()))
            np.save(f"{d}/expected_0.npy", want)
            peak = float(np.abs(want.astype(np.float64)).max())
            with open(f"{d}/tolerance", "w") as f:
                f.write(f"{rel} {rel * max(peak, 1e-3):.6g}\n")
            print(f"resnet50_{label}: PyTorch's output written for the check (max |y| {peak:.3g})")
        for _ in range(10): net(x)
        torch.cuda.synchronize()
        best = 1e9
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(20): net(x)
            torch.cuda.synchronize()
            best = min(best, (time.perf_counter() - t0) / 20)
    print(f"torch resnet50_{label} (BN folded, eager): {best * 1e3:.3f} ms (best of 5 x 20)")
torch.backends.cudnn.allow_tf32 = True
try:
    import torchvision
    m = torchvision.models.resnet50().eval().cuda()
    x = torch.randn(1, 3, 224, 224, device="cuda")
    with torch.no_grad():
        for _ in range(10): m(x)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(50): m(x)
        torch.cuda.synchronize()
    print(f"torch ResNet-50 fp32 batch 1: {(time.perf_counter() - t0) / 50 * 1e3:.2f} ms")
except Exception as e:
    print("no ResNet-50 reference:", e)
PY
else
  say "python3: not found"
fi
say "## ResNet-50 on cuda:0 against PyTorch (the same weights and input, written by the block above)"
for case in resnet50_fp32 resnet50_fp32_tf32 resnet50_fp16; do
  dir="$work/cases/$case"
  if [[ -f "$dir/expected_0.npy" && -f "$dir/tolerance" ]]; then
    timeout 120 "$carry/device_run" check "$dir" cuda:0 $(cat "$dir/tolerance") > "$OUT/check_$case.log" 2>&1
    rc=$?
    tee -a "$summary" < "$OUT/check_$case.log"
    [[ $rc -eq 0 ]] || { say "$case: FAILED (exit $rc)"; status=1; }
  else
    say "$case: no PyTorch output to check against"
  fi
done
# The issue's GEMM figure: dense 4096^3 fp16 against cuBLAS (PyTorch, this
# run) and the tensor-core peak: NVIDIA's dense FP16 figure for the GPU
# nvidia-smi names (H100 PCIe 756, H100 NVL 835, else 989 TFLOP/s: H100 SXM
# and H200), an assumption of this script, not measured.
torch_tf="$(grep -o 'fp16 4096^3 matmul .* ms, [0-9.]* TFLOP/s' "$summary" | grep -o '[0-9.]* TFLOP/s' | grep -o '^[0-9.]*')"
gpu_name="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
peak=989
[[ "$gpu_name" == *PCIe* ]] && peak=756
[[ "$gpu_name" == *NVL* ]] && peak=835
say "## figure: dense 4096^3 fp16 ($gpu_name; peak taken as $peak TFLOP/s)"
for case in dense_4096_fp16 dense_4096_fp16_sm90a dense_4096_fp16_sm90a_n128 \
            dense_4096_fp16_sm90a_sw128 dense_4096_fp16_sm90a_tma dense_4096_fp16_sm90a_ws; do
  kiln_tf="$(grep -o "$case/* on cuda:0: .*, [0-9.]* TFLOP/s" "$summary" | grep -o '[0-9.]* TFLOP/s' | grep -o '^[0-9.]*')"
  if [[ -n "$kiln_tf" ]]; then
    say "kiln $case: $kiln_tf TFLOP/s; $(awk -v k="$kiln_tf" -v p="$peak" 'BEGIN { printf "%.1f%% of %d TFLOP/s (tensor-core peak, assumed)", 100 * k / p, p }')"
    [[ -n "$torch_tf" ]] && say "  cuBLAS (torch): $torch_tf TFLOP/s; kiln/cuBLAS $(awk -v k="$kiln_tf" -v t="$torch_tf" 'BEGIN { printf "%.1f%%", 100 * k / t }')"
  else
    say "no kiln figure for $case (the bench failed or did not run)"
  fi
done
tf_kiln="$(grep -o "dense_4096_fp32_tf32/* on cuda:0: .*, [0-9.]* TFLOP/s" "$summary" | grep -o '[0-9.]* TFLOP/s' | grep -o '^[0-9.]*')"
tf_torch="$(grep -o 'TF32 allowed) 4096^3 matmul .* ms, [0-9.]* TFLOP/s' "$summary" | grep -o '[0-9.]* TFLOP/s' | grep -o '^[0-9.]*')"
if [[ -n "$tf_kiln" && -n "$tf_torch" ]]; then
  say "kiln dense_4096_fp32_tf32: $tf_kiln TFLOP/s; cuBLAS TF32 (torch): $tf_torch TFLOP/s; kiln/cuBLAS $(awk -v k="$tf_kiln" -v t="$tf_torch" 'BEGIN { printf "%.1f%%", 100 * k / t }')"
fi
say "## figure: float16 and TF32 convs (implicit GEMM on tensor cores) against cuDNN"
for case in conv_r50_3x3_28_fp16 conv_r50_3x3_28_fp16_sm90a conv_r50_3x3_7_fp16 conv_r50_stem_fp16 \
            conv_r50_3x3_28_fp32_tf32; do
  kiln_tf="$(grep -o "$case/* on cuda:0: .*, [0-9.]* TFLOP/s" "$summary" | grep -o '[0-9.]* TFLOP/s' | grep -o '^[0-9.]*')"
  # The sm_90a case is the same conv as the sm_90 one: cuDNN's figure for it.
  cudnn_tf="$(grep -o "torch cudnn ${case%_sm90a}: .*, [0-9.]* TFLOP/s" "$summary" | grep -o '[0-9.]* TFLOP/s' | grep -o '^[0-9.]*')"
  if [[ -n "$kiln_tf" && -n "$cudnn_tf" ]]; then
    say "kiln $case: $kiln_tf TFLOP/s (bias and relu fused); cuDNN (torch, conv alone): $cudnn_tf TFLOP/s; kiln/cuDNN $(awk -v k="$kiln_tf" -v t="$cudnn_tf" 'BEGIN { printf "%.1f%%", 100 * k / t }')"
  else
    say "no figure for $case (kiln: ${kiln_tf:-none}, cuDNN: ${cudnn_tf:-none})"
  fi
done
say "## figure: ResNet-50 at batch 1 (the same graph, BN folded) against eager PyTorch"
for case in resnet50_fp32 resnet50_fp32_tf32 resnet50_fp16; do
  kiln_ms="$(grep -o "$case/* on cuda:0: mean [0-9.]* ms, min [0-9.]* ms" "$summary" | grep -o 'min [0-9.]*' | grep -o '[0-9.]*$')"
  torch_ms="$(grep -o "torch $case (BN folded, eager): [0-9.]* ms" "$summary" | grep -o '[0-9.]* ms' | grep -o '^[0-9.]*')"
  if [[ -n "$kiln_ms" && -n "$torch_ms" ]]; then
    say "kiln $case: $kiln_ms ms; torch: $torch_ms ms; kiln/torch time $(awk -v k="$kiln_ms" -v t="$torch_ms" 'BEGIN { printf "%.2fx", k / t }')"
  else
    say "no figure for $case (kiln: ${kiln_ms:-none} ms, torch: ${torch_ms:-none} ms)"
  fi
done

say "## ONNX conformance on cuda:0 (the cases that pass on the emulated CUDA path, replayed)"
if [[ -f "$carry/conformance.tar.xz" ]]; then
  grep -E '^(suite|node|pytorch-converted|pytorch-operator|simple|all) +' "$carry/conformance_prepare.txt" | sed 's/^/emulated here: /' |
    tee -a "$summary"
  if unpack "$carry/conformance.tar.xz" "$work"; then
    timeout "${KILN_CONFORMANCE_TIMEOUT:-240}" "$carry/device_run" conformance "$work/conformance" cuda:0 10 \
      > "$OUT/conformance.log" 2>&1
    rc=$?
    # Every line but the passes, the first 100 of them: when nothing runs
    # (no driver) each case fails alike, and the full list is in the log.
    grep -v '^PASS ' "$OUT/conformance.log" | grep -v '^conformance on ' | head -n 100 | tee -a "$summary"
    others="$(grep -v '^PASS ' "$OUT/conformance.log" | grep -vc '^conformance on ')"
    [[ "$others" -gt 100 ]] && say "... and $((others - 100)) more lines in conformance.log"
    grep '^conformance on ' "$OUT/conformance.log" | tee -a "$summary"
    [[ $rc -eq 0 ]] || { say "conformance on cuda:0: FAILED (exit $rc; every case's line in conformance.log)"; status=1; }
  else
    say "conformance.tar.xz: cannot unpack it"; status=1
  fi
else
  say "no conformance.tar.xz (run --prepare)"
fi
say "exit $status"
exit $status
