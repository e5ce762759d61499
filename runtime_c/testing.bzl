"""Test fixtures for runtime_c: small compiled-model artifacts built from C.

    load("//runtime_c:testing.bzl", "kiln_test_artifact")

    kiln_test_artifact(
        name = "add_relu",
        kernels = ["testdata/add_relu/add_relu.c"],
        meta = "testdata/add_relu/meta.json",
        graph = "testdata/add_relu/graph.json",
        params = ["testdata/add_relu/p0.npy"],
    )

    kiln_c_test(
        name = "loader_test",
        srcs = ["loader_test.c"],
        args = ["$(rootpath :add_relu)"],
        data = [":add_relu"],
        ...
    )
"""

load("//:defs.bzl", "KILN_C_COPTS")

_MAKE_BLOB = "//runtime_c/tools:make_blob"
_SEAL = "//runtime_c/tools:seal"
_KERNEL_ABI = "//runtime_c:kernel_abi"

def _unique(labels):
    """labels without repeats (a genrule's srcs may not repeat a file)."""
    out = []
    for label in labels:
        if label not in out:
            out.append(label)
    return out

def kiln_test_artifact(
        name,
        kernels,
        meta,
        graph,
        params = [],
        sections = {},
        visibility = None,
        testonly = True,
        tags = [],
        startfiles = False):
    """A sealed artifact `<name>.so` (docs/artifact.md) built from hand-written C kernels.

    What a real `kiln compile` produces, minus the compiler: the kernels and
    the blob are linked into one ELF shared library, then sealed (file_size and
    the whole-file checksum written into the blob header). Use it wherever a
    test needs a model file.

    Targets made (with `name = "m"`):
      :m              the sealed artifact, output file `m.so`. Put `:m` in a
                      test's `data` and pass `$(rootpath :m)` in `args`; the
                      test opens that path (relative to the runfiles root,
                      which is the test's working directory).
      :m_unsealed.so  the same library before sealing (its blob header has
                      file_size 0 and a bare-blob checksum): for tests of
                      sealing and of "never sealed" errors.
      :m_blob_src, :m_blob
                      internal: the generated C source holding the blob (from
                      //runtime_c/tools:make_blob) and its library.

    Args:
      name: target name; the output is `<name>.so`.
      kernels: C source files defining the kernels, each with the kernel ABI
        of kiln/kernel_abi.h (`int32_t f(DLTensor* const* args, int32_t
        num_args, KilnKernelContext* ctx)`), exported under the GRAPH's
        `func_name`s. They may `#include "kiln/kernel_abi.h"` and call the
        kiln_* functions; those stay undefined in the .so and resolve when the
        loading program (which links //runtime_c:threadpool) dlopens it.
        Compiled with kiln's C flags (C11, -pedantic -Wall -Wextra -Werror).
      meta: the META JSON file (docs/artifact.md "META"), stored verbatim.
      graph: the GRAPH JSON file (TVM graph-executor schema), stored verbatim.
      params: .npy files, one per parameter; each parameter is named after
        its file's stem (`testdata/m/p0.npy` -> "p0"), so the stems must be
        unique and must match the GRAPH's parameter node names.
      sections: optional extra sections, {kind number (string): file label},
        e.g. {"4": "ptx.txt"} for DEVICE_CODE or an unknown kind to test that
        readers skip it.
      visibility: visibility of `:<name>` and `:<name>_unsealed.so`.
      testonly: True by default (test fixtures only).
      tags: tags for every target made.
      startfiles: link the C start files (crti/crtbeginS: DT_INIT,
        .init_array) as a plain `cc -shared` does. False by default, as kiln
        links its artifacts (-nostartfiles): the loader refuses a library
        with constructors. True makes such a library, for the tests of that
        refusal.
    """
    blob_c = name + "_blob.c"
    section_args = []
    section_srcs = []
    for kind, label in sections.items():
        section_args.append("--section %s=$(location %s)" % (kind, label))
        section_srcs.append(label)
    native.genrule(
        name = name + "_blob_src",
        srcs = _unique([meta, graph] + params + section_srcs),
        outs = [blob_c],
        cmd = " ".join([
            "$(location %s)" % _MAKE_BLOB,
            "--meta $(location %s)" % meta,
            "--graph $(location %s)" % graph,
            "--out-c $@",
        ] + section_args + ["$(location %s)" % p for p in params]),
        tools = [_MAKE_BLOB],
        testonly = testonly,
        tags = tags,
        visibility = ["//visibility:private"],
    )

    # The blob is data, not code: never instrumented (as in a real artifact,
    # where it comes from an .incbin), even under --config=asan. alwayslink
    # keeps the object although no kernel refers to it.
    native.cc_library(
        name = name + "_blob",
        srcs = [blob_c],
        copts = KILN_C_COPTS + ["-fno-sanitize=all"],
        alwayslink = True,
        testonly = testonly,
        tags = tags,
        visibility = ["//visibility:private"],
    )
    # As in a real artifact (LLVM code, linked by export.cc): no start files,
    # so no constructors or destructors, and no sanitizer instrumentation,
    # whose module constructors the loader would refuse.
    native.cc_binary(
        name = name + "_unsealed.so",
        srcs = kernels,
        copts = KILN_C_COPTS + ["-fno-sanitize=all"],
        linkopts = [] if startfiles else ["-nostartfiles"],
        deps = [
            ":" + name + "_blob",
            _KERNEL_ABI,
        ],
        linkshared = True,
        testonly = testonly,
        tags = tags,
        visibility = visibility,
    )
    native.genrule(
        name = name,
        srcs = [":" + name + "_unsealed.so"],
        outs = [name + ".so"],
        cmd = "cp $< $@ && chmod u+w $@ && $(location %s) $@" % _SEAL,
        tools = [_SEAL],
        testonly = testonly,
        tags = tags,
        visibility = visibility,
    )
