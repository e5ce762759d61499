#!/usr/bin/env bash
# Runner for the <name>_smoke tests made by kiln_cc_benchmark (//:defs.bzl):
# runs the benchmark binary once with short timings, only to check it works.
set -euo pipefail
bin=$1
shift
exec "$bin" "$@"
