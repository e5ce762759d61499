#!/usr/bin/env bash
# Models exported from PyTorch with dynamic axes (issue 14), as a user runs
# them: `kiln compile MODEL.onnx` once (it must pick the VM), then `kiln run`
# of that one artifact at every saved shape, each output against PyTorch's
# (make_models.py wrote both): the output names, dtype and shape exactly, the
# values within rtol 1e-3, atol 1e-4 (np.allclose: |got - want| <= 1e-4 +
# 1e-3 |want|, every element finite). Also: inputs that disagree on a dim,
# and a shape the model does not allow, are refused with a clear error.
#
#   dynamic_models_test.sh KILN DATA_DIR MODEL...
#
# MODEL is gpt_tiny, gpt_tiny_nanogpt or resnet_tiny (files in DATA_DIR).
set -uo pipefail
kiln=$1
dir=$2
shift 2
tmp=${TEST_TMPDIR:-$(mktemp -d)}
py=/usr/bin/python3
fail=0
check() {  # check DESCRIPTION COMMAND...: the command must succeed
  local what=$1
  shift
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if (( rc != 0 )); then
    echo "FAIL: $what: exit $rc"
    cat "$tmp/out" "$tmp/err"
    fail=1
    return 1
  fi
}
expect_error() {  # expect_error TEXT COMMAND...: exit 1, TEXT on stderr
  local text=$1
  shift
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if (( rc != 1 )) || ! grep -qF -- "$text" "$tmp/err"; then
    echo "FAIL: '$*' should exit 1 with '$text' on stderr; got exit $rc:"
    cat "$tmp/err"
    fail=1
  fi
}
compare() {  # compare WHAT GOT.npz WANT.npy SHAPE: logits against PyTorch's
  if ! "$py" - "$@" >"$tmp/py.out" 2>&1 <<'PY'; then
import sys
import numpy as np
what, got_path, want_path, shape = sys.argv[1:5]
shape = tuple(int(d) for d in shape.split(","))
got = np.load(got_path)
assert list(got.keys()) == ["logits"], f"outputs {list(got.keys())}, expected ['logits']"
g, w = got["logits"], np.load(want_path)
assert w.shape == shape, f"the reference {want_path} is {w.shape}, expected {shape}"
assert g.dtype == np.float32 and g.shape == shape, f"got {g.dtype}{list(g.shape)}, expected float32{list(shape)}"
assert np.isfinite(g).all(), f"{np.count_nonzero(~np.isfinite(g))} values not finite"
err = np.abs(g.astype(np.float64) - w)
ok = err <= 1e-4 + 1e-3 * np.abs(w)
print(f"{what}: max |kiln - PyTorch| {err.max():.3g} (max |PyTorch| {np.abs(w).max():.3g})")
assert ok.all(), (f"{np.count_nonzero(~ok)} of {ok.size} values off; worst at "
                  f"{np.unravel_index(np.argmax(err), err.shape)}: {err.max():.3g}")
PY
    echo "FAIL: $1:"
    cat "$tmp/py.out"
    fail=1
  else
    cat "$tmp/py.out"
  fi
}
compile_once() {  # compile_once NAME: NAME.onnx -> $tmp/NAME.so, on the VM
  local name=$1
  check "compile $name.onnx" "$kiln" compile "$dir/$name.onnx" -o "$tmp/$name.so" || return 1
  grep -qF "runs on the VM (its inputs have symbolic dims)" "$tmp/err" ||
    { echo "FAIL: compile $name.onnx does not say it runs on the VM:"; cat "$tmp/err"; fail=1; return 1; }
  check "info $name.so" "$kiln" info "$tmp/$name.so" || return 1
  grep -qF "executor: VM" "$tmp/out" || { echo "FAIL: $name.so is not a VM artifact:"; cat "$tmp/out"; fail=1; }
}

gpt_cases=("1 5" "2 9" "3 16")
for model in "$@"; do
  case $model in
    gpt_tiny | gpt_tiny_nanogpt)
      compile_once "$model" || continue
      grep -qF "input 0 'tokens': int64[?,?]" "$tmp/out" ||
        { echo "FAIL: $model.so's tokens are not int64[?,?]:"; cat "$tmp/out"; fail=1; }
      for c in "${gpt_cases[@]}"; do
        read -r b t <<<"$c"
        stem="$dir/gpt_tiny_b${b}_t${t}"
        inputs=(--input "tokens=${stem}_tokens.npy")
        want="${stem}_logits.npy"
        if [[ $model == gpt_tiny ]]; then
          inputs+=(--input "positions=${stem}_positions.npy")
        else
          want="${stem}_nanogpt_logits.npy"
        fi
        out="$tmp/${model}_b${b}_t${t}.npz"
        rm -f "$out"
        check "run $model at batch $b, seq $t" "$kiln" run "$tmp/$model.so" "${inputs[@]}" \
          --output-npz "$out" --quiet &&
          compare "$model batch $b seq $t" "$out" "$want" "$b,$t,100"
      done
      if [[ $model == gpt_tiny ]]; then
        expect_error "the inputs disagree on the dim batch: 1 (input 0) and 2 (input 1, axis 0)" \
          "$kiln" run "$tmp/$model.so" --input "tokens=$dir/gpt_tiny_b1_t5_tokens.npy" \
          --input "positions=$dir/gpt_tiny_b2_t9_positions.npy"
      fi
      ;;
    resnet_tiny)
      compile_once "$model" || continue
      grep -qF "input 0 'image': float32[?,3,32,32]" "$tmp/out" ||
        { echo "FAIL: $model.so's image is not float32[?,3,32,32]:"; cat "$tmp/out"; fail=1; }
      for b in 1 2 5; do
        out="$tmp/${model}_b${b}.npz"
        rm -f "$out"
        check "run $model at batch $b" "$kiln" run "$tmp/$model.so" \
          --input "image=$dir/resnet_tiny_b${b}_image.npy" --output-npz "$out" --quiet &&
          compare "$model batch $b" "$out" "$dir/resnet_tiny_b${b}_logits.npy" "$b,10"
      done
      check "an image of the wrong size" "$py" -c "
import sys, numpy as np
np.save(sys.argv[1], np.zeros((2, 3, 31, 31), np.float32))" "$tmp/small.npy"
      expect_error "input 'image': expected float32[batch,3,32,32], got float32[2,3,31,31]" \
        "$kiln" run "$tmp/$model.so" --input "image=$tmp/small.npy"
      ;;
    *)
      echo "FAIL: unknown model '$model'"
      fail=1
      ;;
  esac
done

if (( fail )); then exit 1; fi
echo "PASS: $* compiled once each and matched PyTorch at every shape"
