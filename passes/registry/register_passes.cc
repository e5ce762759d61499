// RegisterAllPasses: every graph pass of this build under its stable name.
//
// The whole set by default. A selective build (docs/selective_builds.md,
// //c_api/variants) compiles this same file with KILN_SELECTED_PASSES and one
// KILN_PASS_<Name> per pass it holds; each pass it leaves out is registered as
// absent, so asking for it says "not in this build" instead of "unknown".
// Registration is explicit: no static initializers.
#include "passes/registry/register_passes.h"

#include <mutex>

#include "passes/infra/pass.h"

#if !defined(KILN_SELECTED_PASSES)
#define KILN_PASS_InferType 1
#define KILN_PASS_SimplifyInference 1
#define KILN_PASS_DeadCodeElimination 1
#define KILN_PASS_EliminateCommonSubexpr 1
#define KILN_PASS_SimplifyExpr 1
#define KILN_PASS_CanonicalizeOps 1
#define KILN_PASS_ToANormalForm 1
#define KILN_PASS_ToGraphNormalForm 1
#define KILN_PASS_Inline 1
#define KILN_PASS_LambdaLift 1
#define KILN_PASS_FoldConstant 1
#define KILN_PASS_DynamicToStatic 1
#define KILN_PASS_FoldScaleAxis 1
#define KILN_PASS_ConvertLayout 1
#define KILN_PASS_AlterOpLayout 1
#define KILN_PASS_FuseOps 1
#endif

#ifdef KILN_PASS_InferType
#include "passes/infer_type/infer_type.h"
#endif
#ifdef KILN_PASS_SimplifyInference
#include "passes/simplify_inference/simplify_inference.h"
#endif
#ifdef KILN_PASS_DeadCodeElimination
#include "passes/dead_code_elimination/dead_code_elimination.h"
#endif
#ifdef KILN_PASS_EliminateCommonSubexpr
#include "passes/eliminate_common_subexpr/eliminate_common_subexpr.h"
#endif
#ifdef KILN_PASS_SimplifyExpr
#include "passes/simplify_expr/simplify_expr.h"
#endif
#ifdef KILN_PASS_CanonicalizeOps
#include "passes/canonicalize_ops/canonicalize_ops.h"
#endif
#ifdef KILN_PASS_ToANormalForm
#include "passes/to_a_normal_form/to_a_normal_form.h"
#endif
#ifdef KILN_PASS_ToGraphNormalForm
#include "passes/to_graph_normal_form/to_graph_normal_form.h"
#endif
#ifdef KILN_PASS_Inline
#include "passes/inline/inline.h"
#endif
#ifdef KILN_PASS_LambdaLift
#include "passes/lambda_lift/lambda_lift.h"
#endif
#ifdef KILN_PASS_FoldConstant
#include "passes/fold_constant/fold_constant.h"
#endif
#ifdef KILN_PASS_DynamicToStatic
#include "passes/dynamic_to_static/dynamic_to_static.h"
#endif
#ifdef KILN_PASS_FoldScaleAxis
#include "passes/fold_scale_axis/fold_scale_axis.h"
#endif
#ifdef KILN_PASS_ConvertLayout
#include "passes/convert_layout/convert_layout.h"
#endif
#ifdef KILN_PASS_AlterOpLayout
#include "passes/alter_op_layout/alter_op_layout.h"
#endif
#ifdef KILN_PASS_FuseOps
#include "passes/fuse_ops/fuse_ops.h"
#endif

namespace kiln::passes {

// KILN_REGISTER(Name, factory) when the pass is in the build, KILN_ABSENT(Name)
// otherwise; names are unique, and a name already taken (e.g. by a test)
// keeps its factory.
#define KILN_REGISTER(name, factory) (void)r.Register(#name, factory)
#define KILN_ABSENT(name) r.RegisterAbsent(#name)

void RegisterAllPasses() {
  static std::once_flag once;
  std::call_once(once, [] {
    PassRegistry& r = PassRegistry::Global();
#ifdef KILN_PASS_InferType
    KILN_REGISTER(InferType, InferType);
#else
    KILN_ABSENT(InferType);
#endif
#ifdef KILN_PASS_SimplifyInference
    KILN_REGISTER(SimplifyInference, SimplifyInference);
#else
    KILN_ABSENT(SimplifyInference);
#endif
#ifdef KILN_PASS_DeadCodeElimination
    KILN_REGISTER(DeadCodeElimination, DeadCodeElimination);
#else
    KILN_ABSENT(DeadCodeElimination);
#endif
#ifdef KILN_PASS_EliminateCommonSubexpr
    KILN_REGISTER(EliminateCommonSubexpr, EliminateCommonSubexpr);
#else
    KILN_ABSENT(EliminateCommonSubexpr);
#endif
#ifdef KILN_PASS_SimplifyExpr
    KILN_REGISTER(SimplifyExpr, SimplifyExpr);
#else
    KILN_ABSENT(SimplifyExpr);
#endif
#ifdef KILN_PASS_CanonicalizeOps
    KILN_REGISTER(CanonicalizeOps, CanonicalizeOps);
#else
    KILN_ABSENT(CanonicalizeOps);
#endif
#ifdef KILN_PASS_ToANormalForm
    KILN_REGISTER(ToANormalForm, ToANormalForm);
#else
    KILN_ABSENT(ToANormalForm);
#endif
#ifdef KILN_PASS_ToGraphNormalForm
    KILN_REGISTER(ToGraphNormalForm, ToGraphNormalForm);
#else
    KILN_ABSENT(ToGraphNormalForm);
#endif
#ifdef KILN_PASS_Inline
    KILN_REGISTER(Inline, Inline);
#else
    KILN_ABSENT(Inline);
#endif
#ifdef KILN_PASS_LambdaLift
    KILN_REGISTER(LambdaLift, LambdaLift);
#else
    KILN_ABSENT(LambdaLift);
#endif
#ifdef KILN_PASS_FoldConstant
    KILN_REGISTER(FoldConstant, FoldConstant);
#else
    KILN_ABSENT(FoldConstant);
#endif
#ifdef KILN_PASS_DynamicToStatic
    KILN_REGISTER(DynamicToStatic, DynamicToStatic);
#else
    KILN_ABSENT(DynamicToStatic);
#endif
#ifdef KILN_PASS_FoldScaleAxis
    KILN_REGISTER(FoldScaleAxis, FoldScaleAxis);
#else
    KILN_ABSENT(FoldScaleAxis);
#endif
#ifdef KILN_PASS_ConvertLayout
    // By name, ConvertLayout converts convolutions to NHWC (TVM's usual
    // request); callers wanting other layouts build ConvertLayout(desired).
    KILN_REGISTER(ConvertLayout,
                  [] { return ConvertLayout({{"nn.conv2d", {"NHWC", "default"}}}); });
#else
    KILN_ABSENT(ConvertLayout);
#endif
#ifdef KILN_PASS_AlterOpLayout
    KILN_REGISTER(AlterOpLayout, AlterOpLayout);
#else
    KILN_ABSENT(AlterOpLayout);
#endif
#ifdef KILN_PASS_FuseOps
    KILN_REGISTER(FuseOps, FuseOps);
#else
    KILN_ABSENT(FuseOps);
#endif
  });
}

#undef KILN_REGISTER
#undef KILN_ABSENT

}  // namespace kiln::passes
