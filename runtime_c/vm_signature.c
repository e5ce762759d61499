/* File: runtime_c/vm_signature.c
 *
 * main's signature in a VM program: an input checked against its type
 * (dtype, rank, static dims), the symbolic dims checked across inputs (every
 * dim naming variable N has one value), and types formatted for messages
 * ("float32[N,4]"). Used by the VM (vm.c) and its sessions (vm_session.c).
 */
#include <stdio.h>

#include "kiln/vm_format.h"

#include "runtime_c/artifact_blob.h"
#include "runtime_c/runtime_internal.h"
#include "runtime_c/vm_signature.h"

void kiln_vm_format_type(const KilnVmProgram* p, const KilnVmType* t, char* buf, size_t size) {
  char dt[64];
  kiln_dtype_to_string(t->dtype, dt, sizeof dt);
  size_t used = (size_t)snprintf(buf, size, "%s[", dt);
  for (int32_t d = 0; d < t->ndim && used < size; ++d) {
    int64_t v = t->dims[d];
    const char* sep = d > 0 ? "," : "";
    if (v >= 0) used += (size_t)snprintf(buf + used, size - used, "%s%lld", sep, (long long)v);
    else if (v == KILN_VM_DIM_ANY) used += (size_t)snprintf(buf + used, size - used, "%s?", sep);
    else used += (size_t)snprintf(buf + used, size - used, "%s%s", sep, p->dim_var_names[-(v + 1)]);
  }
  if (used < size) snprintf(buf + used, size - used, "]");
}

KilnStatus* kiln_vm_signature_check_input(const KilnVmProgram* p, uint32_t index,
                                          const DLTensor* x, const char* name) {
  const KilnVmType* want = &p->inputs[index];
  char a[256], b[640];
  if (x->dtype.code != want->dtype.code || x->dtype.bits != want->dtype.bits ||
      x->dtype.lanes != want->dtype.lanes || x->ndim != want->ndim) {
    kiln_vm_format_type(p, want, a, sizeof a);
    if (x->ndim < 0 || x->ndim > 32) {
      return kiln_status_create(KILN_INVALID_ARGUMENT, "input '%s': expected %s, got ndim %d",
                                name, a, (int)x->ndim);
    }
    kiln_format_tensor_type(x->dtype, x->ndim, x->shape, b, sizeof b);
    return kiln_status_create(KILN_INVALID_ARGUMENT, "input '%s': expected %s, got %s", name, a, b);
  }
  for (int32_t d = 0; d < x->ndim; ++d) {
    if (x->shape[d] < 0 || (want->dims[d] >= 0 && x->shape[d] != want->dims[d])) {
      kiln_vm_format_type(p, want, a, sizeof a);
      kiln_format_tensor_type(x->dtype, x->ndim, x->shape, b, sizeof b);
      return kiln_status_create(KILN_INVALID_ARGUMENT, "input '%s': expected %s, got %s", name, a,
                                b);
    }
  }
  return NULL;
}

KilnStatus* kiln_vm_signature_check_element(const KilnVmProgram* p, uint32_t index, uint32_t k,
                                            const DLTensor* x, const char* name) {
  char elem[300];
  snprintf(elem, sizeof elem, "%s' element '%u", name, k);
  return kiln_vm_signature_check_input(p, index, x, elem);
}

KilnStatus* kiln_vm_signature_check_dims(const KilnVmProgram* p, const DLTensor* const* inputs,
                                         const char* what) {
  int64_t values[KILN_VM_MAX_IO];
  int32_t from_input[KILN_VM_MAX_IO];
  for (uint32_t v = 0; v < p->num_dim_vars; ++v) from_input[v] = -1;
  for (uint32_t i = 0; i < p->num_inputs; ++i) {
    const KilnVmType* t = &p->inputs[i];
    if (t->sequence || t->optional) continue; /* its elements' dims are their own; may be none */
    for (int32_t d = 0; d < t->ndim; ++d) {
      int64_t dim = t->dims[d];
      if (dim >= 0 || dim == KILN_VM_DIM_ANY) continue;
      uint32_t v = (uint32_t)(-(dim + 1));
      int64_t given = inputs[i]->shape[d];
      if (from_input[v] < 0) {
        from_input[v] = (int32_t)i;
        values[v] = given;
      } else if (values[v] != given) {
        return kiln_status_create(KILN_INVALID_ARGUMENT,
                                  "%s: the inputs disagree on the dim %s: %lld (input %d) and %lld "
                                  "(input %u, axis %d)",
                                  what, p->dim_var_names[v], (long long)values[v],
                                  (int)from_input[v], (long long)given, i, (int)d);
      }
    }
  }
  return NULL;
}

