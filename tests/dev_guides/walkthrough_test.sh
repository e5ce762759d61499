#!/usr/bin/env bash
# Runs docs/dev/walkthrough.md: every `$ kiln ...` line of its ```sh and
# ```console blocks, in order, with $W set to a fresh directory, exactly as a
# reader would type it. Each must exit 0. In a ```console block the lines
# after a command, up to the next `$ ` line or the end of the block, are its
# stdout, compared exactly (so use console blocks for output that does not
# depend on the machine or the clock; sh blocks show such output without
# checking it). Then the stage names the walkthrough shows are looked for in
# the outputs and in the files the commands wrote.
#
#   walkthrough_test.sh KILN WALKTHROUGH.md MODEL.onnx INPUT.npy EXPECTED.npy
set -uo pipefail
kiln=$1
doc=$2
model=$3
input=$4
expected=$5
tmp=${TEST_TMPDIR:-$(mktemp -d)}
fail=0

# The commands say `kiln` and `examples/...` (relative to the repository root,
# which is the runfiles root here) and write under $W.
mkdir -p "$tmp/bin"
ln -sf "$(realpath "$kiln")" "$tmp/bin/kiln"
export PATH="$tmp/bin:$PATH"
export W="$tmp/walk"
rm -rf "$W"
mkdir -p "$W"
for f in "$model" "$input" "$expected"; do
  [[ -e "$f" ]] || { echo "FAIL: missing runfile $f"; exit 1; }
done

n=0
all_out="$tmp/all.out"
all_err="$tmp/all.err"
: >"$all_out"
: >"$all_err"

run() {  # run COMMAND KIND EXPECTED_STDOUT
  local cmd=$1 kind=$2 want=$3
  n=$((n + 1))
  echo "+ $cmd"
  (eval "$cmd") >"$tmp/cmd$n.out" 2>"$tmp/cmd$n.err"
  local rc=$?
  cat "$tmp/cmd$n.out" >>"$all_out"
  cat "$tmp/cmd$n.err" >>"$all_err"
  if ((rc != 0)); then
    echo "FAIL: \`$cmd\` exited $rc"
    cat "$tmp/cmd$n.err"
    fail=1
    return
  fi
  if [[ "$kind" == console ]] && ! diff <(printf '%s' "$want") "$tmp/cmd$n.out" >"$tmp/cmd$n.diff"; then
    echo "FAIL: \`$cmd\` printed something else than the walkthrough shows (< guide, > actual):"
    cat "$tmp/cmd$n.diff"
    fail=1
  fi
}

block=""     # the info string of the fenced block we are in ("" outside)
cmd=""       # the kiln command being collected
cmd_kind=""
want=""      # its expected stdout (console blocks)
flush() {
  if [[ -n "$cmd" ]]; then run "$cmd" "$cmd_kind" "$want"; fi
  cmd=""
  want=""
}
while IFS= read -r line || [[ -n "$line" ]]; do
  if [[ "$line" == '```'* ]]; then
    if [[ -z "$block" ]]; then
      block=${line#'```'}
      [[ -n "$block" ]] || block=text
    else
      flush
      block=""
    fi
    continue
  fi
  [[ "$block" == sh || "$block" == console ]] || continue
  if [[ "$line" == '$ '* ]]; then
    flush
    if [[ "$line" == '$ kiln '* ]]; then
      cmd=${line#'$ '}
      cmd_kind=$block
    fi
  elif [[ -n "$cmd" ]]; then
    want+="$line"$'\n'
  fi
done <"$doc"
flush

if ((n < 10)); then
  echo "FAIL: found only $n kiln commands in $doc"
  fail=1
fi

# The stages the walkthrough names, where it says they show.
expect() {  # expect FILE TEXT WHAT
  if ! grep -qF -- "$2" "$1"; then
    echo "FAIL: $3: '$2' not found in $1"
    fail=1
  fi
}
for pass in InferType SimplifyInference FoldConstant FoldScaleAxis AlterOpLayout FuseOps; do
  expect "$all_out" "// ---- after $pass ----" "kiln opt --print-after-all"
done
for f in 0_input.kir 1_fused.kir 2_kernels.tir 3_kernels.ll 4_kernels.s; do
  [[ -s "$W/dump/$f" ]] || { echo "FAIL: kiln compile --dump-ir wrote no $f"; fail=1; }
done
expect "$W/dump/0_input.kir" "nn.batch_norm(" "the imported graph"
expect "$W/dump/1_fused.kir" "Primitive=1" "the fused graph"
expect "$W/dump/1_fused.kir" 'data_layout="NCHW16c"' "AlterOpLayout's blocked convolutions"
expect "$W/dump/2_kernels.tir" "primfunc fused_nn_conv2d_add_nn_relu(" "the loop IR"
expect "$W/dump/2_kernels.tir" "primfunc fused_nn_dense_add(" "the loop IR"
if [[ "$(uname -m)" == x86_64 ]]; then
  expect "$W/dump/2_kernels.tir" 'kiln.strategies="conv2d_NCHWc.x86"' "the x86 conv2d strategy"
fi
expect "$W/dump/3_kernels.ll" "define i32 @fused_nn_dense_add(ptr" "the LLVM IR"
expect "$W/dump/4_kernels.s" "fused_nn_softmax:" "the assembly"
expect "$all_err" "kiln compile: 10 fused calls, 10 kernels" "kiln compile --timing"
expect "$all_err" "kiln lower: 10 kernels" "kiln lower --timing"
expect "$all_out" "output 0 'softmax_40': float32[1,10]" "kiln run"
expect "$all_out" "fused_nn_conv2d_add_add_nn_relu" "kiln debug's table"
expect "$all_out" '"engine":"kiln"' "kiln bench"

# kiln run's output is NumPy's (the README's demo checks the same).
if [[ -s "$W/out/softmax_40.npy" ]]; then
  /usr/bin/python3 - "$W/out/softmax_40.npy" "$expected" <<'EOF' || fail=1
import ast, struct, sys

def load(path):
    data = open(path, "rb").read()
    assert data[:6] == b"\x93NUMPY", path
    major = data[6]
    hlen = struct.unpack("<H" if major == 1 else "<I", data[8:10] if major == 1 else data[8:12])[0]
    start = (10 if major == 1 else 12) + hlen
    header = ast.literal_eval(data[(10 if major == 1 else 12):start].decode("latin1"))
    assert header["descr"] == "<f4" and not header["fortran_order"], header
    n = 1
    for d in header["shape"]:
        n *= d
    return header["shape"], struct.unpack("<%df" % n, data[start:start + 4 * n])

got_shape, got = load(sys.argv[1])
want_shape, want = load(sys.argv[2])
assert tuple(got_shape) == tuple(want_shape), (got_shape, want_shape)
err = max(abs(a - b) for a, b in zip(got, want))
print("kiln run vs NumPy: max abs error", err)
if err > 1e-4:
    print("FAIL: kiln run's output differs from NumPy's by", err)
    sys.exit(1)
EOF
else
  echo "FAIL: kiln run wrote no \$W/out/softmax_40.npy"
  fail=1
fi

if ((fail)); then exit 1; fi
echo "walkthrough: $n commands ran, outputs checked"
