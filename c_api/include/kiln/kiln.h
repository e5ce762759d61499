/* File: c_api/include/kiln/kiln.h  (libkiln.so: the compiler and the runtime)
 *
 * The whole of kiln behind one stable C ABI: load a model (ONNX file or
 * bytes, or kiln's text IR), print it, optimize it, compile it into an
 * artifact (.so), then load and run that artifact with the runtime API of
 * kiln/kiln_runtime.h, which this header includes. docs/c_api.md documents
 * every function.
 *
 *   KilnModel* model = NULL;
 *   KilnStatus* st = kiln_model_load_onnx_file("resnet.onnx", NULL, &model);
 *   if (st == NULL) st = kiln_model_compile(model, NULL, "resnet.so", NULL);
 *   KilnArtifact* artifact = NULL;
 *   if (st == NULL) st = kiln_artifact_load("resnet.so", &artifact);
 *   ... kiln_session_create / set_input / run / get_output (kiln_runtime.h) ...
 *   if (st != NULL) { fprintf(stderr, "%s\n", kiln_status_message(st)); kiln_status_free(st); }
 *   kiln_artifact_release(artifact);
 *   kiln_model_release(model);
 *
 * Rules (DESIGN.md §7), the same for every function:
 *  - A function that can fail returns KilnStatus*: NULL on success, otherwise a
 *    status with a code and a message (naming what was wrong and where) that
 *    the caller releases with kiln_status_free.
 *  - Out-parameters are cleared (NULL / 0) first, so they are never garbage,
 *    even on failure.
 *  - Every object has a release function that accepts NULL.
 *  - Options structs start with `struct_size` (set it to sizeof the struct,
 *    or fill the struct with its kiln_*_options_init function); passing NULL
 *    options means the defaults. Fields may be added at the end in later
 *    versions: an older caller's smaller struct keeps working (missing fields
 *    take their zero value); the functions of this header refuse a
 *    struct_size larger than this library knows (KILN_INVALID_ARGUMENT),
 *    while the runtime's kiln_session_create / kiln_session_benchmark read
 *    the fields they know and ignore the rest.
 *  - Strings returned as `char**` are malloc'ed and freed with kiln_free.
 *  - No C++ exception, abort or STL object crosses this boundary.
 *  - Threading: a KilnModel is immutable; any number of threads may read,
 *    print, optimize and compile the same model concurrently. Each call's
 *    result is a new object owned by the caller.
 *
 * A program links libkiln.so OR libkiln_runtime.so, never both (libkiln.so
 * holds the runtime too). Model .so files resolve the runtime's kernel-ABI
 * functions from the global scope: link libkiln.so normally, or dlopen it
 * with RTLD_GLOBAL (Python: ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)).
 */
#ifndef KILN_KILN_H_
#define KILN_KILN_H_

#include <stddef.h>
#include <stdint.h>

#include "kiln/kiln_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version string ("0.1.0"), the same as kiln_runtime_version. */
const char* kiln_version(void);

/* -------------------------------------------------------------------- model */

/* A model in kiln's graph IR: a module whose function `main` is the model.
 * Immutable; thread-safe to share. */
typedef struct KilnModel KilnModel;

/* A static shape for one model input (ONNX inputs with symbolic or unknown
 * dims must get one before compiling). */
typedef struct {
  const char* name;      /* the ONNX graph input's name */
  int32_t ndim;
  const int64_t* dims;   /* ndim values, each >= 0 */
} KilnInputShape;

typedef struct {
  size_t struct_size;                  /* sizeof(KilnImportOptions) */
  const KilnInputShape* input_shapes;  /* num_input_shapes entries, or NULL */
  int32_t num_input_shapes;
  /* Directory that external-data locations are relative to. NULL: the model
   * file's directory (kiln_model_load_onnx_file) / the current directory
   * (kiln_model_load_onnx_bytes). */
  const char* external_data_dir;
} KilnImportOptions;

/* Sets struct_size and every default (no shapes, no directory). */
void kiln_import_options_init(KilnImportOptions* options);

/* Imports an ONNX model file (binary protobuf). Every unsupported operator is
 * listed in one KILN_UNIMPLEMENTED status; a malformed model gives
 * KILN_INVALID_ARGUMENT naming the node or tensor; a missing file
 * KILN_NOT_FOUND. `options` may be NULL. */
KilnStatus* kiln_model_load_onnx_file(const char* path, const KilnImportOptions* options,
                                      KilnModel** out_model);
/* The same from `size` bytes in memory (copied; the caller keeps `data`). */
KilnStatus* kiln_model_load_onnx_bytes(const void* data, size_t size,
                                       const KilnImportOptions* options, KilnModel** out_model);
/* Parses kiln's text IR (docs/text_format.md) and type-checks it. `text` is
 * NUL-terminated; `source_name` (may be NULL) names it in error messages,
 * which give line and column. A module without a `main` function is a model
 * with no inputs or outputs: it prints and optimizes but does not compile
 * (KILN_INVALID_ARGUMENT). */
KilnStatus* kiln_model_parse_text(const char* text, const char* source_name,
                                  KilnModel** out_model);
/* Reads a model file: ONNX for a ".onnx" name (with `options`), text IR
 * otherwise (`options` unused). A missing file gives KILN_NOT_FOUND. */
KilnStatus* kiln_model_load_file(const char* path, const KilnImportOptions* options,
                                 KilnModel** out_model);
/* Accepts NULL. */
void kiln_model_release(KilnModel* model);

/* What importing the model warned about, one '\n'-terminated line per
 * warning, or "" when nothing: ONNX that ONNX Runtime also accepts (a
 * declared output shape the graph does not compute, an opset newer than
 * kiln's converters, a tensor with both raw_data and a typed field) or that
 * is redundant (an opset listed twice at one version). Text-IR models and
 * models from kiln_model_optimize have none. The text belongs to the model.
 * Thread-safe. */
KilnStatus* kiln_model_warnings(const KilnModel* model, const char** out_text);

/* The model as text IR (docs/text_format.md); with `show_types` != 0 every
 * binding carries its inferred type. malloc'ed; free with kiln_free. */
KilnStatus* kiln_model_print(const KilnModel* model, int32_t show_types, char** out_text);

/* The inputs (parameters of `main`) and outputs (its result, flattened when it
 * is a tuple). Names belong to the model. In `info`, data is NULL, dtype is
 * set, and shape points at ndim dims owned by the model; a dim that is not
 * static is -1. */
KilnStatus* kiln_model_num_inputs(const KilnModel* model, int32_t* out_count);
KilnStatus* kiln_model_num_outputs(const KilnModel* model, int32_t* out_count);
KilnStatus* kiln_model_input_info(const KilnModel* model, int32_t index, const char** out_name,
                                  DLTensor* out_info);
KilnStatus* kiln_model_output_info(const KilnModel* model, int32_t index, DLTensor* out_info);

/* The name of output `index`, the one the compiled artifact gives it: main's
 * `output_names` attribute (the ONNX importer sets it to the graph's output
 * names) when it names every output once, non-empty; "output<index>"
 * otherwise. The name belongs to the model. KILN_OUT_OF_RANGE for a bad
 * index. (API version 3.) */
KilnStatus* kiln_model_output_name(const KilnModel* model, int32_t index, const char** out_name);

/* Dim `axis` of input (output) `index` as the text IR writes it: "224" for a
 * static dim, the dim's name for a symbolic one ("N", "batch"), "?" for a dim
 * of unknown size, an expression of named dims otherwise ("(N * 2)"). The
 * text belongs to the model. KILN_OUT_OF_RANGE for a bad index or axis;
 * KILN_UNIMPLEMENTED when the input is not a tensor. (API version 3.) */
KilnStatus* kiln_model_input_dim_name(const KilnModel* model, int32_t index, int32_t axis,
                                      const char** out_dim);
KilnStatus* kiln_model_output_dim_name(const KilnModel* model, int32_t index, int32_t axis,
                                       const char** out_dim);

/* ----------------------------------------------------------------- optimize */

/* Called after every pass that ran, on the calling thread: the pass's name,
 * whether it changed the module, its wall time, and the module after it as
 * text IR when KilnOptimizeOptions.after_pass_text is non-zero (NULL
 * otherwise). Both strings are borrowed: valid during the call only. */
typedef void (*KilnAfterPassFn)(void* user_data, const char* pass_name, int32_t changed,
                                double elapsed_ms, const char* module_text);

typedef struct {
  size_t struct_size;            /* sizeof(KilnOptimizeOptions) */
  int32_t opt_level;             /* 0-3; the default pipeline runs passes <= it */
  /* An explicit pass list, run in this order instead of the default pipeline
   * (names as kiln_pass_name lists them), or NULL. Every listed pass runs,
   * whatever its level (disabled_passes still wins). */
  const char* const* passes;
  int32_t num_passes;
  /* Passes that run whatever the opt level, and passes that never run. */
  const char* const* required_passes;
  int32_t num_required_passes;
  const char* const* disabled_passes;
  int32_t num_disabled_passes;
  /* Optional per-pass callback (timing, --print-after-all), or NULL. */
  KilnAfterPassFn after_pass;
  void* after_pass_user_data;
  int32_t after_pass_text;       /* != 0: pass the module text to after_pass */
} KilnOptimizeOptions;

/* Sets struct_size and every default: opt_level 3, no lists. (A zero-filled
 * struct with only struct_size set means opt_level 0.) */
void kiln_optimize_options_init(KilnOptimizeOptions* options);

/* Runs graph passes on `model` and returns the result as a new model (the
 * input is unchanged). An unknown pass name gives KILN_NOT_FOUND listing the
 * known ones; a pass failure names the pass. */
KilnStatus* kiln_model_optimize(const KilnModel* model, const KilnOptimizeOptions* options,
                                KilnModel** out_model);

/* The registered graph passes: their number, and the name of pass `index`
 * (a static string; NULL for an index out of range). Thread-safe. */
int32_t kiln_pass_count(void);
const char* kiln_pass_name(int32_t index);

/* ------------------------------------------------------------------ compile */

/* Compile progress (KilnCompileOptions.progress). `phase` is a static string:
 * "passes", "lower", "plan", "codegen" or "link", in that order. Each phase
 * is announced once when it starts, with done = 0 and total = 0, except
 * "lower", whose total is the number of distinct fused functions `main`
 * calls, and "codegen", whose total is the number of kernels (fused functions
 * equal up to their weights share one kernel, so it can be smaller). During
 * "lower" the callback is called again after each fused function is lowered
 * (or found to share a kernel), and during "codegen" after each kernel's
 * machine code is emitted, with done = the functions or kernels finished so
 * far (1 .. total).
 * Threads: phase starts and "lower" calls come from the thread that called
 * kiln_model_compile; the per-kernel calls come from the code-generation
 * threads, which compile shards of the kernels in parallel
 * (KilnCompileOptions.num_threads; with 1, every call is on the calling
 * thread). kiln serializes the calls (never two
 * at once, `done` strictly increasing), so a callback that touches only its
 * own `user_data` needs no lock; whatever else it touches must be safe to use
 * from another thread. It must return quickly and must not call kiln. */
typedef void (*KilnCompileProgressFn)(void* user_data, const char* phase, int32_t done,
                                      int32_t total);

typedef struct {
  size_t struct_size;      /* sizeof(KilnCompileOptions) */
  /* The LLVM target: "llvm" (the host, the default when NULL), or e.g.
   * "llvm -mcpu=skylake-avx512", "llvm -mtriple=aarch64-linux-gnu". */
  const char* target;
  int32_t opt_level;       /* graph passes, 0-3 */
  const char* const* disabled_passes;
  int32_t num_disabled_passes;
  int32_t no_memory_plan;  /* != 0: one storage per tensor, no sharing */
  int32_t num_threads;     /* parallel code generation; 0 = all CPUs */
  /* The C compiler driver used to assemble and link the .so (default "cc"). */
  const char* cc;
  /* Optional progress callback (see KilnCompileProgressFn), or NULL; with
   * kiln_model_emit only phase starts are reported. (API version 3.) */
  KilnCompileProgressFn progress;
  void* progress_user_data;
} KilnCompileOptions;

/* Sets struct_size and every default: opt_level 3; target and cc NULL
 * (meaning "llvm", the host, and "cc"); memory plan on; all CPUs; no
 * progress callback. (A
 * zero-filled struct with only struct_size set means opt_level 0.) */
void kiln_compile_options_init(KilnCompileOptions* options);

/* What a compilation did and how long each phase took. */
typedef struct {
  size_t struct_size;      /* sizeof(KilnCompileReport), set by the caller */
  double passes_ms;
  double lower_ms;
  double plan_ms;
  double codegen_ms;
  double link_ms;
  int32_t num_fused_calls; /* kernel calls in the executor graph */
  int32_t num_kernels;     /* distinct kernels */
  int64_t arena_bytes;     /* a session's shared intermediate storage */
  int64_t naive_bytes;     /* the same without storage sharing */
  uint64_t file_bytes;     /* size of the artifact */
} KilnCompileReport;

/* Compiles `model` for a target and saves the artifact (a .so that
 * kiln_artifact_load loads; docs/artifact.md) at `path`, written atomically
 * (a failure leaves no file). `options` and `report` may be NULL. Inputs must
 * be tensors. A model whose main is a static dataflow graph runs on the graph
 * executor; any other (inputs with symbolic or unknown dims, control flow,
 * closures, ADTs) is compiled for the VM (docs/vm.md): one artifact for
 * every shape the model allows. Needs a C compiler driver (`cc`) at compile
 * time. */
KilnStatus* kiln_model_compile(const KilnModel* model, const KilnCompileOptions* options,
                               const char* path, KilnCompileReport* report);

/* What kiln_model_emit shows: the model at one stage of compilation. */
typedef enum {
  KILN_EMIT_GRAPH_IR = 0,  /* the optimized, fused graph IR (text IR) */
  KILN_EMIT_LOOP_IR = 1,   /* the loop IR of every kernel */
  KILN_EMIT_LLVM_IR = 2,   /* the optimized LLVM IR of every kernel */
  KILN_EMIT_ASSEMBLY = 3   /* the target's assembly of every kernel */
} KilnEmitKind;
/* For a "cuda ..." target the loop IR is the GPU's (thread bindings, shared
 * memory), KILN_EMIT_LLVM_IR gives the kernels' CUDA C (the code generator's
 * output, what NVRTC compiles) and KILN_EMIT_ASSEMBLY their PTX. */

/* Runs compilation as kiln_model_compile would (same options) up to stage
 * `kind` and returns that stage as text (malloc'ed; free with kiln_free); no
 * artifact is written. `report` (may be NULL; struct_size set) receives the
 * times of the phases that ran and the kernel count. An unknown `kind` gives
 * KILN_INVALID_ARGUMENT. */
KilnStatus* kiln_model_emit(const KilnModel* model, const KilnCompileOptions* options,
                            KilnEmitKind kind, char** out_text, KilnCompileReport* report);

/* ------------------------------------------------------------- interpreter */

/* Runs `model`'s main in kiln's reference interpreter, without compiling:
 * every construct of the graph language (control flow, closures, ADTs,
 * references, symbolic shapes), slowly; for checking answers and trying
 * programs. `inputs[i]` is main's parameter i (CPU memory, compact; dtype and
 * rank as the parameter, static dims equal); `num_inputs` must be main's
 * parameter count. On success `*out_outputs` is a malloc'ed array of
 * `*out_num_outputs` DLManagedTensor* (main's result: a tensor, or a tuple's
 * tensors, nested tuples flattened in order): release each with its
 * deleter, then the array with kiln_free. A result that holds an ADT, a
 * closure or a reference gives KILN_UNIMPLEMENTED. */
KilnStatus* kiln_model_evaluate(const KilnModel* model, const DLTensor* const* inputs,
                                int32_t num_inputs, DLManagedTensor*** out_outputs,
                                int32_t* out_num_outputs);

/* ------------------------------------------------------------------- graph */

/* The model's `main` as a Graphviz dot graph (one node per operator call,
 * input, constant and output; edges labelled with tensor types).
 * malloc'ed; free with kiln_free. */
KilnStatus* kiln_model_to_dot(const KilnModel* model, char** out_dot);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* KILN_KILN_H_ */
