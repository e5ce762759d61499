// File: c_api/api_internal.cc
#include "c_api/api_internal.h"

#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>

#include "absl/strings/str_cat.h"
#include "runtime_c/handles.h"

namespace kiln::capi {

KilnStatus* ToKilnStatus(const char* function, const absl::Status& s) {
  if (s.ok()) return nullptr;
  // absl::StatusCode and KilnStatusCode share their numbering (kiln/status.h);
  // codes the C API does not name map to the nearest it does.
  KilnStatusCode code = KILN_INTERNAL;
  switch (s.code()) {
    case absl::StatusCode::kInvalidArgument:
      code = KILN_INVALID_ARGUMENT;
      break;
    case absl::StatusCode::kNotFound:
      code = KILN_NOT_FOUND;
      break;
    case absl::StatusCode::kAlreadyExists:
      code = KILN_INVALID_ARGUMENT;
      break;
    case absl::StatusCode::kFailedPrecondition:
      code = KILN_FAILED_PRECONDITION;
      break;
    case absl::StatusCode::kOutOfRange:
      code = KILN_OUT_OF_RANGE;
      break;
    case absl::StatusCode::kUnimplemented:
      code = KILN_UNIMPLEMENTED;
      break;
    case absl::StatusCode::kResourceExhausted:
      code = KILN_RESOURCE_EXHAUSTED;
      break;
    case absl::StatusCode::kDataLoss:
      code = KILN_DATA_LOSS;
      break;
    default:
      code = KILN_INTERNAL;
      break;
  }
  return kiln_status_create(code, "%s: %.*s", function, static_cast<int>(s.message().size()),
                            s.message().data());
}

KilnStatus* RequireNonNull(const char* function,
                           std::initializer_list<std::pair<const char*, const void*>> args) {
  for (const auto& [name, value] : args) {
    if (value == nullptr) {
      return kiln_status_create(KILN_INVALID_ARGUMENT, "%s: %s is NULL", function, name);
    }
  }
  return nullptr;
}

KilnStatus* RequireLiveModel(const char* function, const KilnModel* model) {
  if (model == nullptr || kiln_handle_live(KILN_HANDLE_MODEL, model)) return nullptr;
  return kiln_status_create(KILN_INVALID_ARGUMENT,
                            "%s: model %p is not live (used after kiln_model_release, or not "
                            "made by kiln)",
                            function, static_cast<const void*>(model));
}

absl::Status PublishModel(std::unique_ptr<KilnModel> model, KilnModel** out) {
  if (kiln_handle_add(KILN_HANDLE_MODEL, model.get()) != 0) {
    return absl::ResourceExhaustedError("out of memory (recording the model's handle)");
  }
  *out = model.release();
  return absl::OkStatus();
}

KilnStatus* Guard(const char* function, const std::function<absl::Status()>& body) {
  try {
    return ToKilnStatus(function, body());
  } catch (const std::bad_alloc&) {
    return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "%s: out of memory", function);
  } catch (const std::exception& e) {
    return kiln_status_create(KILN_INTERNAL, "%s: internal error: %s", function, e.what());
  } catch (...) {
    return kiln_status_create(KILN_INTERNAL, "%s: internal error (unknown exception)", function);
  }
}

absl::StatusOr<std::vector<std::string>> StringList(const char* what, const char* const* list,
                                                    int32_t n) {
  std::vector<std::string> out;
  if (n < 0) return absl::InvalidArgumentError(absl::StrCat(what, ": negative count ", n));
  if (n > 0 && list == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(what, " is NULL but its count is ", n));
  }
  for (int32_t i = 0; i < n; ++i) {
    if (list[i] == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(what, "[", i, "] is NULL"));
    }
    out.emplace_back(list[i]);
  }
  return out;
}

KilnStatus* ClearReport(const char* function, KilnCompileReport* report) {
  if (report == nullptr) return nullptr;
  size_t size = report->struct_size;
  if (size < sizeof(size_t) || size > sizeof(KilnCompileReport)) {
    return kiln_status_create(KILN_INVALID_ARGUMENT,
                              "%s: report->struct_size is %zu; set it to "
                              "sizeof(KilnCompileReport) (%zu)",
                              function, size, sizeof(KilnCompileReport));
  }
  std::memset(reinterpret_cast<char*>(report) + sizeof(size_t), 0, size - sizeof(size_t));
  return nullptr;
}

char* MallocString(const std::string& s) {
  char* p = static_cast<char*>(std::malloc(s.size() + 1));
  if (p == nullptr) return nullptr;
  std::memcpy(p, s.data(), s.size());
  p[s.size()] = '\0';
  return p;
}

}  // namespace kiln::capi
