// File: tests/onnx/conformance_lib.cc
#include "tests/onnx/conformance_lib.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "ir/tensor.h"

namespace kiln::onnx_conformance {
namespace {

// Control characters (tabs, newlines, ...) -> spaces.
std::string OneLine(absl::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  return out;
}

// Lines of a text file, with the line number (1-based), comments removed and
// whitespace stripped; blank lines skipped. `comment` receives what followed
// the first '#' (stripped).
struct Line {
  int number = 0;
  std::string content;
  std::string comment;
};

std::vector<Line> SplitLines(absl::string_view text) {
  std::vector<Line> lines;
  int number = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++number;
    Line line;
    line.number = number;
    size_t hash = raw.find('#');
    absl::string_view content = raw;
    if (hash != absl::string_view::npos) {
      content = raw.substr(0, hash);
      line.comment = std::string(absl::StripAsciiWhitespace(raw.substr(hash + 1)));
    }
    content = absl::StripAsciiWhitespace(content);
    if (content.empty()) continue;
    line.content = std::string(content);
    lines.push_back(std::move(line));
  }
  return lines;
}

std::string FormatNumber(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return absl::StrFormat("%.9g", v);
}

// Element i of `a` as a double (floating point) or an int64 (integers,
// booleans; unsigned 64-bit values keep their bits).
enum class Kind { kFloat, kInt, kUnsupported };

Kind KindOf(DataType t) {
  if (t.lanes() != 1) return Kind::kUnsupported;
  switch (t.code()) {
    case DTypeCode::kFloat:
      return (t.bits() == 16 || t.bits() == 32 || t.bits() == 64) ? Kind::kFloat
                                                                  : Kind::kUnsupported;
    case DTypeCode::kBFloat:
      return t.bits() == 16 ? Kind::kFloat : Kind::kUnsupported;
    case DTypeCode::kInt:
    case DTypeCode::kUInt:
      return (t.bits() == 8 || t.bits() == 16 || t.bits() == 32 || t.bits() == 64)
                 ? Kind::kInt
                 : Kind::kUnsupported;
    case DTypeCode::kBool:
      return t.bits() == 8 ? Kind::kInt : Kind::kUnsupported;
    default:
      return Kind::kUnsupported;
  }
}

template <typename T>
T Load(const void* data, int64_t i) {
  T v{};
  std::memcpy(&v, static_cast<const char*>(data) + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return v;
}

double FloatAt(const ArrayView& a, int64_t i) {
  if (a.dtype.code() == DTypeCode::kBFloat) return BFloat16ToFloat(Load<uint16_t>(a.data, i));
  switch (a.dtype.bits()) {
    case 16:
      return HalfToFloat(Load<uint16_t>(a.data, i));
    case 32:
      return Load<float>(a.data, i);
    default:
      return Load<double>(a.data, i);
  }
}

int64_t IntAt(const ArrayView& a, int64_t i) {
  bool is_signed = a.dtype.code() == DTypeCode::kInt;
  switch (a.dtype.bits()) {
    case 8:
      return is_signed ? Load<int8_t>(a.data, i) : Load<uint8_t>(a.data, i);
    case 16:
      return is_signed ? Load<int16_t>(a.data, i) : Load<uint16_t>(a.data, i);
    case 32:
      return is_signed ? Load<int32_t>(a.data, i) : Load<uint32_t>(a.data, i);
    default:
      return Load<int64_t>(a.data, i);
  }
}

std::string IntString(const ArrayView& a, int64_t v) {
  if (a.dtype.code() == DTypeCode::kBool) return v != 0 ? "true" : "false";
  if (a.dtype.code() == DTypeCode::kUInt && a.dtype.bits() == 64) {
    return absl::StrCat(static_cast<uint64_t>(v));
  }
  return absl::StrCat(v);
}

// Flat index -> "[i, j, k]" (row-major).
std::string IndexString(const std::vector<int64_t>& shape, int64_t flat) {
  std::vector<int64_t> index(shape.size(), 0);
  for (size_t d = shape.size(); d-- > 0;) {
    int64_t extent = shape[d] > 0 ? shape[d] : 1;
    index[d] = flat % extent;
    flat /= extent;
  }
  return absl::StrCat("[", absl::StrJoin(index, ", "), "]");
}

// Product of the dims, or -1 on a negative dim or overflow.
int64_t NumElements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return -1;
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) return -1;
    n *= d;
  }
  return n;
}

bool ParseDouble(absl::string_view s, double* out) {
  std::string copy(s);
  if (copy.empty()) return false;
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(copy.c_str(), &end);
  if (end == nullptr || *end != '\0' || errno == ERANGE) return false;
  *out = v;
  return true;
}

}  // namespace

// ------------------------------------------------------------------ results

const char* OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPass:
      return "pass";
    case Outcome::kFail:
      return "fail";
    case Outcome::kUnsupported:
      return "unsupported";
  }
  return "fail";
}

std::optional<Outcome> ParseOutcome(absl::string_view text) {
  if (text == "pass") return Outcome::kPass;
  if (text == "fail") return Outcome::kFail;
  if (text == "unsupported") return Outcome::kUnsupported;
  return std::nullopt;
}

std::string EncodeResult(const CaseResult& result) {
  return absl::StrCat(OneLine(result.suite), "\t", OneLine(result.name), "\t",
                      OutcomeName(result.outcome), "\t", absl::StrFormat("%.3f", result.seconds),
                      "\t", result.passes_frozen ? "1" : "0", "\t", OneLine(result.reason), "\n");
}

absl::StatusOr<CaseResult> DecodeResult(absl::string_view line) {
  absl::ConsumeSuffix(&line, "\n");
  std::vector<absl::string_view> fields = absl::StrSplit(line, absl::MaxSplits('\t', 5));
  if (fields.size() != 6) {
    return absl::InvalidArgumentError(
        absl::StrCat("result line has ", fields.size(), " fields, expected 6: '",
                     ShortenReason(line, 200), "'"));
  }
  CaseResult r;
  r.suite = std::string(fields[0]);
  r.name = std::string(fields[1]);
  std::optional<Outcome> outcome = ParseOutcome(fields[2]);
  if (!outcome.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("result line: unknown outcome '", ShortenReason(fields[2], 40), "'"));
  }
  r.outcome = *outcome;
  double seconds = 0;
  if (!ParseDouble(fields[3], &seconds) || !std::isfinite(seconds) || seconds < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("result line: bad seconds '", ShortenReason(fields[3], 40), "'"));
  }
  r.seconds = seconds;
  if (fields[4] != "0" && fields[4] != "1") {
    return absl::InvalidArgumentError(
        absl::StrCat("result line: bad frozen flag '", ShortenReason(fields[4], 40), "'"));
  }
  r.passes_frozen = fields[4] == "1";
  r.reason = std::string(fields[5]);
  if (r.suite.empty() || r.name.empty()) {
    return absl::InvalidArgumentError("result line: empty suite or case name");
  }
  return r;
}

// ---------------------------------------------------------------- tolerances

absl::StatusOr<ToleranceMap> ParseTolerances(absl::string_view text) {
  ToleranceMap map;
  for (const Line& line : SplitLines(text)) {
    std::vector<absl::string_view> fields =
        absl::StrSplit(line.content, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    auto error = [&](absl::string_view what) {
      return absl::InvalidArgumentError(
          absl::StrCat("tolerances line ", line.number, ": ", what,
                       " (expected `case_name rtol atol  # reason`)"));
    };
    if (fields.size() != 3) return error(absl::StrCat(fields.size(), " fields"));
    Tolerance t;
    if (!ParseDouble(fields[1], &t.rtol) || !std::isfinite(t.rtol) || t.rtol < 0) {
      return error(absl::StrCat("bad rtol '", fields[1], "'"));
    }
    if (!ParseDouble(fields[2], &t.atol) || !std::isfinite(t.atol) || t.atol < 0) {
      return error(absl::StrCat("bad atol '", fields[2], "'"));
    }
    if (line.comment.empty()) return error("no reason given");
    t.reason = line.comment;
    std::string name(fields[0]);
    if (map.count(name) != 0) return error(absl::StrCat("case '", name, "' listed twice"));
    map.emplace(std::move(name), std::move(t));
  }
  return map;
}

Tolerance ToleranceFor(const ToleranceMap& map, absl::string_view suite, absl::string_view name) {
  auto it = map.find(absl::StrCat(suite, "/", name));
  if (it != map.end()) return it->second;
  it = map.find(std::string(name));
  if (it != map.end()) return it->second;
  return Tolerance{};
}

// -------------------------------------------------------------- comparison

std::string ShapeString(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

Comparison CompareArrays(const ArrayView& actual, const ArrayView& expected,
                         const Tolerance& tolerance) {
  Comparison c;
  if (actual.dtype != expected.dtype) {
    c.message = absl::StrCat("dtype ", actual.dtype.ToString(), ", expected ",
                             expected.dtype.ToString());
    return c;
  }
  if (actual.shape != expected.shape) {
    c.message = absl::StrCat("shape ", ShapeString(actual.shape), ", expected ",
                             ShapeString(expected.shape));
    return c;
  }
  Kind kind = KindOf(expected.dtype);
  if (kind == Kind::kUnsupported) {
    c.message = absl::StrCat("cannot compare dtype ", expected.dtype.ToString());
    return c;
  }
  int64_t n = NumElements(expected.shape);
  if (n < 0) {
    c.message = absl::StrCat("bad shape ", ShapeString(expected.shape));
    return c;
  }
  if (n > 0 && (actual.data == nullptr || expected.data == nullptr)) {
    c.message = "no data";
    return c;
  }
  int64_t first = -1;
  std::string first_actual;
  std::string first_expected;
  for (int64_t i = 0; i < n; ++i) {
    bool equal = true;
    if (kind == Kind::kInt) {
      int64_t a = IntAt(actual, i);
      int64_t e = IntAt(expected, i);
      if (a != e) {
        equal = false;
        if (first < 0) {
          first_actual = IntString(actual, a);
          first_expected = IntString(expected, e);
        }
        // Errors as doubles, for the report only.
        double ad = static_cast<double>(a) - static_cast<double>(e);
        c.max_abs_err = std::max(c.max_abs_err, std::fabs(ad));
        c.max_rel_err = std::max(c.max_rel_err, e == 0 ? std::numeric_limits<double>::infinity()
                                                       : std::fabs(ad / static_cast<double>(e)));
      }
    } else {
      double a = FloatAt(actual, i);
      double e = FloatAt(expected, i);
      if (std::isnan(a) || std::isnan(e)) {
        equal = std::isnan(a) && std::isnan(e);
      } else if (std::isinf(a) || std::isinf(e)) {
        equal = a == e;
      } else {
        double abs_err = std::fabs(a - e);
        equal = abs_err <= tolerance.atol + tolerance.rtol * std::fabs(e);
        c.max_abs_err = std::max(c.max_abs_err, abs_err);
        if (abs_err > 0) {
          c.max_rel_err = std::max(
              c.max_rel_err,
              e == 0 ? std::numeric_limits<double>::infinity() : abs_err / std::fabs(e));
        }
      }
      if (!equal && first < 0) {
        first_actual = FormatNumber(a);
        first_expected = FormatNumber(e);
      }
    }
    if (!equal) {
      ++c.mismatches;
      if (first < 0) first = i;
    }
  }
  if (c.mismatches == 0) {
    c.ok = true;
    return c;
  }
  std::string where = expected.shape.empty() ? "(scalar)" : IndexString(expected.shape, first);
  c.message = absl::StrCat(where, " = ", first_actual, ", expected ", first_expected, " (",
                           c.mismatches, " of ", n, " differ; max abs err ",
                           FormatNumber(c.max_abs_err), ", max rel err ",
                           FormatNumber(c.max_rel_err), ")");
  return c;
}

// ------------------------------------------------------------ pass counts

absl::StatusOr<SuiteCounts> ParseCounts(absl::string_view text) {
  SuiteCounts counts;
  for (const Line& line : SplitLines(text)) {
    std::vector<absl::string_view> fields =
        absl::StrSplit(line.content, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    auto error = [&](absl::string_view what) {
      return absl::InvalidArgumentError(absl::StrCat("pass counts line ", line.number, ": ", what,
                                                     " (expected `suite count`)"));
    };
    if (fields.size() != 2) return error(absl::StrCat(fields.size(), " fields"));
    int64_t count = 0;
    if (!absl::SimpleAtoi(fields[1], &count) || count < 0) {
      return error(absl::StrCat("bad count '", fields[1], "'"));
    }
    std::string suite(fields[0]);
    if (counts.count(suite) != 0) return error(absl::StrCat("suite '", suite, "' listed twice"));
    counts[suite] = count;
  }
  return counts;
}

std::string FormatCounts(const SuiteCounts& counts, absl::string_view header) {
  std::string out;
  if (!header.empty()) {
    for (absl::string_view line : absl::StrSplit(header, '\n')) {
      absl::StrAppend(&out, line.empty() ? "#" : absl::StrCat("# ", line), "\n");
    }
  }
  for (const auto& [suite, count] : counts) absl::StrAppend(&out, suite, " ", count, "\n");
  return out;
}

RatchetReport CheckRatchet(const SuiteCounts& recorded, const SuiteCounts& measured) {
  RatchetReport report;
  for (const auto& [suite, count] : measured) {
    auto it = recorded.find(suite);
    int64_t before = it == recorded.end() ? 0 : it->second;
    if (count < before) {
      report.ok = false;
      report.dropped.push_back(absl::StrCat(suite, ": ", count, " cases pass, ", before,
                                            " recorded (", before - count, " fewer)"));
    } else if (count > before || it == recorded.end()) {
      report.raised.push_back(absl::StrCat(suite, ": ", count, " cases pass, ", before,
                                           it == recorded.end() ? " (not recorded)" : " recorded",
                                           " (", count - before, " more)"));
    }
  }
  for (const auto& [suite, count] : recorded) {
    if (measured.count(suite) == 0) {
      report.not_run.push_back(absl::StrCat(suite, " (", count, " recorded)"));
    }
  }
  return report;
}

SuiteCounts PassCounts(const std::vector<CaseResult>& results,
                       const std::vector<std::string>& suites) {
  SuiteCounts counts;
  for (const std::string& s : suites) counts[s] = 0;
  for (const CaseResult& r : results) {
    if (r.outcome == Outcome::kPass) ++counts[r.suite];
  }
  return counts;
}

// ------------------------------------------------------------------ report

std::string ShortenReason(absl::string_view reason, size_t max_chars) {
  std::string one = OneLine(reason);
  // Collapse runs of spaces.
  std::string out;
  out.reserve(one.size());
  for (char c : one) {
    if (c == ' ' && !out.empty() && out.back() == ' ') continue;
    out.push_back(c);
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (out.size() > max_chars) {
    size_t keep = max_chars > 3 ? max_chars - 3 : 0;
    // Do not cut a UTF-8 sequence.
    while (keep > 0 && (static_cast<unsigned char>(out[keep]) & 0xC0) == 0x80) --keep;
    out = absl::StrCat(out.substr(0, keep), "...");
  }
  return out;
}

std::string NormalizeReason(absl::string_view reason) {
  std::string r = OneLine(reason);
  absl::string_view view = r;
  // "set 2: ..." prefixes (data set index) do not matter for grouping.
  if (absl::StartsWith(view, "set ")) {
    size_t colon = view.find(": ");
    if (colon != absl::string_view::npos) view.remove_prefix(colon + 2);
  }
  std::string out;
  out.reserve(view.size());
  for (size_t i = 0; i < view.size(); ++i) {
    char c = view[i];
    // A quote opens a quoted name unless it follows a letter ("model's").
    bool opens = c == '"' || (c == '\'' && (out.empty() || !std::isalnum(static_cast<unsigned char>(out.back()))));
    if (opens) {
      size_t end = view.find(c, i + 1);
      if (end != absl::string_view::npos) {
        absl::StrAppend(&out, std::string(1, c), "*", std::string(1, c));
        i = end;
        continue;
      }
    }
    bool starts_number =
        std::isdigit(static_cast<unsigned char>(c)) &&
        (out.empty() || !(std::isalnum(static_cast<unsigned char>(out.back())) ||
                          out.back() == '_'));
    if (starts_number) {
      // A number (with '.', exponent) that is not part of a word ("Conv2d").
      size_t j = i;
      while (j < view.size() &&
             (std::isdigit(static_cast<unsigned char>(view[j])) || view[j] == '.' ||
              view[j] == 'e' || view[j] == 'E' ||
              ((view[j] == '-' || view[j] == '+') && j > i &&
               (view[j - 1] == 'e' || view[j - 1] == 'E')))) {
        ++j;
      }
      if (j >= view.size() || !(std::isalpha(static_cast<unsigned char>(view[j])) ||
                                view[j] == '_')) {
        out.push_back('N');
        i = j - 1;
        continue;
      }
    }
    out.push_back(c);
  }
  return ShortenReason(out, 160);
}

namespace {

// Quoted names ('x', "x") -> '*'.
std::string ElideQuotes(absl::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    bool opens = c == '"' || (c == '\'' && (out.empty() ||
                                            !std::isalnum(static_cast<unsigned char>(out.back()))));
    if (opens) {
      size_t end = text.find(c, i + 1);
      if (end != absl::string_view::npos) {
        absl::StrAppend(&out, std::string(1, c), "*", std::string(1, c));
        i = end;
        continue;
      }
    }
    out.push_back(c);
  }
  return out;
}

// "Loop (opset 11, node 'a'), Conv (opset 6, node #0: 3-D convolution (...))"
// -> {"Loop", ""}, {"Conv", "3-D convolution"}: the op names and the
// converter's reason (up to its first parenthesis), when the reason lists
// unsupported operators; otherwise empty.
std::vector<std::pair<std::string, std::string>> UnsupportedOps(absl::string_view reason) {
  std::vector<std::pair<std::string, std::string>> ops;
  size_t pos = reason.find("perator");  // "operator(s):", "Operators:"
  if (pos == absl::string_view::npos) return ops;
  size_t colon = reason.find(':', pos);
  if (colon == absl::string_view::npos) return ops;
  absl::string_view list = reason.substr(colon + 1);
  int depth = 0;
  std::string current;
  std::string inside;  // the text of the first parenthesis after the name
  auto flush = [&] {
    std::string name(absl::StripAsciiWhitespace(current));
    std::string detail;
    // "opset 11, node #0: 3-D convolution (kiln has ...)" -> "3-D convolution".
    size_t sep = inside.find(": ");
    if (sep != std::string::npos) {
      detail = inside.substr(sep + 2);
      size_t paren = detail.find(" (");
      if (paren != std::string::npos) detail.resize(paren);
      detail = ElideQuotes(absl::StripAsciiWhitespace(detail));
    }
    current.clear();
    inside.clear();
    if (name.empty()) return;
    // Only identifier-like op names ("Loop", "ai.onnx.ml::TreeEnsemble").
    for (char c : name) {
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == ':')) {
        return;
      }
    }
    ops.emplace_back(name, detail);
  };
  for (char c : list) {
    if (c == '(' || c == '[') {
      if (depth > 0) inside.push_back(c);
      ++depth;
    } else if (c == ')' || c == ']') {
      depth = std::max(0, depth - 1);
      if (depth > 0) inside.push_back(c);
    } else if (depth == 0 && (c == ',' || c == ';')) {
      flush();
    } else if (depth == 0) {
      current.push_back(c);
    } else {
      inside.push_back(c);
    }
  }
  flush();
  return ops;
}

}  // namespace

std::vector<std::string> ReasonKeys(const CaseResult& result) {
  std::vector<std::string> keys;
  if (result.outcome == Outcome::kPass) return keys;
  if (result.outcome == Outcome::kUnsupported &&
      absl::StartsWith(result.reason, kNeedsValuePrefix)) {
    // "needs the value of graph input(s) 'x' at compile time: Reshape (node #3): ..."
    absl::string_view rest = result.reason;
    size_t at = rest.find(" at compile time: ");
    std::string op;
    if (at != absl::string_view::npos) {
      rest.remove_prefix(at + std::strlen(" at compile time: "));
      op = std::string(rest.substr(0, rest.find_first_of(" :(")));
    }
    keys.push_back(absl::StrCat("unsupported: an input needed as a value at compile time",
                                op.empty() ? "" : ": ", op));
    return keys;
  }
  if (result.outcome == Outcome::kUnsupported) {
    for (absl::string_view part : absl::StrSplit(result.reason, "; ")) {
      for (const char* category : kFeatureCategories) {
        if (absl::StartsWith(part, absl::StrCat(category, ": "))) {
          keys.push_back(absl::StrCat("unsupported: ", category));
        }
      }
    }
    if (!keys.empty()) return keys;
    std::set<std::string> seen;
    for (const auto& [op, detail] : UnsupportedOps(result.reason)) {
      std::string key = absl::StrCat("unsupported operator: ", op);
      if (!detail.empty()) absl::StrAppend(&key, ": ", detail);
      if (seen.insert(key).second) keys.push_back(std::move(key));
    }
    if (!keys.empty()) return keys;
  }
  keys.push_back(absl::StrCat(OutcomeName(result.outcome), ": ", NormalizeReason(result.reason)));
  return keys;
}

std::vector<std::pair<std::string, int64_t>> TopReasons(const std::vector<CaseResult>& results,
                                                        size_t n) {
  std::map<std::string, int64_t> counts;
  for (const CaseResult& r : results) {
    for (const std::string& key : ReasonKeys(r)) ++counts[key];
  }
  std::vector<std::pair<std::string, int64_t>> sorted(counts.begin(), counts.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  if (sorted.size() > n) sorted.resize(n);
  return sorted;
}

namespace {

std::string MarkdownCell(absl::string_view text) {
  std::string out;
  for (char c : OneLine(text)) {
    if (c == '|') {
      out += "\\|";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

struct Totals {
  int64_t pass = 0;
  int64_t fail = 0;
  int64_t unsupported = 0;
  int64_t frozen = 0;  // not passes; they pass with frozen inputs
  int64_t total() const { return pass + fail + unsupported; }
  void Add(const CaseResult& r) {
    if (r.outcome == Outcome::kPass) ++pass;
    if (r.outcome == Outcome::kFail) ++fail;
    if (r.outcome == Outcome::kUnsupported) ++unsupported;
    if (r.outcome != Outcome::kPass && r.passes_frozen) ++frozen;
  }
  void Add(const Totals& t) {
    pass += t.pass;
    fail += t.fail;
    unsupported += t.unsupported;
    frozen += t.frozen;
  }
};

std::map<std::string, Totals> TotalsBySuite(const std::vector<CaseResult>& results,
                                            const std::vector<std::string>& suites) {
  std::map<std::string, Totals> totals;
  for (const std::string& s : suites) totals[s];
  for (const CaseResult& r : results) totals[r.suite].Add(r);
  return totals;
}

std::string Percent(int64_t part, int64_t whole) {
  if (whole == 0) return "-";
  return absl::StrFormat("%.1f%%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

std::string Produced(const TableOptions& options) {
  std::string out = absl::StrCat(
      "- Produced by `",
      options.command.empty() ? "tests/onnx/update_conformance.sh" : options.command, "`");
  if (options.jobs > 0) absl::StrAppend(&out, ", ", options.jobs, " cases at a time");
  if (options.wall_seconds > 0) {
    absl::StrAppend(&out, absl::StrFormat(", in %.0f s", options.wall_seconds));
  }
  absl::StrAppend(&out,
                  "; each case runs in its own process (a crash or a timeout is a `fail` of "
                  "that case only).\n");
  return out;
}

}  // namespace

std::string RenderTable(const std::vector<CaseResult>& results, const TableOptions& options) {
  std::string out;
  absl::StrAppend(
      &out, "# ONNX conformance\n\n",
      "<!-- Generated by tests/onnx/update_conformance.sh (run_conformance --table); do not edit "
      "by hand. -->\n\n",
      "Every case of ONNX 1.12's backend test data (Debian's `libonnx-testdata`: the folders\n",
      "`node`, `pytorch-converted`, `pytorch-operator` and `simple`) is imported with kiln's\n",
      "ONNX frontend (`frontends/onnx`), compiled for `llvm` (the host CPU, opt level 3) into a\n",
      "shared library with `CompileToLibrary`, loaded by the C runtime (`kiln_artifact_load`),\n",
      "and run on every `test_data_set_*`; each output is compared with the stored one.\n\n",
      Produced(options),
      "- Inputs are matched to `input_K.pb` by the graph's input order (initializers skipped),\n",
      "  outputs to `output_K.pb` by the graph's output order. Inputs with symbolic dims are\n",
      "  bound to the data set's shapes (what `kiln compile --input-shape` does; one compile per\n",
      "  distinct set of shapes). Every input is given at run time, as a user gives it: a case\n",
      "  whose import needs the value of a graph input (a Reshape's shape given as an input, ...)\n",
      "  does not pass. Such a case is run a second time with those inputs frozen to the data\n",
      "  set's values (turned into constants, which no user can do through the CLI or the C API);\n",
      "  if it then passes it is counted in the column `pass if frozen`, which is not in the\n",
      "  pass count nor in the ratchet. Test data stored as uint16 where the model declares\n",
      "  bfloat16 (ONNX 1.12 writes bfloat16 tensors that way) is read as bfloat16.\n",
      "- Tolerance: `|actual - expected| <= atol + rtol * |expected|` with rtol ",
      FormatNumber(kDefaultRtol), ", atol ", FormatNumber(kDefaultAtol),
      " (ONNX's own defaults);\n",
      "  NaN equals NaN, infinities must match, integers and booleans must be equal; dtypes and\n",
      "  shapes must be equal. Cases listed in `tests/onnx/tolerances.txt` use their own\n",
      "  tolerance (below, with the reason).\n",
      "- `pass`: every output of every data set matches. `fail`: a wrong value (the first\n",
      "  mismatch, how many differ, the max abs/rel error), a wrong shape or dtype, an import,\n",
      "  compile or run error, a crash or a timeout. `unsupported`: what kiln does not do yet\n",
      "  (operators without a converter, control flow, sequences, strings, optional types,\n",
      "  training operators, what lowering reports as unimplemented).\n",
      "- The pass counts are recorded in `tests/onnx/passing.txt`; `//tests/onnx:conformance_test`\n",
      "  fails when one drops (a ratchet). After an improvement, run\n",
      "  `tests/onnx/update_conformance.sh` to rewrite this file and raise the recorded counts.\n\n");

  // Totals.
  std::map<std::string, Totals> totals = TotalsBySuite(results, options.suites);
  absl::StrAppend(&out,
                  "## Totals\n\n| suite | pass | fail | unsupported | total | pass rate | pass if "
                  "frozen (not counted) |\n",
                  "|---|---:|---:|---:|---:|---:|---:|\n");
  Totals all;
  for (const std::string& suite : options.suites) {
    const Totals& t = totals[suite];
    all.Add(t);
    absl::StrAppend(&out, "| ", MarkdownCell(suite), " | ", t.pass, " | ", t.fail, " | ",
                    t.unsupported, " | ", t.total(), " | ", Percent(t.pass, t.total()), " | ",
                    t.frozen, " |\n");
  }
  absl::StrAppend(&out, "| **all** | ", all.pass, " | ", all.fail, " | ", all.unsupported, " | ",
                  all.total(), " | ", Percent(all.pass, all.total()), " | ", all.frozen,
                  " |\n\n");

  // Tolerance overrides.
  absl::StrAppend(&out, "## Tolerance overrides (`tests/onnx/tolerances.txt`)\n\n");
  if (options.tolerances.empty()) {
    absl::StrAppend(&out, "None: every case uses the default tolerance.\n\n");
  } else {
    absl::StrAppend(&out, "| case | rtol | atol | reason |\n|---|---:|---:|---|\n");
    for (const auto& [name, t] : options.tolerances) {
      absl::StrAppend(&out, "| ", MarkdownCell(name), " | ", FormatNumber(t.rtol), " | ",
                      FormatNumber(t.atol), " | ", MarkdownCell(t.reason), " |\n");
    }
    absl::StrAppend(&out, "\n");
  }

  // Most common reasons.
  std::vector<std::pair<std::string, int64_t>> top = TopReasons(results, options.top_reasons);
  if (!top.empty()) {
    absl::StrAppend(&out, "## Most common reasons\n\n",
                    "Non-passing cases grouped by reason (names and numbers elided; a case that "
                    "lists several unsupported operators counts once for each).\n\n",
                    "| cases | reason |\n|---:|---|\n");
    for (const auto& [key, count] : top) {
      absl::StrAppend(&out, "| ", count, " | ", MarkdownCell(key), " |\n");
    }
    absl::StrAppend(&out, "\n");
  }

  // One table per suite.
  for (const std::string& suite : options.suites) {
    const Totals& t = totals[suite];
    absl::StrAppend(&out, "## ", suite, "\n\n", t.pass, " pass, ", t.fail, " fail, ",
                    t.unsupported, " unsupported of ", t.total(), ".\n\n");
    std::vector<const CaseResult*> rows;
    for (const CaseResult& r : results) {
      if (r.suite == suite) rows.push_back(&r);
    }
    std::sort(rows.begin(), rows.end(),
              [](const CaseResult* a, const CaseResult* b) { return a->name < b->name; });
    if (rows.empty()) {
      absl::StrAppend(&out, "No cases.\n\n");
      continue;
    }
    absl::StrAppend(&out, "| case | result | reason |\n|---|---|---|\n");
    for (const CaseResult* r : rows) {
      absl::StrAppend(&out, "| ", MarkdownCell(r->name), " | ", OutcomeName(r->outcome),
                      r->outcome != Outcome::kPass && r->passes_frozen ? " (pass if frozen)" : "",
                      " | ",
                      MarkdownCell(ShortenReason(r->reason, 300)), " |\n");
    }
    absl::StrAppend(&out, "\n");
  }
  return out;
}

std::string RenderSummary(const std::vector<CaseResult>& results,
                          const std::vector<std::string>& suites) {
  std::map<std::string, Totals> totals = TotalsBySuite(results, suites);
  std::string out = absl::StrFormat("%-20s %6s %6s %12s %6s %14s\n", "suite", "pass", "fail",
                                    "unsupported", "total", "pass if frozen");
  Totals all;
  for (const std::string& suite : suites) {
    const Totals& t = totals[suite];
    all.Add(t);
    absl::StrAppend(&out, absl::StrFormat("%-20s %6d %6d %12d %6d %14d\n", suite, t.pass, t.fail,
                                          t.unsupported, t.total(), t.frozen));
  }
  absl::StrAppend(&out, absl::StrFormat("%-20s %6d %6d %12d %6d %14d\n", "all", all.pass,
                                        all.fail, all.unsupported, all.total(), all.frozen));
  return out;
}

}  // namespace kiln::onnx_conformance
