#!/usr/bin/env bash
# Installs the Debian 12 packages kiln builds against (docs: /work/shared/DESIGN.md §9).
# Idempotent and quiet: when everything is present it prints nothing and runs no
# apt-get at all; otherwise it runs `apt-get update` once and installs only what
# is missing. Needs root (or sudo) only when something is missing.
#
# The CUDA toolkit is not a Debian package here: it is expected at /usr/local/cuda
# and is optional (CUDA targets degrade to empty libraries and CUDA tests skip).
set -euo pipefail

PACKAGES=(
  bazel-bootstrap
  gcc
  g++
  binutils
  llvm-19-dev
  llvm-19-tools
  libabsl-dev
  libgtest-dev
  libgmock-dev
  libbenchmark-dev
  libonnx-dev
  libprotobuf-dev
  protobuf-compiler
  libonnx-testdata
  libdlpack-dev
  libcjson-dev
  nlohmann-json3-dev
  libcli11-dev
  graphviz
  python3-onnx
  python3-numpy
  python3-pip
  python3-setuptools
  python3-wheel
  lld
  pkg-config
  abigail-tools
  golang-go
  cargo
  rustc
)

# Installed for this machine's architecture (or "all"). With a foreign
# architecture enabled (dpkg --add-architecture arm64, for cross builds) a
# package can be installed twice, once per architecture: each instance is
# listed on its own line.
NATIVE_ARCH="$(dpkg --print-architecture 2>/dev/null || echo amd64)"
is_installed() {
  dpkg-query -W -f='${db:Status-Status} ${Architecture}\n' "$1" 2>/dev/null |
    grep -qE "^installed (all|${NATIVE_ARCH})$"
}

missing=()
for pkg in "${PACKAGES[@]}"; do
  is_installed "$pkg" || missing+=("$pkg")
done

if (( ${#missing[@]} == 0 )); then
  exit 0
fi

echo "install_deps: installing missing packages: ${missing[*]}" >&2
SUDO=()
if (( EUID != 0 )); then
  if command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
  else
    echo "install_deps: not root and no sudo; please install: ${missing[*]}" >&2
    exit 1
  fi
fi

export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
  "${missing[@]}" >/dev/null

still_missing=()
for pkg in "${missing[@]}"; do
  is_installed "$pkg" || still_missing+=("$pkg")
done
if (( ${#still_missing[@]} > 0 )); then
  echo "install_deps: failed to install: ${still_missing[*]}" >&2
  exit 1
fi
echo "install_deps: done" >&2
