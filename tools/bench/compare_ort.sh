#!/usr/bin/env bash
# File: tools/bench/compare_ort.sh
#
# kiln against ONNX Runtime on six real models (issue 13's benchmark), at 1
# and 2 threads, side by side in one run; writes docs/performance.md. Thirteen
# more torchvision models (models.py: RegNet, ResNeXt, ShuffleNetV2,
# Inception, DenseNet, ConvNeXt, Swin, DeepLabV3, LRASPP, ...) run when named, or with
# `--models all`.
#
#   tools/bench/compare_ort.sh                       # everything (builds kiln)
#   tools/bench/compare_ort.sh --kiln /path/to/kiln --models resnet50,bert
#   tools/bench/compare_ort.sh --quick --out /tmp/kiln-bench/performance.md
#
# Options (passed on to compare_ort.py; `--help` lists them all):
#   --kiln PATH        the kiln binary (default: bazel build --config=opt
#                      //tools:kiln, then $(bazel info --config=opt bazel-bin)/tools/kiln)
#   --models a,b       resnet50, resnet18, mobilenet_v2, squeezenet1_1,
#                      efficientnet_b0, bert (default: those six), or any
#                      of models.py's others; all: every one
#   --runs N           timed runs per measurement (default 20; the median is reported)
#   --threads 1,2      thread counts (default 1,2)
#   --kernels a,b      models with per-kernel tables (default resnet50,bert; none)
#   --out FILE         the report (default docs/performance.md)
#   --quick            a smoke test: 3 runs, 1 warm-up, one kiln debug per table
#
# What it sets up first (each step only when missing):
#   - Debian packages: python3-venv, python3-numpy, python3-torch,
#     python3-torchvision, python3-onnx, gcc (apt-get install when root;
#     otherwise it says what to install);
#   - a Python virtual environment, ${KILN_BENCH_VENV:-$HOME/.cache/kiln/bench-venv},
#     made by Debian's /usr/bin/python3 with --system-site-packages (so
#     Debian's torch, torchvision, onnx and numpy are the ones used), with
#     onnxruntime from PyPI (${KILN_BENCH_ORT:-onnxruntime}; NumPy held at
#     Debian's version). ONNX Runtime is for measurement only: nothing in the
#     build depends on it.
# Exported models, inputs, artifacts and raw results (results.json) go to
# ${KILN_BENCH_DIR:-/tmp/kiln-bench} (or --work-dir DIR).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
VENV=${KILN_BENCH_VENV:-$HOME/.cache/kiln/bench-venv}
SYS_PY=/usr/bin/python3
ORT_SPEC=${KILN_BENCH_ORT:-onnxruntime}

say() { echo "[compare_ort.sh] $*" >&2; }
die() { say "error: $*"; exit 1; }

want_help=0
have_kiln=0
for arg in "$@"; do
  case "$arg" in
    -h | --help) want_help=1 ;;
    --kiln | --kiln=*) have_kiln=1 ;;
  esac
done

# 1. Debian packages.
need=()
for pkg in python3-venv python3-numpy python3-torch python3-torchvision python3-onnx gcc; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    need+=("$pkg")
  fi
done
if ((${#need[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    die "missing Debian packages: ${need[*]}; run: sudo apt-get install ${need[*]}"
  fi
  say "installing ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
[[ -x $SYS_PY ]] || die "$SYS_PY not found (Debian's python3)"

# 2. The virtual environment, from Debian's python (not pyenv's or any other
# python3 first on PATH), seeing Debian's packages.
venv_ok() {
  [[ -x $VENV/bin/python && -f $VENV/pyvenv.cfg ]] &&
    grep -qE '^include-system-site-packages *= *true' "$VENV/pyvenv.cfg" &&
    grep -qE '^home *= */usr/bin$' "$VENV/pyvenv.cfg"
}
if ! venv_ok; then
  say "creating the Python environment $VENV"
  rm -rf "$VENV"
  mkdir -p "$(dirname "$VENV")"
  "$SYS_PY" -m venv --system-site-packages "$VENV"
fi
if ! "$VENV/bin/python" -c "import onnxruntime" 2>/dev/null; then
  say "installing $ORT_SPEC from PyPI into $VENV"
  numpy_version=$("$SYS_PY" -c "import numpy; print(numpy.__version__)")
  constraints="$VENV/kiln-constraints.txt"
  # Debian's torch is built against Debian's NumPy: keep that one.
  echo "numpy==$numpy_version" >"$constraints"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
    --constraint "$constraints" "$ORT_SPEC"
fi

if ((want_help)); then
  exec "$VENV/bin/python" "$HERE/compare_ort.py" --help
fi

# 3. kiln.
extra=()
if ((!have_kiln)); then
  command -v bazel >/dev/null || die "bazel not found; build kiln elsewhere and pass --kiln PATH"
  say "building kiln: bazel build --config=opt //tools:kiln"
  (cd "$REPO" && bazel build --config=opt //tools:kiln)
  extra=(--kiln "$(cd "$REPO" && bazel info --config=opt bazel-bin)/tools/kiln")
fi

# The command line, as the report quotes it.
cmd="tools/bench/compare_ort.sh"
for arg in "$@"; do
  if [[ $arg =~ ^[A-Za-z0-9_./,=:@%+-]+$ ]]; then
    cmd+=" $arg"
  else
    cmd+=" $(printf '%q' "$arg")"
  fi
done
export KILN_BENCH_COMMAND=$cmd

exec "$VENV/bin/python" "$HERE/compare_ort.py" "${extra[@]}" "$@"
