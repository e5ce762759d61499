/* File: runtime_c/loader_device.c — step 5 of a GPU artifact (format
 * version 3): its DEVICE_CODE section validated (runtime_c/device_code.c),
 * then held against the GRAPH: every tvm_op node calls a kernel of the
 * device code, with as many parameters as the node has arguments, each of
 * the argument's dtype (and, version 4, no tensor map covering more than its
 * buffer's bytes). For a GPU VM artifact (format version 4), each
 * kernel of the VM program is a DEVICE_CODE kernel when DEVICE_CODE holds
 * its name, else a host function of the library (resolved at step 6); the
 * VM checks each launch's arguments against the kernel's parameters. Nothing
 * here touches a driver: a GPU artifact loads (and `kiln info` shows it) on
 * any machine; sessions need the device. */
#include <string.h>

#include <stdlib.h>

#include "runtime_c/device_code.h"
#include "runtime_c/loader_internal.h"
#include "runtime_c/vm_program.h"

/* The section validated into art->device_code (and its offset in the blob). */
static KilnStatus* parse_device_code(Loader* L) {
  KilnArtifact* art = L->art;
  KilnStatus* st = kiln_device_code_parse(L->view.device_code, L->view.device_code_size, L->path,
                                          &art->device_code);
  if (st != NULL) return st;
  art->device_code_offset = (uint64_t)(L->view.device_code - L->blob);
  return NULL;
}

KilnStatus* kiln_loader_check_device_vm(Loader* L) {
  KilnArtifact* art = L->art;
  KilnStatus* st = parse_device_code(L);
  if (st != NULL) return st;
  const KilnDeviceCode* dc = art->device_code;
  const KilnVmProgram* p = art->vm;
  art->vm_device_kernels = (const KilnDeviceKernelDesc**)calloc(
      p->num_kernels > 0 ? p->num_kernels : 1, sizeof(const KilnDeviceKernelDesc*));
  if (art->vm_device_kernels == NULL) return kiln_loader_oom(L);
  for (uint32_t k = 0; k < p->num_kernels; ++k) {
    art->vm_device_kernels[k] = kiln_device_code_find(dc, p->kernel_names[k]);
  }
  return NULL;
}

KilnStatus* kiln_loader_check_device(Loader* L) {
  KilnArtifact* art = L->art;
  KilnStatus* st = parse_device_code(L);
  if (st != NULL) return st;
  const KilnDeviceCode* dc = art->device_code;
  char label[320];
  for (int32_t n = 0; n < art->num_nodes; ++n) {
    const KilnPlanNode* pn = &art->nodes[n];
    if (!pn->is_op) continue;
    const KilnDeviceKernelDesc* k = kiln_device_code_find(dc, pn->func_name);
    if (k == NULL) {
      return kiln_lerr(L, KILN_DATA_LOSS,
                       "corrupted artifact: GRAPH: %s calls kernel '%.200s', which DEVICE_CODE does "
                       "not hold",
                       kiln_node_label(L, n, label, sizeof label), pn->func_name);
    }
    if (k->num_vars != 0) {
      return kiln_lerr(L, KILN_DATA_LOSS,
                       "corrupted artifact: GRAPH: %s calls kernel '%.200s', whose launch depends "
                       "on shapes (a VM artifact's kernel)",
                       kiln_node_label(L, n, label, sizeof label), pn->func_name);
    }
    const int32_t nargs = pn->num_inputs + pn->num_outputs;
    if ((int64_t)k->num_buffers != nargs) {
      return kiln_lerr(L, KILN_DATA_LOSS,
                       "corrupted artifact: GRAPH: %s passes %d arguments; kernel '%s' of "
                       "DEVICE_CODE takes %u",
                       kiln_node_label(L, n, label, sizeof label), (int)nargs, k->name,
                       k->num_buffers);
    }
    /* Version 4: each tensor map covers no more than its buffer's bytes. */
    for (uint32_t j = 0; j < k->num_tensor_maps; ++j) {
      const KilnDeviceTensorMapDesc* tm = &k->tensor_maps[j];
      const int32_t a = (int32_t)tm->buffer;
      const int32_t e = a < pn->num_inputs ? art->node_inputs[pn->inputs_offset + a]
                                           : pn->first_entry + (a - pn->num_inputs);
      if (tm->span_bytes > art->entries[e].nbytes) {
        return kiln_lerr(L, KILN_DATA_LOSS,
                         "corrupted artifact: DEVICE_CODE: kernel '%s' tensor-map parameter %u "
                         "covers %llu bytes of parameter %u, but %s passes a tensor of %llu bytes "
                         "there",
                         k->name, tm->param, (unsigned long long)tm->span_bytes, tm->buffer,
                         kiln_node_label(L, n, label, sizeof label),
                         (unsigned long long)art->entries[e].nbytes);
      }
    }
    for (int32_t a = 0; a < nargs; ++a) {
      const int32_t e = a < pn->num_inputs ? art->node_inputs[pn->inputs_offset + a]
                                           : pn->first_entry + (a - pn->num_inputs);
      const DLDataType want = art->entries[e].dtype;
      const DLDataType got = k->params[a].dtype;
      if (want.code != got.code || want.bits != got.bits) {
        char w[32], g[32];
        kiln_dtype_to_string(want, w, sizeof w);
        kiln_dtype_to_string(got, g, sizeof g);
        return kiln_lerr(L, KILN_DATA_LOSS,
                         "corrupted artifact: GRAPH: argument %d of %s is %s; kernel '%s' of "
                         "DEVICE_CODE takes %s",
                         (int)a, kiln_node_label(L, n, label, sizeof label), w, k->name, g);
      }
      if (a >= pn->num_inputs && k->params[a].read_only) {
        return kiln_lerr(L, KILN_DATA_LOSS,
                         "corrupted artifact: DEVICE_CODE: kernel '%s' parameter %d is read-only, "
                         "but %s writes its output there",
                         k->name, (int)a, kiln_node_label(L, n, label, sizeof label));
      }
    }
  }
  return NULL;
}
