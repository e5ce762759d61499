/* File: runtime_c/include/kiln/runtime.h
 *
 * The deployment runtime: load a compiled model (.so, docs/artifact.md), run
 * it through the graph executor, profile it, benchmark it. C11; nothing here
 * needs LLVM or C++. Built into libkiln_runtime.so (only kiln_* exported).
 *
 *   KilnArtifact* model = NULL;
 *   KilnStatus* st = kiln_artifact_load("resnet.so", &model);      // validates everything
 *   KilnSession* s = NULL;
 *   st = kiln_session_create(model, NULL, &s);                     // default options
 *   st = kiln_session_set_input(s, "x", &input);                   // copies, checks shape/dtype
 *   st = kiln_session_run(s);
 *   const DLTensor* y = NULL;
 *   st = kiln_session_get_output(s, 0, &y);                        // view, valid until next run
 *   kiln_session_release(s);
 *   kiln_artifact_release(model);
 *
 * Rules (DESIGN.md §7): every call that can fail returns NULL or a KilnStatus
 * the caller frees (kiln/status.h); out-parameters are set to NULL/0 (indices: -1) first;
 * release functions accept NULL; options structs start with their size
 * (struct_size = sizeof, so fields can be added later; a NULL options pointer
 * means defaults).
 *
 * Threading: a KilnArtifact is immutable after load and may be shared by any
 * number of threads and sessions; each session holds a reference on it, so
 * it may be released before its sessions (it lives until the last one). A
 * KilnSession is used by one thread at a time (create one per concurrent
 * caller). The functions on an artifact are thread-safe.
 */
#ifndef KILN_RUNTIME_H_
#define KILN_RUNTIME_H_

#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#include "kiln/status.h"
#include "kiln/threadpool.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the C ABI (kiln.h / kiln_runtime.h). It grows by one with
 * every backward-compatible addition; an incompatible change would get a new
 * library name. Compare with kiln_api_version() to learn whether the loaded
 * library has what the caller was built against. */
#define KILN_API_VERSION 7

/* "0.1.0". */
const char* kiln_runtime_version(void);
/* KILN_API_VERSION of the loaded library. */
uint32_t kiln_api_version(void);

/* ----------------------------------------------------------------- artifact */

typedef struct KilnArtifact KilnArtifact;

/* Loads, validates (every check of docs/artifact.md, in that order) and
 * dlopens a compiled model. None of the library's code runs before every
 * check has passed: a library with constructors, destructors or IFUNC
 * resolvers is refused (KILN_DATA_LOSS), one needing a CPU feature this CPU
 * lacks too (KILN_FAILED_PRECONDITION); the file is opened once and
 * dlopen'ed through that descriptor. An artifact is native code: loading
 * one you did not build is running its code (the checksum detects
 * accidents, not tampering). A truncated, corrupted, foreign or newer-format
 * file gives KILN_DATA_LOSS / KILN_UNIMPLEMENTED / KILN_NOT_FOUND with a
 * message naming the file and the problem; never a crash. A missing file or
 * kernel gives KILN_NOT_FOUND; a failing system call (open, mmap, dlopen)
 * KILN_INTERNAL. Thread-safe. */
KilnStatus* kiln_artifact_load(const char* path, KilnArtifact** out);

/* The size of an HMAC-SHA-256 digest. */
#define KILN_HMAC_SHA256_SIZE 32

/* Options of kiln_artifact_load_with. Zero-filled (with struct_size set),
 * it is kiln_artifact_load. */
typedef struct {
  size_t struct_size; /* sizeof(KilnArtifactLoadOptions) */
  /* A keyed digest the file must have: HMAC-SHA-256 (RFC 2104) of the whole
   * file under hmac_key[0, hmac_key_size), equal to expected_hmac_sha256
   * (KILN_HMAC_SHA256_SIZE bytes). Both NULL: no keyed check. For artifacts
   * you did not build: the builder publishes the digest (openssl dgst
   * -sha256 -mac HMAC -macopt hexkey:KEY model.so computes it), the loader
   * holds the key. */
  const uint8_t* hmac_key;
  size_t hmac_key_size;
  const uint8_t* expected_hmac_sha256;
} KilnArtifactLoadOptions;

/* kiln_artifact_load with options (NULL: none). With a keyed digest, the
 * bytes of the opened file are digested before anything of them is parsed
 * and long before dlopen: a digest that differs refuses the file
 * (KILN_DATA_LOSS "refusing to load: ... HMAC-SHA-256 ... does not match").
 * A key without a digest, a digest without a key, an empty key or a bad
 * struct_size is KILN_INVALID_ARGUMENT. Thread-safe. */
KilnStatus* kiln_artifact_load_with(const char* path, const KilnArtifactLoadOptions* options,
                                    KilnArtifact** out);

/* Drops the caller's reference (accepts NULL). Sessions hold references of
 * their own: the artifact is freed, and its .so dlclose'd, when the last is
 * gone. A second release (while sessions live or after the last reference)
 * is detected, reported on stderr and ignored; so is any pointer that is not
 * a live artifact. Every accessor below treats such a handle as NULL, and
 * every call that returns a status refuses it (KILN_INVALID_ARGUMENT "not
 * live"); the same holds for sessions and profiles (docs/c_api.md §2.3). */
void kiln_artifact_release(KilnArtifact* artifact);

/* Strings owned by the artifact, valid while it lives. */
const char* kiln_artifact_target(const KilnArtifact* artifact);    /* META target */
const char* kiln_artifact_producer(const KilnArtifact* artifact);  /* META producer */
const char* kiln_artifact_graph_json(const KilnArtifact* artifact);/* GRAPH section text; ""
                                                                      for a VM artifact
                                                                      (docs/vm.md) */

/* The device code of an artifact compiled for a GPU (a "cuda ..." target,
 * format version 3, docs/cuda.md) as a JSON object: {"device": "cuda",
 * "ptx_arch": "compute_90", "ptx_bytes": N, "cubin_arch": "sm_90",
 * "cubin_bytes": N, "source_bytes": N, "kernels": [{"name", "grid": [x, y,
 * z], "block": [x, y, z], "shared_bytes", "dynamic_shared_bytes",
 * "params": ["const float32*", ...]}, ...]} (cubin and source only when
 * present; dynamic_shared_bytes: what each launch requests, DEVICE_CODE
 * version 3). "" for a CPU artifact.
 * Owned by the artifact. C ABI version 5. */
const char* kiln_artifact_device_code_json(const KilnArtifact* artifact);

int32_t kiln_artifact_num_inputs(const KilnArtifact* artifact);
int32_t kiln_artifact_num_outputs(const KilnArtifact* artifact);
int32_t kiln_artifact_num_nodes(const KilnArtifact* artifact);     /* graph nodes */

/* Describes input/output `index`: name, dtype and shape. The DLTensor's data
 * is NULL; its shape array belongs to the artifact. A VM artifact's dim that
 * is not static is -1 (any size the model allows; outputs have the shapes
 * each run computes, read with kiln_session_get_output after the run). */
KilnStatus* kiln_artifact_input_info(const KilnArtifact* artifact, int32_t index,
                                     const char** name, DLTensor* info);
KilnStatus* kiln_artifact_output_info(const KilnArtifact* artifact, int32_t index,
                                      const char** name, DLTensor* info);
/* Index of the input named `name`, or KILN_NOT_FOUND listing the inputs. */
KilnStatus* kiln_artifact_input_index(const KilnArtifact* artifact, const char* name,
                                      int32_t* index);

/* Index of the output named `name`, or KILN_NOT_FOUND listing the outputs. */
KilnStatus* kiln_artifact_output_index(const KilnArtifact* artifact, const char* name,
                                       int32_t* index);

/* 1 when input / output `index` is a sequence of tensors (an ONNX sequence,
 * docs/vm.md; a VM artifact only), 0 when it is a tensor or `index` is out
 * of range. A sequence's info (kiln_artifact_input_info) describes one
 * element: dtype and rank, every dim -1. C ABI version 6. */
int32_t kiln_artifact_input_is_sequence(const KilnArtifact* artifact, int32_t index);
int32_t kiln_artifact_output_is_sequence(const KilnArtifact* artifact, int32_t index);

/* 1 when input / output `index` is an optional (an ONNX optional, docs/vm.md;
 * a VM artifact only): of a tensor, or of a sequence of tensors when
 * kiln_artifact_*_is_sequence is 1 too; 0 otherwise or when `index` is out of
 * range. Its info describes the tensor (or one element): dtype and rank,
 * every dim -1. C ABI version 7. */
int32_t kiln_artifact_input_is_optional(const KilnArtifact* artifact, int32_t index);
int32_t kiln_artifact_output_is_optional(const KilnArtifact* artifact, int32_t index);

/* Bytes of the intermediate-tensor arena one session allocates (storages that
 * are not inputs, parameters or outputs), and what it would be without
 * storage sharing. */
void kiln_artifact_memory_stats(const KilnArtifact* artifact, uint64_t* arena_bytes,
                                uint64_t* naive_bytes);

/* ------------------------------------------------------------------ session */

typedef struct KilnSession KilnSession;

typedef struct {
  size_t struct_size;     /* sizeof(KilnSessionOptions) */
  /* Threads for the session's own pool: 0 = KILN_NUM_THREADS or the CPU count;
   * 1 = run everything on the calling thread. Ignored when `pool` is set. */
  int32_t num_threads;
  /* A pool to share (not owned; must outlive the session), or NULL. */
  KilnThreadPool* pool;
  /* Where the session runs (C ABI version 5): a DLPack device type, kDLCPU
   * (0 means kDLCPU too) or kDLCUDA, and the device's ordinal (0 for the
   * CPU). An artifact compiled for "cuda ..." runs only on kDLCUDA, a CPU
   * artifact only on kDLCPU: the other is KILN_FAILED_PRECONDITION. */
  int32_t device_type;
  int32_t device_id;
} KilnSessionOptions;

/* Allocates the session's storage (inputs, outputs, arena). On a CUDA device
 * (options->device_type kDLCUDA) that is device memory: the parameters are
 * copied there and the artifact's device code loaded (the cubin when it was
 * compiled for this GPU's architecture, else the PTX, compiled by the
 * driver). Without a driver: KILN_NOT_FOUND "no CUDA driver: ..."; without
 * that device: KILN_NOT_FOUND "no CUDA device N ..."; a GPU older than the
 * PTX's architecture: KILN_UNIMPLEMENTED. On a CUDA session, inputs may be
 * CPU or kDLCUDA tensors of that device (copied; zero copy needs kDLCUDA),
 * kiln_session_get_output's view is device memory (kDLCUDA),
 * kiln_session_copy_output copies to a CPU or kDLCUDA tensor, and
 * kiln_session_get_output_dlpack returns a kDLCUDA tensor in memory of its
 * own (its deleter frees it). A VM artifact compiled for "cuda ..." (format
 * version 4, docs/vm.md "On a GPU") launches its device kernels there and
 * calls the rest on the host: its inputs may be CPU or kDLCUDA tensors
 * (copied; zero copy needs CPU memory), its outputs are CPU memory (views,
 * copies and DLPack tensors alike). */
KilnStatus* kiln_session_create(const KilnArtifact* artifact, const KilnSessionOptions* options,
                                KilnSession** out);
void kiln_session_release(KilnSession* session);

/* Copies `tensor` into input `name`. dtype, ndim and every dim must match the
 * plan (the message names the input, the expected and the given); the data
 * must be CPU memory; strides NULL or compact. */
KilnStatus* kiln_session_set_input(KilnSession* session, const char* name,
                                   const DLTensor* tensor);
/* Like set_input, but the session reads `tensor->data` in place during run()
 * until the input is set again or the session is released (the caller keeps
 * it alive and unchanged). The data must be aligned to the element size
 * (checked; 64 bytes is best for vector code). */
KilnStatus* kiln_session_set_input_zero_copy(KilnSession* session, const char* name,
                                             const DLTensor* tensor);
/* By index instead of name. */
KilnStatus* kiln_session_set_input_index(KilnSession* session, int32_t index,
                                         const DLTensor* tensor);

/* Copies `count` tensors (an array of DLTensors, CPU memory, compact) into
 * sequence input `name` (kiln_artifact_input_is_sequence): each must have
 * the elements' dtype and rank (the message names the element); extents may
 * differ from element to element; count 0 is the empty sequence. Nothing
 * changes when one element is refused. kiln_session_set_input on a sequence
 * input, or this on a tensor input, is KILN_INVALID_ARGUMENT. C ABI
 * version 6. */
KilnStatus* kiln_session_set_input_sequence(KilnSession* session, const char* name,
                                            const DLTensor* elements, int32_t count);

/* Sets optional input `name` (kiln_artifact_input_is_optional) to none (an
 * empty optional). An optional with a value is set with
 * kiln_session_set_input (of a tensor) or kiln_session_set_input_sequence (of
 * a sequence); the last call wins. This on an input that is not an optional
 * is KILN_INVALID_ARGUMENT. C ABI version 7. */
KilnStatus* kiln_session_set_input_none(KilnSession* session, const char* name);

/* Runs every node in order. Fails with KILN_FAILED_PRECONDITION naming the
 * first input never set, or KILN_INTERNAL with the node name and the kernel's
 * message. */
KilnStatus* kiln_session_run(KilnSession* session);

/* A view of output `index` in session memory, valid until the next run or
 * release. */
KilnStatus* kiln_session_get_output(KilnSession* session, int32_t index, const DLTensor** out);
/* Sequence output `index` after a run: how many tensors it holds, and a view
 * of element k (valid until the next run or release). kiln_session_get_output
 * and its copying forms refuse a sequence output (KILN_INVALID_ARGUMENT). C
 * ABI version 6. */
KilnStatus* kiln_session_get_output_sequence_length(KilnSession* session, int32_t index,
                                                    int32_t* count);
KilnStatus* kiln_session_get_output_sequence_element(KilnSession* session, int32_t index,
                                                     int32_t k, const DLTensor** out);
/* Optional output `index` after a run (kiln_artifact_output_is_optional):
 * *is_none is 1 when it is none, 0 when it holds a value, read with the calls
 * for its tensor or sequence (which refuse a none output with
 * KILN_FAILED_PRECONDITION). KILN_INVALID_ARGUMENT for an output that is not
 * an optional. C ABI version 7. */
KilnStatus* kiln_session_get_output_is_none(KilnSession* session, int32_t index, int32_t* is_none);
/* Copies output `index` into `dst` (CPU, same dtype and shape, compact). */
KilnStatus* kiln_session_copy_output(KilnSession* session, int32_t index, const DLTensor* dst);
/* A copy of output `index` as a DLPack managed tensor the caller owns: it
 * outlives the session and the artifact; release it by calling
 * (*out)->deleter(*out). The data is 64-byte aligned CPU memory. This is the
 * tensor to hand to DLPack consumers (NumPy, PyTorch, ...). */
KilnStatus* kiln_session_get_output_dlpack(KilnSession* session, int32_t index,
                                           DLManagedTensor** out);

/* -------------------------------------------------------- debug executor */

/* One run with a timer around every node. */
typedef struct KilnProfile KilnProfile;

/* Runs the graph once, timing each node (the inputs must be set). */
KilnStatus* kiln_session_profile(KilnSession* session, KilnProfile** out);

#define KILN_PROFILE_MAX_RUNS 100000

typedef struct {
  size_t struct_size;   /* sizeof(KilnProfileOptions) */
  int32_t warmup;       /* untimed runs first (0: none) */
  int32_t repeat;       /* timed runs; each node's time is its median (1 when 0) */
  int32_t skip_tensors; /* kiln_session_debug_dump_with only: nonzero writes no tensors/ */
} KilnProfileOptions;

/* As kiln_session_profile, after `warmup` untimed runs, over `repeat` timed
 * runs: each node's time is its median, its start that of the last run.
 * options NULL is one timed run and no warm-up, as kiln_session_profile. */
KilnStatus* kiln_session_profile_with(KilnSession* session, const KilnProfileOptions* options,
                                      KilnProfile** out);
void kiln_profile_release(KilnProfile* profile);

int32_t kiln_profile_num_nodes(const KilnProfile* profile);   /* tvm_op nodes timed */
double kiln_profile_total_us(const KilnProfile* profile);
/* Node `index` (in execution order): name, op (the fused operators), time. */
KilnStatus* kiln_profile_node(const KilnProfile* profile, int32_t index, const char** name,
                              const char** op, double* time_us);

/* The per-node table as text (header line, one row per node: Node Name, Ops,
 * Time(us), Time(%), Shape, Inputs, Outputs; then a total row). *text is
 * malloc'ed; free with kiln_free. */
KilnStatus* kiln_profile_table(const KilnProfile* profile, char** text);
/* Chrome trace-event JSON ({"traceEvents": [...], "displayTimeUnit": "ns"},
 * one complete "X" event per node with ts/dur in microseconds), readable by
 * chrome://tracing and Perfetto. malloc'ed; free with kiln_free. */
KilnStatus* kiln_profile_chrome_trace(const KilnProfile* profile, char** json);

/* Runs the graph twice (a timed profile run, then a run that dumps every
 * node's outputs right after the node) and writes into directory `dir`
 * (created if missing): graph.json (the GRAPH section), profile.txt (the
 * table), trace.json (the Chrome trace), and tensors/<node>__<i>.npy for
 * every output i of every node (inputs and parameters too: tensors/<name>__0.npy).
 * Node names are made file-safe (anything outside [A-Za-z0-9_.-] becomes '_'). */
KilnStatus* kiln_session_debug_dump(KilnSession* session, const char* dir);
/* As kiln_session_debug_dump, the profile taken as kiln_session_profile_with
 * takes it; with options->skip_tensors the second run and tensors/ are left
 * out. options NULL is kiln_session_debug_dump. */
KilnStatus* kiln_session_debug_dump_with(KilnSession* session, const char* dir,
                                         const KilnProfileOptions* options);

/* -------------------------------------------------------------- benchmark */

typedef struct {
  size_t struct_size;     /* sizeof(KilnBenchmarkOptions) */
  int32_t warmup;         /* untimed runs first (default 1 when 0) */
  int32_t repeat;         /* timed runs (default 10 when 0) */
  const char* workload;   /* workload name for the log (default: META model) */
  const char* hardware;   /* hardware string (default: "cpu") */
} KilnBenchmarkOptions;

typedef struct {
  double mean_ms;
  double std_ms;
  double min_ms;
  double max_ms;
  int32_t repeat;
} KilnBenchmarkResult;

/* Times `repeat` runs (inputs must be set). `result` may be NULL. When
 * `log_line` is not NULL it receives one line of TVM's benchmark log format
 * v0.1 (a JSON object with workload, workload_args, engine, engine_version,
 * hardware, runtime_ms_mean,
 * runtime_ms_std, timestamp, schema_version "0.1", workload_config,
 * engine_config, hardware_config, execution_config, metadata, runtime_raw),
 * malloc'ed, free with kiln_free. timestamp is ISO-8601 UTC with
 * microseconds ("2024-05-01T12:34:56.123456Z"); runtime_raw holds one
 * {"runtime_ms": x} object per timed run; std is the population standard
 * deviation. runtime_c/README.md lists every key. */
KilnStatus* kiln_session_benchmark(KilnSession* session, const KilnBenchmarkOptions* options,
                                   KilnBenchmarkResult* result, char** log_line);

/* Frees memory the runtime returned as char* (NULL is fine). */
void kiln_free(void* ptr);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* KILN_RUNTIME_H_ */
