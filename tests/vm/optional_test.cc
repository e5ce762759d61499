// Optionals (ONNX optional values) in and out of a VM artifact through the
// C API: kiln_session_set_input_none, Some inputs set with kiln_session_set_input
// and kiln_session_set_input_sequence, kiln_session_get_output_is_none, a
// lone optional output (main's result made a 1-tuple: Some(empty sequence)
// and None stay apart), and the errors for the wrong kind of call. The
// programs are text IR using the ADT shape the ONNX importer makes
// (convert_optional.cc); expected values are worked out here.
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kiln/kiln.h"
#include "kiln/runtime.h"
#include "tests/vm/c_api_test_util.h"

namespace kiln {
namespace {

using ::kiln::testing::TakeStatus;
using ::kiln::testing::TempPath;



// main(o, x): (Some(o's value + sum(x)) or None; 1 when o has a value, else 0).
constexpr char kTensorProgram[] = R"(#[version = "0.1"]
type Opt {
  OSome(Tensor[(?), float32]),
  ONone,
}

def @main(%o: Opt, %x: Tensor[(2), float32]) -> (Opt, Tensor[(), int64]) {
  match (%o) {
    OSome(%v) => (OSome(add(%v, sum(%x))), 1i64),
    ONone => (ONone(), 0i64),
  }
}
)";

// main(o, c): one optional of a sequence: o as it is when c, else None.
constexpr char kSequenceProgram[] = R"(#[version = "0.1"]
type Seq {
  SCons(Tensor[(?), float32], Seq),
  SNil,
}

type OSeq {
  OSSome(Seq),
  OSNone,
}

def @main(%o: OSeq, %c: Tensor[(), bool]) -> OSeq {
  if (%c) { %o } else { OSNone() }
}
)";

struct Compiled {
  KilnArtifact* art = nullptr;
  KilnSession* s = nullptr;
  ~Compiled() {
    kiln_session_release(s);
    kiln_artifact_release(art);
  }
};

void Compile(const char* program, const std::string& file, Compiled* out) {
  const std::string path = TempPath(file);
  KilnModel* model = nullptr;
  ASSERT_EQ(TakeStatus(kiln_model_parse_text(program, "optional_test", &model)), "");
  ASSERT_EQ(TakeStatus(kiln_model_compile(model, nullptr, path.c_str(), nullptr)), "");
  kiln_model_release(model);
  ASSERT_EQ(TakeStatus(kiln_artifact_load(path.c_str(), &out->art)), "");
  ASSERT_EQ(TakeStatus(kiln_session_create(out->art, nullptr, &out->s)), "");
}

DLTensor F32(std::vector<float>& v, int64_t* shape) {
  shape[0] = static_cast<int64_t>(v.size());
  return DLTensor{v.data(), {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, nullptr, 0};
}

TEST(OptionalIo, TensorSomeAndNoneInAndOut) {
  Compiled c;
  ASSERT_NO_FATAL_FAILURE(Compile(kTensorProgram, "optional_tensor.so", &c));
  EXPECT_EQ(kiln_artifact_input_is_optional(c.art, 0), 1);
  EXPECT_EQ(kiln_artifact_input_is_sequence(c.art, 0), 0);
  EXPECT_EQ(kiln_artifact_input_is_optional(c.art, 1), 0);
  EXPECT_EQ(kiln_artifact_output_is_optional(c.art, 0), 1);
  EXPECT_EQ(kiln_artifact_output_is_optional(c.art, 1), 0);
  EXPECT_EQ(kiln_artifact_input_is_optional(c.art, 9), 0);
  const char* name = nullptr;
  DLTensor info{};
  ASSERT_EQ(TakeStatus(kiln_artifact_input_info(c.art, 0, &name, &info)), "");
  EXPECT_STREQ(name, "o");
  EXPECT_EQ(info.ndim, 1);
  EXPECT_EQ(info.shape[0], -1);

  std::vector<float> x = {0.5f, 1.5f};  // sum 2
  int64_t xs[1];
  DLTensor dx = F32(x, xs);
  ASSERT_EQ(TakeStatus(kiln_session_set_input(c.s, "x", &dx)), "");
  // Some of two lengths, then None, then Some again (the last call wins).
  for (int round = 0; round < 4; ++round) {
    std::vector<float> v = round == 0 ? std::vector<float>{1, 2, 3} : std::vector<float>{4};
    int64_t vs[1];
    DLTensor dv = F32(v, vs);
    const bool none = round == 2;
    if (none) {
      ASSERT_EQ(TakeStatus(kiln_session_set_input_none(c.s, "o")), "");
    } else {
      ASSERT_EQ(TakeStatus(kiln_session_set_input(c.s, "o", &dv)), "");
    }
    ASSERT_EQ(TakeStatus(kiln_session_run(c.s)), "");
    int32_t is_none = -1;
    ASSERT_EQ(TakeStatus(kiln_session_get_output_is_none(c.s, 0, &is_none)), "");
    EXPECT_EQ(is_none, none ? 1 : 0) << round;
    const DLTensor* has = nullptr;
    ASSERT_EQ(TakeStatus(kiln_session_get_output(c.s, 1, &has)), "");
    EXPECT_EQ(*static_cast<const int64_t*>(has->data), none ? 0 : 1) << round;
    const DLTensor* y = nullptr;
    if (none) {
      std::string e = TakeStatus(kiln_session_get_output(c.s, 0, &y));
      EXPECT_NE(e.find("output 0 ('output0') is none"), std::string::npos) << e;
      continue;
    }
    ASSERT_EQ(TakeStatus(kiln_session_get_output(c.s, 0, &y)), "");
    ASSERT_EQ(y->ndim, 1);
    ASSERT_EQ(y->shape[0], static_cast<int64_t>(v.size()));
    for (size_t i = 0; i < v.size(); ++i) {
      EXPECT_FLOAT_EQ(static_cast<const float*>(y->data)[i], v[i] + 2.0f) << round << " " << i;
    }
  }
}

TEST(OptionalIo, WrongKindsAreErrors) {
  Compiled c;
  ASSERT_NO_FATAL_FAILURE(Compile(kTensorProgram, "optional_errors.so", &c));
  std::vector<float> x = {1, 2};
  int64_t xs[1];
  DLTensor dx = F32(x, xs);
  // None for a tensor input; a sequence for an optional of a tensor.
  std::string e = TakeStatus(kiln_session_set_input_none(c.s, "x"));
  EXPECT_NE(e.find("input 'x' is a tensor, not an optional"), std::string::npos) << e;
  e = TakeStatus(kiln_session_set_input_none(c.s, "nope"));
  EXPECT_NE(e.find("nope"), std::string::npos) << e;
  e = TakeStatus(kiln_session_set_input_sequence(c.s, "o", &dx, 1));
  EXPECT_NE(e.find("not a sequence"), std::string::npos) << e;
  // A value of the wrong dtype for the optional.
  std::vector<int32_t> iv = {1, 2};
  int64_t is[1] = {2};
  DLTensor bad{iv.data(), {kDLCPU, 0}, 1, {kDLInt, 32, 1}, is, nullptr, 0};
  e = TakeStatus(kiln_session_set_input(c.s, "o", &bad));
  EXPECT_NE(e.find("input 'o': expected float32[?]"), std::string::npos) << e;
  // Unset, before a run, and outputs that are not optionals.
  ASSERT_EQ(TakeStatus(kiln_session_set_input(c.s, "x", &dx)), "");
  e = TakeStatus(kiln_session_run(c.s));
  EXPECT_NE(e.find("input 'o' was never set"), std::string::npos) << e;
  int32_t is_none = 7;
  e = TakeStatus(kiln_session_get_output_is_none(c.s, 0, &is_none));
  EXPECT_NE(e.find("has not run"), std::string::npos) << e;
  EXPECT_EQ(is_none, 0);
  ASSERT_EQ(TakeStatus(kiln_session_set_input_none(c.s, "o")), "");
  ASSERT_EQ(TakeStatus(kiln_session_run(c.s)), "");
  e = TakeStatus(kiln_session_get_output_is_none(c.s, 1, &is_none));
  EXPECT_NE(e.find("is not an optional"), std::string::npos) << e;
  e = TakeStatus(kiln_session_get_output_is_none(c.s, 2, &is_none));
  EXPECT_NE(e.find("out of range"), std::string::npos) << e;
  e = TakeStatus(kiln_session_get_output_is_none(c.s, 0, nullptr));
  EXPECT_NE(e.find("is_none is NULL"), std::string::npos) << e;
}

// A lone optional-of-sequence output: Some(empty sequence), Some of two
// elements, and None are told apart.
TEST(OptionalIo, LoneOptionalOfASequence) {
  Compiled c;
  ASSERT_NO_FATAL_FAILURE(Compile(kSequenceProgram, "optional_sequence.so", &c));
  EXPECT_EQ(kiln_artifact_input_is_optional(c.art, 0), 1);
  EXPECT_EQ(kiln_artifact_input_is_sequence(c.art, 0), 1);
  EXPECT_EQ(kiln_artifact_output_is_optional(c.art, 0), 1);
  EXPECT_EQ(kiln_artifact_output_is_sequence(c.art, 0), 1);
  std::vector<float> a = {1, 2, 3}, b = {4};
  int64_t as[1], bs[1];
  DLTensor elems[2] = {F32(a, as), F32(b, bs)};
  bool t = true, f = false;  // DLPack type code 6: bool
  DLTensor dt{&t, {kDLCPU, 0}, 0, {6, 8, 1}, nullptr, nullptr, 0};
  DLTensor df{&f, {kDLCPU, 0}, 0, {6, 8, 1}, nullptr, nullptr, 0};
  struct Case {
    int count;      // elements of the Some input; -1: a None input
    bool c;
    int want;       // elements out; -1: None out
  };
  for (const Case& k : {Case{0, true, 0}, Case{2, true, 2}, Case{-1, true, -1}, Case{2, false, -1}}) {
    if (k.count < 0) {
      ASSERT_EQ(TakeStatus(kiln_session_set_input_none(c.s, "o")), "");
    } else {
      ASSERT_EQ(TakeStatus(kiln_session_set_input_sequence(c.s, "o", elems, k.count)), "");
    }
    ASSERT_EQ(TakeStatus(kiln_session_set_input(c.s, "c", k.c ? &dt : &df)), "");
    ASSERT_EQ(TakeStatus(kiln_session_run(c.s)), "");
    int32_t is_none = -1;
    ASSERT_EQ(TakeStatus(kiln_session_get_output_is_none(c.s, 0, &is_none)), "");
    EXPECT_EQ(is_none, k.want < 0 ? 1 : 0) << k.count << " " << k.c;
    int32_t n = -1;
    std::string e = TakeStatus(kiln_session_get_output_sequence_length(c.s, 0, &n));
    if (k.want < 0) {
      EXPECT_NE(e.find("is none"), std::string::npos) << e;
      continue;
    }
    ASSERT_EQ(e, "");
    ASSERT_EQ(n, k.want);
    if (n == 2) {
      const DLTensor* y = nullptr;
      ASSERT_EQ(TakeStatus(kiln_session_get_output_sequence_element(c.s, 0, 1, &y)), "");
      ASSERT_EQ(y->shape[0], 1);
      EXPECT_FLOAT_EQ(static_cast<const float*>(y->data)[0], 4.0f);
    }
  }
}

}  // namespace
}  // namespace kiln
