#!/bin/bash
# The quick starts of docs/bindings.md, run as a user would run them: the
# Python block after `pip install` of a wheel built from python/ with
# KILN_SDK (pip wheel + pip install --target: offline), the Rust block as
# src/main.rs of a new crate whose Cargo.toml is the documented
# [dependencies] block (kiln by path), the Go block as the body of main() in
# a new module whose go.mod has the documented require/replace lines. Each
# runs examples/resnet_mini.onnx on its bundled input from a directory that
# holds examples/, and its output is compared with NumPy's
# (|a - b| <= 1e-4 + 1e-4 |b|). The code blocks are read from the document
# itself, so a quick start that stops working fails this test.
#
#   quickstart_test.sh LIBKILN_SO KILN_H MODEL.onnx INPUT.npy EXPECTED.npy
#
# docs/ has no BUILD file: docs/bindings.md is found beside this script's
# real path in the source tree (the test is tagged "external").
set -euo pipefail
die() { echo "quickstart_test: FAIL: $*" >&2; exit 1; }
abspath() { if [[ "$1" == /* ]]; then echo "$1"; else echo "$PWD/$1"; fi; }
[[ $# -eq 5 ]] || die "usage: quickstart_test.sh LIBKILN_SO KILN_H MODEL INPUT EXPECTED"
lib=$(abspath "$1")
sdk=$(dirname "$(dirname "$lib")")
model=$(abspath "$3"); input=$(abspath "$4"); expected=$(abspath "$5")
doc="$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../../docs/bindings.md"
[[ -f "$doc" ]] || die "docs/bindings.md not found beside $(readlink -f "${BASH_SOURCE[0]}")"
runfiles="${TEST_SRCDIR:-/nonexistent}/${TEST_WORKSPACE:-kiln}"
pkg() {  # pkg DIR MARKER: the package folder in the runfiles, else the source tree
  local d
  for d in "$runfiles/$1" "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../../$1"; do
    if [[ -f "$d/$2" ]]; then abspath "$d"; return; fi
  done
  die "cannot find $1/$2"
}
PYTHON=${PYTHON:-/usr/bin/python3}
[[ -x "$PYTHON" ]] || die "python3 not found"

tmp=${TEST_TMPDIR:-$(mktemp -d)}
tmp=$(abspath "$tmp")/quickstart
rm -rf "$tmp"
mkdir -p "$tmp/home" "$tmp/user/examples"
export HOME=$tmp/home
# The SDK as an installed prefix (the runfiles are read-only symlinks).
cp -rL "$sdk" "$tmp/sdk"
chmod -R u+w "$tmp/sdk"
cp -L "$model" "$tmp/user/examples/resnet_mini.onnx"
cp -L "$input" "$tmp/user/examples/resnet_mini_input.npy"
SDK=$tmp/sdk

# block SECTION LANG: the first ```LANG block after the "## SECTION" heading,
# with its /tmp/resnet_mini.so and /path/to/kiln made this test's own.
block() {
  "$PYTHON" - "$doc" "$1" "$2" "$tmp" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
at = text.find("\n## " + sys.argv[2] + "\n")
if at < 0:
    sys.exit("no section '## %s'" % sys.argv[2])
m = re.compile(r"^```" + re.escape(sys.argv[3]) + r"\n(.*?)^```$", re.M | re.S).search(text, at)
if not m:
    sys.exit("no ```%s block in section %s" % (sys.argv[3], sys.argv[2]))
body = m.group(1).replace("/tmp/resnet_mini.so", sys.argv[4] + "/resnet_mini.so")
print(body.replace("/path/to/kiln", sys.argv[4] + "/kiln"), end="")
PY
}
# compare FILE: the floats printed in FILE (the program's output) against EXPECTED.npy.
compare() {
  "$PYTHON" - "$1" "$expected" <<'PY' || die "$2: the output differs from NumPy's"
import re, sys, numpy as np
got = np.array([float(v) for v in re.findall(r"[-+]?\d+\.?\d*(?:[eE][-+]?\d+)?", open(sys.argv[1]).read())])
want = np.load(sys.argv[2]).ravel().astype(np.float64)
if got.size != want.size:
    sys.exit("printed %d numbers, want %d" % (got.size, want.size))
bad = np.abs(got - want) > 1e-4 + 1e-4 * np.abs(want)
if bad.any():
    sys.exit("%d of %d values differ (max |a-b| %g)" % (bad.sum(), want.size, np.abs(got - want).max()))
PY
  echo "   matches NumPy's output"
}
mkdir -p "$tmp/kiln"
cp -rL "$(pkg python pyproject.toml)" "$tmp/kiln/python"
cp -rL "$(pkg rust Cargo.toml)" "$tmp/kiln/rust"
cp -rL "$(pkg go go.mod)" "$tmp/kiln/go"
chmod -R u+w "$tmp/kiln"
rm -rf "$tmp/kiln/rust/target"

# ---- Python: pip install, then the five lines.
echo "== Python: KILN_SDK=\$SDK pip install ./python, then the quick start"
block Python python > "$tmp/user/quickstart.py" || die "docs/bindings.md: no Python quick start"
grep -q "^KILN_SDK=\$SDK pip install ./python" <(block Python sh) ||
  die "docs/bindings.md: the Python install line is not 'KILN_SDK=\$SDK pip install ./python'"
export PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
(cd "$tmp/kiln" && KILN_SDK=$SDK "$PYTHON" -m pip wheel -q --no-build-isolation --no-deps \
  -w "$tmp/dist" ./python) || die "pip wheel ./python failed"
"$PYTHON" -m pip install -q --no-deps --target "$tmp/site" "$tmp/dist"/kiln-*.whl 2>&1 |
  grep -v "WARNING: Running pip as" || true
[[ -d "$tmp/site/kiln" ]] || die "pip install put no kiln package in $tmp/site"
cat "$tmp/user/quickstart.py"
printf '%s\n' 'print(list(outputs.values())[0].ravel().tolist())' >> "$tmp/user/quickstart.py"
(cd "$tmp/user" && env -u KILN_LIBRARY -u LD_LIBRARY_PATH PYTHONPATH="$tmp/site" \
  "$PYTHON" quickstart.py) > "$tmp/py.out" || die "the Python quick start failed"
compare "$tmp/py.out" Python

# ---- Rust: a crate depending on kiln by path.
echo "== Rust: the quick start as src/main.rs, kiln by path"
CARGO=${CARGO:-/usr/bin/cargo}
[[ -x "$CARGO" ]] || die "cargo not found (Debian: cargo)"
if [[ "$CARGO" == /usr/bin/cargo ]]; then export RUSTC=${RUSTC:-/usr/bin/rustc}; fi
mkdir -p "$tmp/rs/src"
{ printf '[package]\nname = "quickstart"\nversion = "0.1.0"\nedition = "2021"\n\n'; block Rust toml; } \
  > "$tmp/rs/Cargo.toml" || die "docs/bindings.md: no Rust [dependencies] block"
block Rust rust > "$tmp/rs/src/main.rs" || die "docs/bindings.md: no Rust quick start"
cat "$tmp/rs/Cargo.toml" "$tmp/rs/src/main.rs"
grep -q "^KILN_LIB_DIR=\$SDK/lib cargo run --offline" <(block Rust sh) ||
  die "docs/bindings.md: the Rust run line is not 'KILN_LIB_DIR=\$SDK/lib cargo run --offline'"
# As the document says: LD_LIBRARY_PATH=$SDK/lib for the program itself.
(cd "$tmp/user" && env CARGO_HOME="$tmp/cargo_home" CARGO_NET_OFFLINE=true \
  CARGO_TARGET_DIR="$tmp/rs_target" LD_LIBRARY_PATH=$SDK/lib KILN_LIB_DIR=$SDK/lib \
  "$CARGO" run -q --offline --manifest-path "$tmp/rs/Cargo.toml") \
  > "$tmp/rs.out" 2> "$tmp/rs.err" || { cat "$tmp/rs.err"; die "the Rust quick start failed"; }
compare "$tmp/rs.out" Rust

# ---- Go: a module requiring kiln, replaced by the package's folder.
echo "== Go: the quick start in main(), kiln by replace"
GO=${GO:-/usr/bin/go}
[[ -x "$GO" ]] || die "go not found (Debian: golang-go)"
mkdir -p "$tmp/gomod"
{ printf 'module quickstart\n\ngo 1.19\n\n'; block Go "" | grep -v '^//'; } > "$tmp/gomod/go.mod" ||
  die "docs/bindings.md: no go.mod block"
{
  printf 'package main\n\nimport (\n\t"fmt"\n\t"log"\n\n\t"kiln"\n)\n\nfunc main() {\n'
  block Go go
  printf '\tif err != nil {\n\t\tlog.Fatal(err)\n\t}\n\tfor _, t := range outputs {\n'
  printf '\t\tv, err := kiln.Values[float32](t)\n\t\tif err != nil {\n\t\t\tlog.Fatal(err)\n\t\t}\n'
  printf '\t\tfmt.Println(v)\n\t}\n}\n'
} > "$tmp/gomod/main.go" || die "docs/bindings.md: no Go quick start"
cat "$tmp/gomod/go.mod" "$tmp/gomod/main.go"
grep -q "^PKG_CONFIG_PATH=\$SDK/lib/pkgconfig go run ." <(block Go sh) ||
  die "docs/bindings.md: the Go run line is not 'PKG_CONFIG_PATH=\$SDK/lib/pkgconfig go run .'"
(cd "$tmp/gomod" && env -u LD_LIBRARY_PATH GOCACHE="$tmp/gocache" GOPATH="$tmp/gopath" \
  GOFLAGS=-mod=mod GOPROXY=off GOSUMDB=off GOTOOLCHAIN=local CGO_ENABLED=1 GOENV=off \
  PKG_CONFIG_PATH=$SDK/lib/pkgconfig "$GO" build -o "$tmp/go_quickstart" .) 2> "$tmp/go.err" ||
  { cat "$tmp/go.err"; die "the Go quick start did not build"; }
(cd "$tmp/user" && "$tmp/go_quickstart") > "$tmp/go.out" || die "the Go quick start failed"
compare "$tmp/go.out" Go
echo "PASS: the Python, Rust and Go quick starts of docs/bindings.md"
