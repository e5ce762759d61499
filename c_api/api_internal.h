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

#include <functional>
#include <initializer_list>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "kiln/status.h"

namespace kiln::capi {

// The status for `s` (NULL when ok), its message prefixed with `function`.
KilnStatus* ToKilnStatus(const char* function, const absl::Status& s);

// KILN_INVALID_ARGUMENT naming the first NULL argument, or NULL.
KilnStatus* RequireNonNull(const char* function,
                           std::initializer_list<std::pair<const char*, const void*>> args);

// Runs `body`; its status, or a status for an exception it threw.
KilnStatus* Guard(const char* function, const std::function<absl::Status()>& body);

// A malloc'ed copy of `s` (for char** results freed with kiln_free); NULL
// when out of memory.
char* MallocString(const std::string& s);

}  // namespace kiln::capi

#endif  // KILN_C_API_API_INTERNAL_H_
