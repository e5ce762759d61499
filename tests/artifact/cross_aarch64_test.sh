#!/usr/bin/env bash
# Cross compiling: a model compiled on this x86-64 machine for AArch64
# (`--target "llvm -mtriple=aarch64-linux-gnu"`, linked by Debian's
# aarch64-linux-gnu-gcc) through make_model (c_api/compiler.h) and through
# `kiln compile --cc`: both artifacts are AArch64 ELF shared objects that this
# machine's loader validates and then refuses by name of the machine (not as
# corrupt), and the C runtime with run_model.c cross-builds from its sources
# and links. Then, with qemu-user, run_model runs the artifact on the emulated
# AArch64 and checks its outputs against the interpreter's (serial and pooled
# sessions), and two threads with sessions of their own bit-exact.
# Skips, saying why, when the cross toolchain or the arm64 cJSON library are
# absent (Debian: gcc-aarch64-linux-gnu libcjson-dev:arm64); skips only the
# emulated run without qemu-aarch64 (qemu-user).
#
# The emulated program runs against the arm64 C library of libc6:arm64
# (multiarch, /lib/aarch64-linux-gnu, which libcjson-dev:arm64 brings), with
# that package's own loader: `qemu-aarch64 -L /`. With `-L /usr/aarch64-linux-gnu`
# the loader came from libc6-arm64-cross (2.36-8cross1) while libc.so.6 came
# from libc6:arm64 (2.36-9+deb12u14), the only copy beside libcjson; glibc's
# private loader/libc interface differs between the two builds, and the first
# pthread_create (the session's thread pool) looped for ever in its stack
# cache walk (get_cached_stack, inlined in pthread_create, over a list head
# at the wrong offset of _rtld_global) without a system call. Found with
# `qemu-aarch64 -d exec,nochain` (the one looping block) and the libraries'
# load addresses from `qemu-aarch64 -strace`.
#
#   cross_aarch64_test.sh MAKE_MODEL KILN MODEL.kir INPUTS
set -euo pipefail
make_model=$1 kiln=$2 model=$3 inputs=$4
root=$(pwd)  # the runfiles tree: runtime_c/, tests/artifact/ sources
CC=aarch64-linux-gnu-gcc
missing=()
command -v "$CC" > /dev/null || missing+=("$CC (gcc-aarch64-linux-gnu)")
[[ -e /usr/lib/aarch64-linux-gnu/libcjson.so ]] || missing+=("arm64 cJSON (libcjson-dev:arm64)")
[[ -e /usr/include/dlpack/dlpack.h && -e /usr/include/cjson/cJSON.h ]] ||
  missing+=("the dlpack and cJSON headers")
if [[ ${#missing[@]} -gt 0 ]]; then
  echo "SKIPPED: cross_aarch64_test needs ${missing[*]}"
  exit 0
fi
tmp=${TEST_TMPDIR:-$(mktemp -d)}
dir="$tmp/model"
mkdir -p "$dir"
# The model, its inputs and the interpreter's outputs, compiled for AArch64.
"$make_model" --model "$model" --inputs "$inputs" --out "$dir" --seed 7 \
  --target "llvm -mtriple=aarch64-linux-gnu" --cc "$CC" > "$tmp/make_model.log" 2>&1 ||
  { cat "$tmp/make_model.log"; exit 1; }
file_type=$(od -An -tx1 -j18 -N2 "$dir/model.so" | tr -d ' ')
[[ "$file_type" == "b700" ]] || { echo "FAIL: model.so is not an AArch64 ELF (e_machine $file_type)"; exit 1; }
# `kiln compile --cc` makes the same kind of artifact from the command line.
"$kiln" compile "$model" -o "$tmp/cli.so" --target "llvm -mtriple=aarch64-linux-gnu" --cc "$CC" \
  > "$tmp/kiln.log" 2>&1 || { cat "$tmp/kiln.log"; exit 1; }
[[ "$(od -An -tx1 -j18 -N2 "$tmp/cli.so" | tr -d ' ')" == "b700" ]] ||
  { echo "FAIL: kiln compile --cc did not make an AArch64 artifact"; exit 1; }

# Only the dlpack and cJSON headers of /usr/include (never the host's libc's).
inc="$tmp/include"
mkdir -p "$inc"
ln -sfn /usr/include/dlpack "$inc/dlpack"
ln -sfn /usr/include/cjson "$inc/cjson"
rt=runtime_c
"$CC" -std=c11 -O1 -g -I"$root" -I"$root/$rt/include" -isystem "$inc" -rdynamic \
  -o "$tmp/run_model" "$root/tests/artifact/run_model.c" \
  "$root/$rt"/{bench,checksum,cpu_features,cuda_device,cuda_session,debug,device_code,elf,elf_load_check,executor,handles,hmac_sha256,loader,loader_device,loader_graph,loader_vm,vm,vm_device,vm_io,vm_program,vm_session,vm_signature,vm_trace,artifact_blob,npy,status,threadpool}.c \
  -L/usr/lib/aarch64-linux-gnu -lcjson -ldl -lm -pthread > "$tmp/cc.log" 2>&1 ||
  { cat "$tmp/cc.log"; exit 1; }
[[ "$(od -An -tx1 -j18 -N2 "$tmp/run_model" | tr -d ' ')" == "b700" ]] ||
  { echo "FAIL: run_model is not an AArch64 executable"; exit 1; }
# This machine's loader reads both through validation and refuses them for
# their machine, by name (a damaged file would be refused as corrupt).
for so in "$dir/model.so" "$tmp/cli.so"; do
  if "$kiln" info "$so" > "$tmp/info.log" 2>&1; then
    echo "FAIL: an AArch64 artifact loaded on $(uname -m)"; exit 1
  fi
  grep -q "machine code for aarch64" "$tmp/info.log" ||
    { echo "FAIL: $so refused for another reason:"; cat "$tmp/info.log"; exit 1; }
done
# The artifact on an (emulated) AArch64 machine.
ran="not run: qemu-aarch64 (qemu-user) is not installed"
if command -v qemu-aarch64 > /dev/null && [[ -e /lib/ld-linux-aarch64.so.1 ]]; then
  for mode in "check" "threads 2 3"; do
    # shellcheck disable=SC2086  # mode is the command and its numbers
    if ! timeout 600 qemu-aarch64 -L / "$tmp/run_model" "$dir" $mode > "$tmp/qemu.log" 2>&1; then
      echo "FAIL: run_model $mode under qemu-aarch64 (exit $?):"; tail -20 "$tmp/qemu.log"; exit 1
    fi
  done
  ran="ran under qemu-aarch64, outputs match the interpreter's"
elif command -v qemu-aarch64 > /dev/null; then
  ran="not run: /lib/ld-linux-aarch64.so.1 (libc6:arm64) is missing"
fi
echo "cross_aarch64_test: OK ($(wc -c < "$dir/model.so") bytes of AArch64 artifact; runtime cross-built; $ran)"
