// dyn.reshape, dyn.broadcast_to, dyn.zeros, dyn.ones, dyn.full,
// dyn.strided_slice, dyn.expand_dims: the shape arguments' run-time values.
#include "gtest/gtest.h"
#include "interpreter/kernels.h"
#include "interpreter/test_util.h"
#include "ir/op.h"
#include "ir/op_attrs.h"

namespace kiln::interp::testing {
namespace {

using V = std::vector<double>;
using S = std::vector<int64_t>;

Ref<const HostTensor> I64(std::vector<int64_t> shape, const V& v) {
  return MakeT(DataType::Int(64), std::move(shape), v);
}

absl::StatusOr<Value> RunDyn(const char* op, std::vector<Ref<const HostTensor>> args,
                          Attrs attrs = nullptr) {
  std::vector<Value> vs;
  for (auto& t : args) vs.push_back(Value::Tensor(t));
  return EvalOp(GetOp(op).value(), attrs, vs);
}

Value Ok(absl::StatusOr<Value> v) {
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : Value();
}

void ExpectError(absl::StatusOr<Value> v, const std::string& msg) {
  ASSERT_FALSE(v.ok());
  EXPECT_NE(std::string(v.status().message()).find(msg), std::string::npos) << v.status();
}

TEST(Dyn, Reshape) {
  auto x = F32({2, 3}, {0, 1, 2, 3, 4, 5});
  Value r = Ok(RunDyn("dyn.reshape", {x, I64({2}, {3, -1})}));
  EXPECT_EQ(ShapeOf(r), (S{3, 2}));
  EXPECT_EQ(Doubles(r), (V{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(ShapeOf(Ok(RunDyn("dyn.reshape", {x, I32({3}, {0, 1, -1})}))), (S{2, 1, 3}));
  ExpectError(RunDyn("dyn.reshape", {x, I64({1}, {4})}),
              "dyn.reshape: cannot reshape Tensor[(2, 3), float32] with newshape (4)");
  ExpectError(RunDyn("dyn.reshape", {x, F32({1}, {6})}),
              "dyn.reshape: newshape must be an integer tensor");
}

TEST(Dyn, BroadcastTo) {
  Value b = Ok(RunDyn("dyn.broadcast_to", {F32({2, 1}, {1, 2}), I64({3}, {1, 2, 3})}));
  EXPECT_EQ(ShapeOf(b), (S{1, 2, 3}));
  EXPECT_EQ(Doubles(b), (V{1, 1, 1, 2, 2, 2}));
  ExpectError(RunDyn("dyn.broadcast_to", {F32({2}, {1, 2}), I64({1}, {3})}),
              "dyn.broadcast_to: cannot broadcast");
  ExpectError(RunDyn("dyn.broadcast_to", {F32({2}, {1, 2}), I64({1}, {-2})}),
              "dyn.broadcast_to: shape (-2) has a negative extent");
}

TEST(Dyn, ZerosOnesFull) {
  Attrs i8 = Attrs(MakeRef<InitOpAttrs>());
  const_cast<InitOpAttrs*>(static_cast<const InitOpAttrs*>(i8.get()))->dtype = DataType::Int(8);
  Value z = Ok(RunDyn("dyn.zeros", {I64({2}, {2, 2})}));
  EXPECT_EQ(ShapeOf(z), (S{2, 2}));
  EXPECT_EQ(z.tensor()->dtype(), DataType::Float(32));
  EXPECT_EQ(Doubles(z), (V{0, 0, 0, 0}));
  Value o = Ok(RunDyn("dyn.ones", {I32({1}, {3})}, i8));
  EXPECT_EQ(o.tensor()->dtype(), DataType::Int(8));
  EXPECT_EQ(Doubles(o), (V{1, 1, 1}));
  Value f = Ok(RunDyn("dyn.full", {F32({}, {2.75}), I64({2}, {1, 2})}, i8));
  EXPECT_EQ(ShapeOf(f), (S{1, 2}));
  EXPECT_EQ(Doubles(f), (V{2, 2}));  // converted as cast does: truncated
  Value ff = Ok(RunDyn("dyn.full", {I32({}, {-7}), I64({1}, {2})}));
  EXPECT_EQ(Doubles(ff), (V{-7, -7}));
  EXPECT_EQ(ShapeOf(Ok(RunDyn("dyn.zeros", {I64({0}, {})}))), (S{}));
  EXPECT_EQ(Doubles(Ok(RunDyn("dyn.zeros", {I64({2}, {0, 3})}))), (V{}));
  ExpectError(RunDyn("dyn.full", {F32({1}, {1}), I64({1}, {2})}),
              "dyn.full: fill_value must be a 0-D tensor");
  ExpectError(RunDyn("dyn.ones", {I64({2, 1}, {1, 1})}), "dyn.ones: shape must be a 1-D tensor");
}

TEST(Dyn, StridedSlice) {
  auto x = F32({2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
  Value s = Ok(RunDyn("dyn.strided_slice", {x, I64({2}, {0, 1}), I64({2}, {2, 4}), I64({2}, {1, 2})}));
  EXPECT_EQ(ShapeOf(s), (S{2, 2}));
  EXPECT_EQ(Doubles(s), (V{1, 3, 5, 7}));
  Value r = Ok(RunDyn("dyn.strided_slice", {x, I64({1}, {1}), I64({1}, {-3}), I64({1}, {-1})}));
  // As NumPy x[1:-3:-1]: -3 clamps to before row 0, so rows 1 then 0.
  EXPECT_EQ(ShapeOf(r), (S{2, 4}));
  EXPECT_EQ(Doubles(r), (V{4, 5, 6, 7, 0, 1, 2, 3}));
  Attrs size = Attrs(MakeRef<DynStridedSliceAttrs>());
  const_cast<DynStridedSliceAttrs*>(static_cast<const DynStridedSliceAttrs*>(size.get()))
      ->slice_mode = "size";
  Value z = Ok(RunDyn("dyn.strided_slice",
                   {x, I64({2}, {1, 1}), I64({2}, {1, -1}), I64({2}, {1, 1})}, size));
  EXPECT_EQ(Doubles(z), (V{5, 6, 7}));
}

TEST(Dyn, ExpandDims) {
  auto x = F32({2, 3}, {0, 1, 2, 3, 4, 5});
  EXPECT_EQ(ShapeOf(Ok(RunDyn("dyn.expand_dims", {x, I64({}, {1})}))), (S{2, 1, 3}));
  EXPECT_EQ(ShapeOf(Ok(RunDyn("dyn.expand_dims", {x, I32({}, {-1})}))), (S{2, 3, 1}));
  ExpectError(RunDyn("dyn.expand_dims", {x, I64({}, {5})}), "dyn.expand_dims: axis 5");
  ExpectError(RunDyn("dyn.expand_dims", {x, I64({1}, {0})}), "axis must be a 0-D tensor");
}

}  // namespace
}  // namespace kiln::interp::testing
