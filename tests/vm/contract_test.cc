// The C API contract (issue 15) on a VM artifact: tensors whose byte_offset,
// ndim or shape do not fit are refused, never copied from or to; a session
// outlives the release of its artifact; double releases are ignored and a
// released session is refused. The graph executor's side of the same
// contract is in runtime_c:loader_security_test and c_api:kiln_api_test;
// VM sessions check their tensors in runtime_c/vm_session.c.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kiln/kiln.h"
#include "kiln/runtime.h"
#include "tests/vm/c_api_test_util.h"

namespace kiln {
namespace {

using ::kiln::testing::TakeStatus;
using ::kiln::testing::TempPath;



// A symbolic batch: compiled for the VM.
constexpr char kProgram[] = R"(#[version = "0.1"]
def @main(%x: Tensor[(n, 2), float32]) {
  add(%x, %x)
}
)";

class VmContract : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string path = TempPath("vm_contract.so");
    KilnModel* model = nullptr;
    ASSERT_EQ(TakeStatus(kiln_model_parse_text(kProgram, "contract_test", &model)), "");
    ASSERT_EQ(TakeStatus(kiln_model_compile(model, nullptr, path.c_str(), nullptr)), "");
    kiln_model_release(model);
    ASSERT_EQ(TakeStatus(kiln_artifact_load(path.c_str(), &art_)), "");
    ASSERT_STREQ(kiln_artifact_graph_json(art_), "") << "not a VM artifact";
    ASSERT_EQ(TakeStatus(kiln_session_create(art_, nullptr, &s_)), "");
  }
  void TearDown() override {
    if (s_ != nullptr) kiln_session_release(s_);
    if (art_ != nullptr) kiln_artifact_release(art_);
  }
  // Sets x to the 3x2 tensor data_ (through `t`'s fields) and runs.
  void RunGood() {
    DLTensor t = Good();
    ASSERT_EQ(TakeStatus(kiln_session_set_input(s_, "x", &t)), "");
    ASSERT_EQ(TakeStatus(kiln_session_run(s_)), "");
    const DLTensor* y = nullptr;
    ASSERT_EQ(TakeStatus(kiln_session_get_output(s_, 0, &y)), "");
    ASSERT_EQ(y->ndim, 2);
    ASSERT_EQ(y->shape[0], 3);
    for (int i = 0; i < 6; ++i) EXPECT_EQ(static_cast<const float*>(y->data)[i], 2.0f * data_[i]);
  }
  DLTensor Good() {
    return DLTensor{data_, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape_, nullptr, 0};
  }
  alignas(64) float data_[6] = {1, 2, 3, 4, 5, 6};
  int64_t shape_[2] = {3, 2};
  KilnArtifact* art_ = nullptr;
  KilnSession* s_ = nullptr;
};

// Refused with KILN_INVALID_ARGUMENT and `text` in the message.
void ExpectRefused(KilnStatus* st, const std::string& text, const std::string& what) {
  ASSERT_NE(st, nullptr) << what << ": accepted";
  EXPECT_EQ(kiln_status_code(st), KILN_INVALID_ARGUMENT) << what;
  EXPECT_TRUE(absl::StrContains(kiln_status_message(st), text))
      << what << ": " << kiln_status_message(st);
  kiln_status_free(st);
}

TEST_F(VmContract, ByteOffsetsThatCannotBeAddressesAreRefused) {
  RunGood();
  for (uint64_t off : {UINT64_MAX - 3, uint64_t{1} << 60, uint64_t{1} << 56}) {
    DLTensor t = Good();
    t.byte_offset = off;
    ExpectRefused(kiln_session_set_input(s_, "x", &t), "byte_offset", absl::StrCat("set_input ", off));
    ExpectRefused(kiln_session_set_input_zero_copy(s_, "x", &t), "byte_offset",
                  absl::StrCat("set_input_zero_copy ", off));
    ExpectRefused(kiln_session_set_input_index(s_, 0, &t), "byte_offset",
                  absl::StrCat("set_input_index ", off));
    float out[6] = {0};
    int64_t out_shape[2] = {3, 2};
    DLTensor dst{out, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, out_shape, nullptr, off};
    ExpectRefused(kiln_session_copy_output(s_, 0, &dst), "byte_offset",
                  absl::StrCat("copy_output ", off));
  }
  // The session still holds the last good input and runs.
  RunGood();
}

TEST_F(VmContract, NdimAndShapesThatDoNotFitAreRefused) {
  for (int32_t ndim : {1 << 30, -1, 0, 1, 3, 33}) {
    DLTensor t = Good();
    t.ndim = ndim;
    ExpectRefused(kiln_session_set_input(s_, "x", &t), "", absl::StrCat("ndim ", ndim));
  }
  DLTensor no_shape = Good();
  no_shape.shape = nullptr;
  ExpectRefused(kiln_session_set_input(s_, "x", &no_shape), "shape is NULL", "NULL shape");
  int64_t negative[2] = {-1, 2};
  DLTensor neg = Good();
  neg.shape = negative;
  ExpectRefused(kiln_session_set_input(s_, "x", &neg), "", "a negative dim");
  int64_t wrong_inner[2] = {3, 5};
  DLTensor wrong = Good();
  wrong.shape = wrong_inner;
  ExpectRefused(kiln_session_set_input(s_, "x", &wrong), "", "inner dim 5 for 2");
  // 2^62 x 2 float32 (2^65 bytes, the product wraps in 64 bits).
  int64_t huge[2] = {int64_t{1} << 62, 2};
  DLTensor big = Good();
  big.shape = huge;
  ExpectRefused(kiln_session_set_input(s_, "x", &big), "", "a 2^65-byte tensor");
  int64_t strides[2] = {1, 3};  // column-major
  DLTensor strided = Good();
  strided.strides = strides;
  ExpectRefused(kiln_session_set_input(s_, "x", &strided), "strides", "column-major strides");
  DLTensor gpu = Good();
  gpu.device.device_type = kDLCUDA;
  ExpectRefused(kiln_session_set_input(s_, "x", &gpu), "CPU memory", "device memory");
  DLTensor no_data = Good();
  no_data.data = nullptr;
  ExpectRefused(kiln_session_set_input(s_, "x", &no_data), "data is NULL", "NULL data");
  // None of it was taken: the input is still unset.
  KilnStatus* st = kiln_session_run(s_);
  ASSERT_NE(st, nullptr) << "ran with no input set";
  kiln_status_free(st);
  RunGood();

  // A destination of the wrong rank or shape for copy_output.
  float out[6] = {0};
  for (int32_t ndim : {1 << 30, -1, 1}) {
    int64_t out_shape[2] = {3, 2};
    DLTensor dst{out, {kDLCPU, 0}, ndim, {kDLFloat, 32, 1}, out_shape, nullptr, 0};
    ExpectRefused(kiln_session_copy_output(s_, 0, &dst), "", absl::StrCat("copy_output ndim ", ndim));
  }
  int64_t small_shape[2] = {2, 2};
  DLTensor small{out, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, small_shape, nullptr, 0};
  ExpectRefused(kiln_session_copy_output(s_, 0, &small), "", "copy_output into a 2x2 tensor");
  int64_t out_shape[2] = {3, 2};
  DLTensor dst{out, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, out_shape, nullptr, 0};
  ASSERT_EQ(TakeStatus(kiln_session_copy_output(s_, 0, &dst)), "");
  for (int i = 0; i < 6; ++i) EXPECT_EQ(out[i], 2.0f * data_[i]);
}

TEST_F(VmContract, SessionsOutliveTheirArtifactAndReleasesAreCheckedNotRepeated) {
  RunGood();
  kiln_artifact_release(art_);
  kiln_artifact_release(art_);  // while the session lives: ignored
  art_ = nullptr;
  RunGood();  // the session holds its artifact
  kiln_session_release(s_);
  KilnSession* dead = s_;
  s_ = nullptr;
  kiln_session_release(dead);  // a second release: ignored (a line on stderr)
  DLTensor t = Good();
  ExpectRefused(kiln_session_set_input(dead, "x", &t), "not live", "set_input after release");
  ExpectRefused(kiln_session_run(dead), "not live", "run after release");
  const DLTensor* y = nullptr;
  ExpectRefused(kiln_session_get_output(dead, 0, &y), "not live", "get_output after release");
  EXPECT_EQ(y, nullptr);
}

// kiln_model_evaluate (the interpreter through the C API) checks the
// caller's tensors too: a byte_offset that cannot be an address is refused.
// It was memcpy'd (SIGSEGV at byte_offset 2^56: found by the C API fuzz
// target, tests/fuzz/c_api_fuzz.cc op 26).
TEST(EvaluateContract, ByteOffsetsThatCannotBeAddressesAreRefused) {
  KilnModel* model = nullptr;
  ASSERT_EQ(TakeStatus(kiln_model_parse_text(kProgram, "contract_test", &model)), "");
  alignas(64) float data[6] = {1, 2, 3, 4, 5, 6};
  int64_t shape[2] = {3, 2};
  for (uint64_t off : {uint64_t{1} << 56, UINT64_MAX - 3, uint64_t{1} << 60,
                       (uint64_t{1} << 56) - 8}) {
    DLTensor t{data, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, nullptr, off};
    const DLTensor* inputs[] = {&t};
    DLManagedTensor** outs = reinterpret_cast<DLManagedTensor**>(0x1);
    int32_t n = -1;
    ExpectRefused(kiln_model_evaluate(model, inputs, 1, &outs, &n), "byte_offset",
                  absl::StrCat("evaluate byte_offset ", off));
    EXPECT_EQ(outs, nullptr);
    EXPECT_EQ(n, 0);
  }
  DLTensor t{data, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, nullptr, 2 * sizeof(float)};
  shape[0] = 2;  // rows 1 and 2 of data
  const DLTensor* inputs[] = {&t};
  DLManagedTensor** outs = nullptr;
  int32_t n = 0;
  ASSERT_EQ(TakeStatus(kiln_model_evaluate(model, inputs, 1, &outs, &n)), "");
  ASSERT_EQ(n, 1);
  const DLTensor& y = outs[0]->dl_tensor;
  ASSERT_EQ(y.ndim, 2);
  EXPECT_EQ(y.shape[0], 2);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(static_cast<const float*>(y.data)[i], 2.0f * data[i + 2]);
  outs[0]->deleter(outs[0]);
  kiln_free(outs);
  kiln_model_release(model);
}

}  // namespace
}  // namespace kiln
