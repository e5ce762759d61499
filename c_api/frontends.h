// File: c_api/frontends.h
//
// The model frontends behind kiln.h's loaders, one implementation file each,
// chosen by the build (docs/selective_builds.md, c_api/variants.bzl):
// frontend_onnx.cc / frontend_onnx_absent.cc and frontend_text.cc /
// frontend_text_absent.cc. A build without a frontend links its _absent file,
// whose functions say "... is not in this build" (Unimplemented), and none of
// the frontend's code.
#ifndef KILN_C_API_FRONTENDS_H_
#define KILN_C_API_FRONTENDS_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "frontends/onnx/importer.h"
#include "ir/module.h"

namespace kiln::capi {

// frontends/onnx's ImportOnnxFile / ImportOnnxBytes.
absl::StatusOr<Module> ImportOnnxFile(const std::string& path,
                                      const onnx_frontend::ImportOptions& options);
absl::StatusOr<Module> ImportOnnxBytes(absl::string_view bytes,
                                       const onnx_frontend::ImportOptions& options);

// The text IR parser (ir/parser.h ParseModule, ir/text_file.h ParseModuleFile).
absl::StatusOr<Module> ParseModelText(absl::string_view text, const std::string& source_name);
absl::StatusOr<Module> ParseModelFile(const std::string& path);

}  // namespace kiln::capi

#endif  // KILN_C_API_FRONTENDS_H_
