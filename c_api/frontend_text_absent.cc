// A build without the text-IR parser (c_api/frontends.h,
// docs/selective_builds.md): parsing says so. Printing is always there.
#include "absl/status/status.h"
#include "c_api/frontends.h"

namespace kiln::capi {
namespace {

absl::Status Absent() {
  return absl::UnimplementedError(
      "the text-IR frontend (.kir parser) is not in this build (a selective build without it; "
      "docs/selective_builds.md): load an ONNX model, or use a build with text IR");
}

}  // namespace

absl::StatusOr<Module> ParseModelText(absl::string_view, const std::string&) { return Absent(); }

absl::StatusOr<Module> ParseModelFile(const std::string&) { return Absent(); }

}  // namespace kiln::capi
