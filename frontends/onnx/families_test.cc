// The operator lists of families.cc are exactly what each family's
// registration function registers (so a selective build without a family
// names all of its operators as "not in this build"). With
// KILN_PRINT_FAMILIES=1 in the environment it prints the lists as families.cc
// spells them, to regenerate that file after adding a converter.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "frontends/onnx/converter.h"
#include "gtest/gtest.h"

namespace kiln::onnx_frontend {
namespace {

std::vector<std::string> Registered(absl::string_view family) {
  ConverterRegistry r;
  if (family == "elementwise") RegisterElementwiseConverters(r);
  if (family == "nn") RegisterNnConverters(r);
  if (family == "tensor") RegisterTensorConverters(r);
  if (family == "reduce") RegisterReduceConverters(r);
  if (family == "control") RegisterControlConverters(r);
  return r.Keys();
}

TEST(FamiliesTest, ListsMatchRegistration) {
  const bool print = std::getenv("KILN_PRINT_FAMILIES") != nullptr;
  ASSERT_EQ(absl::StrJoin(ConverterFamilies(), ","), "elementwise,nn,tensor,reduce,control");
  for (const std::string& family : ConverterFamilies()) {
    std::vector<std::string> got = Registered(family);
    EXPECT_FALSE(got.empty()) << family;
    if (print) {
      std::printf("      {\"%s\",\n       {", family.c_str());
      for (size_t i = 0; i < got.size(); ++i)
        std::printf("%s\"%s\",", i % 6 == 5 ? "\n        " : (i ? " " : ""), got[i].c_str());
      std::printf("}},\n");
    }
    EXPECT_EQ(absl::StrJoin(FamilyOps(family), " "), absl::StrJoin(got, " "))
        << "frontends/onnx/families.cc is out of date for family '" << family
        << "': regenerate it with KILN_PRINT_FAMILIES=1 (see the file's header)";
  }
  EXPECT_TRUE(FamilyOps("no such family").empty());
}

// No operator is in two families (a build without one would otherwise call
// an operator it still has absent).
TEST(FamiliesTest, FamiliesAreDisjoint) {
  std::vector<std::string> all;
  for (const std::string& family : ConverterFamilies())
    for (const std::string& k : FamilyOps(family)) all.push_back(k);
  std::sort(all.begin(), all.end());
  EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end());
}

TEST(FamiliesTest, AbsentFamilyIsReported) {
  ConverterRegistry r;
  RegisterElementwiseConverters(r);
  r.AddAbsentFamily("nn", FamilyOps("nn"));
  EXPECT_EQ(r.AbsentFamily("", "Conv"), "nn");
  EXPECT_EQ(r.AbsentFamily("ai.onnx", "Conv"), "nn");
  EXPECT_EQ(r.AbsentFamily("", "Relu"), "");  // registered
  EXPECT_EQ(r.AbsentFamily("", "NoSuchOp"), "");
}

}  // namespace
}  // namespace kiln::onnx_frontend
