// File: lowering/te/lower_test.cc
#include "lowering/te/lower.h"

#include <iostream>

#include "gtest/gtest.h"
#include "ir/tir_printer.h"
#include "lowering/te/te_test_util.h"

namespace kiln::te {
namespace {

using tir::IntImm;

TEST(Scratch, Print) {
  Tensor a = Placeholder({IntImm(10)}, DataType::Float(32), "A");
  Tensor b = Compute({IntImm(10)}, [&](const std::vector<Var>& i) { return a({i[0]}) * tir::FloatImm(2.0); }, "B");
  Tensor c = Compute({IntImm(8)}, [&](const std::vector<Var>& i) {
    return b({i[0]}) + b({i[0] + 1}) + b({i[0] + 2}); }, "C");
  Schedule s = CreateSchedule({c});
  Stage* sc = s[c];
  auto sp = sc->split(sc->leaf_iter_vars[0], 3);
  ASSERT_TRUE(sp.ok());
  ASSERT_TRUE(s[b]->compute_at(sc, sp->outer).ok());
  auto f = LowerSchedule(s, {a, c}, "f");
  ASSERT_TRUE(f.ok()) << f.status();
  std::cout << tir::ToText(*f) << std::endl;
  std::vector<double> av = testing::RandomData(10, 1), cv(8);
  ASSERT_TRUE(testing::RunPrimFunc(*f, {&av, &cv}).ok());
  for (int i = 0; i < 8; ++i) {
    double e = 0;
    for (int k = 0; k < 3; ++k) e += static_cast<float>(av[i + k] * 2);
    EXPECT_NEAR(cv[i], e, 1e-5);
  }

  Tensor x = Placeholder({IntImm(4), IntImm(6)}, DataType::Float(32), "X");
  IterVar k = ReduceAxis({IntImm(0), IntImm(6)}, "k");
  Tensor y = Compute({IntImm(4)}, [&](const std::vector<Var>& i) { return Sum(x({i[0], k->var}), {k}); }, "Y");
  Schedule s2 = CreateSchedule({y});
  auto ks = s2[y]->split(k, 4);
  ASSERT_TRUE(ks.ok());
  auto rf = s2.rfactor(y, ks->inner);
  ASSERT_TRUE(rf.ok()) << rf.status();
  auto f2 = LowerSchedule(s2, {x, y}, "g");
  ASSERT_TRUE(f2.ok()) << f2.status();
  std::cout << tir::ToText(*f2) << std::endl;
}

}  // namespace
}  // namespace kiln::te
