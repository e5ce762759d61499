// A build without the ONNX frontend (c_api/frontends.h,
// docs/selective_builds.md): the loaders say so.
#include "absl/status/status.h"
#include "c_api/frontends.h"

namespace kiln::capi {
namespace {

absl::Status Absent() {
  return absl::UnimplementedError(
      "the ONNX frontend is not in this build (a selective build without it; "
      "docs/selective_builds.md): load a text-IR model, or use a build with ONNX");
}

}  // namespace

absl::StatusOr<Module> ImportOnnxFile(const std::string&, const onnx_frontend::ImportOptions&) {
  return Absent();
}

absl::StatusOr<Module> ImportOnnxBytes(absl::string_view, const onnx_frontend::ImportOptions&) {
  return Absent();
}

}  // namespace kiln::capi
