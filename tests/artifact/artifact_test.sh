#!/bin/bash
# Compiles a text-IR model to an artifact with make_model (random weights,
# interpreter outputs as .npy), then checks it with run_model, a C program that
# links only libkiln_runtime.so.
#   artifact_test.sh MAKE_MODEL RUN_MODEL MODEL.kir INPUTS -- RUN_MODEL_ARGS...
set -euo pipefail
make_model="$1"; run_model="$2"; model="$3"; inputs="$4"; shift 4
[[ "${1:-}" == "--" ]] && shift
out="${TEST_TMPDIR:-$(mktemp -d)}/model"
mkdir -p "$out"
"$make_model" --model "$model" --inputs "$inputs" --out "$out"
cat "$out/stats.txt"
# "@dump@" stands for a fresh directory under the test's temporary directory.
args=()
for a in "$@"; do
  if [[ "$a" == "@dump@" ]]; then args+=("${TEST_TMPDIR:-$out}/dump"); else args+=("$a"); fi
done
"$run_model" "$out" "${args[@]}"
