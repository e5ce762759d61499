"""Selective builds of libkiln.so (docs/selective_builds.md).

kiln_c_api_variant(name, frontends, passes, onnx_families, codegens) builds
lib<name>.so: the whole kiln.h ABI (every function exported, so a program
linked against one build runs against another), holding only

  frontends      "onnx" and/or "text" (the .kir parser; printing is always in);
  passes         graph passes by name (passes/registry/passes.bzl);
  onnx_families  ONNX converter families (frontends/onnx/families.bzl), with "onnx";
  codegens       ["llvm"], or [] for a build that imports, prints and optimizes
                 but does not compile (no lowering, no LLVM linked).

What is left out is reported as such: an absent frontend, pass, converter
family or code generator gives KILN_UNIMPLEMENTED saying it is not in this
build. Registration is explicit (the registries are compiled for the build,
with its choice as preprocessor definitions): nothing depends on static
initializers. It also makes <name>_api (the static library behind the .so)
and <name>_kiln, the `kiln` command line on this build.
"""

load("//:defs.bzl", "kiln_cc_binary", "kiln_cc_library")
load("//frontends/onnx:families.bzl", "kiln_onnx_converters")
load("//passes/registry:passes.bzl", "kiln_pass_registry")

_FRONTENDS = ["onnx", "text"]
_CODEGENS = ["llvm"]

def kiln_c_api_variant(name, frontends, passes, onnx_families = [], codegens = [], visibility = None):
    for f in frontends:
        if f not in _FRONTENDS:
            fail("kiln_c_api_variant(%s): no frontend '%s' (the frontends: %s)" %
                 (name, f, ", ".join(_FRONTENDS)))
    for c in codegens:
        if c not in _CODEGENS:
            fail("kiln_c_api_variant(%s): no code generator '%s' (the code generators: %s)" %
                 (name, c, ", ".join(_CODEGENS)))
    if onnx_families and "onnx" not in frontends:
        fail("kiln_c_api_variant(%s): onnx_families without the onnx frontend" % name)
    if "onnx" in frontends and not onnx_families:
        fail("kiln_c_api_variant(%s): the onnx frontend needs at least one converter family" % name)
    if codegens:
        for p in ["InferType", "FuseOps"]:
            if p not in passes:
                fail("kiln_c_api_variant(%s): compiling needs the pass %s" % (name, p))

    kiln_pass_registry(name = name + "_passes", passes = passes)

    srcs = [
        "//c_api:api_internal.cc",
        "//c_api:api_internal.h",
        "//c_api:evaluate_api.cc",
        "//c_api:frontends.h",
        "//c_api:kiln_api.cc",
    ]
    deps = [
        ":" + name + "_passes",
        "//c_api:graph_dot",
        "//c_api:headers",
        "//frontends/onnx:importer_headers",
        "//interpreter",
        "//ir",
        "//ir:status_macros",
        "//passes:pipeline",
        "//passes/infra:pass",
        "//passes/registry:interface",
        "//runtime_c:npy",
        "//runtime_c:runtime",
        "//runtime_c:status",
        "//runtime_c:threadpool",
        "//types:infer_type",
        "@absl",
    ]
    if "onnx" in frontends:
        kiln_onnx_converters(name = name + "_onnx_converters", families = onnx_families)
        srcs.append("//c_api:frontend_onnx.cc")
        deps += ["//frontends/onnx:importer_core", ":" + name + "_onnx_converters"]
    else:
        srcs.append("//c_api:frontend_onnx_absent.cc")
    if "text" in frontends:
        srcs.append("//c_api:frontend_text.cc")
        deps.append("//ir:text_file")
    else:
        srcs.append("//c_api:frontend_text_absent.cc")
    if "llvm" in codegens:
        kiln_cc_library(
            name = name + "_compiler",
            srcs = ["//c_api:compiler.cc"],
            hdrs = ["//c_api:compiler.h"],
            deps = [
                ":" + name + "_passes",
                # compiler.cc also handles "cuda ..." targets (issue 18): a
                # variant with the llvm codegen links the CUDA code generator
                # too (NVRTC only when the toolkit is present at build time).
                "//codegen_cuda:compile",
                "//codegen_cuda:device_code",
                "//codegen_llvm",
                "//codegen_llvm:export",
                "//ir",
                "//ir:status_macros",
                "//lowering:graph_plan",
                "//lowering:lower",
                "//lowering/vm:compiler",
                "//passes:pipeline",
                "//passes/infra:pass",
                "//passes/registry:interface",
                "//types:infer_type",
                "@absl",
            ],
        )
        srcs.append("//c_api:compile_api.cc")
        deps += [
            ":" + name + "_compiler",
            "//codegen_llvm",
            "//ir:tir",
            "//lowering:lower",
        ]
    else:
        srcs.append("//c_api:compile_absent.cc")

    kiln_cc_library(
        name = name + "_api",
        srcs = srcs,
        copts = ["-g"],
        # libkiln.so must hold every function of kiln.h.
        alwayslink = True,
        # No shared library of its own (as //c_api:kiln_api): runtime_c's
        # hidden helpers resolve only in a static link.
        linkstatic = True,
        deps = deps,
        visibility = visibility,
    )
    # Versioned like libkiln.so: the file is named by its SONAME
    # lib<name>.so.0, and :lib<name>.so is an alias of it.
    native.alias(
        name = "lib" + name + ".so",
        actual = ":lib" + name + ".so.0",
        visibility = visibility,
    )
    native.cc_binary(
        name = "lib" + name + ".so.0",
        additional_linker_inputs = ["//c_api:kiln.lds"],
        linkopts = [
            "-Wl,--version-script=$(location //c_api:kiln.lds)",
            "-Wl,--no-undefined",
            "-Wl,-soname,lib" + name + ".so.0",
            "-fuse-ld=lld",
        ],
        linkshared = True,
        visibility = visibility,
        deps = [":" + name + "_api"],
    )
    kiln_cc_binary(
        name = name + "_kiln",
        srcs = ["//tools:kiln.cc"],
        # Models it runs resolve the runtime's kiln_* functions from it.
        linkopts = ["-rdynamic"],
        visibility = visibility,
        deps = [
            ":" + name + "_api",
            "//tools:cli_core",
        ],
    )
