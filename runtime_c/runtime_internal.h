/* File: runtime_c/runtime_internal.h  (internal to runtime_c's :runtime)
 *
 * The immutable plan a KilnArtifact holds after kiln_artifact_load
 * (loader.c) and the KilnSession that executes it (executor.c), shared with
 * the debugger (debug.c) and the benchmark (bench.c). Nothing here is public.
 *
 * The plan is built once, validated completely, and never written again: any
 * number of sessions on any number of threads read it concurrently.
 */
#ifndef KILN_RUNTIME_C_RUNTIME_INTERNAL_H_
#define KILN_RUNTIME_C_RUNTIME_INTERNAL_H_

#include <dlpack/dlpack.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "kiln/kernel_abi.h"
#include "kiln/runtime.h"
#include "kiln/status.h"
#include "kiln/threadpool.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Internal functions are hidden: libkiln_runtime.so exports only the API. */
#if defined(__GNUC__)
#define KILN_RT_HIDDEN __attribute__((visibility("hidden")))
#else
#define KILN_RT_HIDDEN
#endif

/* Every storage, and so every tensor a session allocates, starts at a multiple
 * of this (docs/artifact.md: storage sizes are rounded up to 64). */
#define KILN_RT_ALIGNMENT 64u

/* What a storage holds. */
typedef enum {
  KILN_STORAGE_UNUSED = 0, /* a storage id no entry uses (a gap) */
  KILN_STORAGE_SHARED = 1, /* intermediates: the session arena */
  KILN_STORAGE_OUTPUT = 2, /* a head computed by a kernel: exclusive */
  KILN_STORAGE_INPUT = 3,  /* a graph input: exclusive */
  KILN_STORAGE_PARAM = 4   /* a parameter: in place in PARAMS, no allocation */
} KilnStorageKind;

/* One graph entry (an output of a node). */
typedef struct {
  DLDataType dtype;
  int32_t ndim;
  int32_t node_id; /* the node that produces it */
  int32_t storage_id;
  int32_t last_use;      /* last node reading it; num_nodes for a head */
  uint64_t shape_offset; /* index into KilnArtifact.shapes (ndim values) */
  uint64_t num_elements;
  uint64_t nbytes; /* num_elements * element bytes */
} KilnPlanEntry;

typedef struct {
  KilnStorageKind kind;
  int32_t num_entries;    /* entries that use it */
  uint64_t size;          /* bytes, a multiple of KILN_RT_ALIGNMENT */
  uint64_t offset;        /* in the session block (not for PARAM/UNUSED) */
  uint64_t param_offset;  /* PARAM: data offset from the blob start */
  const void* param_data; /* PARAM: the data, in the dlopen'ed mapping */
} KilnPlanStorage;

typedef struct {
  const char* name;      /* owned by the artifact */
  const char* func_name; /* tvm_op: owned by the artifact; NULL for null nodes */
  const char* op_names;  /* attrs.op_names, else func_name; NULL for null nodes */
  KilnKernelFn fn;       /* tvm_op: resolved in the .so */
  int32_t is_op;         /* 1 for tvm_op, 0 for null */
  int32_t num_inputs;
  int32_t num_outputs;
  int32_t first_entry;   /* node_row_ptr[node] */
  int32_t inputs_offset; /* into KilnArtifact.node_inputs */
} KilnPlanNode;

/* A graph input (a null node that is not a parameter) or output (a head). */
typedef struct {
  const char* name; /* owned by the artifact */
  int32_t node_id;  /* a VM artifact: -1 */
  int32_t entry_id; /* a VM artifact: the index into its program's inputs/outputs */
  int32_t is_input;
} KilnPlanIO;

typedef struct KilnLoadedFile KilnLoadedFile;

struct KilnArtifact {
  /* References: the caller's (until kiln_artifact_release) plus one per live
   * session; freed when the count reaches 0. Whether the caller's is still
   * there is the registry's to say (runtime_c/handles.h): a second
   * kiln_artifact_release is ignored and never drops a session's. */
  atomic_int refs;
  char* path;
  void* dl_handle;
  /* The loaded file's entry in loader.c's registry (the descriptor the
   * library was dlopen'ed through, shared by the artifacts of one file). */
  struct KilnLoadedFile* file;
  uint64_t checksum;

  char* meta_text; /* NUL-terminated copies of the sections */
  char* graph_text;
  char* producer;
  char* target;
  char* model; /* META "model", or the file's base name */

  int32_t num_nodes;
  KilnPlanNode* nodes;
  int32_t* node_inputs; /* entry ids, per node at nodes[n].inputs_offset */
  int32_t num_node_inputs;

  int32_t num_entries;
  KilnPlanEntry* entries;
  int64_t* shapes;
  uint64_t num_shape_values;

  int32_t num_storages;
  KilnPlanStorage* storages;
  uint64_t session_bytes; /* every non-param storage of one session */

  int32_t num_inputs;
  KilnPlanIO* inputs;
  int32_t num_outputs;
  KilnPlanIO* outputs;

  int32_t num_op_nodes;
  int32_t* op_nodes; /* tvm_op node ids in execution order */

  uint64_t arena_bytes;
  uint64_t naive_bytes;

  /* A VM artifact (format version 2): the validated program, its constants
   * (tensors in place in the mapping) and the signature's shapes as
   * kiln_artifact_input_info reports them (32 per input, then per output;
   * -1 for a dim that is not static). NULL for a graph artifact, which has
   * no VM; a VM artifact has no nodes, entries or storages. */
  struct KilnVmProgram* vm;
  DLTensor* vm_constants;
  int64_t* vm_constant_shapes;
  int64_t* vm_io_shapes;

  /* A GPU artifact (format version 3): its validated DEVICE_CODE (kernels,
   * launch dims, parameters; image offsets from the section start), the
   * section's offset in the blob, and the section in the dlopen'ed mapping
   * (set at step 6). NULL / 0 for a CPU artifact, whose nodes' fn are set
   * instead; a GPU artifact's nodes have no fn. */
  struct KilnDeviceCode* device_code;
  uint64_t device_code_offset;
  /* A GPU VM artifact (format version 4): per program kernel, its DEVICE_CODE
   * kernel (launched on the device) or NULL (a host function of the .so,
   * program->kernels[k]). NULL for every other artifact. */
  const struct KilnDeviceKernelDesc** vm_device_kernels;
  const uint8_t* device_section;

  /* Every string above is allocated here (a list of blocks). */
  struct KilnStringBlock* strings;
};

/* One kernel call of a session. */
typedef struct {
  KilnKernelFn fn;
  DLTensor* const* args;
  int32_t num_args;
  int32_t node_id;
} KilnStep;

struct KilnSession {
  const KilnArtifact* artifact;
  KilnThreadPool* own_pool; /* NULL when the options gave one, or serial */
  KilnThreadPool* pool;     /* the pool used (own or given), may be NULL */
  KilnKernelContext* ctx;
  int32_t num_threads;

  uint8_t* memory;   /* session_bytes (at least 64), 64-byte aligned */
  DLTensor* tensors; /* one per entry */
  int64_t* shapes;   /* the session's copy of the shapes */
  DLTensor** args;   /* every node's arguments, concatenated */
  KilnStep* steps;   /* one per tvm_op node, in order */
  int32_t num_steps;
  uint8_t* input_set; /* per input: set since creation */
  int32_t num_unset_inputs;

  /* A session of a VM artifact (vm_session.c): its VM and its inputs, each a
   * tensor of the shape last set, in an owned buffer (or the caller's, zero
   * copy). NULL for a graph artifact. */
  struct KilnVm* vm;
  DLTensor* vm_inputs;
  int64_t* vm_input_shapes; /* 32 per input */
  void** vm_input_buffers;  /* owned copies */
  uint64_t* vm_input_capacity;
  /* Per sequence input: its elements (copies in one buffer, each 64-byte
   * aligned), what kiln_session_set_input_sequence last set. */
  struct KilnVmSeqInput* vm_seq_inputs;
  /* Per optional input: 1 when kiln_session_set_input_none set it last. */
  uint8_t* vm_input_none;

  /* A session on a CUDA device (cuda_session.c): every tensor's data is a
   * device address; memory is NULL and the steps have no fn. NULL on the
   * CPU. */
  struct KilnCudaSession* cuda;
};

typedef struct KilnCudaSession KilnCudaSession;

/* Sessions on a CUDA device (cuda_session.c). init opens device
 * `device_id`, loads the module and allocates and fills the device memory;
 * the session's cuda part is freed by kiln_cuda_session_free (also after a
 * failed init). */
KILN_RT_HIDDEN KilnStatus* kiln_cuda_session_init(KilnSession* session, int32_t device_id);
KILN_RT_HIDDEN void kiln_cuda_session_free(KilnSession* session);
/* A GPU VM artifact's session: its VM (created after init) given the device
 * (kiln_vm_set_device). */
KILN_RT_HIDDEN KilnStatus* kiln_cuda_session_attach_vm(KilnSession* session);
KILN_RT_HIDDEN void* kiln_cuda_session_own_data(const KilnSession* session, int32_t entry_id);
KILN_RT_HIDDEN int32_t kiln_cuda_session_ordinal(const KilnSession* session);
/* The GPU's name ("cpu" for a CPU session). */
KILN_RT_HIDDEN const char* kiln_cuda_session_device_name(const KilnSession* session);
KILN_RT_HIDDEN KilnStatus* kiln_cuda_session_run(KilnSession* session);
/* Step `k` alone, waited for (the profiler's). */
KILN_RT_HIDDEN KilnStatus* kiln_cuda_session_run_step(KilnSession* session, int32_t k);
/* `bytes` from src to dst, each host or device memory of the session's device. */
KILN_RT_HIDDEN KilnStatus* kiln_cuda_session_copy(KilnSession* session, void* dst, int dst_on_device,
                                                  const void* src, int src_on_device,
                                                  uint64_t bytes);
/* A kDLCUDA copy of `view` (device memory) owned by the returned tensor. */
KILN_RT_HIDDEN KilnStatus* kiln_cuda_session_dlpack(KilnSession* session, const DLTensor* view,
                                                    DLManagedTensor** out);

/* Step `k` of a graph session, on its device (the debugger's runs). */
KILN_RT_HIDDEN KilnStatus* kiln_session_run_step(KilnSession* session, int32_t k);

/* A session's reference on its artifact (executor.c takes one per session). */
KILN_RT_HIDDEN void kiln_artifact_retain(const KilnArtifact* artifact);
KILN_RT_HIDDEN void kiln_artifact_unref(const KilnArtifact* artifact);

/* NULL when `artifact` is a live artifact handle (runtime_c/handles.h), else
 * KILN_INVALID_ARGUMENT naming `fn` (NULL, or used after its release). */
KILN_RT_HIDDEN KilnStatus* kiln_artifact_check_live(const KilnArtifact* artifact, const char* fn);

/* kiln_artifact_input_index without the liveness check: a session's lookup
 * in its own artifact, which its reference keeps alive. */
KILN_RT_HIDDEN KilnStatus* kiln_artifact_find_input(const KilnArtifact* artifact, const char* name,
                                                    int32_t* index);

/* NULL when `session` is a live session handle, else KILN_INVALID_ARGUMENT
 * naming `fn` (NULL, or used after kiln_session_release). */
KILN_RT_HIDDEN KilnStatus* kiln_session_check_live(const KilnSession* session, const char* fn);

/* The storage pointer of `entry` in the session's own memory. */
KILN_RT_HIDDEN void* kiln_session_own_data(const KilnSession* session, int32_t entry_id);

/* Checks that every input is set (KILN_FAILED_PRECONDITION naming the first
 * one that is not). */
KILN_RT_HIDDEN KilnStatus* kiln_session_check_inputs(const KilnSession* session);

/* The status for a failed kernel call of step `step` (rc != 0): KILN_INTERNAL
 * with the node, the function and the context's message; clears the
 * context's error. */
KILN_RT_HIDDEN KilnStatus* kiln_session_kernel_failure(KilnSession* session, int32_t step,
                                                       int32_t rc);

/* VM sessions (vm_session.c): the parts of a KilnSession a VM artifact
 * needs, made by kiln_session_create after its thread pool and context;
 * freed by kiln_vm_session_free_parts. The others answer for the public
 * session calls of executor.c when session->vm is set. */
KILN_RT_HIDDEN KilnStatus* kiln_vm_session_init(KilnSession* session);
KILN_RT_HIDDEN void kiln_vm_session_free_parts(KilnSession* session);
KILN_RT_HIDDEN KilnStatus* kiln_vm_session_set_input(KilnSession* session, int32_t index,
                                                     const DLTensor* tensor, int zero_copy,
                                                     const char* fn);
KILN_RT_HIDDEN KilnStatus* kiln_vm_session_run(KilnSession* session);
KILN_RT_HIDDEN KilnStatus* kiln_vm_session_set_input_sequence(KilnSession* session, int32_t index,
                                                              const DLTensor* elements,
                                                              int32_t count, const char* fn);
/* Optional input `index` set to none (KILN_INVALID_ARGUMENT for another). */
KILN_RT_HIDDEN KilnStatus* kiln_vm_session_set_input_none(KilnSession* session, int32_t index,
                                                          const char* fn);
/* Output `index` of the last run, or KILN_FAILED_PRECONDITION before one. */
KILN_RT_HIDDEN KilnStatus* kiln_vm_session_output(const KilnSession* session, int32_t index,
                                                  const char* fn, const DLTensor** view);

/* The dtype and shape of input or output `io` (one of the artifact's
 * inputs[] or outputs[]) as kiln_artifact_input_info reports them: a VM
 * artifact's dims that are not static are -1. */
KILN_RT_HIDDEN void kiln_artifact_io_desc(const KilnArtifact* artifact, const KilnPlanIO* io,
                                          DLTensor* info);

/* Formats dtype + shape like "float32[1,3,224,224]" into buf. */
KILN_RT_HIDDEN void kiln_format_tensor_type(DLDataType dtype, int32_t ndim, const int64_t* shape,
                                            char* buf, size_t buf_size);

/* CLOCK_MONOTONIC in nanoseconds (differences are exact integers). */
KILN_RT_HIDDEN uint64_t kiln_now_ns(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_RUNTIME_C_RUNTIME_INTERNAL_H_ */
