// The ONNX frontend of a build that has it (c_api/frontends.h).
#include "c_api/frontends.h"
#include "frontends/onnx/importer.h"

namespace kiln::capi {

absl::StatusOr<Module> ImportOnnxFile(const std::string& path,
                                      const onnx_frontend::ImportOptions& options) {
  return onnx_frontend::ImportOnnxFile(path, options);
}

absl::StatusOr<Module> ImportOnnxBytes(absl::string_view bytes,
                                       const onnx_frontend::ImportOptions& options) {
  return onnx_frontend::ImportOnnxBytes(bytes, options);
}

}  // namespace kiln::capi
