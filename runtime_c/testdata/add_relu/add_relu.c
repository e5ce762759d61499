/* File: runtime_c/testdata/add_relu/add_relu.c
 *
 * Kernels of the add_relu test artifact (runtime_c/testing.bzl), written by
 * hand with the kernel ABI of kiln/kernel_abi.h:
 *
 *   fused_add(x: float32[4], p0: float32[4]) -> t: float32[4]    t = x + p0
 *   fused_relu(t: float32[4]) -> y: float32[4]                   y = max(t, 0)
 *
 * p0 (p0.npy) is [0.5, -1, 2, -3]; so x = [1, -2, 3, -4] gives y = [1.5, 0, 5, 0].
 *
 * Each kernel checks its arguments and reports a mismatch with
 * kiln_kernel_error (undefined here: it resolves against the loading program
 * when the .so is dlopened).
 */
#include <stddef.h>
#include <stdint.h>

#include "kiln/kernel_abi.h"

/* 1 when t is a compact float32 CPU tensor of shape [4]. */
static int is_f32x4(const DLTensor* t) {
  return t != NULL && t->data != NULL && t->ndim == 1 && t->shape != NULL && t->shape[0] == 4 &&
         t->dtype.code == kDLFloat && t->dtype.bits == 32 && t->dtype.lanes == 1 &&
         (t->strides == NULL || t->strides[0] == 1);
}

static const float* in_f32(const DLTensor* t) {
  return (const float*)(const void*)((const char*)t->data + t->byte_offset);
}

static float* out_f32(const DLTensor* t) {
  return (float*)(void*)((char*)t->data + t->byte_offset);
}

int32_t fused_add(DLTensor* const* args, int32_t num_args, KilnKernelContext* ctx) {
  if (args == NULL || num_args != 3) {
    return kiln_kernel_error(ctx, KILN_KERNEL_EINVAL, "fused_add: expected 3 arguments");
  }
  for (int32_t i = 0; i < 3; ++i) {
    if (!is_f32x4(args[i])) {
      return kiln_kernel_error(ctx, KILN_KERNEL_EINVAL,
                               "fused_add: every argument must be float32[4]");
    }
  }
  const float* x = in_f32(args[0]);
  const float* p = in_f32(args[1]);
  float* t = out_f32(args[2]);
  for (int i = 0; i < 4; ++i) t[i] = x[i] + p[i];
  return KILN_KERNEL_OK;
}

int32_t fused_relu(DLTensor* const* args, int32_t num_args, KilnKernelContext* ctx) {
  if (args == NULL || num_args != 2) {
    return kiln_kernel_error(ctx, KILN_KERNEL_EINVAL, "fused_relu: expected 2 arguments");
  }
  if (!is_f32x4(args[0]) || !is_f32x4(args[1])) {
    return kiln_kernel_error(ctx, KILN_KERNEL_EINVAL,
                             "fused_relu: every argument must be float32[4]");
  }
  const float* t = in_f32(args[0]);
  float* y = out_f32(args[1]);
  for (int i = 0; i < 4; ++i) y[i] = t[i] > 0.0f ? t[i] : 0.0f;
  return KILN_KERNEL_OK;
}
