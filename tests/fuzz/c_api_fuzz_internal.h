// File: tests/fuzz/c_api_fuzz_internal.h — what the two halves of the C API
// fuzz target share (c_api_fuzz.cc: the harness and ops 0-23;
// c_api_fuzz_io.cc: ops 24-27, sequences and optionals): the built-in models,
// the input reader, the status check, the handle slots, and the helpers
// c_api_fuzz.cc defines for both. Test-only.
#ifndef KILN_TESTS_FUZZ_C_API_FUZZ_INTERNAL_H_
#define KILN_TESTS_FUZZ_C_API_FUZZ_INTERNAL_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/kiln.h"
#include "tests/fuzz/fuzz_check.h"

namespace kiln_fuzz::c_api_fuzz {


// Small models with static shapes (they compile in well under a second),
// and one with a symbolic dim (compiled for the VM).
inline constexpr const char* kModels[] = {
    R"(#[version = "0.1"]
def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) {
  %0 = add(%x, %y);
  %1 = nn.relu(%0);
  (multiply(%1, %1), subtract(%0, %y))
}
)",
    R"(#[version = "0.1"]
def @main(%x: Tensor[(1, 8), float32], %w: Tensor[(4, 8), float32], %b: Tensor[(4,), float32]) {
  %0 = nn.dense(%x, %w);
  nn.softmax(nn.bias_add(%0, %b))
}
)",
    R"(#[version = "0.1"]
def @main(%x: Tensor[(), float32]) {
  multiply(%x, 2f)
}
)",
    R"(#[version = "0.1"]
def @main(%x: Tensor[(1, 4, 3), float32]) {
  %0 = transpose(%x, axes=[0, 2, 1]);
  reshape(%0, newshape=[3, 4])
}
)",
    R"(#[version = "0.1"]
def @main(%x: Tensor[(n, 3), float32]) {
  nn.relu(%x)
}
)",
};
inline constexpr int kNumModels = sizeof(kModels) / sizeof(kModels[0]);

// Models whose main takes and returns sequences and optionals (VM artifacts,
// C ABI 6 and 7), for ops 24-27 only: kModels and the ops the seeds were
// written for keep their numbers.
inline constexpr const char* kIoModels[] = {
    R"(#[version = "0.1"]
type Seq {
  SCons(Tensor[(?), float32], Seq),
  SNil,
}

def @main(%s: Seq, %x: Tensor[(2), float32]) -> (Seq, Tensor[(), int64]) {
  let %rev: fn (Seq, Seq) -> Seq = fn (%q: Seq, %acc: Seq) -> Seq {
    match (%q) {
      SCons(%h, %t) => %rev(%t, SCons(add(%h, sum(%x)), %acc)),
      SNil => %acc,
    }
  };
  let %len: fn (Seq) -> Tensor[(), int64] = fn (%q: Seq) -> Tensor[(), int64] {
    match (%q) {
      SCons(%h, %t) => add(%len(%t), 1i64),
      SNil => 0i64,
    }
  };
  (%rev(%s, SNil()), %len(%s))
}
)",
    R"(#[version = "0.1"]
type Opt {
  OSome(Tensor[(?), float32]),
  ONone,
}

def @main(%o: Opt, %x: Tensor[(2), float32]) -> (Opt, Tensor[(), int64]) {
  match (%o) {
    OSome(%v) => (OSome(add(%v, sum(%x))), 1i64),
    ONone => (ONone(), 0i64),
  }
}
)",
    R"(#[version = "0.1"]
type Seq {
  SCons(Tensor[(?), float32], Seq),
  SNil,
}

type OSeq {
  OSSome(Seq),
  OSNone,
}

def @main(%o: OSeq, %c: Tensor[(), bool]) -> OSeq {
  if (%c) { %o } else { OSNone() }
}
)",
};
inline constexpr int kNumIoModels = sizeof(kIoModels) / sizeof(kIoModels[0]);

// Reads the program.
class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool done() const { return pos_ >= size_; }
  uint8_t Byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  uint32_t Below(uint32_t n) { return n == 0 ? 0 : Byte() % n; }
  int32_t SmallInt() {  // mostly in range, sometimes wild
    uint8_t b = Byte();
    if (b < 200) return b % 5;
    static const int32_t wild[] = {-1, -2, 5, 64, 1000, INT32_MAX, INT32_MIN};
    return wild[b % 7];
  }
  std::string Bytes(size_t max) {
    size_t n = std::min<size_t>(Byte() * 4u, max);
    n = std::min(n, size_ - std::min(pos_, size_));
    std::string s(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return s;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// Checks and frees a status; true when the call failed.
bool Failed(KilnStatus* st);

// A call that must fail (misuse the docs say is refused).
#define MUST_FAIL(call) KILN_FUZZ_CHECK(Failed(call), "misuse accepted: %s", #call)

struct ModelSlot {
  KilnModel* model = nullptr;
  int builtin = -1;  // index into kModels when it is one of them, unchanged
};

struct TensorInfo {
  std::string name;
  DLDataType dtype{};
  std::vector<int64_t> shape;
  uint64_t Bytes() const {
    uint64_t n = (dtype.bits * dtype.lanes + 7u) / 8u;
    for (int64_t d : shape) n *= static_cast<uint64_t>(d);
    return n;
  }
};

struct ArtifactSlot {
  KilnArtifact* artifact = nullptr;
  bool released = false;  // the fuzzer dropped its reference; sessions may live on
  std::vector<TensorInfo> inputs, outputs;
  // kiln_artifact_input_is_sequence / _is_optional per input (and output).
  std::vector<int> input_sequence, input_optional, output_sequence, output_optional;
};

struct SessionSlot {
  KilnSession* session = nullptr;
  int artifact = -1;
  // Buffers given to set_input_zero_copy must live as long as the session.
  std::vector<std::vector<uint8_t>> keep;
};

constexpr int kSlots = 3;

struct State {
  ModelSlot models[kSlots];
  ArtifactSlot artifacts[kSlots];
  SessionSlot sessions[kSlots];
};

// c_api_fuzz.cc.
// The compiled artifact of built-in model `m` at `opt_level`, compiled once
// (m >= 100: kIoModels[m - 100]); "" when it does not compile.
const std::string& CompiledPath(int m, int opt_level);
// Releases artifact slot i (twice: a second release, refused, while sessions live).
void ReleaseArtifact(State& s, int i, bool twice);
// Records loaded artifact `a` in `slot`: its inputs' and outputs' info and kinds.
void FillSlot(ArtifactSlot* slot, KilnArtifact* a);
// Every byte of a view the library hands out is read, and its fields are sane.
void TouchView(const DLTensor* y);
// A tensor for `plan` as the fuzzer wants it (odd or right), its data in *buf.
DLTensor MakeTensor(Input& in, const TensorInfo& plan, std::vector<int64_t>* shape,
                    std::vector<int64_t>* strides, std::vector<uint8_t>* buf);

// c_api_fuzz_io.cc: ops 24-27 of Step (op bytes 240-255), slots i and j.
void StepSequencesAndOptionals(int op, int i, int j, Input& in, State& s);

}  // namespace kiln_fuzz::c_api_fuzz

#endif  // KILN_TESTS_FUZZ_C_API_FUZZ_INTERNAL_H_
