/* File: runtime_c/cuda_session.c
 *
 * The graph executor on a CUDA device (a session created with device_type
 * kDLCUDA for a GPU artifact): executor.c builds the same plan of tensors and
 * steps as on the CPU, with every tensor's data a device address; this file
 * owns the device side:
 *
 *   - the device (runtime_c/cuda_device.h: the driver through dlopen), one
 *     block of device memory for the storages the session owns (arena,
 *     inputs, outputs) and one for the parameters, copied from PARAMS once;
 *   - the module: the cubin when it was compiled for this GPU's architecture,
 *     else the PTX (compiled by the driver; a GPU older than the PTX's
 *     architecture is refused), and each step's function and launch dims;
 *     a kernel with dynamic shared memory (DEVICE_CODE version 3) checked
 *     against the GPU's per-block limit and, above 48 KiB, opted into it;
 *   - TMA tensor maps (DEVICE_CODE version 4): a 64-byte-aligned 128-byte
 *     slot per tensor-map parameter of each kernel, encoded
 *     (cuTensorMapEncodeTiled) before a launch for the address of the
 *     map's buffer argument, again only when that address changed; the
 *     launch's argument for the parameter points at the slot (a by-value
 *     parameter). A driver without the call refuses the session;
 *   - a run: every step's arguments (device addresses, + byte_offset) into
 *     the argument slots, the launches queued, one synchronization at the end;
 *   - for a GPU VM artifact (format version 4) the VM's device
 *     (kiln_vm_set_device): memory, copies and launches of the program's
 *     device kernels, each launch's arguments checked against the kernel's
 *     parameters (count, dtypes, no output in a read-only parameter).
 *
 * Every failure names the artifact, and the node and kernel where there is
 * one, with the driver's error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime_c/artifact_blob.h"
#include "runtime_c/cuda_device.h"
#include "runtime_c/device_code.h"
#include "runtime_c/runtime_internal.h"
#include "runtime_c/vm.h"

struct KilnCudaSession {
  KilnCudaDevice* dev;
  KilnCudaModule* mod;
  KilnCudaDeviceInfo info;
  uint64_t memory;      /* session_bytes of device memory */
  uint64_t params;      /* every PARAM storage, one block */
  uint64_t* storage_at; /* per storage: its device address (0: none) */
  KilnCudaFunction** fns;                /* per step */
  const KilnDeviceKernelDesc** kernels;  /* per step */
  uint64_t* arg_values;                  /* per argument slot */
  void** arg_ptrs;                       /* &arg_values[i] */
  const char* image;                     /* "cubin sm_90" or "PTX compute_90" */
  /* A GPU VM artifact: per program kernel, its function (NULL: a host
   * kernel), the flags the VM reads, and argument slots for one launch. */
  KilnCudaFunction** vm_fns;
  uint8_t* vm_is_device;
  uint64_t* vm_arg_values;
  void** vm_arg_ptrs;
  uint32_t vm_max_args;
  /* Tensor maps (version 4): per DEVICE_CODE kernel its first slot; the
   * slots (128 bytes each, 64-byte aligned) and the buffer address each was
   * last encoded for (UINT64_MAX: none yet); per step, its arguments'
   * pointers when its kernel has tensor maps (else NULL). */
  uint32_t* tmap_first;
  uint8_t* tmap_slots;
  uint64_t* tmap_address;
  void*** step_ptrs;
  int32_t num_step_ptrs;
  const KilnArtifact* art;
};

enum { kTensorMapBytes = 128 };

/* "<path>: <what>: <the status's message>", the code kept; frees `st`. */
static KilnStatus* wrap(const KilnArtifact* art, const char* what, KilnStatus* st) {
  KilnStatus* out = kiln_status_create(kiln_status_code(st), "%s: %s: %s", art->path, what,
                                       kiln_status_message(st));
  kiln_status_free(st);
  return out;
}

void kiln_cuda_session_free(KilnSession* s) {
  KilnCudaSession* c = s->cuda;
  if (c == NULL) return;
  kiln_cuda_module_unload(c->mod);
  if (c->dev != NULL) {
    kiln_status_free(kiln_cuda_free(c->dev, c->memory));
    kiln_status_free(kiln_cuda_free(c->dev, c->params));
  }
  kiln_cuda_device_close(c->dev);
  free(c->storage_at);
  free(c->fns);
  free(c->kernels);
  free(c->arg_values);
  free(c->arg_ptrs);
  free(c->vm_fns);
  free(c->vm_is_device);
  free(c->vm_arg_values);
  free(c->vm_arg_ptrs);
  free(c->tmap_first);
  free(c->tmap_slots);
  free(c->tmap_address);
  for (int32_t k = 0; c->step_ptrs != NULL && k < c->num_step_ptrs; ++k) free(c->step_ptrs[k]);
  free(c->step_ptrs);
  free(c);
  s->cuda = NULL;
}

void* kiln_cuda_session_own_data(const KilnSession* s, int32_t entry_id) {
  const KilnArtifact* art = s->artifact;
  return (void*)(uintptr_t)s->cuda->storage_at[art->entries[entry_id].storage_id];
}

int32_t kiln_cuda_session_ordinal(const KilnSession* s) {
  return s->cuda != NULL ? kiln_cuda_device_ordinal(s->cuda->dev) : -1;
}

const char* kiln_cuda_session_device_name(const KilnSession* s) {
  return s->cuda != NULL ? s->cuda->info.name : "cpu";
}

/* Whether the artifact's target names an architecture-specific variant
 * ("cuda -arch=sm_90a": Hopper's wgmma), whose PTX and cubin run on that one
 * architecture only. */
static int arch_specific(const char* target) {
  const char* a = target != NULL ? strstr(target, "-arch=sm_") : NULL;
  if (a == NULL) return 0;
  a += strlen("-arch=sm_");
  while (*a >= '0' && *a <= '9') ++a;
  return *a == 'a';
}

/* Loads the artifact's module for this GPU. */
static KilnStatus* load_module(KilnSession* s) {
  const KilnArtifact* art = s->artifact;
  KilnCudaSession* c = s->cuda;
  const KilnDeviceCode* dc = art->device_code;
  const unsigned sm = (unsigned)(c->info.compute_major * 10 + c->info.compute_minor);
  KilnStatus* cubin_error = NULL;
  if (dc->cubin.size != 0 && dc->cubin.arch == sm) {
    KilnStatus* st = kiln_cuda_module_load(c->dev, art->device_section + dc->cubin.offset,
                                           (size_t)dc->cubin.size, &c->mod);
    if (st == NULL) {
      c->image = "cubin";
      return NULL;
    }
    cubin_error = st; /* the PTX may still load */
  }
  if (arch_specific(art->target) && dc->ptx.arch != sm) {
    KilnStatus* st = kiln_status_create(
        KILN_UNIMPLEMENTED,
        "%s: compiled for sm_%ua (target \"%s\": architecture-specific instructions, which "
        "only sm_%u GPUs run), but CUDA device %d (%s) is sm_%u: compile the model with --target "
        "\"cuda -arch=sm_%u\"%s%s",
        art->path, dc->ptx.arch, art->target, dc->ptx.arch, kiln_cuda_device_ordinal(c->dev),
        c->info.name, sm, sm < dc->ptx.arch ? sm : dc->ptx.arch,
        cubin_error ? "; the cubin: " : "", cubin_error ? kiln_status_message(cubin_error) : "");
    kiln_status_free(cubin_error);
    return st;
  }
  if (dc->ptx.arch > sm) {
    KilnStatus* st = kiln_status_create(
        KILN_UNIMPLEMENTED,
        "%s: compiled for compute_%u (target \"%s\"), but CUDA device %d (%s) is sm_%u: compile "
        "the model with --target \"cuda -arch=sm_%u\"%s%s",
        art->path, dc->ptx.arch, art->target, kiln_cuda_device_ordinal(c->dev), c->info.name, sm,
        sm, cubin_error ? "; the cubin: " : "", cubin_error ? kiln_status_message(cubin_error) : "");
    kiln_status_free(cubin_error);
    return st;
  }
  KilnStatus* st = kiln_cuda_module_load(c->dev, art->device_section + dc->ptx.offset,
                                         (size_t)dc->ptx.size, &c->mod);
  if (st != NULL) {
    KilnStatus* out = kiln_status_create(
        kiln_status_code(st), "%s: loading the device code (PTX for compute_%u) on %s: %s%s%s",
        art->path, dc->ptx.arch, c->info.name, kiln_status_message(st),
        cubin_error ? "; the cubin: " : "", cubin_error ? kiln_status_message(cubin_error) : "");
    kiln_status_free(st);
    kiln_status_free(cubin_error);
    return out;
  }
  kiln_status_free(cubin_error);
  c->image = "PTX";
  return NULL;
}

/* Every kernel of the module with dynamic shared memory (DEVICE_CODE
 * version 3): refused when a block of it needs more shared memory than this
 * GPU lets a block opt into (an sm_90a artifact's GEMM tile on a smaller
 * GPU), and, when static + dynamic is above the 48 KiB every function may
 * use, its function opted into that much (its launches request it). */
static KilnStatus* prepare_kernels(KilnSession* s) {
  const KilnArtifact* art = s->artifact;
  KilnCudaSession* c = s->cuda;
  const KilnDeviceCode* dc = art->device_code;
  for (uint32_t k = 0; k < dc->num_kernels; ++k) {
    const KilnDeviceKernelDesc* kd = &dc->kernels[k];
    if (kd->dynamic_shared_bytes == 0) continue;
    const uint64_t total = (uint64_t)kd->shared_bytes + kd->dynamic_shared_bytes;
    const int limit = c->info.max_shared_per_block_optin;
    if (limit < 0 || total > (uint64_t)limit) {
      return kiln_status_create(
          KILN_UNIMPLEMENTED,
          "%s: kernel '%.200s' needs %llu bytes of shared memory per block (%u static + %u "
          "dynamic), but CUDA device %d (%s, sm_%d%d) lets a block have at most %d: compile the "
          "model for this GPU (--target \"cuda -arch=sm_%d%d\")",
          art->path, kd->name, (unsigned long long)total, kd->shared_bytes,
          kd->dynamic_shared_bytes, kiln_cuda_device_ordinal(c->dev), c->info.name,
          c->info.compute_major, c->info.compute_minor, limit, c->info.compute_major, c->info.compute_minor);
    }
    if (total <= KILN_DEVICE_MAX_STATIC_SHARED) continue;
    KilnCudaFunction* fn = NULL;
    KilnStatus* st = kiln_cuda_module_function(c->mod, kd->name, &fn);
    if (st == NULL) {
      st = kiln_cuda_function_set_max_dynamic_shared(c->dev, fn, kd->name, kd->dynamic_shared_bytes);
    }
    if (st != NULL) {
      char what[320];
      (void)snprintf(what, sizeof what, "kernel '%.200s' (the %s image)", kd->name, c->image);
      return wrap(art, what, st);
    }
  }
  return NULL;
}

/* Version 4's tensor maps: refused on a driver without
 * cuTensorMapEncodeTiled (before CUDA 12), naming the first kernel that has
 * one; else a slot per tensor-map parameter of every kernel. */
static KilnStatus* prepare_tensor_maps(KilnSession* s) {
  const KilnArtifact* art = s->artifact;
  KilnCudaSession* c = s->cuda;
  const KilnDeviceCode* dc = art->device_code;
  uint64_t total = 0;
  for (uint32_t k = 0; k < dc->num_kernels; ++k) {
    const KilnDeviceKernelDesc* kd = &dc->kernels[k];
    if (kd->num_tensor_maps == 0) continue;
    if (!kiln_cuda_has_tensor_map_encode()) {
      return kiln_status_create(
          KILN_UNIMPLEMENTED,
          "%s: kernel '%.200s' takes TMA tensor maps (parameter %u), but the CUDA driver on "
          "device %d (%s) lacks cuTensorMapEncodeTiled (CUDA 12 and newer have it): update the "
          "driver",
          art->path, kd->name, kd->tensor_maps[0].param, kiln_cuda_device_ordinal(c->dev),
          c->info.name);
    }
    total += kd->num_tensor_maps;
  }
  if (total == 0) return NULL;
  c->tmap_first = (uint32_t*)calloc(dc->num_kernels, sizeof *c->tmap_first);
  c->tmap_address = (uint64_t*)malloc((size_t)total * sizeof *c->tmap_address);
  c->tmap_slots = (uint8_t*)aligned_alloc(64, (size_t)total * kTensorMapBytes);
  if (c->tmap_first == NULL || c->tmap_address == NULL || c->tmap_slots == NULL) {
    return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "%s: out of memory", art->path);
  }
  memset(c->tmap_slots, 0, (size_t)total * kTensorMapBytes);
  uint32_t at = 0;
  for (uint32_t k = 0; k < dc->num_kernels; ++k) {
    c->tmap_first[k] = at;
    at += dc->kernels[k].num_tensor_maps;
  }
  for (uint64_t i = 0; i < total; ++i) c->tmap_address[i] = UINT64_MAX;
  return NULL;
}

/* Tensor map j of kernel kd: its slot. */
static void* tmap_slot(const KilnCudaSession* c, const KilnDeviceKernelDesc* kd, uint32_t j) {
  const uint32_t k = (uint32_t)(kd - c->art->device_code->kernels);
  return c->tmap_slots + (size_t)(c->tmap_first[k] + j) * kTensorMapBytes;
}

/* Encodes kernel kd's tensor maps for its buffers' device addresses
 * `buffers` (each slot only when its buffer's address changed since its
 * last encode). */
static KilnStatus* encode_tensor_maps(KilnCudaSession* c, const KilnDeviceKernelDesc* kd,
                                      const uint64_t* buffers) {
  const uint32_t k = (uint32_t)(kd - c->art->device_code->kernels);
  for (uint32_t j = 0; j < kd->num_tensor_maps; ++j) {
    const KilnDeviceTensorMapDesc* tm = &kd->tensor_maps[j];
    const uint32_t slot = c->tmap_first[k] + j;
    const uint64_t address = buffers[tm->buffer];
    if (c->tmap_address[slot] == address) continue;
    KilnCudaTensorMapSpec spec;
    spec.data_type = tm->data_type;
    spec.rank = tm->rank;
    spec.dims = tm->dims;
    spec.strides = tm->strides;
    spec.box = tm->box;
    spec.swizzle = tm->swizzle;
    char what[320];
    (void)snprintf(what, sizeof what, "kernel '%.200s' tensor-map parameter %u, of parameter %u",
                   kd->name, tm->param, tm->buffer);
    c->tmap_address[slot] = UINT64_MAX;
    KilnStatus* st = kiln_cuda_tensor_map_encode(tmap_slot(c, kd, j), &spec, address, what);
    if (st != NULL) return st;
    c->tmap_address[slot] = address;
  }
  return NULL;
}

/* ------------------------------------------------------------ the GPU VM */

/* Per kernel of the VM program: its function when DEVICE_CODE holds it. */
static KilnStatus* init_vm_kernels(KilnSession* s) {
  const KilnArtifact* art = s->artifact;
  KilnCudaSession* c = s->cuda;
  const uint32_t nk = art->vm->num_kernels;
  c->vm_fns = (KilnCudaFunction**)calloc(nk > 0 ? nk : 1, sizeof *c->vm_fns);
  c->vm_is_device = (uint8_t*)calloc(nk > 0 ? nk : 1, 1);
  if (c->vm_fns == NULL || c->vm_is_device == NULL) {
    return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "%s: out of memory", art->path);
  }
  for (uint32_t k = 0; k < nk; ++k) {
    const KilnDeviceKernelDesc* kd = art->vm_device_kernels[k];
    if (kd == NULL) continue;
    KilnStatus* st = kiln_cuda_module_function(c->mod, kd->name, &c->vm_fns[k]);
    if (st != NULL) {
      char what[320];
      (void)snprintf(what, sizeof what, "VM kernel '%.200s' (the %s image)", kd->name, c->image);
      return wrap(art, what, st);
    }
    c->vm_is_device[k] = 1;
    if (kd->num_params + kd->num_vars > c->vm_max_args) c->vm_max_args = kd->num_params + kd->num_vars;
  }
  const size_t n = c->vm_max_args > 0 ? c->vm_max_args : 1;
  c->vm_arg_values = (uint64_t*)calloc(n, sizeof(uint64_t));
  c->vm_arg_ptrs = (void**)calloc(n, sizeof(void*));
  if (c->vm_arg_values == NULL || c->vm_arg_ptrs == NULL) {
    return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "%s: out of memory", art->path);
  }
  for (size_t i = 0; i < n; ++i) c->vm_arg_ptrs[i] = &c->vm_arg_values[i];
  return NULL;
}

static KilnStatus* vmdev_alloc(void* self, uint64_t bytes, uint64_t* out) {
  KilnCudaSession* c = (KilnCudaSession*)self;
  return kiln_cuda_malloc(c->dev, (size_t)(bytes ? bytes : 1), out);
}

static void vmdev_release(void* self, uint64_t ptr) {
  KilnCudaSession* c = (KilnCudaSession*)self;
  kiln_status_free(kiln_cuda_free(c->dev, ptr));
}

static KilnStatus* vmdev_to_device(void* self, uint64_t dst, const void* src, uint64_t bytes) {
  KilnCudaSession* c = (KilnCudaSession*)self;
  return bytes == 0 ? NULL : kiln_cuda_copy_to_device(c->dev, dst, src, (size_t)bytes);
}

static KilnStatus* vmdev_to_host(void* self, void* dst, uint64_t src, uint64_t bytes) {
  KilnCudaSession* c = (KilnCudaSession*)self;
  /* A failed launch is named by the synchronization, not blamed on the copy. */
  KilnStatus* st = kiln_cuda_synchronize(c->dev, "a kernel of the run");
  if (st != NULL || bytes == 0) return st;
  return kiln_cuda_copy_to_host(c->dev, dst, src, (size_t)bytes);
}

static KilnStatus* vmdev_synchronize(void* self) {
  KilnCudaSession* c = (KilnCudaSession*)self;
  return kiln_cuda_synchronize(c->dev, "a kernel of the run");
}

static KilnStatus* vmdev_launch(void* self, uint32_t k, const DLTensor* const* args, const uint64_t* data,
                                uint32_t n) {
  KilnCudaSession* c = (KilnCudaSession*)self;
  const KilnDeviceKernelDesc* kd = c->art->vm_device_kernels[k];
  if (kd == NULL || c->vm_fns[k] == NULL) {
    return kiln_status_create(KILN_INTERNAL, "not a device kernel");
  }
  if (n != kd->num_buffers) {
    return kiln_status_create(KILN_INVALID_ARGUMENT, "%u arguments given, the kernel takes %u", n,
                              kd->num_buffers);
  }
  for (uint32_t i = 0; i < n; ++i) {
    const DLDataType want = kd->params[i].dtype;
    if (args[i]->dtype.code != want.code || args[i]->dtype.bits != want.bits || args[i]->dtype.lanes != 1) {
      char w[32], g[32];
      kiln_dtype_to_string(want, w, sizeof w);
      kiln_dtype_to_string(args[i]->dtype, g, sizeof g);
      return kiln_status_create(KILN_INVALID_ARGUMENT, "argument %u is %s, the kernel takes %s", i, g, w);
    }
    c->vm_arg_values[i] = data[i];
  }
  if (kd->num_tensor_maps != 0) {
    /* Version 4 (a static launch): each map over its buffer argument, which
     * must hold what the map covers. */
    for (uint32_t j = 0; j < kd->num_tensor_maps; ++j) {
      const KilnDeviceTensorMapDesc* tm = &kd->tensor_maps[j];
      const DLTensor* t = args[tm->buffer];
      uint64_t bytes = kiln_dtype_bytes(t->dtype);
      for (int32_t d = 0; d < t->ndim; ++d) {
        if (t->shape[d] < 0 || __builtin_mul_overflow(bytes, (uint64_t)t->shape[d], &bytes)) {
          bytes = 0;
          break;
        }
      }
      if (bytes < tm->span_bytes) {
        return kiln_status_create(KILN_INVALID_ARGUMENT,
                                  "tensor-map parameter %u covers %llu bytes of argument %u, "
                                  "which holds %llu",
                                  tm->param, (unsigned long long)tm->span_bytes, tm->buffer,
                                  (unsigned long long)bytes);
      }
    }
    KilnStatus* st = encode_tensor_maps(c, kd, data);
    if (st != NULL) return st;
    for (uint32_t j = 0; j < kd->num_tensor_maps; ++j) {
      c->vm_arg_ptrs[kd->tensor_maps[j].param] = tmap_slot(c, kd, j);
    }
    st = kiln_cuda_launch_async(c->dev, c->vm_fns[k], kd->name, kd->grid, kd->block,
                                kd->dynamic_shared_bytes, c->vm_arg_ptrs);
    /* The slots shared with other kernels' launches point at values again. */
    for (uint32_t j = 0; j < kd->num_tensor_maps; ++j) {
      const uint32_t p = kd->tensor_maps[j].param;
      c->vm_arg_ptrs[p] = &c->vm_arg_values[p];
    }
    return st;
  }
  unsigned grid[3] = {kd->grid[0], kd->grid[1], kd->grid[2]};
  if (kd->num_vars != 0) {
    /* A symbolic launch: the shape variables after the buffers, the grid
     * from them. */
    int64_t vars[KILN_DEVICE_MAX_LAUNCH_VARS];
    int empty = 0;
    KilnStatus* st = kiln_device_launch_dims(kd, args, n, vars, grid, &empty);
    if (st != NULL) return st;
    if (empty) return NULL;
    for (uint32_t v = 0; v < kd->num_vars; ++v) c->vm_arg_values[n + v] = (uint64_t)vars[v];
  }
  return kiln_cuda_launch_async(c->dev, c->vm_fns[k], kd->name, grid, kd->block,
                                kd->dynamic_shared_bytes, c->vm_arg_ptrs);
}

KilnStatus* kiln_cuda_session_attach_vm(KilnSession* s) {
  KilnCudaSession* c = s->cuda;
  KilnVmDevice d;
  memset(&d, 0, sizeof d);
  d.self = c;
  d.is_device = c->vm_is_device;
  d.alloc = vmdev_alloc;
  d.release = vmdev_release;
  d.to_device = vmdev_to_device;
  d.to_host = vmdev_to_host;
  d.launch = vmdev_launch;
  d.synchronize = vmdev_synchronize;
  return kiln_vm_set_device(s->vm, &d);
}

KilnStatus* kiln_cuda_session_init(KilnSession* s, int32_t device_id) {
  const KilnArtifact* art = s->artifact;
  KilnCudaSession* c = (KilnCudaSession*)calloc(1, sizeof *c);
  if (c == NULL) return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "%s: out of memory", art->path);
  s->cuda = c;
  c->art = art;
  char what[64];
  (void)snprintf(what, sizeof what, "a session on cuda:%d", (int)device_id);
  KilnStatus* st = kiln_cuda_device_open(device_id, &c->dev);
  if (st == NULL) st = kiln_cuda_device_info(c->dev, &c->info);
  if (st != NULL) return wrap(art, what, st);
  st = load_module(s);
  if (st == NULL) st = prepare_kernels(s);
  if (st == NULL) st = prepare_tensor_maps(s);
  if (st != NULL) return st;

  /* Device memory: the session's storages, then the parameters. */
  const int32_t ns = art->num_storages;
  c->storage_at = (uint64_t*)calloc(ns > 0 ? (size_t)ns : 1, sizeof(uint64_t));
  if (c->storage_at == NULL) return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "%s: out of memory", art->path);
  st = kiln_cuda_malloc(c->dev, (size_t)(art->session_bytes ? art->session_bytes : KILN_RT_ALIGNMENT),
                        &c->memory);
  if (st != NULL) return wrap(art, "session memory", st);
  uint64_t param_bytes = 0;
  for (int32_t i = 0; i < ns; ++i) {
    const KilnPlanStorage* ps = &art->storages[i];
    if (ps->kind == KILN_STORAGE_PARAM) param_bytes += ps->size;
  }
  if (param_bytes > 0) {
    st = kiln_cuda_malloc(c->dev, (size_t)param_bytes, &c->params);
    if (st != NULL) return wrap(art, "parameter memory", st);
  }
  uint64_t at = 0;
  for (int32_t i = 0; i < ns; ++i) {
    const KilnPlanStorage* ps = &art->storages[i];
    if (ps->kind == KILN_STORAGE_UNUSED) continue;
    if (ps->kind != KILN_STORAGE_PARAM) {
      c->storage_at[i] = c->memory + ps->offset;
      continue;
    }
    c->storage_at[i] = c->params + at;
    /* The parameter's bytes: the largest entry of the storage (ps->size is
     * rounded up to 64 and PARAMS holds exactly the data). */
    uint64_t bytes = 0;
    for (int32_t e = 0; e < art->num_entries; ++e) {
      if (art->entries[e].storage_id == i && art->entries[e].nbytes > bytes) bytes = art->entries[e].nbytes;
    }
    st = kiln_cuda_copy_to_device(c->dev, c->storage_at[i], ps->param_data, (size_t)bytes);
    if (st != NULL) return wrap(art, "copying the parameters", st);
    at += ps->size;
  }

  /* Functions and argument slots per step. */
  const int32_t nsteps = art->num_op_nodes;
  size_t total_args = 0;
  for (int32_t k = 0; k < nsteps; ++k) {
    const KilnPlanNode* pn = &art->nodes[art->op_nodes[k]];
    total_args += (size_t)pn->num_inputs + (size_t)pn->num_outputs;
  }
  c->fns = (KilnCudaFunction**)calloc(nsteps > 0 ? (size_t)nsteps : 1, sizeof *c->fns);
  c->kernels = (const KilnDeviceKernelDesc**)calloc(nsteps > 0 ? (size_t)nsteps : 1, sizeof *c->kernels);
  c->arg_values = (uint64_t*)calloc(total_args > 0 ? total_args : 1, sizeof(uint64_t));
  c->arg_ptrs = (void**)calloc(total_args > 0 ? total_args : 1, sizeof(void*));
  if (c->fns == NULL || c->kernels == NULL || c->arg_values == NULL || c->arg_ptrs == NULL) {
    return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "%s: out of memory", art->path);
  }
  for (size_t i = 0; i < total_args; ++i) c->arg_ptrs[i] = &c->arg_values[i];
  if (art->vm != NULL) {
    st = init_vm_kernels(s);
    if (st != NULL) return st;
  }
  c->step_ptrs = (void***)calloc(nsteps > 0 ? (size_t)nsteps : 1, sizeof *c->step_ptrs);
  if (c->step_ptrs == NULL) return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "%s: out of memory", art->path);
  c->num_step_ptrs = nsteps;
  for (int32_t k = 0; k < nsteps; ++k) {
    const KilnPlanNode* pn = &art->nodes[art->op_nodes[k]];
    const KilnDeviceKernelDesc* kd = kiln_device_code_find(art->device_code, pn->func_name); /* checked at load */
    c->kernels[k] = kd;
    st = kiln_cuda_module_function(c->mod, pn->func_name, &c->fns[k]);
    if (st != NULL) {
      char node[320];
      (void)snprintf(node, sizeof node, "node '%.200s' (the %s image)", pn->name, c->image);
      return wrap(art, node, st);
    }
    /* A kernel with tensor maps: its buffers' argument slots (set at each
     * launch), then its maps' slots. */
    if (kd->num_tensor_maps != 0) {
      void** p = (void**)calloc(kd->num_params, sizeof(void*));
      if (p == NULL) return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "%s: out of memory", art->path);
      c->step_ptrs[k] = p;
      for (uint32_t j = 0; j < kd->num_tensor_maps; ++j) p[kd->tensor_maps[j].param] = tmap_slot(c, kd, j);
    }
  }
  return NULL;
}

/* Queues step `k`; its argument slots start at `slot`. */
static KilnStatus* launch_step(KilnSession* s, int32_t k, size_t slot) {
  KilnCudaSession* c = s->cuda;
  const KilnStep* step = &s->steps[k];
  for (int32_t a = 0; a < step->num_args; ++a) {
    const DLTensor* t = step->args[a];
    c->arg_values[slot + (size_t)a] = (uint64_t)(uintptr_t)t->data + t->byte_offset;
  }
  const KilnDeviceKernelDesc* kd = c->kernels[k];
  KilnStatus* st = NULL;
  void** ptrs = &c->arg_ptrs[slot];
  if (c->step_ptrs[k] != NULL) {
    ptrs = c->step_ptrs[k];
    for (uint32_t a = 0; a < kd->num_buffers; ++a) ptrs[a] = &c->arg_values[slot + a];
    st = encode_tensor_maps(c, kd, &c->arg_values[slot]);
  }
  if (st == NULL) {
    st = kiln_cuda_launch_async(c->dev, c->fns[k], kd->name, kd->grid, kd->block,
                                kd->dynamic_shared_bytes, ptrs);
  }
  if (st == NULL) return NULL;
  char node[320];
  (void)snprintf(node, sizeof node, "node '%.200s'", s->artifact->nodes[step->node_id].name);
  return wrap(s->artifact, node, st);
}

static size_t slot_of(const KilnSession* s, int32_t k) {
  return (size_t)(s->steps[k].args - s->args);
}

KilnStatus* kiln_cuda_session_run(KilnSession* s) {
  for (int32_t k = 0; k < s->num_steps; ++k) {
    KilnStatus* st = launch_step(s, k, slot_of(s, k));
    if (st != NULL) return st;
  }
  KilnStatus* st = kiln_cuda_synchronize(s->cuda->dev, "the run");
  return st == NULL ? NULL : wrap(s->artifact, "a kernel of the run failed", st);
}

KilnStatus* kiln_cuda_session_run_step(KilnSession* s, int32_t k) {
  KilnStatus* st = launch_step(s, k, slot_of(s, k));
  if (st != NULL) return st;
  st = kiln_cuda_synchronize(s->cuda->dev, s->cuda->kernels[k]->name);
  if (st == NULL) return NULL;
  char node[320];
  (void)snprintf(node, sizeof node, "node '%.200s'", s->artifact->nodes[s->steps[k].node_id].name);
  return wrap(s->artifact, node, st);
}

KilnStatus* kiln_cuda_session_copy(KilnSession* s, void* dst, int dst_on_device, const void* src,
                                   int src_on_device, uint64_t bytes) {
  KilnCudaSession* c = s->cuda;
  if (bytes == 0) return NULL;
  KilnStatus* st;
  if (dst_on_device && src_on_device) {
    st = kiln_cuda_copy_on_device(c->dev, (uint64_t)(uintptr_t)dst, (uint64_t)(uintptr_t)src, (size_t)bytes);
  } else if (dst_on_device) {
    st = kiln_cuda_copy_to_device(c->dev, (uint64_t)(uintptr_t)dst, src, (size_t)bytes);
  } else if (src_on_device) {
    st = kiln_cuda_copy_to_host(c->dev, dst, (uint64_t)(uintptr_t)src, (size_t)bytes);
  } else {
    memmove(dst, src, (size_t)bytes);
    st = NULL;
  }
  return st == NULL ? NULL : wrap(s->artifact, "copy", st);
}

/* kiln_session_get_output_dlpack's tensor: device memory of its own, with a
 * reference on the device until the deleter runs. */
typedef struct {
  DLManagedTensor managed;
  KilnCudaDevice* dev;
  uint64_t data;
  int64_t shape[];
} KilnCudaDlpack;

static void cuda_dlpack_delete(DLManagedTensor* self) {
  if (self == NULL) return;
  KilnCudaDlpack* t = (KilnCudaDlpack*)self->manager_ctx;
  kiln_status_free(kiln_cuda_free(t->dev, t->data));
  kiln_cuda_device_close(t->dev);
  free(t);
}

KilnStatus* kiln_cuda_session_dlpack(KilnSession* s, const DLTensor* view, DLManagedTensor** out) {
  KilnCudaSession* c = s->cuda;
  uint64_t bytes = kiln_dtype_bytes(view->dtype);
  for (int32_t d = 0; d < view->ndim; ++d) bytes *= (uint64_t)view->shape[d];
  KilnCudaDlpack* t = (KilnCudaDlpack*)calloc(1, sizeof *t + (size_t)view->ndim * sizeof(int64_t));
  if (t == NULL) return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "%s: out of memory", s->artifact->path);
  KilnStatus* st = kiln_cuda_malloc(c->dev, (size_t)(bytes ? bytes : 1), &t->data);
  if (st == NULL) {
    st = kiln_cuda_copy_on_device(c->dev, t->data, (uint64_t)(uintptr_t)view->data + view->byte_offset,
                                  (size_t)bytes);
    if (st != NULL) kiln_status_free(kiln_cuda_free(c->dev, t->data));
  }
  if (st != NULL) {
    free(t);
    return wrap(s->artifact, "kiln_session_get_output_dlpack", st);
  }
  kiln_cuda_device_retain(c->dev);
  t->dev = c->dev;
  for (int32_t d = 0; d < view->ndim; ++d) t->shape[d] = view->shape[d];
  DLTensor* dl = &t->managed.dl_tensor;
  dl->data = (void*)(uintptr_t)t->data;
  dl->device = view->device;
  dl->ndim = view->ndim;
  dl->dtype = view->dtype;
  dl->shape = t->shape;
  dl->strides = NULL;
  dl->byte_offset = 0;
  t->managed.manager_ctx = t;
  t->managed.deleter = cuda_dlpack_delete;
  *out = &t->managed;
  return NULL;
}
