// File: tools/signature_test.cc — a model's signature through the C API (dim
// names, output names) and the symbolic-dim error `kiln compile` prints.
#include "tools/signature.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kiln::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// A parsed model's signature, read through the C API.
ModelSignature SignatureOf(const char* text) {
  KilnModel* m = nullptr;
  KilnStatus* st = kiln_model_parse_text(text, "test.kir", &m);
  EXPECT_EQ(st, nullptr) << kiln_status_message(st);
  kiln_status_free(st);
  ModelSignature sig;
  std::string error;
  EXPECT_TRUE(m == nullptr || ReadSignature(m, &sig, &error)) << error;
  kiln_model_release(m);
  return sig;
}

TEST(ReadSignature, DimNamesAndOutputNames) {
  ModelSignature sig = SignatureOf(R"(#[version = "0.1"]
def @main(%x: Tensor[(N, 3, 224, 224), float32], %t: Tensor[(?, 7), int64],
          output_names=["out,1", "b\"q"]) {
  (nn.relu(%x), %t)
}
)");
  ASSERT_EQ(sig.inputs.size(), 2u);
  EXPECT_EQ(sig.inputs[0].name, "x");
  EXPECT_THAT(sig.inputs[0].dims, ElementsAre("N", "3", "224", "224"));
  EXPECT_EQ(sig.inputs[0].Text(), "float32[N,3,224,224]");
  EXPECT_THAT(sig.inputs[1].dims, ElementsAre("?", "7"));
  EXPECT_EQ(sig.inputs[1].dtype, "int64");
  ASSERT_EQ(sig.outputs.size(), 2u);
  EXPECT_EQ(sig.outputs[0].name, "out,1");
  EXPECT_EQ(sig.outputs[1].name, "b\"q");
  EXPECT_THAT(sig.outputs[0].dims, ElementsAre("N", "3", "224", "224"));
  EXPECT_THAT(sig.outputs[1].dims, ElementsAre("?", "7"));
  EXPECT_THAT(sig.SymbolicDims(), ElementsAre("N"));
}

TEST(ReadSignature, UnnamedOutputsAndStaticModels) {
  ModelSignature sig = SignatureOf(R"(#[version = "0.1"]
def @main(%x: Tensor[(2, 3), float32]) {
  (%x, negative(%x))
}
)");
  ASSERT_EQ(sig.outputs.size(), 2u);
  EXPECT_EQ(sig.outputs[0].name, "output0");
  EXPECT_EQ(sig.outputs[1].name, "output1");
  EXPECT_TRUE(sig.inputs[0].is_static());
  EXPECT_THAT(sig.SymbolicDims(), IsEmpty());
}

TEST(SymbolicDimError, NamesTheDimAndTheFlag) {
  ModelSignature sig;
  sig.inputs.push_back({"ids", "int64", {"batch", "seq"}});
  EXPECT_EQ(SymbolicDimError(sig, "bert.onnx"),
            "input 'ids' has the symbolic dim 'batch' (axis 0 of int64[batch,seq]); give its size "
            "with --input-shape batch=SIZE (or --input-shape ids=SIZE,SIZE)");
  EXPECT_THAT(sig.SymbolicDims(), ElementsAre("batch", "seq"));
  sig.inputs[0].dims = {"1", "?"};
  EXPECT_EQ(SymbolicDimError(sig, "m.onnx"),
            "input 'ids' has a dim of unknown size (axis 1 of int64[1,?]); give the input's shape "
            "with --input-shape ids=1,SIZE");
  EXPECT_THAT(SymbolicDimError(sig, "m.kir"), ::testing::HasSubstr("write the size in the type"));
  sig.inputs[0].dims = {"1", "2"};
  EXPECT_EQ(SymbolicDimError(sig, "m.onnx"), "");
}

}  // namespace
}  // namespace kiln::cli
