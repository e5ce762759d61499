// A `.kir` file as a Module (text_file.h).
#include "ir/text_file.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/file.h"
#include "ir/parser.h"
#include "ir/status_macros.h"

namespace kiln {

absl::StatusOr<Module> ParseModuleFile(const std::string& path) {
  KILN_ASSIGN_OR_RETURN(std::string text,
                        ReadRegularFile(path, "text-IR file", kMaxTextFileBytes));
  if (text.find('\0') != std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", path,
                     "' is not a text-IR file (it holds a NUL byte; ONNX models need the .onnx "
                     "extension)"));
  }
  return ParseModule(text, path);
}

}  // namespace kiln
