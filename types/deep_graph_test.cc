// No traversal recurses on the C++ stack in proportion to graph depth: a
// 100,000-node chain prints, parses, compares, hashes and type-checks. The
// test runs its work on a thread with a small (1 MiB) stack so that any
// depth-proportional recursion overflows here rather than passing by luck.
#include <pthread.h>

#include <functional>
#include <string>

#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/structural.h"
#include "types/infer_type.h"
#include "types/model_zoo.h"

namespace kiln::types {
namespace {

constexpr int kLength = 100000;

// Runs `f` on a thread with a 1 MiB stack.
void OnSmallStack(std::function<void()> f) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 1 << 20);
  pthread_t thread;
  auto trampoline = [](void* arg) -> void* {
    (*static_cast<std::function<void()>*>(arg))();
    return nullptr;
  };
  ASSERT_EQ(pthread_create(&thread, &attr, trampoline, &f), 0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
}

void RoundTripAndCheck(bool as_lets) {
  auto m = AddChain(kLength, as_lets);
  ASSERT_TRUE(m.ok()) << m.status();

  std::string text = PrintModule(*m);
  EXPECT_GT(text.size(), static_cast<size_t>(kLength) * 10);

  auto parsed = ParseModule(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  auto diff = ModuleDifference(*m, *parsed);
  EXPECT_FALSE(diff.has_value()) << *diff;

  Function a = *m->Lookup("main");
  Function b = *parsed->Lookup("main");
  EXPECT_EQ(StructuralHash(a), StructuralHash(b));

  auto typed = InferType(*parsed);
  ASSERT_TRUE(typed.ok()) << typed.status();
  EXPECT_EQ(TypeToString((*typed->Lookup("main"))->checked_type()),
            "fn (Tensor[(1, 16), float32]) -> Tensor[(1, 16), float32]");

  // Printing with types also stays flat.
  std::string typed_text = PrintModule(*typed, {.show_types = true});
  EXPECT_NE(typed_text.find("ty=Tensor[(1, 16), float32]"), std::string::npos);
}

TEST(DeepGraphTest, GraphFormChain) {
  OnSmallStack([] { RoundTripAndCheck(/*as_lets=*/false); });
}

TEST(DeepGraphTest, LetChain) {
  OnSmallStack([] { RoundTripAndCheck(/*as_lets=*/true); });
}

TEST(DeepGraphTest, ModelsRoundTripThroughText) {
  OnSmallStack([] {
    for (auto m : {ResNet50(Dim::Var("n")), BertLayer(Dim(1), 128)}) {
      ASSERT_TRUE(m.ok()) << m.status();
      auto parsed = ParseModule(PrintModule(*m));
      ASSERT_TRUE(parsed.ok()) << parsed.status();
      auto diff = ModuleDifference(*m, *parsed);
      EXPECT_FALSE(diff.has_value()) << *diff;
    }
  });
}

}  // namespace
}  // namespace kiln::types
