"""The ONNX converter families a selective build can choose (docs/selective_builds.md).

kiln_onnx_converters(name, families) builds RegisterAllConverters() holding
only `families`; the operators of the others (families.cc) are recorded as
absent, so a model using one hears that its family is not in this build.
Link it with //frontends/onnx:importer_core instead of :importer.
"""

load("//:defs.bzl", "kiln_cc_library")

KILN_ONNX_FAMILIES = ["elementwise", "nn", "tensor", "reduce", "control"]

def kiln_onnx_converters(name, families, visibility = None):
    for f in families:
        if f not in KILN_ONNX_FAMILIES:
            fail("kiln_onnx_converters(%s): no converter family '%s'; the families: %s" %
                 (name, f, ", ".join(KILN_ONNX_FAMILIES)))
    kiln_cc_library(
        name = name,
        srcs = ["//frontends/onnx:register_all.cc"],
        local_defines = ["KILN_SELECTED_ONNX_FAMILIES"] +
                        ["KILN_ONNX_FAMILY_" + f for f in families],
        deps = ["//frontends/onnx:converter"] +
               ["//frontends/onnx:convert_" + f for f in families],
        # The importer / compiler that calls RegisterAll*() does not depend
        # on this library (the build chooses it), so a static link may list it
        # first: linked whole, its one function is there whatever the order.
        alwayslink = True,
        visibility = visibility,
    )
