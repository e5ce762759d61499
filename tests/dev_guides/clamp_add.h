// File: tests/dev_guides/clamp_add.h (tests only)
//
// `test.clamp_add`, the operator that docs/dev/adding_an_operator.md adds,
// facet by facet, exactly as the guide says (a real operator does the same
// in ir/, types/, interpreter/, lowering/ and frontends/onnx/):
//
//   test.clamp_add(%lhs, %rhs, a_min=0f, a_max=6f)  ==  clip(add(%lhs, %rhs), a_min, a_max)
//
// float32 or float64 operands of one dtype, NumPy broadcasting, the sum
// rounded to the dtype before it is clamped (so it agrees with add + clip bit
// for bit). The defaults, [0, 6], make it "a residual add followed by ReLU6".
//
//   KILN_RETURN_IF_ERROR(kiln::dev_guides::RegisterClampAdd());   // every facet
//   // now `test.clamp_add(...)` parses, type-checks, interprets, lowers and compiles
//
// Each facet has its own registration function (and source file) so that a
// test can register only some of them and see what a missing facet does.
#ifndef KILN_TESTS_DEV_GUIDES_CLAMP_ADD_H_
#define KILN_TESTS_DEV_GUIDES_CLAMP_ADD_H_

#include "absl/status/status.h"
#include "ir/attrs.h"

namespace kiln::dev_guides {

inline constexpr char kClampAddOp[] = "test.clamp_add";
// The name of its (test-only) operator strategy, lowering/strategy style.
inline constexpr char kClampAddStrategy[] = "clamp_add_vector.test";

// The attribute struct: one list of fields (VisitAttrs) drives printing,
// parsing, structural equality and hashing.
struct ClampAddAttrs : AttrsBase<ClampAddAttrs> {
  static constexpr const char* kTypeKey = "ClampAddAttrs";
  double a_min = 0;
  double a_max = 6;
  void VisitAttrs(AttrVisitor* v) override {
    v->Visit("a_min", &a_min);
    v->Visit("a_max", &a_max);
  }
};

// ir facet: name, inputs, attributes, fusion pattern (clamp_add_op.cc).
absl::Status RegisterClampAddOp();
// types facet "TypeRelation" (clamp_add_relation.cc).
absl::Status RegisterClampAddRelation();
// interpreter facet "Interpret" (clamp_add_kernel.cc).
absl::Status RegisterClampAddKernel();
// lowering facet "Compute" (clamp_add_compute.cc).
absl::Status RegisterClampAddCompute();
// lowering/strategy: an implementation of the op (clamp_add_strategy.cc).
absl::Status RegisterClampAddStrategy();

// All of the above, once (later calls return the first result).
absl::Status RegisterClampAdd();

}  // namespace kiln::dev_guides

#endif  // KILN_TESTS_DEV_GUIDES_CLAMP_ADD_H_
