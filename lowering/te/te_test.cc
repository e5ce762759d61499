// File: lowering/te/te_test.cc
#include "lowering/te/te.h"

#include "gtest/gtest.h"
#include "ir/tir_functor.h"
#include "ir/tir_printer.h"

namespace kiln::te {
namespace {

using tir::ExprKind;
using tir::IntImm;

const DataType kF32 = DataType::Float(32);

std::vector<PrimExpr> E(const std::vector<Var>& v) { return {v.begin(), v.end()}; }

TEST(TeTest, PlaceholderAndComputeShapesAxesAndReads) {
  Var n = tir::MakeVar("n");
  Tensor a = Placeholder({n, IntImm(8)}, kF32, "A");
  EXPECT_EQ(a.name(), "A");
  EXPECT_EQ(a.ndim(), 2);
  EXPECT_EQ(a.dtype(), kF32);
  Tensor b = Compute(a.shape(), [&](const std::vector<Var>& i) { return a(E(i)) + a(E(i)); }, "B",
                     "elemwise");
  const OperationNode& op = *b.op();
  EXPECT_EQ(op.kind, OpKind::kCompute);
  EXPECT_EQ(op.tag, "elemwise");
  ASSERT_EQ(op.axis.size(), 2u);
  EXPECT_EQ(op.axis[0]->var->name, "ax0");
  EXPECT_EQ(op.axis[1]->var->name, "ax1");
  EXPECT_TRUE(tir::IsConstValue(op.axis[0]->dom.min, 0));
  EXPECT_EQ(op.axis[0]->dom.extent.get(), n.get());
  EXPECT_EQ(op.axis[1]->iter_kind, tir::IterKind::kDataPar);
  EXPECT_EQ(b.dtype(), kF32);
  // Reads: ProducerLoad with the op and the output index.
  const PrimExpr& body = op.body[0];
  ASSERT_EQ(body->kind, ExprKind::kAdd);
  const PrimExpr& load = body->args[0];
  EXPECT_EQ(load->kind, ExprKind::kProducerLoad);
  EXPECT_EQ(load->producer.get(), a.op().get());
  EXPECT_EQ(load->int_value, 0);
  EXPECT_EQ(load->args[0].get(), op.axis[0]->var.get());
  // Distinct inputs, in first-use order.
  std::vector<Tensor> in = op.InputTensors();
  ASSERT_EQ(in.size(), 1u);
  EXPECT_EQ(in[0], a);
}

TEST(TeTest, MultiOutputComputeNamesAndValueIndex) {
  Tensor a = Placeholder({IntImm(4)}, kF32, "A");
  std::vector<Tensor> outs = ComputeMulti(
      {IntImm(4)},
      [&](const std::vector<Var>& i) {
        return std::vector<PrimExpr>{a({i[0]}), tir::Cast(DataType::Int(32), a({i[0]}))};
      },
      "M");
  ASSERT_EQ(outs.size(), 2u);
  EXPECT_EQ(outs[0].name(), "M");
  EXPECT_EQ(outs[1].name(), "M.v1");
  EXPECT_EQ(outs[1].dtype(), DataType::Int(32));
  PrimExpr r = outs[1]({IntImm(2)});
  EXPECT_EQ(r->int_value, 1);
  EXPECT_EQ(r->dtype, DataType::Int(32));
  EXPECT_TRUE(ValidateCompute(outs).ok());
}

TEST(TeTest, ReductionsAndArgMaxFlatIndex) {
  Tensor a = Placeholder({IntImm(3), IntImm(4), IntImm(5)}, kF32, "A");
  IterVar j = ReduceAxis({IntImm(0), IntImm(4)}, "j");
  IterVar k = ReduceAxis({IntImm(0), IntImm(5)}, "k");
  Tensor s = Compute({IntImm(3)}, [&](const std::vector<Var>& i) {
    return Sum(a({i[0], j->var, k->var}), {j, k});
  }, "S");
  EXPECT_EQ(s.op()->reduce_axis.size(), 2u);
  EXPECT_EQ(s.op()->body[0]->reduce_kind, tir::ReduceKind::kSum);
  Tensor am = Compute({IntImm(3)}, [&](const std::vector<Var>& i) {
    return ArgMax(a({i[0], j->var, k->var}), {j, k}, /*select_last_index=*/true);
  }, "AM");
  const PrimExpr& red = am.op()->body[0];
  EXPECT_EQ(red->reduce_kind, tir::ReduceKind::kArgMax);
  EXPECT_EQ(red->int_value, 1);
  EXPECT_EQ(red->dtype, DataType::Int(64));
  ASSERT_EQ(red->args.size(), 3u);
  // Row-major over (j, k): j * 5 + k.
  EXPECT_EQ(tir::ToText(red->args[2]), "((j * 5) + k)");
  EXPECT_TRUE(ValidateCompute({s, am}).ok());
}

TEST(TeTest, ValidateRejectsNestedReductionAndBadReads) {
  Tensor a = Placeholder({IntImm(4), IntImm(4)}, kF32, "A");
  IterVar k = ReduceAxis({IntImm(0), IntImm(4)}, "k");
  Tensor nested = Compute({IntImm(4)}, [&](const std::vector<Var>& i) {
    return Sum(a({i[0], k->var}), {k}) + tir::FloatImm(1.0);
  }, "Nested");
  absl::Status st = ValidateCompute({nested});
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("'Nested'"), std::string::npos) << st;
  EXPECT_NE(st.message().find("only at the top"), std::string::npos) << st;

  Tensor wrong_rank = Compute({IntImm(4)}, [&](const std::vector<Var>& i) { return a({i[0]}); },
                              "WrongRank");
  st = ValidateCompute({wrong_rank});
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("1 indices, but it has 2 dims"), std::string::npos) << st;

  Tensor int32_index = Compute({IntImm(4)}, [&](const std::vector<Var>& i) {
    return a({i[0], tir::Cast(DataType::Int(32), i[0])});
  }, "I32");
  st = ValidateCompute({int32_index});
  EXPECT_NE(st.message().find("must be int64"), std::string::npos) << st;

  Tensor leak = Compute({IntImm(4)}, [&](const std::vector<Var>&) { return a({k->var, k->var}); },
                        "Leak");
  Tensor rowsum = Compute({IntImm(4)}, [&](const std::vector<Var>& i) {
    return Sum(a({i[0], k->var}), {k});
  }, "RowSum");
  EXPECT_TRUE(ValidateCompute({rowsum}).ok());
  st = ValidateCompute({rowsum, leak});
  EXPECT_NE(st.message().find("used outside its reduction"), std::string::npos) << st;

  // The error is found through the consumer, and names the bad op.
  Tensor ok = Compute({IntImm(4)}, [&](const std::vector<Var>& i) { return nested({i[0]}); }, "Ok");
  st = ValidateCompute({ok});
  EXPECT_NE(st.message().find("'Nested'"), std::string::npos) << st;
}

TEST(TeTest, PostOrderOpsIsTopological) {
  Tensor a = Placeholder({IntImm(4)}, kF32, "A");
  Tensor b = Placeholder({IntImm(4)}, kF32, "B");
  Tensor c = Compute({IntImm(4)}, [&](const std::vector<Var>& i) { return a({i[0]}) * b({i[0]}); }, "C");
  Tensor d = Compute({IntImm(4)}, [&](const std::vector<Var>& i) { return c({i[0]}) + a({i[0]}); }, "D");
  std::vector<Operation> ops = PostOrderOps({d});
  std::vector<std::string> names;
  for (const Operation& op : ops) names.push_back(op->name);
  EXPECT_EQ(names, (std::vector<std::string>{"A", "B", "C", "D"}));
  // Shared ops appear once, even reached from two outputs.
  EXPECT_EQ(PostOrderOps({d, c}).size(), 4u);
}

TEST(TeTest, ReplaceTensorReads) {
  Tensor a = Placeholder({IntImm(4)}, kF32, "A");
  Tensor b = Placeholder({IntImm(4)}, kF32, "B");
  Tensor c = Compute({IntImm(4)}, [&](const std::vector<Var>& i) { return a({i[0]}) + b({i[0]}); }, "C");
  PrimExpr r = ReplaceTensorReads(c.op()->body[0], [&](const Tensor& t, const std::vector<PrimExpr>& idx) -> PrimExpr {
    if (t != a) return nullptr;
    return b({idx[0] + 1});
  });
  std::vector<Tensor> reads;
  tir::PostOrderVisit(r, [&](const tir::ExprNode* e) {
    if (e->kind == ExprKind::kProducerLoad) {
      reads.emplace_back(Ref<const OperationNode>(const_cast<OperationNode*>(
                             dynamic_cast<const OperationNode*>(e->producer.get()))),
                         0);
    }
  });
  ASSERT_EQ(reads.size(), 2u);
  EXPECT_EQ(reads[0], b);
  EXPECT_EQ(reads[1], b);
  EXPECT_EQ(r->args[0]->args[0]->kind, ExprKind::kAdd);  // the index idx + 1
}

}  // namespace
}  // namespace kiln::te
