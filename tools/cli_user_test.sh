#!/usr/bin/env bash
# The command line as a new user meets it (issue 16): CLI11's errors for bad
# arguments (named option, exit 2, never a signal), --version, kiln info,
# check's names and symbolic dims, --json on check / compile --timing / run /
# info (parsed as JSON), symbolic-dim errors and --input-shape by dim name,
# .npz in and out (read back with NumPy; malformed archives refused), run
# --top-k (against NumPy's argsort), the progress display (shown on a
# terminal, absent otherwise) and kiln graph's fused labels.
#
#   cli_user_test.sh KILN MODEL.onnx INPUT.npy EXPECTED.npy
set -uo pipefail
kiln=$1
model=$2
input=$3
expected=$4
tmp=${TEST_TMPDIR:-$(mktemp -d)}
py=/usr/bin/python3
fail=0
# shellcheck source=tools/cli_test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/cli_test_lib.sh"
expect_out() {  # expect_out TEXT WHAT: TEXT in the last stdout
  grep -qF -- "$1" "$tmp/out" || { echo "FAIL: $2: '$1' not in stdout:"; cat "$tmp/out"; fail=1; }
}
pycheck() {  # pycheck WHAT SCRIPT ARGS...: a Python check on files
  local what=$1 script=$2
  shift 2
  if ! "$py" -c "$script" "$@" >"$tmp/py.out" 2>&1; then
    echo "FAIL: $what:"
    cat "$tmp/py.out"
    fail=1
  fi
}

check "compile" "$kiln" compile "$model" -o "$tmp/m.so"

# ---- 1. bad arguments: a clear error naming the option, exit 2, no abort.
expect_error 2 "--opt-level needs a value" "$kiln" compile "$model" -o "$tmp/x.so" --opt-level
expect_error 2 "--opt-level must be an integer from 0 to 3, got 'fast'" "$kiln" compile "$model" -o "$tmp/x.so" -O fast
expect_error 2 "--output needs a value" "$kiln" compile "$model" -o
expect_error 2 "--top-k must be an integer from 1 to 1000000, got '0'" "$kiln" run "$tmp/m.so" --random-inputs --top-k 0
expect_error 2 "--threads must be an integer from 0 to 4096, got 'x'" "$kiln" bench "$tmp/m.so" --threads=x
expect_error 2 "--repeat needs a value" "$kiln" debug "$tmp/m.so" --dump-dir "$tmp/d" --repeat
expect_error 2 "unknown option '--frobnicate'" "$kiln" check "$model" --frobnicate
expect_error 2 "unknown option '--json'" "$kiln" bench "$tmp/m.so" --json
expect_error 2 "--json goes with --timing" "$kiln" compile "$model" -o "$tmp/x.so" --json
expect_error 2 "--input-shape must be NAME=D0,D1,..." "$kiln" compile "$model" -o "$tmp/x.so" --input-shape 1,2
expect_error 2 "unknown command 'nope'" "$kiln" help nope
# Odd arguments for every command: exit 1 or 2 with a message, never a signal.
for cmd in compile run info bench debug check print opt lower graph; do
  for arg in -- - --=x ---x -O --input --input= --input-shape= "" -Ox --opt-level= --json=maybe \
             --threads=-1 --repeat=99999999999999999999 $'--\xff' "--input-shape=x=1,,2"; do
    "$kiln" "$cmd" "$arg" "$model" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if (( rc >= 128 )) || { (( rc != 0 )) && [[ ! -s "$tmp/err" ]]; }; then
      echo "FAIL: kiln $cmd '$arg' MODEL: exit $rc"; cat "$tmp/err"; fail=1
    fi
  done
done
# After "--" everything is positional: a model file named like an option.
cp "$model" "$tmp/--odd.onnx"
abs_kiln=$(realpath "$kiln")
(cd "$tmp" && "$abs_kiln" check -- --odd.onnx) >"$tmp/out" 2>"$tmp/err" ||
  { echo "FAIL: kiln check -- --odd.onnx:"; cat "$tmp/err"; fail=1; }

# The last of a repeated option wins; --name=value and -O3 spellings work.
check "repeated and joined options" "$kiln" compile "$model" -O 0 -O3 --output="$tmp/x.so" --timing
grep -q "kiln compile: " "$tmp/err" || { echo "FAIL: --timing line missing"; fail=1; }

# ---- 2. --version, info, check's names.
check "--version" "$kiln" --version
grep -qE "^kiln [0-9]+\.[0-9]+\.[0-9]+ \(C API version [0-9]+\)$" "$tmp/out" || { echo "FAIL: --version:"; cat "$tmp/out"; fail=1; }
check "info" "$kiln" info "$tmp/m.so"
expect_out "input 0 'input': float32[1,3,32,32]" "info input"
expect_out "output 0 'softmax_40': float32[1,10]" "info output"
expect_out "target:   llvm" "info target"
expect_out "executor: graph executor" "info executor"
expect_out "fused_nn_conv2d" "info kernels"
check "info --json" "$kiln" info "$tmp/m.so" --json
cp "$tmp/out" "$tmp/info.json"
pycheck "info --json" "
import json, os, sys
d = json.load(open(sys.argv[1]))
assert d['target'].startswith('llvm'), d['target']
assert d['producer'].startswith('kiln '), d['producer']
assert d['executor'] == 'graph'
assert d['inputs'] == [{'name': 'input', 'dtype': 'float32', 'shape': [1, 3, 32, 32], 'sequence': False, 'optional': False}], d['inputs']
assert d['outputs'] == [{'name': 'softmax_40', 'dtype': 'float32', 'shape': [1, 10], 'sequence': False, 'optional': False}], d['outputs']
assert d['kernels'] and all(k['calls'] >= 1 and k['ops'] for k in d['kernels']), d['kernels']
assert sum(k['calls'] for k in d['kernels']) == d['num_kernel_calls']
s = d['sizes']
assert s['file_bytes'] == os.path.getsize(sys.argv[2]), s
assert s['num_weights'] > 0 and s['weight_bytes'] > 0 and s['arena_bytes'] > 0, s
" "$tmp/info.json" "$tmp/m.so"
expect_error 1 "cannot open" "$kiln" info "$tmp/missing.so"
head -c 3000 "$tmp/m.so" >"$tmp/trunc.so"
expect_error 1 "trunc.so" "$kiln" info "$tmp/trunc.so"

check "check" "$kiln" check "$model"
expect_out "input 0 'input': float32[1,3,32,32]" "check input"
expect_out "output 0 'softmax_40': float32[1,10]" "check output name, as run prints it"
check "check --json" "$kiln" check "$model" --json
cp "$tmp/out" "$tmp/check.json"
pycheck "check --json" "
import json, sys
d = json.load(open(sys.argv[1]))
m, = d['models']
assert m['inputs'] == [{'name': 'input', 'dtype': 'float32', 'shape': [1, 3, 32, 32]}], m
assert m['outputs'] == [{'name': 'softmax_40', 'dtype': 'float32', 'shape': [1, 10]}], m
assert m['symbolic_dims'] == [] and m['ms'] >= 0, m
" "$tmp/check.json"

# ---- 3. symbolic dims: a batch dim named N.
check "write a model with a symbolic batch" "$py" -c "
import sys, onnx
m = onnx.load(sys.argv[1])
for v in list(m.graph.input) + list(m.graph.output):
    v.type.tensor_type.shape.dim[0].dim_param = 'N'
onnx.save(m, sys.argv[2])
" "$model" "$tmp/sym.onnx"
check "check a symbolic model" "$kiln" check "$tmp/sym.onnx"
expect_out "input 0 'input': float32[N,3,32,32]" "check names the symbolic dim"
expect_out "output 0 'softmax_40': float32[N,10]" "check names the output's symbolic dim"
expect_out "symbolic dims: N (compile with --input-shape N=SIZE)" "check lists the symbolic dims"
check "check --json a symbolic model" "$kiln" check "$tmp/sym.onnx" --json
cp "$tmp/out" "$tmp/sym.json"
pycheck "check --json symbolic" "
import json, sys
m, = json.load(open(sys.argv[1]))['models']
assert m['symbolic_dims'] == ['N'], m
assert m['inputs'][0]['shape'] == ['N', 3, 32, 32], m
" "$tmp/sym.json"
# Without --input-shape a symbolic model compiles for the VM: one artifact
# for every batch size, matching the static N=2 artifact at N=2.
check "compile a symbolic model for the VM" "$kiln" compile "$tmp/sym.onnx" -o "$tmp/sym.so"
grep -qF "runs on the VM (its inputs have symbolic dims)" "$tmp/err" ||
  { echo "FAIL: compile does not say the VM runs it:"; cat "$tmp/err"; fail=1; }
check "info of the VM model" "$kiln" info "$tmp/sym.so"
expect_out "executor: VM" "info names the VM"
check "batches of 2 and 3" "$py" -c "
import sys, numpy as np
np.save(sys.argv[1], np.random.RandomState(0).randn(2, 3, 32, 32).astype(np.float32))
np.save(sys.argv[2], np.random.RandomState(1).randn(3, 3, 32, 32).astype(np.float32))
" "$tmp/b2.npy" "$tmp/b3.npy"
check "run the VM model at N=3" "$kiln" run "$tmp/sym.so" --input "input=$tmp/b3.npy" --output-npz "$tmp/vm3.npz"
check "run the VM model at N=2" "$kiln" run "$tmp/sym.so" --input "input=$tmp/b2.npy" --output-npz "$tmp/vm2.npz"
expect_error 1 "--input-shape N=SIZE" "$kiln" lower "$tmp/sym.onnx"
check "compile with a dim name" "$kiln" compile "$tmp/sym.onnx" -o "$tmp/sym2.so" --input-shape N=2
check "info of the N=2 model" "$kiln" info "$tmp/sym2.so"
expect_out "input 0 'input': float32[2,3,32,32]" "N=2 binds the batch"
check "run the N=2 model" "$kiln" run "$tmp/sym2.so" --input "input=$tmp/b2.npy" --output-npz "$tmp/g2.npz"
pycheck "the VM at N=2 and N=3 against the graph artifact" "
import sys, numpy as np
vm2, g2, vm3 = (np.load(f) for f in sys.argv[1:4])
(k,) = list(g2)
assert vm2[k].shape == (2, 10) and vm3[k].shape == (3, 10), (vm2[k].shape, vm3[k].shape)
assert np.allclose(vm2[k], g2[k], rtol=1e-5, atol=1e-6), abs(vm2[k] - g2[k]).max()
assert np.allclose(vm3[k].sum(axis=1), 1, atol=1e-5)  # softmax rows
" "$tmp/vm2.npz" "$tmp/g2.npz" "$tmp/vm3.npz"
check "compile with an input name" "$kiln" compile "$tmp/sym.onnx" -o "$tmp/sym3.so" --input-shape input=3,3,32,32
check "info of the input=3,... model" "$kiln" info "$tmp/sym3.so"
expect_out "input 0 'input': float32[3,3,32,32]" "input=3,... binds the batch"
expect_error 2 "--input-shape names 'Q', which is neither an input nor a symbolic dim of $tmp/sym.onnx (inputs: input; symbolic dims: N)" \
  "$kiln" compile "$tmp/sym.onnx" -o "$tmp/x.so" --input-shape Q=2
expect_error 2 "'N' is a symbolic dim and takes one size, got 2" "$kiln" compile "$tmp/sym.onnx" -o "$tmp/x.so" --input-shape N=2,3

# ---- 3b. kiln eval: the interpreter on a program the graph executor cannot
# run, against the same program compiled for the VM.
cat >"$tmp/prog.kir" <<'KIR'
#[version = "0.1"]
def @count(%i: Tensor[(), int32], %x: Tensor[(N,), float32]) -> Tensor[(N,), float32] {
  if (less(%i, 1)) { %x } else { @count(subtract(%i, 1), add(multiply(%x, 0.5f), 1f)) }
}
def @main(%n: Tensor[(), int32], %x: Tensor[(N,), float32]) {
  @count(%n, %x)
}
KIR
check "program inputs" "$py" -c "
import sys, numpy as np
np.save(sys.argv[1], np.array(3, dtype=np.int32))
np.save(sys.argv[2], np.array([4, -2, 0.5], dtype=np.float32))
" "$tmp/n.npy" "$tmp/xp.npy"
check "eval a program" "$kiln" eval "$tmp/prog.kir" --input "n=$tmp/n.npy" --input "x=$tmp/xp.npy" --output-npz "$tmp/eval.npz"
expect_out "output 0: float32[3]" "eval prints the output"
check "compile the program for the VM" "$kiln" compile "$tmp/prog.kir" -o "$tmp/prog.so"
check "run the compiled program" "$kiln" run "$tmp/prog.so" --input "n=$tmp/n.npy" --input "x=$tmp/xp.npy" --output-npz "$tmp/run.npz"
pycheck "eval and the VM agree" "
import sys, numpy as np
e, r = np.load(sys.argv[1]), np.load(sys.argv[2])
want = np.array([4, -2, 0.5], dtype=np.float32)
for _ in range(3): want = want * 0.5 + 1
assert np.allclose(e['output0'], want), e['output0']
(k,) = list(r)
assert np.allclose(r[k], want), r[k]
" "$tmp/eval.npz" "$tmp/run.npz"
expect_error 1 "input 'x' (float32[?]) is not given; use --input x=FILE.npy" "$kiln" eval "$tmp/prog.kir" --input "n=$tmp/n.npy"

# ---- 3c. An ONNX model with sequence inputs and outputs (SequenceMap):
# compiled once, run with sequences of different lengths and extents.
check "a SequenceMap model" "$py" -c "
import sys, onnx
from onnx import helper as h, TensorProto as T
seq = lambda n: h.make_tensor_sequence_value_info(n, T.FLOAT, ['L'])
body = h.make_graph([h.make_node('Add', ['a', 'b'], ['c'])], 'body',
                    [h.make_tensor_value_info('a', T.FLOAT, ['L']), h.make_tensor_value_info('b', T.FLOAT, ['L'])],
                    [h.make_tensor_value_info('c', T.FLOAT, ['L'])])
g = h.make_graph([h.make_node('SequenceMap', ['x0', 'x1'], ['y'], body=body)], 'g', [seq('x0'), seq('x1')], [seq('y')])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid('', 17)]), sys.argv[1])
import numpy as np
for name, v in [('a', [1, 2, 3]), ('b', [10, 20]), ('c', [0.5, 0.5, 0.5]), ('d', [1, 1])]:
    np.save(sys.argv[2] + '/' + name + '.npy', np.array(v, np.float32))
" "$tmp/seqmap.onnx" "$tmp"
check "compile the sequence model" "$kiln" compile "$tmp/seqmap.onnx" -o "$tmp/seqmap.so"
grep -qF "runs on the VM" "$tmp/err" || { echo "FAIL: a sequence model runs on the VM:"; cat "$tmp/err"; fail=1; }
check "run it on two sequences" "$kiln" run "$tmp/seqmap.so" --input "x0=$tmp/a.npy,$tmp/b.npy" \
  --input "x1=$tmp/c.npy,$tmp/d.npy" --output-dir "$tmp/seqout"
expect_out "output 0 'y': a sequence of 2 tensors" "run prints a sequence output"
pycheck "the sequence output's tensors" "
import sys, numpy as np
d = sys.argv[1]
assert np.allclose(np.load(d + '/y_0.npy'), [1.5, 2.5, 3.5]), np.load(d + '/y_0.npy')
assert np.allclose(np.load(d + '/y_1.npy'), [11, 21]), np.load(d + '/y_1.npy')
" "$tmp/seqout"
check "run it on empty sequences" "$kiln" run "$tmp/seqmap.so" --input "x0=[]" --input "x1=[]"
expect_out "output 0 'y': a sequence of 0 tensors" "an empty sequence"
expect_error 1 "input 'x1' is a sequence of float32[?] tensors; give its tensors with --input x1=A.npy,B.npy" \
  "$kiln" run "$tmp/seqmap.so" --input "x0=$tmp/a.npy"
expect_error 1 "do not broadcast" "$kiln" run "$tmp/seqmap.so" --input "x0=$tmp/a.npy" --input "x1=$tmp/d.npy"

# ---- 3d. An ONNX model with an optional input and an optional output:
# Some and none in, has-element and the value (or none) out.
check "an optional model" "$py" -c "
import sys, onnx
from onnx import helper as h, TensorProto as T
opt = lambda n: h.make_value_info(n, h.make_optional_type_proto(h.make_tensor_type_proto(T.FLOAT, ['L'])))
g = h.make_graph([h.make_node('Identity', ['o'], ['same']), h.make_node('OptionalHasElement', ['o'], ['has']),
                  h.make_node('OptionalGetElement', ['o'], ['value'])], 'g', [opt('o')],
                 [opt('same'), h.make_tensor_value_info('has', T.BOOL, []), h.make_tensor_value_info('value', T.FLOAT, ['L'])])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid('', 15)]), sys.argv[1])
" "$tmp/opt.onnx"
check "compile the optional model" "$kiln" compile "$tmp/opt.onnx" -o "$tmp/opt.so"
grep -qF "runs on the VM" "$tmp/err" || { echo "FAIL: an optional model runs on the VM:"; cat "$tmp/err"; fail=1; }
check "info on the optional model" "$kiln" info "$tmp/opt.so"
expect_out "input 0 'o': optional of float32[?]" "info says optional of"
check "run it with a value" "$kiln" run "$tmp/opt.so" --input "o=$tmp/a.npy"
expect_out "output 1 'has': bool[]" "run with a value: has-element"
expect_out "output 2 'value': float32[3]" "run with a value: the value"
expect_error 1 "no clause of a match in main_lambda" "$kiln" run "$tmp/opt.so" --input "o=none"
grep -qF "OptionalGetElement_input_is_not_none" "$tmp/err" || {
  echo "FAIL: OptionalGetElement of none names itself:"; cat "$tmp/err"; fail=1; }
expect_error 1 "input 'o' is an optional of float32[?]; give o=none for none" "$kiln" run "$tmp/opt.so"
g_only="$tmp/opt_has.onnx"
check "an optional model without OptionalGetElement" "$py" -c "
import sys, onnx
from onnx import helper as h, TensorProto as T
opt = lambda n: h.make_value_info(n, h.make_optional_type_proto(h.make_tensor_type_proto(T.FLOAT, ['L'])))
g = h.make_graph([h.make_node('Identity', ['o'], ['same']), h.make_node('OptionalHasElement', ['o'], ['has'])],
                 'g', [opt('o')], [opt('same'), h.make_tensor_value_info('has', T.BOOL, [])])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid('', 15)]), sys.argv[1])
" "$g_only"
check "compile it" "$kiln" compile "$g_only" -o "$tmp/opt_has.so"
check "run it with none" "$kiln" run "$tmp/opt_has.so" --input "o=none" --json
pycheck "a none output in --json" "
import json, sys
d = json.load(open(sys.argv[1]))
assert d['outputs'][0] == {'index': 0, 'name': 'same', 'none': True}, d['outputs'][0]
assert d['outputs'][1]['values'] == [False] or d['outputs'][1]['values'] == [0], d['outputs'][1]
" "$tmp/out"
check "run it with none, as text" "$kiln" run "$tmp/opt_has.so" --input "o=none"
expect_out "output 0 'same': none" "a none output prints none"
expect_error 1 "input 'x0' is not an optional; it cannot be none" "$kiln" run "$tmp/seqmap.so" --input "x0=none" --input "x1=[]"
# A Loop carrying an optional that starts empty (the body gives o's value + 1,
# or [0] for none): compiled once, run with none and with a value.
check "a Loop over an optional" "$py" -c "
import sys, onnx, numpy as np
from onnx import helper as h, TensorProto as T
optT = h.make_optional_type_proto(h.make_tensor_type_proto(T.FLOAT, ['L']))
one = h.make_node('Constant', [], ['one'], value=h.make_tensor('one', T.FLOAT, [1], [1.0]))
zero = h.make_node('Constant', [], ['e'], value=h.make_tensor('zero', T.FLOAT, [1], [0.0]))
then_g = h.make_graph([h.make_node('OptionalGetElement', ['o_in'], ['g']), one, h.make_node('Add', ['g', 'one'], ['t'])],
                      'then', [], [h.make_tensor_value_info('t', T.FLOAT, None)])
else_g = h.make_graph([zero], 'else', [], [h.make_tensor_value_info('e', T.FLOAT, None)])
body = h.make_graph([h.make_node('Identity', ['c_in'], ['c_out']), h.make_node('OptionalHasElement', ['o_in'], ['has']),
                     h.make_node('If', ['has'], ['v'], then_branch=then_g, else_branch=else_g)], 'body',
                    [h.make_tensor_value_info('i', T.INT64, []), h.make_tensor_value_info('c_in', T.BOOL, []),
                     h.make_value_info('o_in', optT)],
                    [h.make_tensor_value_info('c_out', T.BOOL, []), h.make_tensor_value_info('v', T.FLOAT, None)])
g = h.make_graph([h.make_node('Loop', ['M', '', 'o0'], ['o'], body=body)], 'g',
                 [h.make_tensor_value_info('M', T.INT64, []), h.make_value_info('o0', optT)], [h.make_value_info('o', optT)])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid('', 16)]), sys.argv[1])
for m in [0, 3]: np.save(sys.argv[2] + '/m%d.npy' % m, np.array(m, np.int64))
np.save(sys.argv[2] + '/x2.npy', np.array([10, 20], np.float32))
" "$tmp/loopopt.onnx" "$tmp"
check "compile the optional Loop" "$kiln" compile "$tmp/loopopt.onnx" -o "$tmp/loopopt.so"
check "zero trips from none" "$kiln" run "$tmp/loopopt.so" --input "M=$tmp/m0.npy" --input "o0=none"
expect_out "output 0 'o': none" "zero trips from none stay none"
check "three trips from none" "$kiln" run "$tmp/loopopt.so" --input "M=$tmp/m3.npy" --input "o0=none"
expect_out "  [2]" "three trips from none: [0], [1], [2]"
check "three trips from a value" "$kiln" run "$tmp/loopopt.so" --input "M=$tmp/m3.npy" --input "o0=$tmp/x2.npy"
expect_out "  [13, 23]" "three trips from [10, 20]"

# ---- 4. --json on compile --timing and run.
check "compile --timing --json" "$kiln" compile "$model" -o "$tmp/j.so" --timing --json
cp "$tmp/out" "$tmp/compile.json"
pycheck "compile --timing --json" "
import json, os, sys
d = json.load(open(sys.argv[1]))
assert d['kernels'] > 0 and d['fused_calls'] >= d['kernels'], d
assert d['file_bytes'] == os.path.getsize(sys.argv[2]), d
assert d['ms']['total'] > 0 and set(d['ms']) >= {'passes', 'lowering', 'plan', 'codegen', 'link'}, d
" "$tmp/compile.json" "$tmp/j.so"
check "run --json" "$kiln" run "$tmp/m.so" --input "input=$input" --json --repeat 2
cp "$tmp/out" "$tmp/run.json"
pycheck "run --json values match NumPy" "
import json, sys, numpy as np
d = json.load(open(sys.argv[1]))
o, = d['outputs']
assert o['name'] == 'softmax_40' and o['dtype'] == 'float32' and o['shape'] == [1, 10], o
want = np.load(sys.argv[2]).ravel()
assert np.abs(np.array(o['values'], np.float64) - want).max() <= 1e-4
assert d['repeat'] == 2 and d['time_ms_mean'] > 0, d
" "$tmp/run.json" "$expected"

# ---- 5. .npz in and out, --top-k.
check "write an .npz" "$py" -c "
import sys, numpy as np
x = np.load(sys.argv[1])
np.savez(sys.argv[2], input=x)
np.savez(sys.argv[3], input=x, bogus=x)
np.savez_compressed(sys.argv[4], input=x)
" "$input" "$tmp/in.npz" "$tmp/extra.npz" "$tmp/zipped.npz"
check "run --input FILE.npz --output-npz" "$kiln" run "$tmp/m.so" --input "$tmp/in.npz" --output-npz "$tmp/out.npz" --output-dir "$tmp/outdir" --quiet
pycheck "the written .npz" "
import sys, numpy as np
z = np.load(sys.argv[1])
assert list(z.keys()) == ['softmax_40'], list(z.keys())
got, want = z['softmax_40'], np.load(sys.argv[2])
assert got.shape == want.shape and got.dtype == want.dtype
assert np.abs(got - want).max() <= 1e-4
assert (np.load(sys.argv[3]) == got).all()
" "$tmp/out.npz" "$expected" "$tmp/outdir/softmax_40.npy"
expect_error 1 "holds array 'bogus'" "$kiln" run "$tmp/m.so" --input "$tmp/extra.npz"
expect_error 1 "is compressed (np.savez_compressed)" "$kiln" run "$tmp/m.so" --input "$tmp/zipped.npz"
head -c 200 "$tmp/in.npz" >"$tmp/trunc.npz"
expect_error 1 "trunc.npz: not a valid .npz (zip) file" "$kiln" run "$tmp/m.so" --input "$tmp/trunc.npz"
"$py" -c "
import sys
b = bytearray(open(sys.argv[1], 'rb').read()); b[200] ^= 0xff; open(sys.argv[2], 'wb').write(b)
" "$tmp/in.npz" "$tmp/flipped.npz"
expect_error 1 "fails its CRC-32 check" "$kiln" run "$tmp/m.so" --input "$tmp/flipped.npz"
printf 'not a zip at all, but long enough to have an end record.....' >"$tmp/junk.npz"
expect_error 1 "no end-of-central-directory record" "$kiln" run "$tmp/m.so" --input "$tmp/junk.npz"
mkfifo "$tmp/fifo.npz"
expect_error 1 "is not a regular file" timeout 60 "$kiln" run "$tmp/m.so" --input "$tmp/fifo.npz"
expect_error 2 "an .npz sets inputs by its arrays' names" "$kiln" run "$tmp/m.so" --input "input=$tmp/in.npz"
expect_error 2 "--output-npz must name a .npz file" "$kiln" run "$tmp/m.so" --random-inputs --output-npz "$tmp/o.npy"

check "run --top-k 3" "$kiln" run "$tmp/m.so" --input "input=$input" --top-k 3
top=$(grep "top 3 of row 0:" "$tmp/out")
want=$("$py" -c "
import sys, numpy as np
y = np.load(sys.argv[1]).ravel(); idx = np.argsort(-y, kind='stable')[:3]
print('  top 3 of row 0: ' + ', '.join('%d (%.6g)' % (i, y[i]) for i in idx))
" "$expected")
# Values may differ from NumPy's in the last digits; the indices must not.
[[ "$(sed 's/ ([^)]*)//g' <<<"$top")" == "$(sed 's/ ([^)]*)//g' <<<"$want")" ]] ||
  { echo "FAIL: --top-k: got '$top', NumPy: '$want'"; fail=1; }
check "run --top-k --json" "$kiln" run "$tmp/m.so" --input "input=$input" --top-k 20 --json --quiet
cp "$tmp/out" "$tmp/top.json"
pycheck "run --top-k --json" "
import json, sys, numpy as np
o, = json.load(open(sys.argv[1]))['outputs']
assert 'values' not in o
row, = o['top_k']
y = np.load(sys.argv[2]).ravel()
assert row['indices'] == list(np.argsort(-y, kind='stable')), row   # k > 10 takes all 10
assert np.abs(np.array(row['values']) - y[row['indices']]).max() <= 1e-4
" "$tmp/top.json" "$expected"

# ---- 6. progress: on a terminal only.
check "compile, stderr not a terminal" "$kiln" compile "$model" -o "$tmp/p.so"
[[ ! -s "$tmp/err" ]] || { echo "FAIL: compile wrote to a non-terminal stderr:"; cat "$tmp/err"; fail=1; }
# on_tty WHAT EXPECTED... -- COMMAND...: COMMAND's stderr on a pseudo-terminal
# holds every EXPECTED text and ends with the line erased.
on_tty() {
  local what=$1
  shift
  local want=()
  while [[ $1 != -- ]]; do want+=("$1"); shift; done
  shift
  pycheck "$what" "
import os, pty, subprocess, sys
n = int(sys.argv[1]); want = sys.argv[2:2 + n]; cmd = sys.argv[2 + n:]
master, slave = pty.openpty()
env = dict(os.environ, TERM='xterm')
env.pop('KILN_NO_PROGRESS', None)
p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave, env=env)
os.close(slave)
seen = b''
while True:
    try:
        chunk = os.read(master, 4096)
    except OSError:
        break
    if not chunk:
        break
    seen += chunk
assert p.wait() == 0, 'exit status %d' % p.returncode
text = seen.decode(errors='replace')
for w in want:
    assert w in text, (w, text[-400:])
last = max(text.rfind(w) for w in want)
assert text.rfind('\\r\\x1b[K') > last, repr(text[-120:])   # the line is erased at the end
" "${#want[@]}" "${want[@]}" "$@"
}
# The compile's own phases (kiln_model_compile's progress callback), its fused
# functions counted while lowering, and its kernels counted up to the number --timing --json reports (redraws are at
# most every 100 ms, so not every count shows; the last one always does).
check "compile --timing --json (kernel count)" "$kiln" compile "$model" -o "$tmp/k.so" --timing --json
kernels=$("$py" -c "import json, sys; print(json.load(open(sys.argv[1]))['kernels'])" "$tmp/out")
on_tty "compile on a terminal shows its phases and kernels" "kiln compile: reading " \
  "compiling to $tmp/tty.so: graph passes" "compiling to $tmp/tty.so: lowering, function " \
  "compiling to $tmp/tty.so: planning memory" "compiling to $tmp/tty.so: code generation, kernel " \
  "code generation, kernel $kernels/$kernels" "compiling to $tmp/tty.so: linking" \
  -- "$kiln" compile "$model" -o "$tmp/tty.so"
on_tty "a long run on a terminal shows the runs done" "kiln run: run " "/30000" \
  -- "$kiln" run "$tmp/m.so" --random-inputs --repeat 30000 --quiet --threads 1
on_tty "bench on a terminal shows what it times" "kiln bench: 1 warm-up and 5 timed runs ... " \
  -- "$kiln" bench "$tmp/m.so" --repeat 5

# ---- 7. graph: a fused function's operators on separate lines.
check "graph --fused" "$kiln" graph "$model" --fused
grep -qF 'label="fused: nn.conv2d\nadd' "$tmp/out" || { echo "FAIL: fused label without real line breaks:"; grep fused "$tmp/out" | head -3; fail=1; }
grep -qF '\\n' "$tmp/out" && { echo "FAIL: graph still shows escaped line breaks"; fail=1; }

# Constants carry their ONNX initializer's name (the BatchNormalization's
# scale is the initializer gamma_2 in resnet_mini.onnx).
check "graph (initializer names)" "$kiln" graph "$model"
grep -qF 'label="gamma_2\n' "$tmp/out" || { echo "FAIL: no constant labelled with its initializer name:"; grep 'shape=note' "$tmp/out" | head -3; fail=1; }

# After the graph passes (graph --opt: no fusion), a weight that FoldConstant
# computed (batch norm folded into the conv, then re-laid out for NCHWc) keeps
# its initializer's name: resnet_mini's first conv weight is w_1.
check "graph --opt (folded constants keep names)" "$kiln" graph "$model" --opt
grep -qF 'label="w_1\n' "$tmp/out" || { echo "FAIL: no folded constant labelled w_1:"; grep 'shape=note' "$tmp/out" | head -5; fail=1; }
grep -q 'label="fused' "$tmp/out" && { echo "FAIL: graph --opt fused"; fail=1; }
expect_error 2 "--fused and --opt draw different graphs" "$kiln" graph "$model" --opt --fused

# ---- 8. the man page (kiln help --man, installed as kiln.1): every
# command's section, and groff reads it without a warning.
check "help --man" "$kiln" help --man
cp "$tmp/out" "$tmp/kiln.1"
head -2 "$tmp/kiln.1" | grep -q '^\.TH KILN 1 ' || { echo "FAIL: kiln.1 has no .TH line"; fail=1; }
for c in compile check print opt lower graph run info bench debug; do
  grep -qx "\.SS kiln $c" "$tmp/kiln.1" || { echo "FAIL: kiln.1 has no section for kiln $c"; fail=1; }
done
if command -v groff >/dev/null; then
  groff -man -Tutf8 -ww -z "$tmp/kiln.1" 2>"$tmp/groff.err"
  [[ ! -s "$tmp/groff.err" ]] || { echo "FAIL: groff warns about kiln.1:"; head -5 "$tmp/groff.err"; fail=1; }
  rendered=$(groff -man -Tutf8 "$tmp/kiln.1" 2>/dev/null)
  grep -q -- '--input-shape' <<< "$rendered" || { echo "FAIL: kiln.1 renders without compile's options"; fail=1; }
else
  echo "note: groff not installed; kiln.1 not rendered"
fi

sanitizer_reports
if (( fail )); then exit 1; fi
echo "PASS: kiln CLI (issue 16)"
