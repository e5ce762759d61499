#!/usr/bin/env bash
# The `kiln` command line end to end on the bundled ONNX model: every
# subcommand's --help; compile (also --emit, --dump-ir), run (.npy in and out,
# compared with NumPy's reference outputs), bench (a benchmark-log line),
# debug (the dump directory), graph (dot and svg); and errors (missing inputs,
# wrong shapes, corrupt artifacts, bad options) that must exit non-zero with a
# message and never die by a signal.
#
#   cli_test.sh KILN MODEL.onnx INPUT.npy EXPECTED.npy
set -uo pipefail
kiln=$1
model=$2
input=$3
expected=$4
tmp=${TEST_TMPDIR:-$(mktemp -d)}
fail=0
# shellcheck source=tools/cli_test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/cli_test_lib.sh"

for cmd in compile run bench debug opt print check lower graph; do
  check "kiln $cmd --help" "$kiln" "$cmd" --help && grep -q "^usage: kiln $cmd" "$tmp/out" ||
    { echo "FAIL: kiln $cmd --help prints no usage"; fail=1; }
done
check "kiln help" "$kiln" help && grep -q "bench MODEL.so" "$tmp/out" || { echo "FAIL: kiln help"; fail=1; }

# compile + run against NumPy's outputs.
check "compile" "$kiln" compile "$model" -o "$tmp/model.so" -O 3
check "run" "$kiln" run "$tmp/model.so" --input "input=$input" --output-dir "$tmp/out_dir" --repeat 3
grep -q "time per run:" "$tmp/out" || { echo "FAIL: run prints no time per run"; fail=1; }
grep -q "output 0 'softmax_40': float32\[1,10\]" "$tmp/out" || { echo "FAIL: run output line:"; cat "$tmp/out"; fail=1; }
check "outputs match NumPy" /usr/bin/python3 -c "
import sys, numpy as np
got = np.load(sys.argv[1]); want = np.load(sys.argv[2])
assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype)
err = float(np.abs(got - want).max())
print('max abs error', err)
assert err <= 1e-4, err
" "$tmp/out_dir/softmax_40.npy" "$expected"
check "run --random-inputs" "$kiln" run "$tmp/model.so" --random-inputs --quiet

# bench: one JSON line of TVM's benchmark log.
check "bench" "$kiln" bench "$tmp/model.so" --repeat 5 --threads 1
cp "$tmp/out" "$tmp/bench.json"
check "bench log line" /usr/bin/python3 -c "
import json, sys
line = json.loads(open(sys.argv[1]).read())
assert line['engine'] == 'kiln' and line['runtime_ms_mean'] > 0, line
assert len(line['runtime_raw']) == 5, line['runtime_raw']
" "$tmp/bench.json"

# debug: table on stdout, files in the dump directory.
check "debug" "$kiln" debug "$tmp/model.so" --dump-dir "$tmp/dbg" --input "input=$input"
grep -q "Time(us)" "$tmp/out" || { echo "FAIL: debug prints no table"; fail=1; }
for f in graph.json profile.txt trace.json; do
  [[ -s "$tmp/dbg/$f" ]] || { echo "FAIL: debug wrote no $f"; fail=1; }
done
ls "$tmp/dbg/tensors/"*.npy >/dev/null 2>&1 || { echo "FAIL: debug wrote no tensors"; fail=1; }
# debug --warmup/--repeat (per-node medians) and --no-tensors.
check "debug --repeat" "$kiln" debug "$tmp/model.so" --dump-dir "$tmp/dbg2" --warmup 2 --repeat 5 --no-tensors
grep -q "Time(us)" "$tmp/out" || { echo "FAIL: debug --repeat prints no table"; fail=1; }
[[ -s "$tmp/dbg2/profile.txt" ]] || { echo "FAIL: debug --repeat wrote no profile.txt"; fail=1; }
[[ ! -e "$tmp/dbg2/tensors" ]] || { echo "FAIL: debug --no-tensors wrote tensors/"; fail=1; }

# graph: dot and svg.
check "graph dot" "$kiln" graph "$model" --format dot
grep -q "digraph kiln" "$tmp/out" && grep -q "nn.conv2d" "$tmp/out" || { echo "FAIL: graph dot"; fail=1; }
check "graph svg" "$kiln" graph "$model" --format svg -o "$tmp/model.svg"
grep -q "<svg" "$tmp/model.svg" || { echo "FAIL: graph svg wrote no SVG"; fail=1; }
# The output path reaches Graphviz as an argument, never through a shell.
abs_model="$(realpath "$model")"
abs_kiln="$(realpath "$kiln")"
(cd "$tmp" && "$abs_kiln" graph "$abs_model" --format svg -o "q';touch INJECTED;'.svg") >/dev/null 2>&1
[[ ! -e "$tmp/INJECTED" ]] || { echo "FAIL: graph -o ran a shell command"; fail=1; }
grep -q "<svg" "$tmp/q';touch INJECTED;'.svg" || { echo "FAIL: graph svg to an odd name wrote no SVG"; fail=1; }
check "graph --fused" "$kiln" graph "$model" --fused
grep -q "fused: " "$tmp/out" || { echo "FAIL: graph --fused shows no fused function"; fail=1; }

# compile --emit / --dump-ir.
check "compile --emit asm" "$kiln" compile "$model" --emit asm
grep -q "\.text" "$tmp/out" || { echo "FAIL: --emit asm printed no assembly"; fail=1; }
check "compile --emit ir" "$kiln" compile "$model" --emit ir
grep -q "Primitive" "$tmp/out" || { echo "FAIL: --emit ir printed no fused functions"; fail=1; }
check "compile --dump-ir" "$kiln" compile "$model" --dump-ir "$tmp/dump" -o "$tmp/model2.so"
for f in 0_input.kir 1_fused.kir 2_kernels.tir 3_kernels.ll 4_kernels.s; do
  [[ -s "$tmp/dump/$f" ]] || { echo "FAIL: --dump-ir wrote no $f"; fail=1; }
done

# A cuda target's stages: the GPU's loop IR, CUDA C in LLVM IR's place, PTX
# (where kiln was built with NVRTC; else a message saying it is missing).
check "compile --emit loop (cuda)" "$kiln" compile "$model" --target "cuda -arch=sm_90a" --emit loop
grep -q '"threadIdx.x"' "$tmp/out" || { echo "FAIL: --emit loop (cuda) bound no threads"; fail=1; }
check "compile --emit llvm (cuda)" "$kiln" compile "$model" --target "cuda -arch=sm_90a" --emit llvm
grep -q "__global__ void" "$tmp/out" || { echo "FAIL: --emit llvm (cuda) printed no CUDA C"; fail=1; }
if "$kiln" compile "$model" --target "cuda -arch=sm_90a" --emit asm > "$tmp/cuda.ptx" 2> "$tmp/cuda.err"; then
  grep -q "^\.target sm_90a" "$tmp/cuda.ptx" || { echo "FAIL: --emit asm (cuda) printed no PTX"; fail=1; }
else
  grep -q "NVRTC is not available" "$tmp/cuda.err" || { echo "FAIL: --emit asm (cuda):"; cat "$tmp/cuda.err"; fail=1; }
fi

# Errors: a message and a non-zero exit, never a signal.
expect_error 1 "input 'input' (float32[1,3,32,32]) is not given" "$kiln" run "$tmp/model.so"
/usr/bin/python3 -c "import numpy as np, sys; np.save(sys.argv[1], np.zeros((1, 3, 16, 16), np.float32))" "$tmp/small.npy"
expect_error 1 "expected float32[1,3,32,32], got float32[1,3,16,16]" "$kiln" run "$tmp/model.so" --input "input=$tmp/small.npy"
expect_error 1 "no input named 'nope'" "$kiln" run "$tmp/model.so" --input "nope=$input"
head -c 5000 "$tmp/model.so" > "$tmp/truncated.so"
expect_error 1 "truncated.so" "$kiln" run "$tmp/truncated.so" --random-inputs
expect_error 1 "cannot open" "$kiln" bench "$tmp/missing.so"
expect_error 2 "unknown option '--bogus'" "$kiln" run "$tmp/model.so" --bogus
expect_error 2 "--dump-dir DIR is required" "$kiln" debug "$tmp/model.so"
expect_error 2 "--repeat" "$kiln" debug "$tmp/model.so" --dump-dir "$tmp/dbg3" --repeat 0
expect_error 2 "--format must be dot or svg" "$kiln" graph "$model" --format png
expect_error 2 "--opt-level must be an integer from 0 to 3, got '9'" "$kiln" compile "$model" -o "$tmp/x.so" -O 9
expect_error 2 "--emit must be ir, loop, llvm or asm" "$kiln" compile "$model" --emit wasm
expect_error 1 "error:" "$kiln" compile "$input" -o "$tmp/x.so"
expect_error 2 "unknown command 'frobnicate'" "$kiln" frobnicate

# Where the output goes (issue 15): never through a symlink planted at a
# guessable staging name, never replacing a FIFO, directory or device; across
# file systems (temporary directory elsewhere) still one atomic rename.
echo "victim" > "$tmp/victim.txt"
ln -sf "$tmp/victim.txt" "$tmp/planted.so.kiln_tmp"
check "compile beside a planted symlink" "$kiln" compile "$model" -o "$tmp/planted.so"
[[ "$(cat "$tmp/victim.txt")" == "victim" ]] || { echo "FAIL: compile wrote through a planted symlink"; fail=1; }
check "run the artifact written beside a planted symlink" "$kiln" run "$tmp/planted.so" --random-inputs --quiet
mkfifo "$tmp/fifo.so"
expect_error 1 "is not a regular file (a FIFO)" "$kiln" compile "$model" -o "$tmp/fifo.so"
[[ -p "$tmp/fifo.so" ]] || { echo "FAIL: compile replaced a FIFO"; fail=1; }
mkdir -p "$tmp/adir.so"
expect_error 1 "is not a regular file (a directory)" "$kiln" compile "$model" -o "$tmp/adir.so"
# Refused before the model is read (a model that does not exist here): the
# whole compile used to run first ("cannot write /tmp: Success" before that).
expect_error 1 "cannot write $tmp/adir.so: it exists and is not a regular file (a directory)" \
  "$kiln" compile "$tmp/no_such_model.onnx" -o "$tmp/adir.so"
expect_error 1 "cannot write /dev/null: it exists and is not a regular file (a device or socket)" \
  "$kiln" compile "$model" -o /dev/null
[[ -c /dev/null ]] || { echo "FAIL: /dev/null is no longer a character device"; fail=1; }
if [[ -d /dev/shm && -w /dev/shm ]]; then
  shm_tmp=$(mktemp -d /dev/shm/kiln_cli_test.XXXXXX)
  check "compile with the temporary directory on another file system" env TMPDIR="$shm_tmp" "$kiln" compile "$model" -o "$tmp/moved.so"
  check "run the moved artifact" "$kiln" run "$tmp/moved.so" --random-inputs --quiet
  ls "$tmp"/moved.so.kiln_tmp.* >/dev/null 2>&1 && { echo "FAIL: a staging file was left behind"; fail=1; }
  rm -rf "$shm_tmp"
fi

# Paths that are not regular files (issue 15): refused at once by what they
# are, never waited on (a FIFO blocked kiln forever) nor read without end
# (/dev/zero). `timeout` turns a hang into a failure (exit 124).
mkfifo "$tmp/fifo.kir" "$tmp/fifo.onnx" "$tmp/fifo.npy" "$tmp/fifo_model.so"
expect_error 1 "is not a regular file (a FIFO)" timeout 60 "$kiln" check "$tmp/fifo.kir"
expect_error 1 "is not a regular file (a FIFO)" timeout 60 "$kiln" check "$tmp/fifo.onnx"
expect_error 1 "'/dev/zero' is not a regular file (a character device)" timeout 60 "$kiln" check /dev/zero
expect_error 1 "is not a regular file (a directory)" timeout 60 "$kiln" check "$tmp"
expect_error 1 "not a regular file (a FIFO)" timeout 60 "$kiln" run "$tmp/model.so" --input "input=$tmp/fifo.npy"
expect_error 1 "not a regular file: a FIFO" timeout 60 "$kiln" run "$tmp/fifo_model.so" --random-inputs
expect_error 1 "not a regular file: a character device" timeout 60 "$kiln" bench /dev/zero

# Lenient ONNX (issue 15): what ONNX Runtime only warns about is a warning
# (on stderr, the command succeeds), what it refuses is an error.
check "write models with wrong declarations" /usr/bin/python3 -c "
import sys, onnx
m = onnx.load(sys.argv[1])
m.graph.output[0].type.tensor_type.shape.dim[1].dim_value = 11
onnx.save(m, sys.argv[2])
m.graph.output[0].type.tensor_type.elem_type = onnx.TensorProto.INT64
onnx.save(m, sys.argv[3])
" "$model" "$tmp/wrong_shape.onnx" "$tmp/wrong_dtype.onnx"
check "check a model with a wrong declared output shape" "$kiln" check "$tmp/wrong_shape.onnx"
grep -qF "kiln: warning: $tmp/wrong_shape.onnx: graph output 'softmax_40' is declared with shape [1, 11]" "$tmp/err" ||
  { echo "FAIL: no warning for a wrong declared output shape:"; cat "$tmp/err"; fail=1; }
expect_error 1 "is declared as INT64 but the graph computes float32" "$kiln" check "$tmp/wrong_dtype.onnx"

# An interrupted compile leaves nothing in TMPDIR (issue 15): the kiln_export_*
# folder used to stay. Each signal is sent while the export folder exists
# (the link is under way); a compile that ends first is tried again.
for sig in TERM INT; do
  caught=0
  for attempt in 1 2 3 4 5; do
    sig_tmp="$tmp/sig_tmp_$sig"
    rm -rf "$sig_tmp" && mkdir -p "$sig_tmp"
    set -m  # job control: the background job keeps SIGINT's default action
    TMPDIR="$sig_tmp" "$kiln" compile "$model" -o "$tmp/sig.so" >/dev/null 2>&1 &
    pid=$!
    set +m
    seen=0
    for _ in $(seq 1 4000); do
      if [[ -n "$(find "$sig_tmp" -name 'kiln_export_*' -print -quit 2>/dev/null)" ]]; then
        seen=1
        break
      fi
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.005
    done
    (( seen )) && kill -s "$sig" "$pid" 2>/dev/null
    wait "$pid"
    rc=$?
    (( seen )) || continue
    (( rc == 0 )) && continue  # it finished before the signal came
    caught=1
    want=$((128 + $(kill -l "$sig")))
    (( rc == want )) || { echo "FAIL: compile after SIG$sig exited $rc, not $want"; fail=1; }
    left=$(find "$sig_tmp" -mindepth 1 2>/dev/null | head -5)
    [[ -z "$left" ]] || { echo "FAIL: SIG$sig during compile left in TMPDIR:"; echo "$left"; fail=1; }
    break
  done
  (( caught )) || { echo "FAIL: could not interrupt a compile with SIG$sig while it was linking"; fail=1; }
done

sanitizer_reports
if (( fail )); then exit 1; fi
echo "PASS: kiln CLI"

