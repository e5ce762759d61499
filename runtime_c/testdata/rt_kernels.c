/* File: runtime_c/testdata/rt_kernels.c
 *
 * Hand-written kernels with the kernel ABI (kiln/kernel_abi.h) for the
 * runtime's test fixtures (runtime_c/BUILD.bazel, kiln_test_artifact):
 *
 *   rt_add_f32(a, b, out)        out = a + b           (same shapes, float32)
 *   rt_relu_f32(a, out)          out = max(a, 0)
 *   rt_split2_f32(a, o0, o1)     o0 = a + 1, o1 = a * 2 (two outputs)
 *   rt_scale_par_f32(a, out)     out = a * 3 + 0.5, in parallel chunks
 *                                (kiln_parallel_launch on the session pool)
 *   rt_fail(a, out)              always fails through kiln_kernel_error
 *   rt_copy4(a, out)             copies 4 float32 values (the bench chain)
 *
 * Each checks its argument count and dtypes and reports a mismatch as
 * KILN_KERNEL_EINVAL; none aborts.
 */
#include <stdint.h>
#include <string.h>

#include "kiln/kernel_abi.h"

static int is_f32(const DLTensor* t) {
  return t != NULL && t->dtype.code == kDLFloat && t->dtype.bits == 32 && t->dtype.lanes == 1;
}

static int64_t numel(const DLTensor* t) {
  int64_t n = 1;
  for (int32_t d = 0; d < t->ndim; ++d) n *= t->shape[d];
  return n;
}

static int32_t check(DLTensor* const* args, int32_t num_args, int32_t want, KilnKernelContext* ctx,
                     const char* name) {
  if (num_args != want) return kiln_kernel_error(ctx, KILN_KERNEL_EINVAL, name);
  for (int32_t i = 0; i < num_args; ++i) {
    if (!is_f32(args[i])) return kiln_kernel_error(ctx, KILN_KERNEL_EINVAL, name);
    if (numel(args[i]) != numel(args[0])) return kiln_kernel_error(ctx, KILN_KERNEL_EINVAL, name);
  }
  return 0;
}

int32_t rt_add_f32(DLTensor* const* args, int32_t num_args, KilnKernelContext* ctx) {
  int32_t rc = check(args, num_args, 3, ctx, "rt_add_f32: bad arguments");
  if (rc != 0) return rc;
  const float* a = (const float*)args[0]->data;
  const float* b = (const float*)args[1]->data;
  float* out = (float*)args[2]->data;
  const int64_t n = numel(args[0]);
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
  return 0;
}

int32_t rt_relu_f32(DLTensor* const* args, int32_t num_args, KilnKernelContext* ctx) {
  int32_t rc = check(args, num_args, 2, ctx, "rt_relu_f32: bad arguments");
  if (rc != 0) return rc;
  const float* a = (const float*)args[0]->data;
  float* out = (float*)args[1]->data;
  const int64_t n = numel(args[0]);
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] > 0.0f ? a[i] : 0.0f;
  return 0;
}

int32_t rt_split2_f32(DLTensor* const* args, int32_t num_args, KilnKernelContext* ctx) {
  int32_t rc = check(args, num_args, 3, ctx, "rt_split2_f32: bad arguments");
  if (rc != 0) return rc;
  const float* a = (const float*)args[0]->data;
  float* o0 = (float*)args[1]->data;
  float* o1 = (float*)args[2]->data;
  const int64_t n = numel(args[0]);
  for (int64_t i = 0; i < n; ++i) {
    o0[i] = a[i] + 1.0f;
    o1[i] = a[i] * 2.0f;
  }
  return 0;
}

typedef struct {
  const float* a;
  float* out;
  int64_t n;
} ScaleClosure;

static int32_t scale_task(int32_t task_id, int32_t num_tasks, void* closure) {
  const ScaleClosure* c = (const ScaleClosure*)closure;
  const int64_t chunk = (c->n + num_tasks - 1) / num_tasks;
  const int64_t begin = chunk * task_id;
  const int64_t end = begin + chunk < c->n ? begin + chunk : c->n;
  for (int64_t i = begin; i < end; ++i) c->out[i] = c->a[i] * 3.0f + 0.5f;
  return 0;
}

int32_t rt_scale_par_f32(DLTensor* const* args, int32_t num_args, KilnKernelContext* ctx) {
  int32_t rc = check(args, num_args, 2, ctx, "rt_scale_par_f32: bad arguments");
  if (rc != 0) return rc;
  ScaleClosure c = {(const float*)args[0]->data, (float*)args[1]->data, numel(args[0])};
  return kiln_parallel_launch(ctx, scale_task, &c, 0);
}

int32_t rt_fail(DLTensor* const* args, int32_t num_args, KilnKernelContext* ctx) {
  (void)args;
  (void)num_args;
  return kiln_kernel_error(ctx, KILN_KERNEL_EINVAL, "rt_fail: this kernel always fails");
}

int32_t rt_copy4(DLTensor* const* args, int32_t num_args, KilnKernelContext* ctx) {
  (void)ctx;
  if (num_args != 2) return KILN_KERNEL_EINVAL;
  memcpy(args[1]->data, args[0]->data, 4 * sizeof(float));
  return 0;
}
