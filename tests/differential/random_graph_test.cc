// The generator's programs are well-typed, varied, deterministic per seed,
// and survive a round trip through the text format.
#include "tests/differential/random_graph.h"

#include <set>
#include <string>

#include "gtest/gtest.h"
#include "ir/op.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/structural.h"
#include "ir/traversal.h"
#include "types/infer_type.h"

namespace kiln::testing {
namespace {

TEST(RandomGraphTest, ProgramsAreWellTypedAndVaried) {
  std::set<std::string> ops_seen;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    RandomGraphOptions opts;
    opts.seed = seed;
    auto m = RandomModule(opts);
    ASSERT_TRUE(m.ok()) << m.status();
    auto typed = types::InferType(*m);
    ASSERT_TRUE(typed.ok()) << "seed " << seed << ": " << typed.status();
    Function main = *typed->Lookup("main");
    int calls = 0;
    for (const Expr& e : PostOrder(main)) {
      if (const auto* c = e.as<CallNode>()) {
        ++calls;
        if (const auto* op = c->op.as<OpNode>()) ops_seen.insert(op->name());
      }
    }
    EXPECT_GE(calls, 5) << "seed " << seed;
    auto parsed = ParseModule(PrintModule(*typed));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_TRUE(ModuleEqual(*typed, *parsed)) << "seed " << seed;
  }
  // The families all show up across 60 seeds.
  for (const char* op : {"nn.conv2d", "nn.dense", "add", "nn.softmax", "reshape", "transpose",
                         "nn.batch_norm", "nn.max_pool2d", "concatenate", "strided_slice", "sum"}) {
    EXPECT_TRUE(ops_seen.count(op)) << op << " never generated";
  }
}

TEST(RandomGraphTest, DeterministicPerSeed) {
  RandomGraphOptions opts;
  opts.seed = 42;
  auto a = RandomModule(opts);
  auto b = RandomModule(opts);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(ModuleEqual(*a, *b));
  opts.seed = 43;
  auto c = RandomModule(opts);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(ModuleEqual(*a, *c));
}

TEST(RandomGraphTest, InputsMatchParameters) {
  RandomGraphOptions opts;
  auto m = RandomModule(opts);
  ASSERT_TRUE(m.ok());
  Function main = *m->Lookup("main");
  auto inputs = RandomInputs(main, 5);
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  ASSERT_EQ(inputs->size(), main->params.size());
  for (const auto& t : *inputs) {
    for (int64_t i = 0; i < t->num_elements(); ++i) {
      EXPECT_LE(std::abs(t->data<float>()[i]), 2.0f);
    }
  }
}

}  // namespace
}  // namespace kiln::testing
