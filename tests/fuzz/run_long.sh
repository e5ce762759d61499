#!/bin/bash
# tests/fuzz/run_long.sh: a long fuzz campaign over every tests/fuzz target
# (docs/fuzzing.md). Runs the g++/Bazel-built binaries directly, not through
# Bazel (so the Bazel lock stays free), niced, one target after another, each
# in its runfiles tree with the same seed corpus as its *_fuzz_test.
#
#   tests/fuzz/run_long.sh [--seconds S] [--seed X] [--timeout T] [--out DIR] [TARGET...]
#
# TARGET: kir_parse tir_parse onnx_import npy_read artifact c_api (default:
# all). S: seconds per target (default 600). Build first:
#   flock /tmp/kiln-bazel.lock bazel build --config=opt //tests/fuzz:all
# A finding (crash, failed check, sanitizer report, timeout) stops that run;
# the input is kept in DIR/<target>/crash-*, the log in DIR/<target>/log-*,
# and the target goes on with the next seed until its time is spent. Prints
# one line per target: executions, seconds, exec/s, findings.
# T: the driver's per-input timeout in seconds (its default: 20; raise it for
# sanitized builds or a busy machine, where 20 s of wall time can pass
# without the process getting the CPU).
# KILN_FUZZ_BIN overrides the folder of the binaries (default: bazel-out/k8-opt/bin).
set -u
cd "$(dirname "$0")/../.."
root=$(pwd)
seconds=600
seed=1
out=""
timeout=()
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --timeout) timeout=(--timeout "$2"); shift 2 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=(kir_parse tir_parse onnx_import npy_read artifact c_api)
bin="${KILN_FUZZ_BIN:-$root/bazel-out/k8-opt/bin}/tests/fuzz"
[ -n "$out" ] || out="/tmp/kiln_fuzz_long/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out"

# The corpus and flags of each target, relative to its runfiles tree (as in BUILD.bazel).
args_of() {
  case "$1" in
    kir_parse) echo "tests/fuzz/seeds/kir examples" ;;
    tir_parse) echo "lowering/passes/testdata" ;;
    onnx_import) echo "--ext=.onnx external/onnx_testdata/node examples/resnet_mini.onnx" ;;
    npy_read) echo "tests/fuzz/seeds/npy examples/resnet_mini_input.npy examples/resnet_mini_output.npy runtime_c/testdata/rt_p0.npy" ;;
    artifact)
      local hosts="runtime_c/add_relu.so,runtime_c/rt_basic.so,runtime_c/rt_fail.so,runtime_c/rt_head_io.so,runtime_c/rt_par.so"
      echo "--host_artifacts=$hosts ${hosts//,/ } runtime_c/rt_bad_json.so runtime_c/rt_bad_meta.so runtime_c/rt_bad_storage.so runtime_c/rt_ctor.so runtime_c/rt_startfiles.so" ;;
    c_api) echo "--max_len=4096 tests/fuzz/seeds/c_api" ;;
    *) return 1 ;;
  esac
}

printf '%-12s %14s %9s %10s %9s\n' target executions seconds exec/s findings
for t in "${targets[@]}"; do
  a=$(args_of "$t") || { echo "unknown target $t"; exit 2; }
  exe="$bin/${t}_fuzz_test"
  [ -x "$exe" ] || { echo "$exe missing: build //tests/fuzz:all with --config=opt"; exit 2; }
  dir="$out/$t"
  mkdir -p "$dir"
  total_execs=0 total_secs=0 findings=0 s=$seed
  left=$seconds
  while [ "$(echo "$left > 1" | bc)" = 1 ]; do
    log="$dir/log-seed$s"
    start=$(date +%s.%N)
    # shellcheck disable=SC2086
    (cd "$exe.runfiles/kiln" && nice -n 10 "$exe" --seconds "$left" --seed "$s" ${timeout[@]+"${timeout[@]}"} \
      --artifact_dir "$dir" $a) > "$log" 2>&1
    rc=$?
    end=$(date +%s.%N)
    el=$(echo "$end - $start" | bc)
    left=$(echo "$left - $el" | bc)
    if [ $rc -eq 0 ]; then
      e=$(sed -n 's/^executions=\([0-9]*\) .*/\1/p' "$log")
      total_execs=$((total_execs + ${e:-0}))
      total_secs=$(echo "$total_secs + $el" | bc)
      break
    fi
    findings=$((findings + 1))
    # Executions before the finding: the last progress line, if any.
    e=$(sed -n 's/^kiln-fuzz: #\([0-9]*\) .*/\1/p' "$log" | tail -1)
    total_execs=$((total_execs + ${e:-0}))
    total_secs=$(echo "$total_secs + $el" | bc)
    echo "  $t: finding with seed $s (exit $rc), see $log" >&2
    [ $findings -lt 5 ] || break
    s=$((s + 1))
  done
  rate=$(echo "$total_execs / ($total_secs + 0.001)" | bc)
  printf '%-12s %14d %9.0f %10d %9d\n' "$t" "$total_execs" "$total_secs" "$rate" "$findings"
done
echo "logs and findings: $out"
