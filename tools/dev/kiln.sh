#!/usr/bin/env bash
# kiln developer entry point.
#
#   tools/dev/kiln.sh test [bazel test flags...]   install deps, then `bazel test //...`
#   tools/dev/kiln.sh test-sanitizers [--runtime] [flags...]
#                                                  the C and C++ tests under --config=asan_ubsan
#                                                  (ASan and UBSan in one build), the
#                                                  concurrency tests under --config=tsan;
#                                                  --runtime: runtime_c's only
#                                                  (minutes; docs/sanitizers.md)
#   tools/dev/kiln.sh demo [MODEL.onnx [NAME=IN.npy ...]]
#                                                  install deps, build kiln, compile the
#                                                  bundled ONNX model and run it
#
# `tools/dev/kiln.sh test` is the README's test command and what CI (.ci/run) runs.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"

BAZEL="${BAZEL:-bazel}"

usage() {
  sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

install_deps() {
  "$ROOT/tools/dev/install_deps.sh"
}

# kiln's main job: build the `kiln` tool (optimized), compile the bundled ONNX
# model (examples/resnet_mini.onnx: a small ResNet-style classifier) into one
# shared library, run it on the bundled input with the C runtime, print its
# outputs and the time per run, and check them against the outputs NumPy
# computed for the same input. `demo MODEL.onnx [NAME=INPUT.npy ...]` runs
# another model (inputs not given get random values).
run_demo() {
  local model="$ROOT/examples/resnet_mini.onnx"
  local inputs=(--input "input=$ROOT/examples/resnet_mini_input.npy")
  local expected="$ROOT/examples/resnet_mini_output.npy"
  if [[ $# -gt 0 ]]; then
    model=$1
    shift
    inputs=(--random-inputs)
    for spec in "$@"; do inputs+=(--input "$spec"); done
    expected=""
  fi
  echo "==== building kiln (bazel build --config=opt //tools:kiln)"
  "$BAZEL" build --config=opt //tools:kiln 2>&1 | grep -E "ERROR|error:" >&2 || true
  local kiln
  kiln="$("$BAZEL" info --config=opt bazel-bin 2>/dev/null)/tools/kiln"
  [[ -x "$kiln" ]] || { echo "kiln.sh: the build failed; run: $BAZEL build --config=opt //tools:kiln" >&2; exit 1; }
  local out="${TMPDIR:-/tmp}/kiln_demo"
  mkdir -p "$out"
  echo "==== the model: $model"
  "$kiln" check "$model"
  echo "==== kiln compile $model -o $out/model.so"
  "$kiln" compile "$model" -o "$out/model.so" --timing
  echo "==== kiln run $out/model.so ${inputs[*]} --repeat 100"
  "$kiln" run "$out/model.so" "${inputs[@]}" --output-dir "$out/outputs" --repeat 100
  if [[ -n "$expected" ]]; then
    /usr/bin/python3 - "$out/outputs" "$expected" <<'PY'
import glob, sys
import numpy as np
got = np.load(glob.glob(sys.argv[1] + "/*.npy")[0])
want = np.load(sys.argv[2])
err = float(np.abs(got - want).max())
print("==== outputs vs NumPy's reference: max abs error %.3g (%s)" % (err, "ok" if err <= 1e-4 else "MISMATCH"))
sys.exit(0 if err <= 1e-4 else 1)
PY
  fi
  echo "==== outputs written to $out/outputs/; more: kiln bench|debug|graph $out/model.so (kiln help)"
}

# The tests that run threads at once: the runtime's 8-thread sessions, the
# thread pool, sessions running while their artifact is released, the handle
# registry, the C API's model shared by threads, 8 threads on one compiled
# artifact.
TSAN_TESTS=(
  //runtime_c:runtime_threads_test
  //runtime_c:threadpool_test
  //runtime_c:loader_security_test
  //runtime_c:handles_test
  //c_api:kiln_api_test
  //c_api:kiln_api_run_test
  //tests/artifact:threads_test
)

# The shell tests that drive kiln's own programs (the CLI, make_model and the
# C runtime's run_model) on real models and hostile paths: under ASan + UBSan
# their binaries are the instrumented ones, so the security checks in them
# (a shell in an output name, a planted symlink, FIFOs and devices as inputs,
# SIGINT/SIGTERM cleanup, flipped and truncated artifacts) run sanitized too.
# Not the FFI, binding or benchmark scripts: Python, Go and Rust programs
# cannot load an ASan-instrumented libkiln.so without preloading its runtime.
SANITIZED_SH_TESTS=(
  //tools:cli_test
  //tools:cli_user_test
  //tests/artifact:resnet_block_test
  //tests/artifact:mobilenet_block_test
  //tests/artifact:transformer_block_test
  //tests/artifact:debug_test
  //tests/artifact:corrupt_test
)

# Every package of the repository (its top-level folders with a BUILD file), as
# target patterns: `//...` would also walk a bazel-<name> link that points at
# another output base.
package_patterns() {
  git -C "$ROOT" ls-files 'BUILD.bazel' '*/BUILD.bazel' |
    awk -F/ 'NF == 1 { print "//:all"; next } { print "//" $1 "/..." }' | sort -u
}

# ASan and UBSan together (--config=asan_ubsan: one instrumented build
# instead of two) over every cc_test (C and C++) and SANITIZED_SH_TESTS, then
# TSan over TSAN_TESTS. Each config builds into an output folder of its own
# (k8-fastbuild-asan_ubsan, k8-fastbuild-tsan: --platform_suffix in
# .bazelrc), so the plain build's binaries stay as they were. Tests tagged no_asan / no_ubsan /
# no_tsan are skipped by their config (.bazelrc).
run_sanitizers() {
  local patterns tsan_tests=("${TSAN_TESTS[@]}")
  if [[ "${1:-}" == --runtime ]]; then
    shift
    # The C runtime alone: no compiler rebuilt, a few minutes.
    patterns=(//runtime_c/...)
    tsan_tests=(//runtime_c:runtime_threads_test //runtime_c:threadpool_test
                //runtime_c:loader_security_test //runtime_c:handles_test)
  else
    mapfile -t patterns < <(package_patterns)
  fi
  echo "==== bazel test --config=asan_ubsan (cc tests)"
  "$BAZEL" test --config=asan_ubsan --build_tests_only --test_lang_filters=cc "$@" -- \
    "${patterns[@]}"
  if [[ "${patterns[0]}" != //runtime_c/... ]]; then
    echo "==== bazel test --config=asan_ubsan (the CLI's and artifacts' shell tests)"
    "$BAZEL" test --config=asan_ubsan "$@" -- "${SANITIZED_SH_TESTS[@]}"
  fi
  echo "==== bazel test --config=tsan (concurrency tests)"
  "$BAZEL" test --config=tsan "$@" -- "${tsan_tests[@]}"
}

cmd="${1:-}"
[[ $# -gt 0 ]] && shift
case "$cmd" in
  test)
    install_deps
    exec "$BAZEL" test //... "$@"
    ;;
  test-sanitizers)
    install_deps
    run_sanitizers "$@"
    ;;
  demo)
    install_deps
    run_demo "$@"
    ;;
  -h|--help|help|"")
    usage
    [[ -n "$cmd" ]]
    ;;
  *)
    echo "kiln.sh: unknown command '$cmd'" >&2
    usage >&2
    exit 2
    ;;
esac
