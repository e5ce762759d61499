// The text-IR frontend of a build that has it (c_api/frontends.h).
#include "c_api/frontends.h"
#include "ir/parser.h"
#include "ir/text_file.h"

namespace kiln::capi {

absl::StatusOr<Module> ParseModelText(absl::string_view text, const std::string& source_name) {
  return ParseModule(text, source_name);
}

absl::StatusOr<Module> ParseModelFile(const std::string& path) { return ParseModuleFile(path); }

}  // namespace kiln::capi
