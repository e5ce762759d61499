#!/usr/bin/env bash
# Records the current ABI of libkiln.so and libkiln_runtime.so as the
# baselines //c_api:abi_test compares against. Run it only for a deliberate
# change, and say in the commit message why the change is compatible.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
bazel build //c_api:sdk
sdk="$(bazel info bazel-bin)/c_api/sdk"
for lib in kiln kiln_runtime; do
  abidw --headers-dir "$sdk/include" --drop-private-types --no-corpus-path \
    --exported-interfaces-only --no-elf-needed --no-show-locs --no-comp-dir-path \
    --out-file "c_api/abi/lib$lib.abi" "$sdk/lib/lib$lib.so"
  echo "wrote c_api/abi/lib$lib.abi"
done
