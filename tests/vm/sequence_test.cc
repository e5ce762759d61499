// Sequences of tensors (ONNX sequences) in and out of a VM artifact through
// the C API: kiln_session_set_input_sequence, the output's length and
// elements, the errors for the wrong kind of value, and elements of other
// dtypes or ranks. The program is text IR using the list ADT the ONNX
// importer makes (convert_sequence.cc); expected values are worked out here.
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



// main(s, x): (each element + x's sum, in reverse order; the length).
constexpr char kProgram[] = R"(#[version = "0.1"]
type Seq {
  SCons(Tensor[(?), float32], Seq),
  SNil,
}

def @main(%s: Seq, %x: Tensor[(2), float32]) -> (Seq, Tensor[(), int64]) {
  let %rev: fn (Seq, Seq) -> Seq = fn (%q: Seq, %acc: Seq) -> Seq {
    match (%q) {
      SCons(%h, %t) => %rev(%t, SCons(add(%h, sum(%x)), %acc)),
      SNil => %acc,
    }
  };
  let %len: fn (Seq) -> Tensor[(), int64] = fn (%q: Seq) -> Tensor[(), int64] {
    match (%q) {
      SCons(%h, %t) => add(%len(%t), 1i64),
      SNil => 0i64,
    }
  };
  (%rev(%s, SNil()), %len(%s))
}
)";

class SequenceIo : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string path = TempPath("sequence_io.so");
    KilnModel* model = nullptr;
    ASSERT_EQ(TakeStatus(kiln_model_parse_text(kProgram, "sequence_test", &model)), "");
    ASSERT_EQ(TakeStatus(kiln_model_compile(model, nullptr, path.c_str(), nullptr)), "");
    kiln_model_release(model);
    ASSERT_EQ(TakeStatus(kiln_artifact_load(path.c_str(), &art_)), "");
    ASSERT_EQ(TakeStatus(kiln_session_create(art_, nullptr, &s_)), "");
  }
  void TearDown() override {
    kiln_session_release(s_);
    kiln_artifact_release(art_);
  }
  KilnArtifact* art_ = nullptr;
  KilnSession* s_ = nullptr;
};

DLTensor F32(std::vector<float>& v, int64_t* shape) {
  shape[0] = static_cast<int64_t>(v.size());
  return DLTensor{v.data(), {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, nullptr, 0};
}

TEST_F(SequenceIo, ElementsOfDifferentLengthsInAndOut) {
  EXPECT_EQ(kiln_artifact_input_is_sequence(art_, 0), 1);
  EXPECT_EQ(kiln_artifact_input_is_sequence(art_, 1), 0);
  EXPECT_EQ(kiln_artifact_output_is_sequence(art_, 0), 1);
  EXPECT_EQ(kiln_artifact_output_is_sequence(art_, 1), 0);
  EXPECT_EQ(kiln_artifact_input_is_sequence(art_, 7), 0);
  const char* name = nullptr;
  DLTensor info{};
  ASSERT_EQ(TakeStatus(kiln_artifact_input_info(art_, 0, &name, &info)), "");
  EXPECT_STREQ(name, "s");
  EXPECT_EQ(info.ndim, 1);  // an element's
  EXPECT_EQ(info.shape[0], -1);

  std::vector<float> x = {0.5f, 1.5f};  // sum 2
  int64_t xs[1];
  DLTensor dx = F32(x, xs);
  ASSERT_EQ(TakeStatus(kiln_session_set_input(s_, "x", &dx)), "");
  for (const std::vector<std::vector<float>>& seq :
       {std::vector<std::vector<float>>{{1, 2, 3}, {4}, {5, 6}}, std::vector<std::vector<float>>{},
        std::vector<std::vector<float>>{{7, 8}}}) {
    std::vector<std::vector<float>> data = seq;
    std::vector<int64_t> shapes(data.size() + 1);
    std::vector<DLTensor> elems;
    for (size_t k = 0; k < data.size(); ++k) elems.push_back(F32(data[k], &shapes[k]));
    ASSERT_EQ(TakeStatus(kiln_session_set_input_sequence(s_, "s", elems.data(),
                                                         static_cast<int32_t>(elems.size()))),
              "");
    ASSERT_EQ(TakeStatus(kiln_session_run(s_)), "");
    int32_t count = -1;
    ASSERT_EQ(TakeStatus(kiln_session_get_output_sequence_length(s_, 0, &count)), "");
    ASSERT_EQ(count, static_cast<int32_t>(seq.size()));
    for (int32_t k = 0; k < count; ++k) {
      const std::vector<float>& want_src = seq[seq.size() - 1 - static_cast<size_t>(k)];
      const DLTensor* y = nullptr;
      ASSERT_EQ(TakeStatus(kiln_session_get_output_sequence_element(s_, 0, k, &y)), "");
      ASSERT_EQ(y->ndim, 1);
      ASSERT_EQ(y->shape[0], static_cast<int64_t>(want_src.size()));
      for (size_t i = 0; i < want_src.size(); ++i) {
        EXPECT_FLOAT_EQ(static_cast<const float*>(y->data)[i], want_src[i] + 2.0f) << k << " " << i;
      }
    }
    const DLTensor* n = nullptr;
    ASSERT_EQ(TakeStatus(kiln_session_get_output(s_, 1, &n)), "");
    EXPECT_EQ(*static_cast<const int64_t*>(n->data), static_cast<int64_t>(seq.size()));
  }
}

TEST_F(SequenceIo, WrongKindsAndElementsAreErrors) {
  std::vector<float> x = {1, 2};
  int64_t xs[1];
  DLTensor dx = F32(x, xs);
  // A tensor for the sequence, a sequence for the tensor.
  std::string e = TakeStatus(kiln_session_set_input(s_, "s", &dx));
  EXPECT_NE(e.find("is a sequence of tensors; set it with kiln_session_set_input_sequence"),
            std::string::npos)
      << e;
  e = TakeStatus(kiln_session_set_input_sequence(s_, "x", &dx, 1));
  EXPECT_NE(e.find("is a tensor, not a sequence"), std::string::npos) << e;
  // An element of another rank or dtype: named, and nothing set.
  std::vector<int32_t> iv = {1, 2};
  int64_t is[2] = {2, 1};
  DLTensor bad_rank{x.data(), {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, is, nullptr, 0};
  DLTensor bad_dtype{iv.data(), {kDLCPU, 0}, 1, {kDLInt, 32, 1}, is, nullptr, 0};
  for (const DLTensor& bad : {bad_rank, bad_dtype}) {
    DLTensor elems[2] = {dx, bad};
    e = TakeStatus(kiln_session_set_input_sequence(s_, "s", elems, 2));
    EXPECT_NE(e.find("input 's' element '1'"), std::string::npos) << e;
  }
  ASSERT_EQ(TakeStatus(kiln_session_set_input(s_, "x", &dx)), "");
  e = TakeStatus(kiln_session_run(s_));
  EXPECT_NE(e.find("input 's' was never set"), std::string::npos) << e;
  e = TakeStatus(kiln_session_set_input_sequence(s_, "s", nullptr, 1));
  EXPECT_NE(e.find("elements is NULL"), std::string::npos) << e;
  // Before a run, and the wrong kind of output.
  int32_t count = 0;
  e = TakeStatus(kiln_session_get_output_sequence_length(s_, 0, &count));
  EXPECT_NE(e.find("has not run"), std::string::npos) << e;
  ASSERT_EQ(TakeStatus(kiln_session_set_input_sequence(s_, "s", &dx, 1)), "");
  ASSERT_EQ(TakeStatus(kiln_session_run(s_)), "");
  const DLTensor* y = nullptr;
  e = TakeStatus(kiln_session_get_output(s_, 0, &y));
  EXPECT_NE(e.find("is a sequence of tensors; read it with"), std::string::npos) << e;
  e = TakeStatus(kiln_session_get_output_sequence_length(s_, 1, &count));
  EXPECT_NE(e.find("is a tensor, not a sequence"), std::string::npos) << e;
  e = TakeStatus(kiln_session_get_output_sequence_element(s_, 0, 1, &y));
  EXPECT_NE(e.find("element 1 of output 0, which holds 1"), std::string::npos) << e;
}

}  // namespace
}  // namespace kiln
