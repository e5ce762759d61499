"""Build macros for kiln. Every package loads these instead of the native rules:

    load("//:defs.bzl", "kiln_cc_library", "kiln_cc_test", "kiln_cc_binary",
         "kiln_cc_benchmark", "kiln_c_library", "kiln_filecheck_test")

* C++ code is C++20 with -Wall -Wextra -Werror (KILN_COPTS). System headers (absl,
  LLVM, ...) are system/-isystem includes, so their warnings do not fail the build.
* C code (runtime_c) is C11, pedantic, -Wall -Wextra -Werror (KILN_C_COPTS).
* kiln_cc_test adds @gtest//:gtest_main (gtest + gmock).
* kiln_cc_benchmark makes a runnable binary (`bazel run //pkg:foo_bench`) linked
  with @benchmark//:benchmark_main, plus a quick `<name>_smoke` sh_test so that
  `bazel test //...` builds it and runs it once, briefly (not a timed test).
* kiln_filecheck_test runs `tool <args> src | FileCheck src` (LLVM FileCheck).

Visibility is whatever the caller (or the package's default_visibility, private by
default) says; the macros never widen it.
"""

KILN_CXX_STD = "-std=c++20"

# Warnings for kiln's own C++ code.
KILN_COPTS = [
    KILN_CXX_STD,
    "-Wall",
    "-Wextra",
    "-Werror",
]

# Warnings and language level for kiln's C code (runtime_c).
KILN_C_COPTS = [
    "-std=c11",
    # Debug info always: the ABI check (//c_api:abi_test) reads the DWARF of
    # libkiln_runtime.so's exported functions.
    "-g",
    "-pedantic",
    "-Wall",
    "-Wextra",
    "-Werror",
]

_GTEST_MAIN = "@gtest//:gtest_main"
_BENCHMARK_MAIN = "@benchmark//:benchmark_main"
_FILECHECK = "@llvm//:FileCheck"
_FILECHECK_RUNNER = "//third_party/build_tools:filecheck_test.sh"
_BENCHMARK_SMOKE_RUNNER = "//third_party/build_tools:benchmark_smoke_test.sh"

def _with(lst, extra):
    """Returns lst + extra without duplicates (keeps lst's order)."""
    out = list(lst or [])
    for e in extra:
        if e not in out:
            out.append(e)
    return out

def kiln_cc_library(name, copts = [], **kwargs):
    """A C++20 cc_library with kiln's warning flags."""
    native.cc_library(
        name = name,
        copts = KILN_COPTS + copts,
        **kwargs
    )

def kiln_cc_binary(name, copts = [], **kwargs):
    """A C++20 cc_binary with kiln's warning flags."""
    native.cc_binary(
        name = name,
        copts = KILN_COPTS + copts,
        **kwargs
    )

def kiln_cc_test(name, copts = [], deps = [], linkstatic = True, **kwargs):
    """A C++20 GoogleTest test (gtest_main, gmock included).

    Linked statically against our own libraries (linkstatic): Bazel's default
    dynamic test mode builds one .so per cc_library, and those miss the system
    libraries (Abseil) that only appear in linkopts.
    """
    native.cc_test(
        name = name,
        copts = KILN_COPTS + copts,
        deps = _with(deps, [_GTEST_MAIN]),
        linkstatic = linkstatic,
        **kwargs
    )

def kiln_cc_benchmark(
        name,
        copts = [],
        deps = [],
        smoke_args = ["--benchmark_min_time=0.001"],
        tags = [],
        visibility = None,
        testonly = None,
        **kwargs):
    """A Google Benchmark binary plus a quick smoke test.

    `bazel run -c opt //pkg:name` (or --config=opt) runs the benchmark for real.
    `bazel test //...` builds it and runs `<name>_smoke`: every benchmark once,
    briefly (smoke_args), only checking that it does not crash. The smoke test is
    tagged "benchmark" and "benchmark_smoke" so it can be filtered out with
    --test_tag_filters=-benchmark_smoke.
    """
    native.cc_binary(
        name = name,
        copts = KILN_COPTS + copts,
        deps = _with(deps, [_BENCHMARK_MAIN]),
        tags = _with(tags, ["benchmark"]),
        visibility = visibility,
        testonly = testonly,
        **kwargs
    )
    native.sh_test(
        name = name + "_smoke",
        srcs = [_BENCHMARK_SMOKE_RUNNER],
        args = ["$(rootpath :%s)" % name] + smoke_args,
        data = [":" + name],
        size = "small",
        tags = _with(tags, ["benchmark", "benchmark_smoke"]),
        visibility = visibility,
    )

def kiln_c_library(name, copts = [], **kwargs):
    """A C11 cc_library (runtime_c): -std=c11 -pedantic -Wall -Wextra -Werror."""
    native.cc_library(
        name = name,
        copts = KILN_C_COPTS + copts,
        **kwargs
    )

def kiln_c_binary(name, copts = [], **kwargs):
    """A C11 cc_binary."""
    native.cc_binary(
        name = name,
        copts = KILN_C_COPTS + copts,
        **kwargs
    )

def kiln_c_test(name, copts = [], **kwargs):
    """A C11 test program (no gtest): passes when main returns 0."""
    native.cc_test(
        name = name,
        copts = KILN_C_COPTS + copts,
        **kwargs
    )

def kiln_filecheck_test(
        name,
        src,
        tool,
        args = [],
        expect_fail = False,
        filecheck_args = [],
        data = [],
        size = "small",
        **kwargs):
    """Runs `$(tool) <args> <src> | FileCheck <filecheck_args> <src>`.

    Args:
      name: test name.
      src: the .kir (or any text) file; it is the tool's last argument and holds
        the CHECK lines.
      tool: label of the cc_binary to run.
      args: arguments given to the tool before src.
      expect_fail: the tool must exit non-zero; its stderr is then checked with
        `FileCheck --check-prefix=ERR src` (write `// ERR: message` lines). A zero
        exit fails the test. Without expect_fail, a non-zero exit fails the test.
      filecheck_args: extra FileCheck options (e.g. ["--check-prefix=OPT"]).
      data: extra runtime files.
      size: test size.
      **kwargs: other test attributes (tags, visibility, timeout, ...).
    """
    native.sh_test(
        name = name,
        srcs = [_FILECHECK_RUNNER],
        args = [
            "$(rootpath %s)" % tool,
            "$(rootpath %s)" % src,
            "$(rootpath %s)" % _FILECHECK,
            "1" if expect_fail else "0",
            str(len(filecheck_args)),
        ] + filecheck_args + args,
        data = [src, tool, _FILECHECK] + data,
        size = size,
        **kwargs
    )
