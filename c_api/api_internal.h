// File: c_api/api_internal.h  (private to libkiln: the C++ side of kiln.h)
//
// How a kiln.h function is written: clear its out-parameters, check its
// arguments, then run its C++ body inside Guard, which turns an absl::Status
// into a KilnStatus* and any escaping C++ exception into KILN_INTERNAL /
// KILN_RESOURCE_EXHAUSTED, so nothing C++ crosses the boundary.
//
//   KilnStatus* kiln_model_print(const KilnModel* m, int32_t types, char** out) {
//     if (out) *out = nullptr;
//     if (KilnStatus* st = RequireNonNull("kiln_model_print", {{"model", m}, {"out_text", out}}))
//       return st;
//     return Guard("kiln_model_print", [&]() -> absl::Status { ... });
//   }
#ifndef KILN_C_API_API_INTERNAL_H_
#define KILN_C_API_API_INTERNAL_H_

#include <cstring>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/module.h"
#include "kiln/kiln.h"

// One tensor of a model's signature, as kiln_model_*_info reports it.
struct KilnTensorSignature {
  std::string name;
  DLDataType dtype{0, 0, 0};
  std::vector<int64_t> shape;  // -1 for a dim that is not static
  // Each dim as the text IR writes it ("224", "N", "?", "(N * 2)").
  std::vector<std::string> dim_names;
  bool is_tensor = false;
};

struct KilnModel {
  kiln::Module module;  // type-checked
  std::vector<KilnTensorSignature> inputs;
  std::vector<KilnTensorSignature> outputs;
  bool has_main = false;  // false: a library of functions (prints, optimizes; no compile)
  // What the import warned about, one line each ('\n'-terminated); "" for
  // none (kiln_model_warnings).
  std::string warnings;
};

namespace kiln::capi {

// The status for `s` (NULL when ok), its message prefixed with `function`.
KilnStatus* ToKilnStatus(const char* function, const absl::Status& s);

// KILN_INVALID_ARGUMENT naming the first NULL argument, or NULL.
KilnStatus* RequireNonNull(const char* function,
                           std::initializer_list<std::pair<const char*, const void*>> args);

// Models are in runtime_c's registry of live handles (runtime_c/handles.h,
// KILN_HANDLE_MODEL): PublishModel records one as it is handed out,
// kiln_model_release removes it, and every kiln_model_* call that takes a
// model asks RequireLiveModel first, so a released model (or a pointer kiln
// never made) is refused instead of read.

// KILN_INVALID_ARGUMENT when `model` is not NULL and not a live model, else
// NULL (a NULL model is RequireNonNull's to report).
KilnStatus* RequireLiveModel(const char* function, const KilnModel* model);

// Records `model` as live and hands it to the caller (*out); out of memory
// when the registry cannot grow (the model is then freed).
absl::Status PublishModel(std::unique_ptr<KilnModel> model, KilnModel** out);

// Runs `body`; its status, or a status for an exception it threw.
KilnStatus* Guard(const char* function, const std::function<absl::Status()>& body);

// A malloc'ed copy of `s` (for char** results freed with kiln_free); NULL
// when out of memory.
char* MallocString(const std::string& s);

// Reads a caller's options struct of type T into a zero-filled T, refusing
// sizes this library does not know. `*present` is false for NULL options.
template <typename T>
KilnStatus* ReadOptions(const char* function, const T* options, T* out, bool* present) {
  std::memset(out, 0, sizeof(T));
  *present = options != nullptr;
  if (options == nullptr) return nullptr;
  size_t size = options->struct_size;
  if (size < sizeof(size_t) || size > sizeof(T)) {
    return kiln_status_create(KILN_INVALID_ARGUMENT,
                              "%s: options->struct_size is %zu; this library knows sizes %zu to "
                              "%zu (set it to sizeof the struct, or use the *_options_init "
                              "function)",
                              function, size, sizeof(size_t), sizeof(T));
  }
  std::memcpy(out, options, size);
  return nullptr;
}

// A list of `n` strings from C; each must be non-NULL.
absl::StatusOr<std::vector<std::string>> StringList(const char* what, const char* const* list,
                                                    int32_t n);

// Checks a caller's report struct (struct_size) and zeroes it past
// struct_size; NULL is fine.
KilnStatus* ClearReport(const char* function, KilnCompileReport* report);

}  // namespace kiln::capi

#endif  // KILN_C_API_API_INTERNAL_H_
