"""Offline stand-in for @rules_cc//cc:find_cc_toolchain.bzl."""

CC_TOOLCHAIN_TYPE = "@bazel_tools//tools/cpp:toolchain_type"

def find_cc_toolchain(ctx):
    """Returns the current CcToolchainInfo (like rules_cc's helper)."""
    if hasattr(ctx.attr, "_cc_toolchain"):
        return ctx.attr._cc_toolchain[cc_common.CcToolchainInfo]
    return ctx.toolchains[CC_TOOLCHAIN_TYPE]

def find_cpp_toolchain(ctx):
    return find_cc_toolchain(ctx)
