// File: tests/fuzz/tir_parse_fuzz.cc
//
// Fuzz target: the loop-IR parser (ir/tir_parser.h ParsePrimFuncs).
// Properties: nothing crashes or aborts; every function that parses prints
// (ir/tir_printer.h ToText), and the printed text parses again to the same
// text (the round trip ir/tir_parser.h promises). Seeds:
// lowering/passes/testdata/*.tir.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "ir/tir_parser.h"
#include "ir/tir_printer.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_files.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  auto funcs = kiln::tir::ParsePrimFuncs(text, "<fuzz>");
  if (!funcs.ok()) {
    KILN_FUZZ_CHECK(!funcs.status().message().empty(), "an error without a message");
    kiln_fuzz::Count("parse_error");
    return 0;
  }
  kiln_fuzz::Count("parsed");
  for (const kiln::tir::PrimFunc& f : *funcs) {
    std::string printed = kiln::tir::ToText(f);
    auto again = kiln::tir::ParsePrimFunc(printed, "<printed>");
    KILN_FUZZ_CHECK(again.ok(), "the printer's output does not parse: %s\n--- printed:\n%s",
                    std::string(again.status().message()).c_str(), printed.c_str());
    std::string reprinted = kiln::tir::ToText(*again);
    KILN_FUZZ_CHECK(reprinted == printed, "round trip differs:\n--- printed:\n%s\n--- reprinted:\n%s",
                    printed.c_str(), reprinted.c_str());
  }
  return 0;
}
