// File: tools/signature_test.cc — main's header in the text IR (dim names,
// output names) and the symbolic-dim error `kiln compile` prints.
#include "tools/signature.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kiln::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(ParseMainHeader, DimsAndOutputNames) {
  std::vector<std::vector<std::string>> dims;
  std::vector<std::string> names;
  ParseMainHeader(
      "#[version = \"0.1\"]\n\ndef @helper(%a: float32) { %a }\n"
      "def @main(%x: Tensor[(N, 3, 224, 224), float32], %s: float32, %t: Tensor[(7,), int64], "
      "output_names=[\"out,1\", \"b\\\"q\", \"c)\"]) -> Tensor[(N, 10), float32] {\n  %x\n}\n",
      &dims, &names);
  ASSERT_EQ(dims.size(), 3u);
  EXPECT_THAT(dims[0], ElementsAre("N", "3", "224", "224"));
  EXPECT_THAT(dims[1], IsEmpty());
  EXPECT_THAT(dims[2], ElementsAre("7"));
  EXPECT_THAT(names, ElementsAre("out,1", "b\"q", "c)"));
}

TEST(ParseMainHeader, NoMainOrUnterminated) {
  std::vector<std::vector<std::string>> dims;
  std::vector<std::string> names;
  ParseMainHeader("def @other(%x: float32) { %x }\n", &dims, &names);
  EXPECT_THAT(dims, IsEmpty());
  ParseMainHeader("def @main(%x: Tensor[(N, 3", &dims, &names);
  EXPECT_THAT(dims, IsEmpty());
  ParseMainHeader("", &dims, &names);
  EXPECT_THAT(names, IsEmpty());
}

TEST(ParseMainResult, TensorAndFlattenedTuples) {
  EXPECT_THAT(ParseMainResult("def @main(%x: Tensor[(N, 3), float32]) {\n"
                              "  nn.softmax(%x, axis=1) /* ty=Tensor[(N, 3), float32] */\n}\n"),
              ElementsAre(ElementsAre("N", "3")));
  EXPECT_THAT(
      ParseMainResult("def @main(%x: float32) {\n  %0 = f(%x);\n"
                      "  (%0, (%x, %0)) /* ty=(Tensor[(B, 2), float32], (float32, "
                      "Tensor[(7,), int64])) */\n}\n"),
      ElementsAre(ElementsAre("B", "2"), IsEmpty(), ElementsAre("7")));
  EXPECT_THAT(ParseMainResult("def @main(%x: float32) {\n  %x\n}\n"), IsEmpty());
  EXPECT_THAT(ParseMainResult("def @main(%x: float32) {"), IsEmpty());
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
