#!/usr/bin/env bash
# Offline stand-in for Bazel's coverage report generator (kiln).
echo "coverage_report_generator: coverage reports are unavailable in this offline build" \
     "(@remote_coverage_tools is a local stub, see third_party/remote_coverage_tools)." >&2
exit 1
