// File: tests/fuzz/kir_parse_fuzz.cc
//
// Fuzz target: the text-IR parser (ir/parser.h ParseModule) and, on what
// parses, type inference (types/infer_type.h) and the printer.
// Properties: nothing crashes or aborts; a module that parses prints, and its
// printed text parses again (docs/text_format.md: the printer's output is
// always valid input). Seeds: examples/*.kir and the tests' .kir files.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_files.h"
#include "types/infer_type.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<kiln::Module> m = kiln::ParseModule(text, "<fuzz>");
  if (!m.ok()) {
    KILN_FUZZ_CHECK(!m.status().message().empty(), "an error without a message");
    kiln_fuzz::Count("parse_error");
    return 0;
  }
  kiln_fuzz::Count("parsed");
  std::string printed = kiln::PrintModule(*m);
  absl::StatusOr<kiln::Module> again = kiln::ParseModule(printed, "<printed>");
  KILN_FUZZ_CHECK(again.ok(), "the printer's output does not parse: %s\n--- printed:\n%s",
                  std::string(again.status().message()).c_str(), printed.c_str());
  absl::StatusOr<kiln::Module> typed = kiln::types::InferType(*m);
  kiln_fuzz::Count(typed.ok() ? "typed" : "type_error");
  if (typed.ok()) {
    kiln::PrintOptions with_types;
    with_types.show_types = true;
    (void)kiln::PrintModule(*typed, with_types);
  }
  return 0;
}
