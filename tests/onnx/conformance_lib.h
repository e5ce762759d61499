// File: tests/onnx/conformance_lib.h
//
// The logic of the ONNX conformance runner (run_conformance, conformance.cc)
// that does not need a model: comparing an output with the expected tensor at
// a tolerance, the tolerance file (tests/onnx/tolerances.txt), the recorded
// pass counts and the ratchet (tests/onnx/passing.txt), the result line a
// case's child process sends to the runner, and the markdown table
// (docs/onnx_conformance.md). Nothing here aborts on bad input: parse errors
// are statuses naming the line.
#ifndef KILN_TESTS_ONNX_CONFORMANCE_LIB_H_
#define KILN_TESTS_ONNX_CONFORMANCE_LIB_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/dtype.h"

namespace kiln::onnx_conformance {

// ------------------------------------------------------------------ results

enum class Outcome { kPass, kFail, kUnsupported };

// How the reason of a case begins when its import needs the value of a graph
// input (Options::freeze_inputs off); ReasonKeys groups them by operator.
inline constexpr char kNeedsValuePrefix[] = "needs the value of graph input(s) ";

// "pass", "fail", "unsupported".
const char* OutcomeName(Outcome outcome);
std::optional<Outcome> ParseOutcome(absl::string_view text);

struct CaseResult {
  std::string suite;  // "node", "pytorch-converted", ...
  std::string name;   // "test_relu"
  Outcome outcome = Outcome::kFail;
  std::string reason;  // empty for a pass
  double seconds = 0;  // wall time of the case (import, compile, runs)
  // Not a pass, but it passes when the graph inputs the importer needs as
  // values are frozen to the data set's (a column of its own, not in the ratchet).
  bool passes_frozen = false;
};

// One line, "suite\tname\toutcome\tseconds\tfrozen\treason\n" (frozen: 1 when
// passes_frozen, else 0; tabs, newlines and
// other control characters in the fields become spaces): what a case's child
// process writes to the runner's pipe.
std::string EncodeResult(const CaseResult& result);
// The inverse (a trailing newline is accepted); InvalidArgument for anything
// else.
absl::StatusOr<CaseResult> DecodeResult(absl::string_view line);

// ---------------------------------------------------------------- tolerances

inline constexpr double kDefaultRtol = 1e-3;
inline constexpr double kDefaultAtol = 1e-7;

struct Tolerance {
  double rtol = kDefaultRtol;
  double atol = kDefaultAtol;
  std::string reason;  // why a case needs its own (empty for the default)
};

// Case name ("test_foo", or "suite/test_foo") -> tolerance.
using ToleranceMap = std::map<std::string, Tolerance>;

// tests/onnx/tolerances.txt: one case per line, `case_name rtol atol  # reason`;
// blank lines and lines starting with '#' are ignored. rtol and atol are
// finite, non-negative numbers; a case may appear once; the reason is
// required (a tolerance without a reason is not allowed).
absl::StatusOr<ToleranceMap> ParseTolerances(absl::string_view text);

// The tolerance of `suite`/`name`: "suite/name" first, then "name", else the
// default.
Tolerance ToleranceFor(const ToleranceMap& map, absl::string_view suite, absl::string_view name);

// -------------------------------------------------------------- comparison

// A dense, row-major array in host memory (a HostTensor or a runtime output).
struct ArrayView {
  DataType dtype;
  std::vector<int64_t> shape;
  const void* data = nullptr;
};

struct Comparison {
  bool ok = false;
  // Empty when ok; otherwise e.g. "[0, 2] = 1.5, expected 2 (3 of 60 differ;
  // max abs err 0.5, max rel err 0.25)", "shape [2, 3], expected [3, 2]",
  // "dtype float64, expected float32".
  std::string message;
  int64_t mismatches = 0;
  double max_abs_err = 0;  // over the finite pairs
  double max_rel_err = 0;  // |a - e| / |e| (inf where e == 0 and a != 0)
};

// Floating point (float16/32/64, bfloat16): |a - e| <= atol + rtol * |e|
// (numpy's allclose, ONNX's backend test rule); NaN equals NaN; an infinity
// must be the same infinity. Integers and booleans: exactly equal. The dtypes
// and shapes must be equal.
Comparison CompareArrays(const ArrayView& actual, const ArrayView& expected,
                         const Tolerance& tolerance);

// "[2, 3]".
std::string ShapeString(const std::vector<int64_t>& shape);

// ------------------------------------------------------------ pass counts

// Suite -> number of passing cases.
using SuiteCounts = std::map<std::string, int64_t>;

// tests/onnx/passing.txt: lines `suite count` (count >= 0; a suite once);
// blank lines and '#' comments are ignored.
absl::StatusOr<SuiteCounts> ParseCounts(absl::string_view text);
// The same format, with `header` (may be several lines) as '#' comments first.
std::string FormatCounts(const SuiteCounts& counts, absl::string_view header);

struct RatchetReport {
  bool ok = true;
  // One line per suite whose count dropped below the recorded one.
  std::vector<std::string> dropped;
  // One line per suite whose count went up (or that was not recorded).
  std::vector<std::string> raised;
  // Recorded suites that were not measured (not run); not an error.
  std::vector<std::string> not_run;
};

// Compares the measured counts of the suites that ran with the recorded ones.
RatchetReport CheckRatchet(const SuiteCounts& recorded, const SuiteCounts& measured);

// Pass counts per suite of `results` (every suite in `suites` appears, 0 if
// nothing passed).
SuiteCounts PassCounts(const std::vector<CaseResult>& results,
                       const std::vector<std::string>& suites);

// ------------------------------------------------------------------ report

// `reason` on one line, at most `max_chars` characters (cut with "...").
std::string ShortenReason(absl::string_view reason, size_t max_chars);

// A grouping key for a reason: quoted names ('...', "...") become '*',
// numbers N, and the data-set prefix is dropped, so that "unsupported: Loop
// (opset 11, node 'a')" and "... node 'b')" group together. Where a reason
// lists several unsupported operators ("unsupported: ... operators: A (...),
// B (...)"), ReasonKeys gives one key per operator, and one per feature
// category for "sequences: ...; strings: ...".
std::string NormalizeReason(absl::string_view reason);

// Model features the runner finds unsupported by itself (before the importer
// says more); an unsupported reason lists them as "category: item, item; ...".
inline constexpr const char* kFeatureCategories[] = {
    "control flow",   "sequences",       "strings",           "optional types", "maps",
    "sparse tensors", "complex numbers", "training operators",
};

std::vector<std::string> ReasonKeys(const CaseResult& result);

// The `n` most common reason keys of the non-passing results, most common
// first (ties by key), with their counts.
std::vector<std::pair<std::string, int64_t>> TopReasons(const std::vector<CaseResult>& results,
                                                        size_t n);

struct TableOptions {
  std::vector<std::string> suites;  // in this order
  ToleranceMap tolerances;
  std::string command;  // how the table was produced (shown in the header)
  double wall_seconds = 0;
  int jobs = 0;
  size_t top_reasons = 15;
};

// docs/onnx_conformance.md: a header (how it was produced, the tolerances),
// totals per suite, the tolerance overrides, the most common reasons, and one
// table per suite with a row per case (name, result, reason).
std::string RenderTable(const std::vector<CaseResult>& results, const TableOptions& options);

// The summary printed to stdout: per suite pass/fail/unsupported/total.
std::string RenderSummary(const std::vector<CaseResult>& results,
                          const std::vector<std::string>& suites);

}  // namespace kiln::onnx_conformance

#endif  // KILN_TESTS_ONNX_CONFORMANCE_LIB_H_
