// File: tests/onnx/conformance_lib_test.cc
#include "tests/onnx/conformance_lib.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/tensor.h"

namespace kiln::onnx_conformance {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;

template <typename T>
ArrayView View(DataType dtype, std::vector<int64_t> shape, const std::vector<T>& v) {
  ArrayView a;
  a.dtype = dtype;
  a.shape = std::move(shape);
  a.data = v.data();
  return a;
}

const DataType kF32 = DataType::Float(32);

// ----------------------------------------------------------------- compare

TEST(CompareArrays, EqualFloatsPass) {
  std::vector<float> a = {1, 2, 3, 4};
  Comparison c = CompareArrays(View(kF32, {2, 2}, a), View(kF32, {2, 2}, a), Tolerance{});
  EXPECT_TRUE(c.ok);
  EXPECT_THAT(c.message, IsEmpty());
  EXPECT_EQ(c.mismatches, 0);
}

TEST(CompareArrays, WithinRelativeTolerance) {
  std::vector<float> want = {1000, 2, -3};
  std::vector<float> got = {1000.9f, 2.0019f, -3.0029f};  // just under 1e-3 relative
  EXPECT_TRUE(CompareArrays(View(kF32, {3}, got), View(kF32, {3}, want), Tolerance{}).ok);
  std::vector<float> off = {1001.5f, 2, -3};  // 1.5e-3 relative
  Comparison c = CompareArrays(View(kF32, {3}, off), View(kF32, {3}, want), Tolerance{});
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.mismatches, 1);
  EXPECT_THAT(c.message, HasSubstr("[0] = 1001.5, expected 1000"));
  EXPECT_THAT(c.message, HasSubstr("1 of 3 differ"));
  EXPECT_NEAR(c.max_abs_err, 1.5, 1e-9);
  EXPECT_NEAR(c.max_rel_err, 1.5e-3, 1e-9);
}

TEST(CompareArrays, AbsoluteToleranceNearZero) {
  std::vector<float> want = {0, 0};
  std::vector<float> tiny = {5e-8f, -9e-8f};
  EXPECT_TRUE(CompareArrays(View(kF32, {2}, tiny), View(kF32, {2}, want), Tolerance{}).ok);
  std::vector<float> big = {0, 2e-7f};
  Comparison c = CompareArrays(View(kF32, {2}, big), View(kF32, {2}, want), Tolerance{});
  EXPECT_FALSE(c.ok);
  EXPECT_TRUE(std::isinf(c.max_rel_err));
  // A looser tolerance from tolerances.txt accepts it.
  Tolerance loose;
  loose.atol = 1e-6;
  EXPECT_TRUE(CompareArrays(View(kF32, {2}, big), View(kF32, {2}, want), loose).ok);
}

TEST(CompareArrays, MultiDimIndexOfFirstMismatch) {
  std::vector<float> want = {0, 1, 2, 3, 4, 5};
  std::vector<float> got = {0, 1, 2, 3, 4.5f, 6};
  Comparison c = CompareArrays(View(kF32, {2, 3}, got), View(kF32, {2, 3}, want), Tolerance{});
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.mismatches, 2);
  EXPECT_THAT(c.message, HasSubstr("[1, 1] = 4.5, expected 4"));
  EXPECT_THAT(c.message, HasSubstr("2 of 6 differ"));
  EXPECT_THAT(c.message, HasSubstr("max abs err 1"));
  EXPECT_THAT(c.message, HasSubstr("max rel err 0.2"));
}

TEST(CompareArrays, NanEqualsNan) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> want = {nan, 1};
  std::vector<float> same = {nan, 1};
  EXPECT_TRUE(CompareArrays(View(kF32, {2}, same), View(kF32, {2}, want), Tolerance{}).ok);
  std::vector<float> number = {0, 1};
  Comparison c = CompareArrays(View(kF32, {2}, number), View(kF32, {2}, want), Tolerance{});
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.message, HasSubstr("= 0, expected nan"));
  std::vector<float> want_num = {1, 1};
  std::vector<float> got_nan = {nan, 1};
  EXPECT_FALSE(
      CompareArrays(View(kF32, {2}, got_nan), View(kF32, {2}, want_num), Tolerance{}).ok);
}

TEST(CompareArrays, InfinitiesMustMatch) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> want = {inf, -inf};
  std::vector<double> same = {inf, -inf};
  const DataType f64 = DataType::Float(64);
  EXPECT_TRUE(CompareArrays(View(f64, {2}, same), View(f64, {2}, want), Tolerance{}).ok);
  std::vector<double> flipped = {inf, inf};
  EXPECT_FALSE(CompareArrays(View(f64, {2}, flipped), View(f64, {2}, want), Tolerance{}).ok);
  std::vector<double> finite = {1e308, -inf};
  EXPECT_FALSE(CompareArrays(View(f64, {2}, finite), View(f64, {2}, want), Tolerance{}).ok);
}

TEST(CompareArrays, IntegersExact) {
  const DataType i64 = DataType::Int(64);
  std::vector<int64_t> want = {1000000, -5};
  std::vector<int64_t> off = {1000001, -5};  // within rtol 1e-3, but integers are exact
  Comparison c = CompareArrays(View(i64, {2}, off), View(i64, {2}, want), Tolerance{});
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.message, HasSubstr("[0] = 1000001, expected 1000000"));
  EXPECT_TRUE(CompareArrays(View(i64, {2}, want), View(i64, {2}, want), Tolerance{}).ok);

  const DataType u8 = DataType::UInt(8);
  std::vector<uint8_t> a = {255, 0};
  std::vector<uint8_t> b = {254, 0};
  c = CompareArrays(View(u8, {2}, a), View(u8, {2}, b), Tolerance{});
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.message, HasSubstr("= 255, expected 254"));

  const DataType u64 = DataType::UInt(64);
  std::vector<uint64_t> big = {std::numeric_limits<uint64_t>::max()};
  std::vector<uint64_t> zero = {0};
  c = CompareArrays(View(u64, {1}, big), View(u64, {1}, zero), Tolerance{});
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.message, HasSubstr("= 18446744073709551615, expected 0"));
}

TEST(CompareArrays, BoolsExact) {
  const DataType b = DataType::Bool();
  std::vector<uint8_t> want = {1, 0, 1};
  std::vector<uint8_t> got = {1, 1, 1};
  Comparison c = CompareArrays(View(b, {3}, got), View(b, {3}, want), Tolerance{});
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.message, HasSubstr("[1] = true, expected false"));
  EXPECT_TRUE(CompareArrays(View(b, {3}, want), View(b, {3}, want), Tolerance{}).ok);
}

TEST(CompareArrays, Float16AndBFloat16) {
  const DataType f16 = DataType::Float(16);
  std::vector<uint16_t> want = {FloatToHalf(1.5f), FloatToHalf(-2.0f)};
  std::vector<uint16_t> got = {FloatToHalf(1.5f), FloatToHalf(-2.5f)};
  Comparison c = CompareArrays(View(f16, {2}, got), View(f16, {2}, want), Tolerance{});
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.message, HasSubstr("[1] = -2.5, expected -2"));
  EXPECT_TRUE(CompareArrays(View(f16, {2}, want), View(f16, {2}, want), Tolerance{}).ok);
  const DataType bf16 = DataType::BFloat16();
  std::vector<uint16_t> bw = {FloatToBFloat16(3.0f)};
  std::vector<uint16_t> bg = {FloatToBFloat16(3.5f)};
  EXPECT_FALSE(CompareArrays(View(bf16, {1}, bg), View(bf16, {1}, bw), Tolerance{}).ok);
}

TEST(CompareArrays, ScalarAndEmpty) {
  std::vector<float> want = {2};
  std::vector<float> got = {1.5f};
  Comparison c = CompareArrays(View(kF32, {}, got), View(kF32, {}, want), Tolerance{});
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.message, HasSubstr("(scalar) = 1.5, expected 2"));
  ArrayView empty;
  empty.dtype = kF32;
  empty.shape = {0, 3};
  EXPECT_TRUE(CompareArrays(empty, empty, Tolerance{}).ok);
}

TEST(CompareArrays, DtypeAndShapeMismatch) {
  std::vector<float> f = {1, 2};
  std::vector<double> d = {1, 2};
  Comparison c = CompareArrays(View(DataType::Float(64), {2}, d), View(kF32, {2}, f), Tolerance{});
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.message, "dtype float64, expected float32");
  c = CompareArrays(View(kF32, {1, 2}, f), View(kF32, {2, 1}, f), Tolerance{});
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.message, "shape [1, 2], expected [2, 1]");
}

TEST(CompareArrays, BadInputsDoNotCrash) {
  ArrayView a;
  a.dtype = kF32;
  a.shape = {-1};
  EXPECT_FALSE(CompareArrays(a, a, Tolerance{}).ok);
  a.shape = {4};
  a.data = nullptr;
  EXPECT_THAT(CompareArrays(a, a, Tolerance{}).message, HasSubstr("no data"));
  ArrayView v;
  v.dtype = DataType(DTypeCode::kOpaqueHandle, 64);
  v.shape = {1};
  int64_t x = 0;
  v.data = &x;
  EXPECT_THAT(CompareArrays(v, v, Tolerance{}).message, HasSubstr("cannot compare"));
}

// -------------------------------------------------------------- tolerances

TEST(ParseTolerances, ReadsCasesAndReasons) {
  absl::StatusOr<ToleranceMap> m = ParseTolerances(
      "# a comment\n"
      "\n"
      "test_gelu_tanh_2  1e-2 1e-5  # tanh approximation in the reference\n"
      "node/test_erf 0.01 0  # erf polynomial\n");
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->size(), 2u);
  EXPECT_DOUBLE_EQ(m->at("test_gelu_tanh_2").rtol, 1e-2);
  EXPECT_DOUBLE_EQ(m->at("test_gelu_tanh_2").atol, 1e-5);
  EXPECT_EQ(m->at("test_gelu_tanh_2").reason, "tanh approximation in the reference");
  EXPECT_DOUBLE_EQ(m->at("node/test_erf").atol, 0);

  Tolerance t = ToleranceFor(*m, "node", "test_erf");
  EXPECT_DOUBLE_EQ(t.rtol, 0.01);
  t = ToleranceFor(*m, "pytorch-operator", "test_erf");  // suite-qualified only
  EXPECT_DOUBLE_EQ(t.rtol, kDefaultRtol);
  t = ToleranceFor(*m, "anything", "test_gelu_tanh_2");
  EXPECT_DOUBLE_EQ(t.rtol, 1e-2);
  t = ToleranceFor(*m, "node", "test_relu");
  EXPECT_DOUBLE_EQ(t.rtol, kDefaultRtol);
  EXPECT_DOUBLE_EQ(t.atol, kDefaultAtol);
}

TEST(ParseTolerances, Errors) {
  auto error = [](const char* text) {
    absl::StatusOr<ToleranceMap> m = ParseTolerances(text);
    EXPECT_FALSE(m.ok()) << text;
    return m.ok() ? std::string() : std::string(m.status().message());
  };
  EXPECT_THAT(error("test_a 1e-3  # two fields\n"), HasSubstr("line 1: 2 fields"));
  EXPECT_THAT(error("\ntest_a x 1e-7  # bad\n"), HasSubstr("line 2: bad rtol 'x'"));
  EXPECT_THAT(error("test_a 1e-3 -1  # negative\n"), HasSubstr("bad atol"));
  EXPECT_THAT(error("test_a 1e-3 nan  # nan\n"), HasSubstr("bad atol"));
  EXPECT_THAT(error("test_a 1e-3 1e-7\n"), HasSubstr("no reason"));
  EXPECT_THAT(error("test_a 1e-3 1e-7 # r\ntest_a 1 1 # r\n"), HasSubstr("listed twice"));
  EXPECT_THAT(error("test_a 1e999 0 # overflow\n"), HasSubstr("bad rtol"));
  EXPECT_TRUE(ParseTolerances("").ok());
}

// ------------------------------------------------------------ pass counts

TEST(Counts, ParseAndFormat) {
  absl::StatusOr<SuiteCounts> c = ParseCounts("# header\nnode 820\n\nsimple  23 # all\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_THAT(*c, ElementsAre(Pair("node", 820), Pair("simple", 23)));
  std::string text = FormatCounts(*c, "line one\nline two");
  EXPECT_EQ(text, "# line one\n# line two\nnode 820\nsimple 23\n");
  absl::StatusOr<SuiteCounts> back = ParseCounts(text);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, *c);
}

TEST(Counts, ParseErrors) {
  EXPECT_FALSE(ParseCounts("node\n").ok());
  EXPECT_FALSE(ParseCounts("node -1\n").ok());
  EXPECT_FALSE(ParseCounts("node 1.5\n").ok());
  EXPECT_FALSE(ParseCounts("node 1 2\n").ok());
  EXPECT_FALSE(ParseCounts("node 99999999999999999999999\n").ok());
  absl::StatusOr<SuiteCounts> dup = ParseCounts("node 1\nnode 2\n");
  ASSERT_FALSE(dup.ok());
  EXPECT_THAT(std::string(dup.status().message()), HasSubstr("line 2"));
}

TEST(Ratchet, DropFailsNamingTheSuite) {
  SuiteCounts recorded = {{"node", 820}, {"simple", 23}};
  RatchetReport r = CheckRatchet(recorded, {{"node", 819}, {"simple", 23}});
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.dropped.size(), 1u);
  EXPECT_THAT(r.dropped[0], HasSubstr("node: 819 cases pass, 820 recorded"));
  EXPECT_THAT(r.raised, IsEmpty());
}

TEST(Ratchet, EqualOrRaisedPasses) {
  SuiteCounts recorded = {{"node", 820}, {"simple", 23}};
  RatchetReport same = CheckRatchet(recorded, recorded);
  EXPECT_TRUE(same.ok);
  EXPECT_THAT(same.raised, IsEmpty());
  RatchetReport up = CheckRatchet(recorded, {{"node", 830}, {"simple", 23}});
  EXPECT_TRUE(up.ok);
  ASSERT_EQ(up.raised.size(), 1u);
  EXPECT_THAT(up.raised[0], HasSubstr("node: 830 cases pass, 820 recorded (10 more)"));
}

TEST(Ratchet, UnrecordedAndNotRunSuites) {
  RatchetReport r = CheckRatchet({{"node", 5}}, {{"simple", 3}});
  EXPECT_TRUE(r.ok);
  ASSERT_EQ(r.raised.size(), 1u);
  EXPECT_THAT(r.raised[0], HasSubstr("not recorded"));
  ASSERT_EQ(r.not_run.size(), 1u);
  EXPECT_THAT(r.not_run[0], HasSubstr("node"));
  // A suite that ran with nothing passing against a recorded count fails.
  RatchetReport zero = CheckRatchet({{"node", 5}}, {{"node", 0}});
  EXPECT_FALSE(zero.ok);
}

TEST(PassCounts, EverySuiteAppears) {
  std::vector<CaseResult> results = {
      {"node", "a", Outcome::kPass, "", 0},
      {"node", "b", Outcome::kFail, "x", 0},
      {"node", "c", Outcome::kPass, "", 0},
      {"simple", "d", Outcome::kUnsupported, "y", 0},
  };
  EXPECT_THAT(PassCounts(results, {"node", "simple", "pytorch-operator"}),
              ElementsAre(Pair("node", 2), Pair("pytorch-operator", 0), Pair("simple", 0)));
}

// ---------------------------------------------------------- result lines

TEST(ResultLine, RoundTrip) {
  CaseResult r;
  r.suite = "node";
  r.name = "test_loop11";
  r.outcome = Outcome::kUnsupported;
  r.reason = "Loop (opset 11, node 'loop0')\twith\na newline";
  r.seconds = 1.25;
  r.passes_frozen = true;
  std::string line = EncodeResult(r);
  EXPECT_EQ(std::count(line.begin(), line.end(), '\n'), 1);
  absl::StatusOr<CaseResult> back = DecodeResult(line);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->suite, "node");
  EXPECT_EQ(back->name, "test_loop11");
  EXPECT_EQ(back->outcome, Outcome::kUnsupported);
  EXPECT_EQ(back->reason, "Loop (opset 11, node 'loop0') with a newline");
  EXPECT_DOUBLE_EQ(back->seconds, 1.25);
  EXPECT_TRUE(back->passes_frozen);
  r.passes_frozen = false;
  back = DecodeResult(EncodeResult(r));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_FALSE(back->passes_frozen);
}

TEST(ResultLine, Garbage) {
  EXPECT_FALSE(DecodeResult("").ok());
  EXPECT_FALSE(DecodeResult("a\tb\tc").ok());
  EXPECT_FALSE(DecodeResult("node\tt\tmaybe\t1\t0\t").ok());
  EXPECT_FALSE(DecodeResult("node\tt\tpass\tx\t0\t").ok());
  EXPECT_FALSE(DecodeResult("node\tt\tpass\t-1\t0\t").ok());
  EXPECT_FALSE(DecodeResult("\tt\tpass\t1\t0\t").ok());
  EXPECT_FALSE(DecodeResult("node\tt\tpass\t1\t").ok());        // no frozen flag
  EXPECT_FALSE(DecodeResult("node\tt\tpass\t1\tyes\t").ok());  // a bad one
  EXPECT_TRUE(DecodeResult("node\tt\tpass\t1\t0\t").ok());
  EXPECT_EQ(ParseOutcome("fail"), Outcome::kFail);
  EXPECT_FALSE(ParseOutcome("FAIL").has_value());
}

// ------------------------------------------------------------------ report

TEST(Reasons, ShortenAndNormalize) {
  EXPECT_EQ(ShortenReason("a\n  b\tc  ", 100), "a b c");
  EXPECT_EQ(ShortenReason("abcdefghij", 8), "abcde...");
  EXPECT_EQ(NormalizeReason("Loop (opset 11, node 'loop0')"), "Loop (opset N, node '*')");
  EXPECT_EQ(NormalizeReason("set 2: output 0 'y' [3] = 1.5, expected 2"),
            "output N '*' [N] = N, expected N");
  EXPECT_EQ(NormalizeReason("the model's opset 'x'"), "the model's opset '*'");
  // Digits inside words stay.
  EXPECT_EQ(NormalizeReason("nn.conv2d on Conv1d"), "nn.conv2d on Conv1d");
}

TEST(Reasons, KeysSplitOperatorLists) {
  CaseResult r{"node", "t", Outcome::kUnsupported,
               "unsupported operators: Loop (opset 11, node 'a'), Scan (opset 9, node 'b'), "
               "Loop (opset 11, node 'c')",
               0};
  EXPECT_THAT(ReasonKeys(r), ElementsAre("unsupported operator: Loop",
                                         "unsupported operator: Scan"));
  CaseResult d{"node", "t", Outcome::kUnsupported,
               "unsupported operators: Conv (opset 6, node #0: 3-D convolution (kiln has 1-D "
               "and 2-D)), Pad (opset 11, node 'p': mode 'wrap')",
               0};
  EXPECT_THAT(ReasonKeys(d), ElementsAre("unsupported operator: Conv: 3-D convolution",
                                         "unsupported operator: Pad: mode '*'"));
  CaseResult seq{"simple", "t", Outcome::kUnsupported,
                 "sequences: SequenceAt (opset 12), SequenceEmpty (opset 12); strings: input 'x'",
                 0};
  EXPECT_THAT(ReasonKeys(seq), ElementsAre("unsupported: sequences", "unsupported: strings"));
  CaseResult f{"node", "t", Outcome::kFail, "compile: lowering 'x' failed", 0};
  EXPECT_THAT(ReasonKeys(f), ElementsAre("fail: compile: lowering '*' failed"));
  CaseResult p{"node", "t", Outcome::kPass, "", 0};
  EXPECT_THAT(ReasonKeys(p), IsEmpty());
  CaseResult v{"node", "t", Outcome::kUnsupported,
               absl::StrCat(kNeedsValuePrefix,
                            "'shape' at compile time: Reshape (node #3): input 1 ('shape') must "
                            "be known"),
               0};
  EXPECT_THAT(ReasonKeys(v),
              ElementsAre("unsupported: an input needed as a value at compile time: Reshape"));
}

TEST(Report, TopReasonsAndTable) {
  std::vector<CaseResult> results = {
      {"node", "test_a", Outcome::kPass, "", 0.1},
      {"node", "test_b", Outcome::kUnsupported, "unsupported operator: Loop (opset 11, node 'x')",
       0.1},
      {"node", "test_c", Outcome::kUnsupported, "unsupported operator: Loop (opset 13, node 'y')",
       0.1},
      {"node", "test_d", Outcome::kFail, "output 0 [1] = 2, expected 3 | pipe", 0.1},
      {"simple", "test_e", Outcome::kPass, "", 0.1},
      {"node", "test_f", Outcome::kUnsupported,
       absl::StrCat(kNeedsValuePrefix, "'shape' at compile time: ..."), 0.1, true},
  };
  auto top = TopReasons(results, 10);
  ASSERT_GE(top.size(), 2u);
  EXPECT_EQ(top[0], std::make_pair(std::string("unsupported operator: Loop"), int64_t{2}));

  TableOptions o;
  o.suites = {"node", "simple"};
  o.tolerances["test_d"] = Tolerance{1e-2, 1e-5, "why"};
  std::string table = RenderTable(results, o);
  EXPECT_THAT(table, HasSubstr("# ONNX conformance"));
  // test_f passes only frozen: not a pass, counted in the last column.
  EXPECT_THAT(table, HasSubstr("| node | 1 | 1 | 3 | 5 | 20.0% | 1 |"));
  EXPECT_THAT(table, HasSubstr("| simple | 1 | 0 | 0 | 1 | 100.0% | 0 |"));
  EXPECT_THAT(table, HasSubstr("| **all** | 2 | 1 | 3 | 6 | 33.3% | 1 |"));
  EXPECT_THAT(table, HasSubstr("| test_f | unsupported (pass if frozen) | needs the value"));
  EXPECT_THAT(PassCounts(results, o.suites), ElementsAre(Pair("node", 1), Pair("simple", 1)));
  EXPECT_THAT(table, HasSubstr("| test_d | 0.01 | 1e-05 | why |"));
  EXPECT_THAT(table, HasSubstr("| test_d | fail | output 0 [1] = 2, expected 3 \\| pipe |"));
  EXPECT_THAT(table, HasSubstr("| 2 | unsupported operator: Loop |"));
  EXPECT_THAT(table, HasSubstr("rtol 0.001, atol 1e-07"));

  std::string summary = RenderSummary(results, o.suites);
  EXPECT_THAT(summary, HasSubstr("node"));
  EXPECT_THAT(summary, HasSubstr("all"));
}

}  // namespace
}  // namespace kiln::onnx_conformance
