#!/bin/bash
# tests/fuzz/build_libfuzzer.sh: builds the parser fuzz targets with clang's
# libFuzzer (coverage-guided) and AddressSanitizer + UndefinedBehaviorSanitizer,
# outside Bazel, without touching .bazelrc or the default (g++) toolchain
# (docs/fuzzing.md). Needs Debian's clang-14 and libclang-rt-14-dev.
#
#   tests/fuzz/build_libfuzzer.sh [OUT_DIR] [TARGET...]
#
# TARGET: kir_parse tir_parse onnx_import npy_read artifact (default: all).
# OUT_DIR (default /tmp/kiln_libfuzzer) receives objects and the binaries
# OUT_DIR/<target>_libfuzzer. Run one as libFuzzer runs anything:
#   mkdir -p /tmp/corpus_kir && OUT_DIR/kir_parse_libfuzzer -max_total_time=600 \
#     -artifact_prefix=/tmp/ /tmp/corpus_kir tests/fuzz/seeds/kir examples
# (the first corpus folder is where libFuzzer adds the inputs it finds new
# coverage with). The C API target needs LLVM codegen and the whole compiler:
# it stays a Bazel/g++ target.
set -eu
cd "$(dirname "$0")/../.."
out="${1:-/tmp/kiln_libfuzzer}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(kir_parse tir_parse onnx_import npy_read artifact)
clang_bin=/usr/lib/llvm-14/bin
CXX="$clang_bin/clang++"
CC="$clang_bin/clang"
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1"
CXXFLAGS="-std=c++20 -I. -Iruntime_c/include -DONNX_NAMESPACE=onnx -DONNX_ML=1 -w"
CFLAGS="-std=c11 -D_GNU_SOURCE -I. -Iruntime_c/include -w"
jobs="${JOBS:-$(nproc)}"
mkdir -p "$out/obj"

srcs() {  # a package's library sources (no tests, benchmarks or test helpers)
  ls "$@" | grep -v -e '_test\.' -e '_bench\.' -e 'test_util' -e 'model_zoo' -e '/bench\.c$' || true
}
IR=$(srcs ir/*.cc)
TYPES=$(srcs types/*.cc)
INTERP=$(srcs interpreter/*.cc)
ONNX=$(srcs frontends/onnx/*.cc)
RT=$(srcs runtime_c/*.c)

# Compiles each source once (instrumented for libFuzzer's coverage).
compile() {
  for f in "$@"; do echo "$f"; done | xargs -P "$jobs" -I{} bash -c '
    f={}; o="'"$out"'/obj/${f//\//_}.o"
    if [ ! -e "$o" ] || [ "$f" -nt "$o" ]; then
      case "$f" in
        *.c) '"$CC"' '"$CFLAGS"' '"$SAN"' -fsanitize=fuzzer-no-link -c "$f" -o "$o" ;;
        *) '"$CXX"' '"$CXXFLAGS"' '"$SAN"' -fsanitize=fuzzer-no-link -c "$f" -o "$o" ;;
      esac
    fi'
}
objs() { for f in "$@"; do echo "$out/obj/${f//\//_}.o"; done; }
ABSL_LIBS=$(ls /usr/lib/x86_64-linux-gnu/libabsl_*.so | sed 's|.*/lib\(absl_[^.]*\)\.so|-l\1|' | tr '\n' ' ')

link() {  # name, then sources
  local name="$1"
  shift
  compile "$@" tests/fuzz/fuzz_files.cc
  # shellcheck disable=SC2046
  "$CXX" $SAN -fsanitize=fuzzer -o "$out/${name}_libfuzzer" $(objs "$@" tests/fuzz/fuzz_files.cc) \
    -Wl,--push-state,--as-needed $ABSL_LIBS -lonnx -lonnx_proto -lprotobuf -lcjson -Wl,--pop-state \
    -rdynamic -pthread -ldl -lm
  echo "built $out/${name}_libfuzzer"
}

for t in "${targets[@]}"; do
  case "$t" in
    kir_parse) link kir_parse tests/fuzz/kir_parse_fuzz.cc $IR $TYPES ;;
    tir_parse) link tir_parse tests/fuzz/tir_parse_fuzz.cc $IR ;;
    onnx_import) link onnx_import tests/fuzz/onnx_import_fuzz.cc $ONNX $INTERP $TYPES $IR ;;
    npy_read) link npy_read tests/fuzz/npy_read_fuzz.cc $RT ;;
    artifact) link artifact tests/fuzz/artifact_fuzz.cc $RT ;;
    *) echo "unknown target $t"; exit 2 ;;
  esac
done
