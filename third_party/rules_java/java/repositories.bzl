"""Offline stand-in for @rules_java//java:repositories.bzl (nothing to fetch)."""

def rules_java_dependencies():
    pass

def rules_java_toolchains():
    pass
