#include "tests/vm/c_api_test_util.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace kiln::testing {

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return absl::StrCat(dir != nullptr ? dir : "/tmp", "/", name);
}

std::string TakeStatus(KilnStatus* st) {
  if (st == nullptr) return "";
  std::string m =
      absl::StrCat(kiln_status_code_name(kiln_status_code(st)), ": ", kiln_status_message(st));
  kiln_status_free(st);
  return m;
}

DLTensor ToDLTensor(const HostTensor& t) {
  DLTensor d{};
  d.data = const_cast<void*>(t.raw_data());
  d.device = {kDLCPU, 0};
  d.ndim = t.ndim();
  d.dtype = {static_cast<uint8_t>(t.dtype().code()), static_cast<uint8_t>(t.dtype().bits()),
             static_cast<uint16_t>(t.dtype().lanes())};
  d.shape = const_cast<int64_t*>(t.shape().data());
  return d;
}

std::string CompileText(const std::string& text, const std::string& path,
                        const std::string& source) {
  KilnModel* model = nullptr;
  std::string e = TakeStatus(kiln_model_parse_text(text.c_str(), source.c_str(), &model));
  if (!e.empty()) return absl::StrCat("parse: ", e);
  e = TakeStatus(kiln_model_compile(model, nullptr, path.c_str(), nullptr));
  kiln_model_release(model);
  return e.empty() ? "" : absl::StrCat("compile: ", e);
}

}  // namespace kiln::testing
