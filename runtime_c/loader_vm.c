/* File: runtime_c/loader_vm.c
 *
 * Step 5 of kiln_artifact_load for a VM artifact (format version 2): the VM
 * section is decoded and validated (vm_program.c), META's input_names and
 * output_names must name main's parameters and results one to one (unique
 * names), and the program's constants are checked against PARAMS. Step 6
 * (kiln_loader_resolve_vm, after dlopen) resolves every kernel the program
 * calls to a function defined by the library itself and points the
 * constants into the mapped blob.
 */
#define _GNU_SOURCE 1 /* dladdr */

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/artifact_format.h"
#include "runtime_c/artifact_blob.h"
#include "runtime_c/loader_internal.h"
#include "runtime_c/runtime_internal.h"
#include "runtime_c/vm_program.h"

static KilnStatus* names_to_io(Loader* L, const cJSON* names, uint32_t expected, int is_input,
                               KilnPlanIO** out, int32_t* count) {
  const char* key = is_input ? "input_names" : "output_names";
  int n = cJSON_GetArraySize(names);
  if (n < 0 || (uint32_t)n != expected) {
    return kiln_lerr(L, KILN_DATA_LOSS, "META: %s lists %d names, but the VM program's main has %u %s",
                     key, n, expected, is_input ? "parameters" : "results");
  }
  KilnPlanIO* io = (KilnPlanIO*)calloc(n > 0 ? (size_t)n : 1, sizeof(KilnPlanIO));
  if (io == NULL) return kiln_loader_oom(L);
  *out = io;
  *count = n;
  int k = 0;
  const cJSON* it = NULL;
  cJSON_ArrayForEach(it, names) {
    for (int j = 0; j < k; ++j) {
      if (strcmp(io[j].name, it->valuestring) == 0) {
        return kiln_lerr(L, KILN_DATA_LOSS, "META: %s lists '%.200s' twice", key, it->valuestring);
      }
    }
    io[k].name = kiln_artifact_strdup(L->art, it->valuestring);
    if (io[k].name == NULL) return kiln_loader_oom(L);
    io[k].node_id = -1;
    io[k].entry_id = k;
    io[k].is_input = is_input;
    ++k;
  }
  return NULL;
}

KilnStatus* kiln_loader_check_vm(Loader* L) {
  KilnArtifact* art = L->art;
  KilnVmProgram* p = NULL;
  KilnStatus* st = kiln_vm_program_parse(L->view.vm, L->view.vm_size, L->view.num_params, L->path, &p);
  if (st != NULL) return st;
  art->vm = p;
  st = names_to_io(L, L->input_names, p->num_inputs, 1, &art->inputs, &art->num_inputs);
  if (st == NULL) st = names_to_io(L, L->output_names, p->num_outputs, 0, &art->outputs, &art->num_outputs);
  if (st != NULL) return st;
  /* Signature shapes for kiln_artifact_input_info: -1 where not static. */
  const size_t ios = (size_t)p->num_inputs + p->num_outputs;
  art->vm_io_shapes = (int64_t*)calloc((ios > 0 ? ios : 1) * KILN_ARTIFACT_MAX_NDIM, sizeof(int64_t));
  if (art->vm_io_shapes == NULL) return kiln_loader_oom(L);
  for (size_t i = 0; i < ios; ++i) {
    const KilnVmType* t = i < p->num_inputs ? &p->inputs[i] : &p->outputs[i - p->num_inputs];
    for (int32_t d = 0; d < t->ndim; ++d) {
      art->vm_io_shapes[i * KILN_ARTIFACT_MAX_NDIM + (size_t)d] = t->dims[d] >= 0 ? t->dims[d] : -1;
    }
  }
  /* Constants: the PARAMS entries, data offsets from the blob start until
   * the library is mapped. */
  const size_t nc = p->num_constants > 0 ? p->num_constants : 1;
  art->vm_constants = (DLTensor*)calloc(nc, sizeof(DLTensor));
  art->vm_constant_shapes = (int64_t*)calloc(nc * KILN_ARTIFACT_MAX_NDIM, sizeof(int64_t));
  if (art->vm_constants == NULL || art->vm_constant_shapes == NULL) return kiln_loader_oom(L);
  for (uint32_t c = 0; c < p->num_constants; ++c) {
    KilnBlobParam bp;
    kiln_blob_param(&L->view, p->constants[c], &bp);
    DLTensor* t = &art->vm_constants[c];
    int64_t* shape = art->vm_constant_shapes + (size_t)c * KILN_ARTIFACT_MAX_NDIM;
    for (int32_t d = 0; d < bp.ndim; ++d) shape[d] = bp.shape[d];
    t->device.device_type = kDLCPU;
    t->ndim = bp.ndim;
    t->dtype = bp.dtype;
    t->shape = shape;
    t->byte_offset = (uint64_t)((const uint8_t*)bp.data - L->blob); /* made a pointer in step 6 */
  }
  return NULL;
}

KilnStatus* kiln_loader_resolve_vm(Loader* L, const uint8_t* mapped, const void* library_base) {
  KilnArtifact* art = L->art;
  KilnVmProgram* p = art->vm;
  for (uint32_t k = 0; k < p->num_kernels; ++k) {
    const char* name = p->kernel_names[k];
    /* A GPU VM artifact's device kernels are launched, not called. */
    if (art->vm_device_kernels != NULL && art->vm_device_kernels[k] != NULL) continue;
    (void)dlerror();
    void* sym = dlsym(art->dl_handle, name);
    if (sym == NULL) {
      return kiln_lerr(L, KILN_NOT_FOUND,
                       "VM: kernel %u '%.200s' is called by the program but not exported by the "
                       "library",
                       k, name);
    }
    Dl_info info;
    if (dladdr(sym, &info) == 0 || info.dli_fbase != library_base) {
      return kiln_lerr(L, KILN_NOT_FOUND,
                       "VM: kernel %u '%.200s' is not defined by the library itself", k, name);
    }
    KilnKernelFn fn;
    memcpy(&fn, &sym, sizeof fn);
    p->kernels[k] = fn;
  }
  for (uint32_t c = 0; c < p->num_constants; ++c) {
    DLTensor* t = &art->vm_constants[c];
    t->data = (void*)(uintptr_t)(mapped + t->byte_offset);
    t->byte_offset = 0;
  }
  return NULL;
}
