// File: tests/fuzz/onnx_import_fuzz.cc
//
// Fuzz target: the ONNX importer (frontends/onnx/importer.h ImportOnnxBytes:
// protobuf parsing, header checks, every converter, constant folding, type
// inference) and the printer on what imports.
// Properties: nothing crashes or aborts whatever the bytes; an error has a
// message. Seeds: the ONNX backend node tests' model.onnx files
// (libonnx-testdata) and examples/resnet_mini.onnx.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "frontends/onnx/importer.h"
#include "ir/printer.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_files.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> warnings;
  kiln::onnx_frontend::ImportOptions options;
  options.warnings = &warnings;
  // External data must not be read from wherever the test runs.
  options.external_data_dir = "/nonexistent-kiln-fuzz";
  auto m = kiln::onnx_frontend::ImportOnnxBytes(bytes, options);
  if (!m.ok()) {
    KILN_FUZZ_CHECK(!m.status().message().empty(), "an error without a message");
    kiln_fuzz::Count(m.status().code() == absl::StatusCode::kUnimplemented ? "unsupported" : "import_error");
    return 0;
  }
  kiln_fuzz::Count("imported");
  kiln::PrintOptions print_options;
  print_options.show_types = true;
  print_options.emit_metadata = false;  // constants can be large
  (void)kiln::PrintModule(*m, print_options);
  return 0;
}
