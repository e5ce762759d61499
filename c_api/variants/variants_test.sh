#!/usr/bin/env bash
# Runs each selective build's check program (variant_check.c) and checks the
# builds are smaller than the whole libkiln.so and that the one without a code
# generator does not need LLVM (docs/selective_builds.md records the sizes).
set -euo pipefail
text_llvm="$1" onnx_graph="$2" resnet="$3" reduce="$4" full="$5"
kiln_text_llvm="$6" kiln_onnx_graph="$7"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"

echo "== kiln_text_llvm"
"$text_llvm" text_llvm "$tmp"
echo "== kiln_onnx_graph"
"$onnx_graph" onnx_graph "$resnet" "$reduce"

# The `kiln` command line of each build.
fail() { echo "FAIL: $*"; exit 1; }
# expect_error WHAT TEXT CMD...: CMD fails (nonzero, no crash) saying TEXT.
expect_error() {
  local what="$1" text="$2"; shift 2
  local out rc=0
  out="$("$@" 2>&1)" || rc=$?
  (( rc == 1 )) || fail "$what: exit $rc, expected 1: $out"
  [[ "$out" == *"$text"* ]] || fail "$what: '$out' lacks '$text'"
  echo "$what: $out"
}
cat > "$tmp/v.kir" <<'KIR'
#[version = "0.1"]
def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {
  nn.relu(add(%x, 1f))
}
KIR
echo "== kiln_text_llvm_kiln"
"$kiln_text_llvm" compile "$tmp/v.kir" -o "$tmp/v.so"
"$kiln_text_llvm" info "$tmp/v.so" | grep -q "input 0 'x': float32\[2,3\]" || fail "kiln info"
"$kiln_text_llvm" bench "$tmp/v.so" --repeat 3 > /dev/null || fail "kiln bench"
expect_error "kiln opt --passes FoldScaleAxis" "pass FoldScaleAxis is not in this build" \
  "$kiln_text_llvm" opt "$tmp/v.kir" --passes FoldScaleAxis
expect_error "kiln check (ONNX)" "the ONNX frontend is not in this build" \
  "$kiln_text_llvm" check "$resnet"
echo "== kiln_onnx_graph_kiln"
"$kiln_onnx_graph" check "$resnet" | grep -q "output 0" || fail "kiln check on ONNX"
"$kiln_onnx_graph" opt "$resnet" > "$tmp/opt.kir" || fail "kiln opt on ONNX"
grep -q "Primitive=1" "$tmp/opt.kir" || fail "kiln opt did not fuse"
expect_error "kiln compile" "no code generator is in this build" \
  "$kiln_onnx_graph" compile "$resnet" -o "$tmp/r.so"
expect_error "kiln check (text IR)" "the text-IR frontend (.kir parser) is not in this build" \
  "$kiln_onnx_graph" check "$tmp/v.kir"

dir="$(dirname "$text_llvm")"
size() { stat -L -c %s "$1"; }
full_size=$(size "$full")
for v in kiln_text_llvm kiln_onnx_graph; do
  # Named by its SONAME, like libkiln.so.0 (what the variant's program loads).
  so="$dir/lib$v.so.0"
  [[ -f "$so" ]] || { echo "FAIL: $so is missing"; exit 1; }
  grep -q "(SONAME) *Library soname: \[lib$v\.so\.0\]" <<< "$(readelf -d "$so")" ||
    { echo "FAIL: $so has not the SONAME lib$v.so.0"; readelf -d "$so" | grep SONAME; exit 1; }
  s=$(size "$so")
  echo "lib$v.so: $s bytes (libkiln.so: $full_size)"
  if (( s >= full_size )); then
    echo "FAIL: lib$v.so is not smaller than libkiln.so"
    exit 1
  fi
done
if grep -q 'NEEDED.*LLVM' <<< "$(readelf -d "$dir/libkiln_onnx_graph.so.0")"; then
  echo "FAIL: libkiln_onnx_graph.so (no code generator) needs LLVM:"
  readelf -d "$dir/libkiln_onnx_graph.so.0" | grep NEEDED
  exit 1
fi
if ! grep -q 'NEEDED.*LLVM' <<< "$(readelf -d "$dir/libkiln_text_llvm.so.0")"; then
  echo "FAIL: libkiln_text_llvm.so does not link LLVM (is its code generator there?)"
  exit 1
fi
echo "PASS"
