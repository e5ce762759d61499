// File: c_api/kiln_api_test.cc — kiln.h's argument checks through the C ABI:
// every function with NULL arguments, bad handles, bad paths, bad options and
// bad shapes (each must return a status with the right code and a message
// naming the problem, and clear its out-parameters); model queries, printing
// and optimizing. The compile / load / run path is kiln_api_run_test.cc.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kiln/kiln.h"
#include "c_api/kiln_api_test_util.h"

namespace {

using ::testing::HasSubstr;
using ::kiln_api_test::Garbage;
using ::kiln_api_test::kAddRelu;
using ::kiln_api_test::Parse;
using ::kiln_api_test::Result;
using ::kiln_api_test::Take;
using ::kiln_api_test::TmpDir;

TEST(KilnApi, Versions) {
  EXPECT_EQ(kiln_api_version(), static_cast<uint32_t>(KILN_API_VERSION));
  EXPECT_STREQ(kiln_version(), kiln_runtime_version());
  EXPECT_GT(std::strlen(kiln_version()), 0u);
}

TEST(KilnApi, ReleaseFunctionsAcceptNull) {
  kiln_model_release(nullptr);
  kiln_artifact_release(nullptr);
  kiln_session_release(nullptr);
  kiln_profile_release(nullptr);
  kiln_status_free(nullptr);
  kiln_free(nullptr);
  kiln_npy_release(nullptr);
  kiln_import_options_init(nullptr);
  kiln_optimize_options_init(nullptr);
  kiln_compile_options_init(nullptr);
}

// Every kiln_model_* call that takes a model refuses `m` when it is not a
// live model (released, or never made by kiln), clearing its outputs.
void ExpectEveryModelCallRefuses(const KilnModel* m) {
  const char* text = Garbage<const char>();
  char* owned = Garbage<char>();
  int32_t count = -1;
  DLTensor info;
  std::memset(&info, 0xab, sizeof(info));
  KilnModel* out = Garbage<KilnModel>();
  EXPECT_KILN_ERROR(kiln_model_warnings(m, &text), KILN_INVALID_ARGUMENT, "is not live");
  EXPECT_EQ(text, nullptr);
  EXPECT_KILN_ERROR(kiln_model_print(m, 1, &owned), KILN_INVALID_ARGUMENT,
                    "kiln_model_print: model");
  EXPECT_EQ(owned, nullptr);
  EXPECT_KILN_ERROR(kiln_model_num_inputs(m, &count), KILN_INVALID_ARGUMENT, "is not live");
  EXPECT_EQ(count, 0);
  count = -1;
  EXPECT_KILN_ERROR(kiln_model_num_outputs(m, &count), KILN_INVALID_ARGUMENT, "is not live");
  EXPECT_EQ(count, 0);
  text = Garbage<const char>();
  EXPECT_KILN_ERROR(kiln_model_input_info(m, 0, &text, &info), KILN_INVALID_ARGUMENT,
                    "is not live");
  EXPECT_EQ(text, nullptr);
  EXPECT_EQ(info.shape, nullptr);
  EXPECT_KILN_ERROR(kiln_model_output_info(m, 0, &info), KILN_INVALID_ARGUMENT, "is not live");
  text = Garbage<const char>();
  EXPECT_KILN_ERROR(kiln_model_output_name(m, 0, &text), KILN_INVALID_ARGUMENT, "is not live");
  EXPECT_EQ(text, nullptr);
  text = Garbage<const char>();
  EXPECT_KILN_ERROR(kiln_model_input_dim_name(m, 0, 0, &text), KILN_INVALID_ARGUMENT,
                    "is not live");
  EXPECT_EQ(text, nullptr);
  text = Garbage<const char>();
  EXPECT_KILN_ERROR(kiln_model_output_dim_name(m, 0, 0, &text), KILN_INVALID_ARGUMENT,
                    "is not live");
  EXPECT_EQ(text, nullptr);
  EXPECT_KILN_ERROR(kiln_model_optimize(m, nullptr, &out), KILN_INVALID_ARGUMENT,
                    "used after kiln_model_release");
  EXPECT_EQ(out, nullptr);
  owned = Garbage<char>();
  EXPECT_KILN_ERROR(kiln_model_to_dot(m, &owned), KILN_INVALID_ARGUMENT, "is not live");
  EXPECT_EQ(owned, nullptr);
  const std::string path = TmpDir() + "/dead_model.so";
  EXPECT_KILN_ERROR(kiln_model_compile(m, nullptr, path.c_str(), nullptr), KILN_INVALID_ARGUMENT,
                    "kiln_model_compile: model");
  owned = Garbage<char>();
  EXPECT_KILN_ERROR(kiln_model_emit(m, nullptr, KILN_EMIT_LOOP_IR, &owned, nullptr),
                    KILN_INVALID_ARGUMENT, "is not live");
  EXPECT_EQ(owned, nullptr);
}

// A released model is refused by every call (it is in the registry of live
// handles, as artifacts and sessions are); a second release is reported on
// stderr and ignored; a pointer kiln never made is refused without being
// read. Before, each of these read freed memory (ASan: heap-use-after-free)
// or crashed.
TEST(KilnApi, ReleasedModelsAreRefused) {
  KilnModel* m = Parse(kAddRelu);
  ASSERT_NE(m, nullptr);
  KilnModel* optimized = nullptr;
  ASSERT_KILN_OK(kiln_model_optimize(m, nullptr, &optimized));
  kiln_model_release(m);
  ExpectEveryModelCallRefuses(m);
  // The model optimized from it is its own handle, still live.
  int32_t count = 0;
  EXPECT_KILN_OK(kiln_model_num_outputs(optimized, &count));
  EXPECT_EQ(count, 2);
  ::testing::internal::CaptureStderr();
  kiln_model_release(m);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(err, HasSubstr("kiln_model_release"));
  EXPECT_THAT(err, HasSubstr("is not a live model"));
  kiln_model_release(optimized);
  ExpectEveryModelCallRefuses(optimized);

  alignas(64) static char not_a_model[256];
  KilnModel* junk = reinterpret_cast<KilnModel*>(not_a_model);
  ExpectEveryModelCallRefuses(junk);
  ::testing::internal::CaptureStderr();
  kiln_model_release(junk);  // not freed: it was never a model
  EXPECT_THAT(::testing::internal::GetCapturedStderr(), HasSubstr("is not a live model"));
}

TEST(KilnApi, LoadFunctionsRejectNullsAndClearOutputs) {
  KilnModel* m = Garbage<KilnModel>();
  EXPECT_KILN_ERROR(kiln_model_load_onnx_file(nullptr, nullptr, &m), KILN_INVALID_ARGUMENT,
                    "kiln_model_load_onnx_file: path is NULL");
  EXPECT_EQ(m, nullptr);
  EXPECT_KILN_ERROR(kiln_model_load_onnx_file("x.onnx", nullptr, nullptr), KILN_INVALID_ARGUMENT,
                    "out_model is NULL");
  m = Garbage<KilnModel>();
  EXPECT_KILN_ERROR(kiln_model_load_onnx_bytes(nullptr, 10, nullptr, &m), KILN_INVALID_ARGUMENT,
                    "data is NULL");
  EXPECT_EQ(m, nullptr);
  m = Garbage<KilnModel>();
  EXPECT_KILN_ERROR(kiln_model_parse_text(nullptr, "x", &m), KILN_INVALID_ARGUMENT,
                    "text is NULL");
  EXPECT_EQ(m, nullptr);
  EXPECT_KILN_ERROR(kiln_model_parse_text(kAddRelu, "x", nullptr), KILN_INVALID_ARGUMENT,
                    "out_model is NULL");
  m = Garbage<KilnModel>();
  EXPECT_KILN_ERROR(kiln_model_load_file(nullptr, nullptr, &m), KILN_INVALID_ARGUMENT,
                    "path is NULL");
  EXPECT_EQ(m, nullptr);
}

TEST(KilnApi, BadFilesAndBytes) {
  KilnModel* m = Garbage<KilnModel>();
  EXPECT_KILN_ERROR(kiln_model_load_onnx_file("/nonexistent/model.onnx", nullptr, &m),
                    KILN_NOT_FOUND, "/nonexistent/model.onnx");
  EXPECT_EQ(m, nullptr);
  EXPECT_KILN_ERROR(kiln_model_load_file("/nonexistent/model.kir", nullptr, &m), KILN_NOT_FOUND,
                    "/nonexistent/model.kir");
  const char junk[] = "\x08\x07\x12\xff\xff\xff\xff\x0fjunk";
  m = Garbage<KilnModel>();
  Result r = Take(kiln_model_load_onnx_bytes(junk, sizeof junk, nullptr, &m));
  EXPECT_NE(r.code, KILN_OK);
  EXPECT_THAT(r.message, HasSubstr("kiln_model_load_onnx_bytes"));
  EXPECT_EQ(m, nullptr);
  // A text file that is not ONNX, under an .onnx name.
  std::string path = TmpDir() + "/not_onnx.onnx";
  std::ofstream(path) << "def @main() { 1f }";
  r = Take(kiln_model_load_onnx_file(path.c_str(), nullptr, &m));
  EXPECT_NE(r.code, KILN_OK);
  EXPECT_EQ(m, nullptr);
  // Binary bytes under a text-IR name.
  std::string bin = TmpDir() + "/binary.kir";
  std::ofstream(bin, std::ios::binary).write("ab\0cd", 5);
  EXPECT_KILN_ERROR(kiln_model_load_file(bin.c_str(), nullptr, &m), KILN_INVALID_ARGUMENT,
                    "not a text-IR file");
}

TEST(KilnApi, SyntaxAndTypeErrorsNameTheLine) {
  KilnModel* m = Garbage<KilnModel>();
  Result r = Take(kiln_model_parse_text("#[version = \"0.1\"]\ndef @main(%x: Tensor[(2,), float32]) {\n"
                                        "  add(%x, \n}\n",
                                        "broken.kir", &m));
  EXPECT_EQ(r.code, KILN_INVALID_ARGUMENT) << r.message;
  EXPECT_THAT(r.message, HasSubstr("broken.kir:"));
  EXPECT_EQ(m, nullptr);
  r = Take(kiln_model_parse_text("#[version = \"0.1\"]\ndef @main(%x: Tensor[(2,), float32], "
                                 "%y: Tensor[(3,), float32]) {\n  add(%x, %y)\n}\n",
                                 "types.kir", &m));
  EXPECT_NE(r.code, KILN_OK);
  EXPECT_THAT(r.message, HasSubstr("add"));
  EXPECT_EQ(m, nullptr);
}

TEST(KilnApi, OptionsStructSizeIsChecked) {
  KilnModel* m = nullptr;
  KilnImportOptions io;
  kiln_import_options_init(&io);
  io.struct_size = sizeof(io) + 8;
  EXPECT_KILN_ERROR(kiln_model_load_onnx_file("x.onnx", &io, &m), KILN_INVALID_ARGUMENT,
                    "struct_size");
  io.struct_size = 0;
  EXPECT_KILN_ERROR(kiln_model_load_onnx_file("x.onnx", &io, &m), KILN_INVALID_ARGUMENT,
                    "struct_size");
  kiln_import_options_init(&io);
  io.num_input_shapes = 1;
  EXPECT_KILN_ERROR(kiln_model_load_onnx_file("x.onnx", &io, &m), KILN_INVALID_ARGUMENT,
                    "input_shapes");
  KilnInputShape shape{"x", 2, nullptr};
  io.input_shapes = &shape;
  EXPECT_KILN_ERROR(kiln_model_load_onnx_file("x.onnx", &io, &m), KILN_INVALID_ARGUMENT,
                    "input_shapes[0]");
  const int64_t dims[2] = {1, -4};
  shape.dims = dims;
  EXPECT_KILN_ERROR(kiln_model_load_onnx_file("x.onnx", &io, &m), KILN_INVALID_ARGUMENT,
                    "negative dim -4");

  KilnModel* model = Parse(kAddRelu);
  ASSERT_NE(model, nullptr);
  KilnOptimizeOptions oo;
  kiln_optimize_options_init(&oo);
  EXPECT_EQ(oo.opt_level, 3);
  oo.struct_size = 3;
  EXPECT_KILN_ERROR(kiln_model_optimize(model, &oo, &m), KILN_INVALID_ARGUMENT, "struct_size");
  KilnCompileOptions co;
  kiln_compile_options_init(&co);
  EXPECT_EQ(co.opt_level, 3);
  co.struct_size = sizeof(co) * 2;
  std::string out = TmpDir() + "/never.so";
  EXPECT_KILN_ERROR(kiln_model_compile(model, &co, out.c_str(), nullptr), KILN_INVALID_ARGUMENT,
                    "struct_size");
  KilnCompileReport report;
  std::memset(&report, 0, sizeof report);
  EXPECT_KILN_ERROR(kiln_model_compile(model, nullptr, out.c_str(), &report),
                    KILN_INVALID_ARGUMENT, "report->struct_size");
  std::FILE* f = std::fopen(out.c_str(), "rb");
  EXPECT_EQ(f, nullptr) << "a failed compile must not leave a file";
  if (f != nullptr) std::fclose(f);
  kiln_model_release(model);
}

TEST(KilnApi, ModelQueriesRejectNullsAndBadIndices) {
  KilnModel* model = Parse(kAddRelu);
  ASSERT_NE(model, nullptr);
  char* text = Garbage<char>();
  EXPECT_KILN_ERROR(kiln_model_print(nullptr, 0, &text), KILN_INVALID_ARGUMENT, "model is NULL");
  EXPECT_EQ(text, nullptr);
  EXPECT_KILN_ERROR(kiln_model_print(model, 0, nullptr), KILN_INVALID_ARGUMENT,
                    "out_text is NULL");
  int32_t n = 77;
  EXPECT_KILN_ERROR(kiln_model_num_inputs(nullptr, &n), KILN_INVALID_ARGUMENT, "model is NULL");
  EXPECT_EQ(n, 0);
  EXPECT_KILN_ERROR(kiln_model_num_inputs(model, nullptr), KILN_INVALID_ARGUMENT, "out_count");
  n = 77;
  EXPECT_KILN_ERROR(kiln_model_num_outputs(nullptr, &n), KILN_INVALID_ARGUMENT, "model is NULL");
  EXPECT_EQ(n, 0);
  DLTensor info;
  std::memset(&info, 0xab, sizeof info);
  const char* name = "garbage";
  EXPECT_KILN_ERROR(kiln_model_input_info(model, 2, &name, &info), KILN_OUT_OF_RANGE,
                    "input index 2 out of range");
  EXPECT_EQ(name, nullptr);
  EXPECT_EQ(info.shape, nullptr);
  EXPECT_EQ(info.ndim, 0);
  EXPECT_KILN_ERROR(kiln_model_input_info(model, -1, &name, &info), KILN_OUT_OF_RANGE, "-1");
  EXPECT_KILN_ERROR(kiln_model_input_info(model, 0, &name, nullptr), KILN_INVALID_ARGUMENT,
                    "out_info is NULL");
  EXPECT_KILN_ERROR(kiln_model_output_info(model, 2, &info), KILN_OUT_OF_RANGE,
                    "output index 2");
  EXPECT_KILN_ERROR(kiln_model_output_info(nullptr, 0, &info), KILN_INVALID_ARGUMENT, "model");
  char* dot = Garbage<char>();
  EXPECT_KILN_ERROR(kiln_model_to_dot(nullptr, &dot), KILN_INVALID_ARGUMENT, "model is NULL");
  EXPECT_EQ(dot, nullptr);
  EXPECT_KILN_ERROR(kiln_model_to_dot(model, nullptr), KILN_INVALID_ARGUMENT, "out_dot");
  const char* warnings = "garbage";
  EXPECT_KILN_ERROR(kiln_model_warnings(nullptr, &warnings), KILN_INVALID_ARGUMENT,
                    "model is NULL");
  EXPECT_EQ(warnings, nullptr);
  EXPECT_KILN_ERROR(kiln_model_warnings(model, nullptr), KILN_INVALID_ARGUMENT, "out_text");
  // A text-IR model has no import warnings.
  ASSERT_EQ(kiln_model_warnings(model, &warnings), nullptr);
  EXPECT_STREQ(warnings, "");
  kiln_model_release(model);
}

TEST(KilnApi, SignatureOfTheModel) {
  KilnModel* model = Parse(kAddRelu);
  ASSERT_NE(model, nullptr);
  int32_t n = 0;
  EXPECT_KILN_OK(kiln_model_num_inputs(model, &n));
  EXPECT_EQ(n, 2);
  EXPECT_KILN_OK(kiln_model_num_outputs(model, &n));
  EXPECT_EQ(n, 2);  // the tuple result, flattened
  DLTensor info;
  const char* name = nullptr;
  EXPECT_KILN_OK(kiln_model_input_info(model, 1, &name, &info));
  EXPECT_STREQ(name, "y");
  ASSERT_EQ(info.ndim, 2);
  EXPECT_EQ(info.shape[0], 2);
  EXPECT_EQ(info.shape[1], 3);
  EXPECT_EQ(info.dtype.code, kDLFloat);
  EXPECT_EQ(info.dtype.bits, 32);
  EXPECT_EQ(info.data, nullptr);
  EXPECT_KILN_OK(kiln_model_output_info(model, 1, &info));
  EXPECT_EQ(info.ndim, 2);
  kiln_model_release(model);
}

// Output names and dims as text (API version 3): what `kiln check` shows
// without parsing the printed model.
TEST(KilnApi, OutputNamesAndDimNames) {
  KilnModel* model = Parse(R"(#[version = "0.1"]
def @main(%x: Tensor[(N, 3), float32], %s: Tensor[(?, 2), float32],
          output_names=["probs", "copy"]) {
  (nn.relu(%x), %s)
}
)");
  ASSERT_NE(model, nullptr);
  const char* text = "garbage";
  EXPECT_KILN_OK(kiln_model_output_name(model, 0, &text));
  EXPECT_STREQ(text, "probs");
  EXPECT_KILN_OK(kiln_model_output_name(model, 1, &text));
  EXPECT_STREQ(text, "copy");
  EXPECT_KILN_OK(kiln_model_input_dim_name(model, 0, 0, &text));
  EXPECT_STREQ(text, "N");
  EXPECT_KILN_OK(kiln_model_input_dim_name(model, 0, 1, &text));
  EXPECT_STREQ(text, "3");
  EXPECT_KILN_OK(kiln_model_input_dim_name(model, 1, 0, &text));
  EXPECT_STREQ(text, "?");
  EXPECT_KILN_OK(kiln_model_output_dim_name(model, 0, 0, &text));
  EXPECT_STREQ(text, "N");
  EXPECT_KILN_OK(kiln_model_output_dim_name(model, 1, 1, &text));
  EXPECT_STREQ(text, "2");
  // Errors name the index, the axis and the input; out-parameters cleared.
  text = "garbage";
  EXPECT_KILN_ERROR(kiln_model_output_name(model, 2, &text), KILN_OUT_OF_RANGE,
                    "output index 2 out of range (the model has 2)");
  EXPECT_EQ(text, nullptr);
  text = "garbage";
  EXPECT_KILN_ERROR(kiln_model_input_dim_name(model, 0, 2, &text), KILN_OUT_OF_RANGE,
                    "axis 2 out of range for input 0 ('x'), which has 2 dims");
  EXPECT_EQ(text, nullptr);
  EXPECT_KILN_ERROR(kiln_model_input_dim_name(model, 5, 0, &text), KILN_OUT_OF_RANGE,
                    "input index 5");
  EXPECT_KILN_ERROR(kiln_model_output_dim_name(model, 0, -1, &text), KILN_OUT_OF_RANGE,
                    "axis -1");
  EXPECT_KILN_ERROR(kiln_model_output_name(nullptr, 0, &text), KILN_INVALID_ARGUMENT,
                    "model is NULL");
  EXPECT_KILN_ERROR(kiln_model_output_name(model, 0, nullptr), KILN_INVALID_ARGUMENT,
                    "out_name is NULL");
  EXPECT_KILN_ERROR(kiln_model_input_dim_name(model, 0, 0, nullptr), KILN_INVALID_ARGUMENT,
                    "out_dim is NULL");
  kiln_model_release(model);
  // No output_names, or names the artifact could not use (a repeated one):
  // output0, output1, ... as the compiled artifact names them.
  for (const char* attr : {"", ", output_names=[\"a\", \"a\"]", ", output_names=[\"a\"]"}) {
    std::string src = std::string("#[version = \"0.1\"]\ndef @main(%x: Tensor[(2,), float32]") +
                      attr + ") {\n  (%x, negative(%x))\n}\n";
    model = Parse(src.c_str());
    ASSERT_NE(model, nullptr) << src;
    EXPECT_KILN_OK(kiln_model_output_name(model, 1, &text));
    EXPECT_STREQ(text, "output1") << src;
    kiln_model_release(model);
  }
}

TEST(KilnApi, PrintRoundTrips) {
  KilnModel* model = Parse(kAddRelu);
  ASSERT_NE(model, nullptr);
  char* text = nullptr;
  ASSERT_KILN_OK(kiln_model_print(model, 0, &text));
  ASSERT_NE(text, nullptr);
  EXPECT_THAT(std::string(text), HasSubstr("nn.relu"));
  KilnModel* again = Parse(text);
  ASSERT_NE(again, nullptr);
  char* text2 = nullptr;
  ASSERT_KILN_OK(kiln_model_print(again, 0, &text2));
  EXPECT_STREQ(text, text2);
  char* typed = nullptr;
  ASSERT_KILN_OK(kiln_model_print(model, 1, &typed));
  EXPECT_THAT(std::string(typed), HasSubstr("Tensor[(2, 3), float32]"));
  kiln_free(text);
  kiln_free(text2);
  kiln_free(typed);
  kiln_model_release(again);
  kiln_model_release(model);
}

TEST(KilnApi, OptimizeWithPassListsAndErrors) {
  KilnModel* model = Parse(kAddRelu);
  ASSERT_NE(model, nullptr);
  KilnModel* out = Garbage<KilnModel>();
  EXPECT_KILN_ERROR(kiln_model_optimize(nullptr, nullptr, &out), KILN_INVALID_ARGUMENT,
                    "model is NULL");
  EXPECT_EQ(out, nullptr);
  EXPECT_KILN_ERROR(kiln_model_optimize(model, nullptr, nullptr), KILN_INVALID_ARGUMENT,
                    "out_model is NULL");
  KilnOptimizeOptions o;
  kiln_optimize_options_init(&o);
  o.opt_level = 7;
  EXPECT_KILN_ERROR(kiln_model_optimize(model, &o, &out), KILN_INVALID_ARGUMENT,
                    "opt_level must be 0, 1, 2 or 3, got 7");
  kiln_optimize_options_init(&o);
  const char* unknown[] = {"InferType", "NoSuchPass"};
  o.passes = unknown;
  o.num_passes = 2;
  EXPECT_KILN_ERROR(kiln_model_optimize(model, &o, &out), KILN_NOT_FOUND, "NoSuchPass");
  o.passes = nullptr;
  EXPECT_KILN_ERROR(kiln_model_optimize(model, &o, &out), KILN_INVALID_ARGUMENT,
                    "options->passes is NULL");
  kiln_optimize_options_init(&o);
  const char* null_name[] = {nullptr};
  o.disabled_passes = null_name;
  o.num_disabled_passes = 1;
  EXPECT_KILN_ERROR(kiln_model_optimize(model, &o, &out), KILN_INVALID_ARGUMENT,
                    "options->disabled_passes[0] is NULL");
  const char* bad_disabled[] = {"Nope"};
  o.disabled_passes = bad_disabled;
  EXPECT_KILN_ERROR(kiln_model_optimize(model, &o, &out), KILN_NOT_FOUND, "Nope");

  // An explicit list: FuseOps puts the calls into primitive functions.
  kiln_optimize_options_init(&o);
  const char* fuse[] = {"InferType", "FuseOps"};
  o.passes = fuse;
  o.num_passes = 2;
  ASSERT_KILN_OK(kiln_model_optimize(model, &o, &out));
  ASSERT_NE(out, nullptr);
  char* text = nullptr;
  ASSERT_KILN_OK(kiln_model_print(out, 0, &text));
  EXPECT_THAT(std::string(text), HasSubstr("Primitive"));
  kiln_free(text);
  kiln_model_release(out);

  // The default pipeline; the input model is unchanged.
  out = nullptr;
  ASSERT_KILN_OK(kiln_model_optimize(model, nullptr, &out));
  kiln_model_release(out);
  ASSERT_KILN_OK(kiln_model_print(model, 0, &text));
  EXPECT_THAT(std::string(text), ::testing::Not(HasSubstr("Primitive")));
  kiln_free(text);

  ASSERT_GT(kiln_pass_count(), 10);
  bool has_fuse = false;
  for (int32_t i = 0; i < kiln_pass_count(); ++i) {
    ASSERT_NE(kiln_pass_name(i), nullptr);
    has_fuse |= std::string(kiln_pass_name(i)) == "FuseOps";
  }
  EXPECT_TRUE(has_fuse);
  EXPECT_EQ(kiln_pass_name(-1), nullptr);
  EXPECT_EQ(kiln_pass_name(kiln_pass_count()), nullptr);
  kiln_model_release(model);
}

TEST(KilnApi, ExplicitPassListRunsEveryPassWhateverTheLevel) {
  KilnModel* model = Parse(R"(#[version = "0.1"]
def @main(%x: Tensor[(2,), float32]) {
  add(%x, multiply(2f, 3f))
}
)");
  ASSERT_NE(model, nullptr);
  KilnOptimizeOptions o;
  std::memset(&o, 0, sizeof o);  // opt_level 0
  o.struct_size = sizeof o;
  const char* fold[] = {"FoldConstant"};
  o.passes = fold;
  o.num_passes = 1;
  KilnModel* out = nullptr;
  ASSERT_KILN_OK(kiln_model_optimize(model, &o, &out));
  char* text = nullptr;
  ASSERT_KILN_OK(kiln_model_print(out, 0, &text));
  EXPECT_THAT(std::string(text), ::testing::Not(HasSubstr("multiply"))) << text;
  kiln_free(text);
  kiln_model_release(out);
  kiln_model_release(model);
}

TEST(KilnApi, CompileErrors) {
  KilnModel* model = Parse(kAddRelu);
  ASSERT_NE(model, nullptr);
  EXPECT_KILN_ERROR(kiln_model_compile(nullptr, nullptr, "x.so", nullptr), KILN_INVALID_ARGUMENT,
                    "model is NULL");
  EXPECT_KILN_ERROR(kiln_model_compile(model, nullptr, nullptr, nullptr), KILN_INVALID_ARGUMENT,
                    "path is NULL");
  EXPECT_KILN_ERROR(kiln_model_compile(model, nullptr, "", nullptr), KILN_INVALID_ARGUMENT,
                    "path is empty");
  KilnCompileOptions o;
  kiln_compile_options_init(&o);
  o.target = "llvm -mcpu=nosuchcpu";
  std::string out = TmpDir() + "/bad_target.so";
  Result r = Take(kiln_model_compile(model, &o, out.c_str(), nullptr));
  EXPECT_NE(r.code, KILN_OK);
  EXPECT_THAT(r.message, HasSubstr("nosuchcpu"));
  kiln_compile_options_init(&o);
  const char* bad_disabled[] = {"NoSuchPass"};
  o.disabled_passes = bad_disabled;
  o.num_disabled_passes = 1;
  EXPECT_KILN_ERROR(kiln_model_compile(model, &o, out.c_str(), nullptr), KILN_NOT_FOUND,
                    "NoSuchPass");
  kiln_compile_options_init(&o);
  o.num_threads = -2;
  EXPECT_KILN_ERROR(kiln_model_compile(model, &o, out.c_str(), nullptr), KILN_INVALID_ARGUMENT,
                    "num_threads");
  EXPECT_KILN_ERROR(kiln_model_compile(model, nullptr, "/nonexistent/dir/x.so", nullptr),
                    KILN_NOT_FOUND, "/nonexistent/dir");
  kiln_model_release(model);

  // A dim that is not static compiles for the VM: the artifact has no graph
  // and reports the dim as -1.
  KilnModel* dynamic = Parse(R"(#[version = "0.1"]
def @main(%x: Tensor[(?, 3), float32]) {
  nn.relu(%x)
}
)");
  ASSERT_NE(dynamic, nullptr);
  ASSERT_KILN_OK(kiln_model_compile(dynamic, nullptr, out.c_str(), nullptr));
  kiln_model_release(dynamic);
  KilnArtifact* vm_artifact = nullptr;
  ASSERT_KILN_OK(kiln_artifact_load(out.c_str(), &vm_artifact));
  EXPECT_STREQ(kiln_artifact_graph_json(vm_artifact), "");
  DLTensor vm_info;
  const char* vm_name = nullptr;
  ASSERT_KILN_OK(kiln_artifact_input_info(vm_artifact, 0, &vm_name, &vm_info));
  ASSERT_EQ(vm_info.ndim, 2);
  EXPECT_EQ(vm_info.shape[0], -1);
  EXPECT_EQ(vm_info.shape[1], 3);
  kiln_artifact_release(vm_artifact);
}

TEST(KilnApi, ModuleWithoutMainPrintsButDoesNotCompile) {
  KilnModel* model = Parse(R"(#[version = "0.1"]
def @helper(%x: Tensor[(4,), float32]) {
  negative(%x)
}
)");
  ASSERT_NE(model, nullptr);
  int32_t n = -1;
  EXPECT_KILN_OK(kiln_model_num_inputs(model, &n));
  EXPECT_EQ(n, 0);
  char* text = nullptr;
  ASSERT_KILN_OK(kiln_model_print(model, 0, &text));
  EXPECT_THAT(std::string(text), HasSubstr("@helper"));
  kiln_free(text);
  std::string out = TmpDir() + "/no_main.so";
  EXPECT_KILN_ERROR(kiln_model_compile(model, nullptr, out.c_str(), nullptr),
                    KILN_INVALID_ARGUMENT, "no function 'main'");
  kiln_model_release(model);
}

TEST(KilnApi, RuntimeFunctionsRejectNulls) {
  KilnArtifact* a = Garbage<KilnArtifact>();
  EXPECT_KILN_ERROR(kiln_artifact_load(nullptr, &a), KILN_INVALID_ARGUMENT, "NULL");
  EXPECT_EQ(a, nullptr);
  a = Garbage<KilnArtifact>();
  EXPECT_KILN_ERROR(kiln_artifact_load("/nonexistent/m.so", &a), KILN_NOT_FOUND,
                    "/nonexistent/m.so");
  EXPECT_EQ(a, nullptr);
  KilnSession* s = Garbage<KilnSession>();
  EXPECT_KILN_ERROR(kiln_session_create(nullptr, nullptr, &s), KILN_INVALID_ARGUMENT, "NULL");
  EXPECT_EQ(s, nullptr);
  DLTensor t;
  std::memset(&t, 0, sizeof t);
  EXPECT_KILN_ERROR(kiln_session_set_input(nullptr, "x", &t), KILN_INVALID_ARGUMENT, "NULL");
  EXPECT_KILN_ERROR(kiln_session_run(nullptr), KILN_INVALID_ARGUMENT, "NULL");
  const DLTensor* view = Garbage<const DLTensor>();
  EXPECT_KILN_ERROR(kiln_session_get_output(nullptr, 0, &view), KILN_INVALID_ARGUMENT, "NULL");
  EXPECT_EQ(view, nullptr);
  DLManagedTensor* managed = Garbage<DLManagedTensor>();
  EXPECT_KILN_ERROR(kiln_session_get_output_dlpack(nullptr, 0, &managed), KILN_INVALID_ARGUMENT,
                    "session is NULL");
  EXPECT_EQ(managed, nullptr);
  int32_t index = 5;
  EXPECT_KILN_ERROR(kiln_artifact_output_index(nullptr, "y", &index), KILN_INVALID_ARGUMENT,
                    "artifact is NULL");
  EXPECT_EQ(index, -1);
  KilnProfile* p = Garbage<KilnProfile>();
  EXPECT_KILN_ERROR(kiln_session_profile(nullptr, &p), KILN_INVALID_ARGUMENT, "NULL");
  EXPECT_EQ(p, nullptr);
  KilnNpyTensor* npy = Garbage<KilnNpyTensor>();
  EXPECT_KILN_ERROR(kiln_npy_read("/nonexistent.npy", &npy), KILN_NOT_FOUND, "/nonexistent.npy");
  EXPECT_EQ(npy, nullptr);
}

}  // namespace
