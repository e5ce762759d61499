"""The graph passes a selective build can choose (docs/selective_builds.md).

KILN_PASSES maps each pass's registered name to its Bazel package; it must list
the same passes as register_passes.cc (//passes/registry:selection_test checks
it). kiln_pass_registry(name, passes) builds a registration library holding
only the named passes: the others are registered as absent, so asking for one
says it is not in this build.
"""

load("//:defs.bzl", "kiln_cc_library")

KILN_PASSES = {
    "InferType": "//passes/infer_type",
    "SimplifyInference": "//passes/simplify_inference",
    "DeadCodeElimination": "//passes/dead_code_elimination",
    "EliminateCommonSubexpr": "//passes/eliminate_common_subexpr",
    "SimplifyExpr": "//passes/simplify_expr",
    "CanonicalizeOps": "//passes/canonicalize_ops",
    "ToANormalForm": "//passes/to_a_normal_form",
    "ToGraphNormalForm": "//passes/to_graph_normal_form",
    "Inline": "//passes/inline",
    "LambdaLift": "//passes/lambda_lift",
    "FoldConstant": "//passes/fold_constant",
    "DynamicToStatic": "//passes/dynamic_to_static",
    "FoldScaleAxis": "//passes/fold_scale_axis",
    "ConvertLayout": "//passes/convert_layout",
    "AlterOpLayout": "//passes/alter_op_layout",
    "FuseOps": "//passes/fuse_ops",
}

def kiln_pass_registry(name, passes, visibility = None):
    """RegisterAllPasses() for a build holding only `passes` (names)."""
    for p in passes:
        if p not in KILN_PASSES:
            fail("kiln_pass_registry(%s): no pass named '%s'; kiln's passes: %s" %
                 (name, p, ", ".join(sorted(KILN_PASSES.keys()))))
    kiln_cc_library(
        name = name,
        srcs = ["//passes/registry:register_passes.cc"],
        local_defines = ["KILN_SELECTED_PASSES"] + ["KILN_PASS_" + p for p in passes],
        deps = ["//passes/registry:interface", "//passes/infra:pass"] +
               [KILN_PASSES[p] for p in passes],
        # The importer / compiler that calls RegisterAll*() does not depend
        # on this library (the build chooses it), so a static link may list it
        # first: linked whole, its one function is there whatever the order.
        alwayslink = True,
        visibility = visibility,
    )
