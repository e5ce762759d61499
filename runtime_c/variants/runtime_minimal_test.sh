#!/usr/bin/env bash
# A model compiled by kiln, run by a program linked against the runtime
# without the debug executor (runtime_c/variants/BUILD.bazel).
set -euo pipefail
kiln="$1" check="$2" minimal="$3" full="$4"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
cat > "$tmp/m.kir" <<'KIR'
#[version = "0.1"]
def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {
  nn.relu(add(%x, 1f))
}
KIR
"$kiln" compile "$tmp/m.kir" -o "$tmp/m.so"
"$check" "$tmp/m.so"
ms=$(stat -L -c %s "$minimal") fs=$(stat -L -c %s "$full")
echo "libkiln_runtime_minimal.so: $ms bytes (libkiln_runtime.so: $fs)"
(( ms < fs )) || { echo "FAIL: the minimal runtime is not smaller"; exit 1; }
# The same kiln_* functions as the whole runtime (a program linked against
# one runs against the other).
diff <(nm -D --defined-only "$full" | awk '{print $3}' | sort) \
     <(nm -D --defined-only "$minimal" | awk '{print $3}' | sort) ||
  { echo "FAIL: the two runtimes export different functions"; exit 1; }
echo PASS
