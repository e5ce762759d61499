// File: tests/vm/vm_test.cc
//
// Programs the graph executor cannot run, compiled for the VM through the C
// API (kiln_model_parse_text -> kiln_model_compile -> kiln_artifact_load ->
// sessions), run at several input shapes and compared with the interpreter
// (interpreter/interpreter.h) on the same inputs: symbolic and `?` dims,
// `if`, global recursion, closures (captured values, a local function calling
// itself), ADTs with `match`, references, tuples in and out of kernels,
// constants. Also
// what a user gets wrong: inputs that disagree on a symbolic dim, a wrong
// static dim, a match that fails (Fatal), outputs read before a run, and
// artifacts whose VM section was corrupted (every one refused or run without
// a crash).
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "interpreter/interpreter.h"
#include "ir/parser.h"
#include "kiln/artifact_writer.h"
#include "kiln/kiln.h"
#include "kiln/runtime.h"
#include "types/infer_type.h"
#include "tests/vm/c_api_test_util.h"

namespace kiln {
namespace {

using ::kiln::testing::TakeStatus;
using ::kiln::testing::TempPath;
using ::kiln::testing::ToDLTensor;



// Compiles `text` into an artifact at `path`; "" or the error.
std::string Compile(const std::string& text, const std::string& path) {
  return ::kiln::testing::CompileText(text, path, "vm_test");
}

struct Input {
  DataType dtype;
  std::vector<int64_t> shape;
  std::vector<double> values;  // empty: random
};

Ref<HostTensor> MakeHost(const Input& in, std::mt19937* rng) {
  Ref<HostTensor> t = *HostTensor::Create(in.dtype, in.shape);
  int64_t n = 1;
  for (int64_t d : in.shape) n *= d;
  std::uniform_real_distribution<float> dist(-2, 2);
  for (int64_t i = 0; i < n; ++i) {
    double v = in.values.empty() ? dist(*rng) : in.values[static_cast<size_t>(i)];
    if (in.dtype == DataType::Float(32)) t->mutable_data<float>()[i] = static_cast<float>(v);
    else if (in.dtype == DataType::Int(32)) t->mutable_data<int32_t>()[i] = static_cast<int32_t>(v);
    else if (in.dtype == DataType::Int(64)) t->mutable_data<int64_t>()[i] = static_cast<int64_t>(v);
    else if (in.dtype.is_bool()) t->mutable_data<uint8_t>()[i] = v != 0;
  }
  return t;
}


// The interpreter's outputs of main (a tuple flattened one level).
std::vector<Ref<const HostTensor>> Expected(const std::string& text,
                                            const std::vector<Ref<HostTensor>>& inputs) {
  absl::StatusOr<Module> m = ParseModule(text, "vm_test");
  EXPECT_TRUE(m.ok()) << m.status();
  absl::StatusOr<Module> typed = types::InferType(*m);
  EXPECT_TRUE(typed.ok()) << typed.status();
  std::vector<interp::Value> args;
  for (const Ref<HostTensor>& t : inputs) args.push_back(interp::Value::Tensor(t));
  absl::StatusOr<interp::Value> v = interp::RunFunction(*typed, "main", args);
  EXPECT_TRUE(v.ok()) << v.status();
  std::vector<Ref<const HostTensor>> out;
  if (!v.ok()) return out;
  if (v->is_tensor()) {
    out.push_back(v->tensor());
  } else {
    for (const interp::Value& f : v->fields()) out.push_back(f.tensor());
  }
  return out;
}

class Artifact {
 public:
  explicit Artifact(const std::string& path) {
    status_ = TakeStatus(kiln_artifact_load(path.c_str(), &a_));
    if (a_ != nullptr) status_ = TakeStatus(kiln_session_create(a_, nullptr, &s_));
  }
  ~Artifact() {
    kiln_session_release(s_);
    kiln_artifact_release(a_);
  }
  const std::string& status() const { return status_; }
  KilnArtifact* artifact() { return a_; }
  KilnSession* session() { return s_; }

 private:
  KilnArtifact* a_ = nullptr;
  KilnSession* s_ = nullptr;
  std::string status_;
};

// Runs the session on `inputs` and compares every output with the
// interpreter's (shape and values).
void RunAndCompare(Artifact& art, const std::string& text, const std::vector<Input>& spec,
                   uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<Ref<HostTensor>> hosts;
  for (const Input& in : spec) hosts.push_back(MakeHost(in, &rng));
  std::vector<Ref<const HostTensor>> want = Expected(text, hosts);
  ASSERT_FALSE(want.empty());
  int32_t n = kiln_artifact_num_inputs(art.artifact());
  ASSERT_EQ(n, static_cast<int32_t>(hosts.size()));
  for (int32_t i = 0; i < n; ++i) {
    DLTensor d = ToDLTensor(*hosts[static_cast<size_t>(i)]);
    ASSERT_EQ(TakeStatus(kiln_session_set_input_index(art.session(), i, &d)), "");
  }
  ASSERT_EQ(TakeStatus(kiln_session_run(art.session())), "");
  ASSERT_EQ(kiln_artifact_num_outputs(art.artifact()), static_cast<int32_t>(want.size()));
  for (size_t o = 0; o < want.size(); ++o) {
    const DLTensor* got = nullptr;
    ASSERT_EQ(TakeStatus(kiln_session_get_output(art.session(), static_cast<int32_t>(o), &got)),
              "");
    const HostTensor& w = *want[o];
    ASSERT_EQ(got->ndim, w.ndim()) << "output " << o;
    for (int d = 0; d < w.ndim(); ++d) ASSERT_EQ(got->shape[d], w.shape()[d]) << "output " << o;
    ASSERT_EQ(got->dtype.code, static_cast<uint8_t>(w.dtype().code()));
    int64_t count = 1;
    for (int64_t d : w.shape()) count *= d;
    for (int64_t i = 0; i < count; ++i) {
      if (w.dtype() == DataType::Float(32)) {
        float a = static_cast<const float*>(got->data)[i], b = w.data<float>()[i];
        ASSERT_NEAR(a, b, 1e-4 + 1e-4 * std::fabs(b)) << "output " << o << " element " << i;
      } else if (w.dtype() == DataType::Int(32)) {
        ASSERT_EQ(static_cast<const int32_t*>(got->data)[i], w.data<int32_t>()[i]);
      } else if (w.dtype() == DataType::Int(64)) {
        ASSERT_EQ(static_cast<const int64_t*>(got->data)[i], w.data<int64_t>()[i]);
      }
    }
  }
}

const DataType kF32 = DataType::Float(32);
const DataType kI32 = DataType::Int(32);

TEST(Vm, SymbolicDimsOneArtifactManyShapes) {
  const std::string text = R"(#[version = "0.1"]
def @main(%x: Tensor[(N, 4), float32], %y: Tensor[(N, 4), float32]) {
  %0 = add(%x, %y);
  %1 = nn.relu(%0);
  (multiply(%1, 2f), concatenate((%1, %x), axis=0))
}
)";
  const std::string path = TempPath("symbolic.so");
  ASSERT_EQ(Compile(text, path), "");
  Artifact art(path);
  ASSERT_EQ(art.status(), "");
  EXPECT_STREQ(kiln_artifact_graph_json(art.artifact()), "");  // a VM artifact
  const char* name = nullptr;
  DLTensor info;
  ASSERT_EQ(TakeStatus(kiln_artifact_input_info(art.artifact(), 0, &name, &info)), "");
  EXPECT_STREQ(name, "x");
  ASSERT_EQ(info.ndim, 2);
  EXPECT_EQ(info.shape[0], -1);  // N
  EXPECT_EQ(info.shape[1], 4);
  for (int64_t n : {1, 3, 7, 0}) {
    SCOPED_TRACE(n);
    RunAndCompare(art, text, {{kF32, {n, 4}, {}}, {kF32, {n, 4}, {}}}, 1 + static_cast<uint32_t>(n));
  }
  // The inputs disagree on N: refused before any kernel runs.
  std::vector<float> a(8), b(12);
  int64_t sa[2] = {2, 4}, sb[2] = {3, 4};
  DLTensor da{a.data(), {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, sa, nullptr, 0};
  DLTensor db{b.data(), {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, sb, nullptr, 0};
  ASSERT_EQ(TakeStatus(kiln_session_set_input(art.session(), "x", &da)), "");
  ASSERT_EQ(TakeStatus(kiln_session_set_input(art.session(), "y", &db)), "");
  std::string e = TakeStatus(kiln_session_run(art.session()));
  EXPECT_NE(e.find("INVALID_ARGUMENT"), std::string::npos) << e;
  EXPECT_NE(e.find("disagree on the dim N"), std::string::npos) << e;
  // After a failed run no output is readable.
  const DLTensor* out = nullptr;
  e = TakeStatus(kiln_session_get_output(art.session(), 0, &out));
  EXPECT_NE(e.find("FAILED_PRECONDITION"), std::string::npos) << e;
  // A static dim that does not match.
  int64_t sc[2] = {2, 5};
  DLTensor dc{b.data(), {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, sc, nullptr, 0};
  e = TakeStatus(kiln_session_set_input(art.session(), "x", &dc));
  EXPECT_NE(e.find("expected float32[N,4], got float32[2,5]"), std::string::npos) << e;
}

// A transformer encoder layer (examples/transformer_block.kir, smaller:
// hidden 32, 4 heads of 8, feed-forward 64) with a symbolic sequence length:
// reshapes by 0 / -1 / -3, batch_matmul, softmax, layer_norm, gelu.
TEST(Vm, AttentionWithASymbolicSequenceLength) {
  const std::string text = R"(#[version = "0.1"]
def @main(%x: Tensor[(1, S, 32), float32],
          %wq: Tensor[(32, 32), float32], %wk: Tensor[(32, 32), float32],
          %wv: Tensor[(32, 32), float32], %wo: Tensor[(32, 32), float32],
          %w1: Tensor[(64, 32), float32], %w2: Tensor[(32, 64), float32],
          %g: Tensor[(32,), float32], %b: Tensor[(32,), float32]) {
  %q0 = reshape(nn.dense(%x, %wq, units=32), newshape=[0, 0, 4, 8]);
  %q = reshape(transpose(%q0, axes=[0, 2, 1, 3]), newshape=[-3, 0, 0]);
  %k0 = reshape(nn.dense(%x, %wk, units=32), newshape=[0, 0, 4, 8]);
  %k = reshape(transpose(%k0, axes=[0, 2, 1, 3]), newshape=[-3, 0, 0]);
  %v0 = reshape(nn.dense(%x, %wv, units=32), newshape=[0, 0, 4, 8]);
  %v = reshape(transpose(%v0, axes=[0, 2, 3, 1]), newshape=[-3, 0, 0]);
  %a = nn.softmax(divide(nn.batch_matmul(%q, %k), 2.8284f), axis=2);
  %o = reshape(nn.batch_matmul(%a, %v), newshape=[1, 4, -1, 8]);
  %m = reshape(transpose(%o, axes=[0, 2, 1, 3]), newshape=[0, 0, -3]);
  %h = nn.layer_norm(add(nn.dense(%m, %wo, units=32), %x), %g, %b);
  %f = nn.dense(nn.gelu(nn.dense(%h, %w1, units=64)), %w2, units=32);
  nn.layer_norm(add(%f, %h), %g, %b)
}
)";
  const std::string path = TempPath("attention.so");
  ASSERT_EQ(Compile(text, path), "");
  Artifact art(path);
  ASSERT_EQ(art.status(), "");
  for (int64_t s : {1, 5, 16}) {
    SCOPED_TRACE(s);
    RunAndCompare(art, text,
                  {{kF32, {1, s, 32}, {}}, {kF32, {32, 32}, {}}, {kF32, {32, 32}, {}},
                   {kF32, {32, 32}, {}}, {kF32, {32, 32}, {}}, {kF32, {64, 32}, {}},
                   {kF32, {32, 64}, {}}, {kF32, {32}, {}}, {kF32, {32}, {}}},
                  11 + static_cast<uint32_t>(s));
  }
}

// The debug executor on a VM artifact: one row per kernel call of the run
// (shape functions included) and a last row for the VM's own instructions;
// the debug dump writes the table and the trace.
TEST(Vm, ProfileCoversKernelCallsAndTheVm) {
  const std::string text = R"(#[version = "0.1"]
def @main(%x: Tensor[(N, 4), float32]) {
  %0 = nn.relu(%x);
  concatenate((%0, %x), axis=0)
}
)";
  const std::string path = TempPath("profile.so");
  ASSERT_EQ(Compile(text, path), "");
  Artifact art(path);
  ASSERT_EQ(art.status(), "");
  std::vector<float> x(12, 1.0f);
  int64_t shape[2] = {3, 4};
  DLTensor dx{x.data(), {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, nullptr, 0};
  ASSERT_EQ(TakeStatus(kiln_session_set_input(art.session(), "x", &dx)), "");
  KilnProfile* prof = nullptr;
  ASSERT_EQ(TakeStatus(kiln_session_profile(art.session(), &prof)), "");
  const int32_t rows = kiln_profile_num_nodes(prof);
  ASSERT_GE(rows, 3);
  bool saw_shape_fn = false, saw_concat = false;
  for (int32_t i = 0; i < rows; ++i) {
    const char* name = nullptr;
    const char* op = nullptr;
    double us = -1;
    ASSERT_EQ(TakeStatus(kiln_profile_node(prof, i, &name, &op, &us)), "");
    EXPECT_GE(us, 0);
    std::string n = name;
    if (i + 1 == rows) {
      EXPECT_EQ(n, "vm");
      continue;
    }
    EXPECT_NE(n.find(absl::StrCat("#", i)), std::string::npos) << n;
    saw_shape_fn |= n.find("_shape#") != std::string::npos;
    saw_concat |= n.find("concatenate") != std::string::npos;
  }
  EXPECT_TRUE(saw_shape_fn);
  EXPECT_TRUE(saw_concat);
  char* table = nullptr;
  ASSERT_EQ(TakeStatus(kiln_profile_table(prof, &table)), "");
  EXPECT_NE(std::string(table).find("vm instructions"), std::string::npos) << table;
  kiln_free(table);
  kiln_profile_release(prof);
  const std::string dir = TempPath("vm_dump");
  ASSERT_EQ(TakeStatus(kiln_session_debug_dump(art.session(), dir.c_str())), "");
  EXPECT_EQ(access((dir + "/profile.txt").c_str(), R_OK), 0);
  EXPECT_EQ(access((dir + "/trace.json").c_str(), R_OK), 0);
  // The outputs of the profiled runs are there and right.
  const DLTensor* out = nullptr;
  ASSERT_EQ(TakeStatus(kiln_session_get_output(art.session(), 0, &out)), "");
  ASSERT_EQ(out->shape[0], 6);
}

TEST(Vm, AnyDimsAreNamedAndFollowed) {
  const std::string text = R"(#[version = "0.1"]
def @main(%x: Tensor[(?, 3), float32]) {
  nn.softmax(nn.relu(%x))
}
)";
  const std::string path = TempPath("any.so");
  ASSERT_EQ(Compile(text, path), "");
  Artifact art(path);
  ASSERT_EQ(art.status(), "");
  for (int64_t n : {1, 5}) RunAndCompare(art, text, {{kF32, {n, 3}, {}}}, 7);
}

// Shape-like arguments given at run time (dyn.*): the VM calls each
// operator's data-dependent shape function, then the kernel; the outputs
// match the interpreter's for every value, and values that do not fit are
// errors naming the operator, after which the session still runs.
TEST(Vm, DynReshapeReadsItsNewshapeAtRunTime) {
  const std::string text = R"(#[version = "0.1"]
def @main(%x: Tensor[(2, 3, 4), float32], %s: Tensor[(2,), int64]) {
  %0 = dyn.reshape(%x, %s);
  add(%0, 1f)
}
)";
  const std::string path = TempPath("dyn_reshape.so");
  ASSERT_EQ(Compile(text, path), "");
  Artifact art(path);
  ASSERT_EQ(art.status(), "");
  for (std::vector<double> s : {std::vector<double>{4, -1}, {0, -1}, {-1, 2}, {24, 1}, {6, 4}}) {
    SCOPED_TRACE(absl::StrCat(s[0], ",", s[1]));
    RunAndCompare(art, text, {{kF32, {2, 3, 4}, {}}, {DataType::Int(64), {2}, s}}, 11);
  }
  struct Bad {
    std::vector<int64_t> s;
    const char* message;
  };
  for (const Bad& bad : {Bad{{5, -1}, "newshape does not fit"},
                         Bad{{-1, -1}, "more than one -1"},
                         Bad{{-3, 8}, "entry 0 is below -1"},
                         Bad{{4, 5}, "newshape does not fit"},
                         Bad{{int64_t{1} << 40, int64_t{1} << 40}, "more than 2^62"}}) {
    SCOPED_TRACE(bad.message);
    std::vector<float> x(24);
    int64_t xs[3] = {2, 3, 4}, ss[1] = {2};
    std::vector<int64_t> sv = bad.s;
    DLTensor dx{x.data(), {kDLCPU, 0}, 3, {kDLFloat, 32, 1}, xs, nullptr, 0};
    DLTensor ds{sv.data(), {kDLCPU, 0}, 1, {kDLInt, 64, 1}, ss, nullptr, 0};
    ASSERT_EQ(TakeStatus(kiln_session_set_input(art.session(), "x", &dx)), "");
    ASSERT_EQ(TakeStatus(kiln_session_set_input(art.session(), "s", &ds)), "");
    std::string e = TakeStatus(kiln_session_run(art.session()));
    EXPECT_NE(e.find("dyn.reshape"), std::string::npos) << e;
    EXPECT_NE(e.find(bad.message), std::string::npos) << e;
  }
  RunAndCompare(art, text, {{kF32, {2, 3, 4}, {}}, {DataType::Int(64), {2}, {3, 8}}}, 12);
}

TEST(Vm, DynOperatorsAndShapeOfWithASymbolicBatch) {
  const std::string text = R"(#[version = "0.1"]
def @main(%x: Tensor[(N, 3), float32], %s: Tensor[(3,), int64], %b: Tensor[(2,), int64],
          %e: Tensor[(2,), int64], %st: Tensor[(2,), int32], %ax: Tensor[(), int64]) {
  %0 = dyn.broadcast_to(%x, %s);
  %1 = dyn.full(2f, shape_of(%x), dtype="float32");
  %2 = dyn.strided_slice(%x, %b, %e, %st);
  %3 = dyn.expand_dims(%x, %ax, num_newaxis=2);
  %4 = dyn.zeros(%s, dtype="int32");
  (%0, add(%1, %x), nn.relu(%2), %3, %4, shape_of(%2, dtype="int32"))
}
)";
  const std::string path = TempPath("dyn_ops.so");
  ASSERT_EQ(Compile(text, path), "");
  Artifact art(path);
  ASSERT_EQ(art.status(), "");
  const DataType i64 = DataType::Int(64);
  struct Case {
    int64_t n;
    std::vector<double> b, e, st;
    double ax;
  };
  for (const Case& c : {Case{4, {1, 0}, {3, 3}, {1, 1}, 0}, Case{5, {-1, 2}, {-6, -4}, {-2, -1}, -1},
                        Case{1, {0, 0}, {100, 2}, {3, 2}, 2}, Case{6, {4, 1}, {1, 9}, {1, 1}, 1}}) {
    SCOPED_TRACE(c.n);
    RunAndCompare(art, text,
                  {{kF32, {c.n, 3}, {}},
                   {i64, {3}, {2, static_cast<double>(c.n), 3}},
                   {i64, {2}, c.b},
                   {i64, {2}, c.e},
                   {kI32, {2}, c.st},
                   {i64, {}, {c.ax}}},
                  static_cast<uint32_t>(c.n));
  }
}

TEST(Vm, DynArangeCountsItsValuesAtRunTime) {
  const std::string text = R"(#[version = "0.1"]
def @main(%s: Tensor[(), float32], %l: Tensor[(), float32], %d: Tensor[(), float32],
          %n: Tensor[(), int32], %k: Tensor[(), int32]) {
  (dyn.arange(%s, %l, %d), dyn.arange(0, %n, %k), dyn.arange(1f, %l, 0.5f))
}
)";
  const std::string path = TempPath("dyn_arange.so");
  ASSERT_EQ(Compile(text, path), "");
  Artifact art(path);
  ASSERT_EQ(art.status(), "");
  struct Case {
    double s, l, d, n, k;
  };
  for (const Case& c : {Case{0, 5, 1, 7, 2}, Case{1, -2.5, -0.75, -7, -3}, Case{3, 3, 1, 0, 1},
                        Case{0.5, 9, 0.5, 10, 11}, Case{2, 0, 1, 5, -1}}) {
    SCOPED_TRACE(absl::StrCat(c.s, " ", c.l, " ", c.d, " ", c.n, " ", c.k));
    RunAndCompare(art, text,
                  {{kF32, {}, {c.s}}, {kF32, {}, {c.l}}, {kF32, {}, {c.d}}, {kI32, {}, {c.n}},
                   {kI32, {}, {c.k}}},
                  5);
  }
  // A zero step, in either form, is an error naming the operator.
  for (bool int_form : {false, true}) {
    float s = 0, l = 4, d = int_form ? 1.0f : 0.0f;
    int32_t n = 4, k = int_form ? 0 : 1;
    DLTensor ts{&s, {kDLCPU, 0}, 0, {kDLFloat, 32, 1}, nullptr, nullptr, 0};
    DLTensor tl{&l, {kDLCPU, 0}, 0, {kDLFloat, 32, 1}, nullptr, nullptr, 0};
    DLTensor td{&d, {kDLCPU, 0}, 0, {kDLFloat, 32, 1}, nullptr, nullptr, 0};
    DLTensor tn{&n, {kDLCPU, 0}, 0, {kDLInt, 32, 1}, nullptr, nullptr, 0};
    DLTensor tk{&k, {kDLCPU, 0}, 0, {kDLInt, 32, 1}, nullptr, nullptr, 0};
    ASSERT_EQ(TakeStatus(kiln_session_set_input(art.session(), "s", &ts)), "");
    ASSERT_EQ(TakeStatus(kiln_session_set_input(art.session(), "l", &tl)), "");
    ASSERT_EQ(TakeStatus(kiln_session_set_input(art.session(), "d", &td)), "");
    ASSERT_EQ(TakeStatus(kiln_session_set_input(art.session(), "n", &tn)), "");
    ASSERT_EQ(TakeStatus(kiln_session_set_input(art.session(), "k", &tk)), "");
    std::string e = TakeStatus(kiln_session_run(art.session()));
    EXPECT_NE(e.find("dyn.arange: delta must be nonzero"), std::string::npos) << e;
  }
}

TEST(Vm, DynUnsqueezeAndSqueezeReadTheirAxes) {
  const std::string text = R"(#[version = "0.1"]
def @main(%x: Tensor[(N, 1, 3), float32], %u: Tensor[(2,), int64], %q: Tensor[(1,), int32]) {
  (dyn.unsqueeze(%x, %u), dyn.squeeze(%x, %q))
}
)";
  const std::string path = TempPath("dyn_squeeze.so");
  ASSERT_EQ(Compile(text, path), "");
  Artifact art(path);
  ASSERT_EQ(art.status(), "");
  const DataType i64 = DataType::Int(64);
  for (std::vector<double> u : {std::vector<double>{0, 4}, {-1, 1}, {3, 2}, {-5, -4}}) {
    SCOPED_TRACE(absl::StrCat(u[0], ",", u[1]));
    RunAndCompare(art, text, {{kF32, {4, 1, 3}, {}}, {i64, {2}, u}, {kI32, {1}, {1}}}, 3);
    RunAndCompare(art, text, {{kF32, {1, 1, 3}, {}}, {i64, {2}, u}, {kI32, {1}, {-3}}}, 4);
  }
  struct Bad {
    std::vector<int64_t> u;
    int32_t q;
    const char* message;
  };
  for (const Bad& bad : {Bad{{1, 1}, 1, "dyn.unsqueeze: axes entries 0 and 1 name the same axis"},
                         Bad{{0, 5}, 1, "dyn.unsqueeze: axes entry 1 is out of range"},
                         Bad{{0, 1}, 2, "dyn.squeeze: the input's axis 2 is listed but its extent is not 1"},
                         Bad{{0, 1}, -4, "dyn.squeeze: axes entry 0 is out of range"}}) {
    SCOPED_TRACE(bad.message);
    std::vector<float> x(6);
    int64_t xs[3] = {2, 1, 3}, us[1] = {2}, qs[1] = {1};
    std::vector<int64_t> uv = bad.u;
    int32_t qv = bad.q;
    DLTensor dx{x.data(), {kDLCPU, 0}, 3, {kDLFloat, 32, 1}, xs, nullptr, 0};
    DLTensor du{uv.data(), {kDLCPU, 0}, 1, {kDLInt, 64, 1}, us, nullptr, 0};
    DLTensor dq{&qv, {kDLCPU, 0}, 1, {kDLInt, 32, 1}, qs, nullptr, 0};
    ASSERT_EQ(TakeStatus(kiln_session_set_input(art.session(), "x", &dx)), "");
    ASSERT_EQ(TakeStatus(kiln_session_set_input(art.session(), "u", &du)), "");
    ASSERT_EQ(TakeStatus(kiln_session_set_input(art.session(), "q", &dq)), "");
    std::string e = TakeStatus(kiln_session_run(art.session()));
    EXPECT_NE(e.find(bad.message), std::string::npos) << e;
  }
}

// Two `?` extents broadcast together: the type says `?`, the shape function
// composed over the kernel's body computes whichever is not 1 and checks
// that they broadcast.
TEST(Vm, BroadcastOfUnrelatedExtentsIsComputedAtRunTime) {
  const std::string text = R"(#[version = "0.1"]
def @main(%a: Tensor[(?, 2), float32], %b: Tensor[(?, 1), float32]) {
  equal(%a, floor(%b))
}
)";
  const std::string path = TempPath("any_broadcast.so");
  ASSERT_EQ(Compile(text, path), "");
  Artifact art(path);
  ASSERT_EQ(art.status(), "");
  for (auto [n, m] : {std::pair<int64_t, int64_t>{3, 1}, {3, 3}, {1, 4}, {0, 1}}) {
    SCOPED_TRACE(absl::StrCat(n, " ", m));
    RunAndCompare(art, text, {{kF32, {n, 2}, {}}, {kF32, {m, 1}, {}}}, 9);
  }
  std::vector<float> a(6), b(2);
  int64_t sa[2] = {3, 2}, sb[2] = {2, 1};
  DLTensor da{a.data(), {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, sa, nullptr, 0};
  DLTensor db{b.data(), {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, sb, nullptr, 0};
  ASSERT_EQ(TakeStatus(kiln_session_set_input(art.session(), "a", &da)), "");
  ASSERT_EQ(TakeStatus(kiln_session_set_input(art.session(), "b", &db)), "");
  std::string e = TakeStatus(kiln_session_run(art.session()));
  EXPECT_NE(e.find("the operands of equal do not broadcast (dim 0)"), std::string::npos) << e;
}

// `?` extents inside one fused kernel: subtract's result broadcasts two
// unrelated `?` extents and is read by where, take and expand_dims before the
// kernel's output (ONNX Resize's cubic mode at run time has this shape). Each
// intermediate extent must be bound inside the kernel (lowering/lower.cc
// ResolveAnyDims) and agree with the VM's shape function.
TEST(Vm, AnyExtentsOfIntermediatesInsideAFusedKernel) {
  const std::string text = R"(#[version = "0.1"]
def @main(%a: Tensor[(?,), float32], %b: Tensor[(?,), float32], %t: Tensor[(4, 3), float32]) {
  %0 = subtract(%a, %b);
  %1 = where(less(%0, 0f), 1f, %0);
  %2 = cast(clip(floor(%1), a_min=0f, a_max=3f), dtype="int32");
  %3 = take(%t, %2, axis=0);
  %4 = expand_dims(multiply(%1, %1), axis=1);
  multiply(%3, %4)
}
)";
  const std::string path = TempPath("any_intermediate.so");
  ASSERT_EQ(Compile(text, path), "");
  Artifact art(path);
  ASSERT_EQ(art.status(), "");
  for (auto [n, m] : {std::pair<int64_t, int64_t>{5, 5}, {1, 4}, {4, 1}, {1, 1}, {0, 1}}) {
    SCOPED_TRACE(absl::StrCat(n, " ", m));
    RunAndCompare(art, text, {{kF32, {n}, {}}, {kF32, {m}, {}}, {kF32, {4, 3}, {}}}, 11);
  }
  // Hand-computed: a - b = [2.5, -1, 0.25] -> where -> [2.5, 1, 0.25];
  // rows floor(clip) = [2, 1, 0]; scaled by the squares [6.25, 1, 0.0625].
  const std::vector<double> want = {6.25 * 6, 6.25 * 7, 6.25 * 8, 3, 4, 5, 0, 0.0625, 0.125};
  std::vector<float> a = {3, 0, 0.5f}, b = {0.5f, 1, 0.25f};
  std::vector<float> t = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  int64_t sa[1] = {3}, st[2] = {4, 3};
  DLTensor da{a.data(), {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, sa, nullptr, 0};
  DLTensor db{b.data(), {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, sa, nullptr, 0};
  DLTensor dt{t.data(), {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, st, nullptr, 0};
  ASSERT_EQ(TakeStatus(kiln_session_set_input(art.session(), "a", &da)), "");
  ASSERT_EQ(TakeStatus(kiln_session_set_input(art.session(), "b", &db)), "");
  ASSERT_EQ(TakeStatus(kiln_session_set_input(art.session(), "t", &dt)), "");
  ASSERT_EQ(TakeStatus(kiln_session_run(art.session())), "");
  const DLTensor* got = nullptr;
  ASSERT_EQ(TakeStatus(kiln_session_get_output(art.session(), 0, &got)), "");
  ASSERT_EQ(got->ndim, 2);
  ASSERT_EQ(got->shape[0], 3);
  ASSERT_EQ(got->shape[1], 3);
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(static_cast<const float*>(got->data)[i], want[i], 1e-5) << i;
  }
  // Extents that do not broadcast are refused at run time.
  int64_t sb[1] = {2};
  DLTensor db2{b.data(), {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, sb, nullptr, 0};
  ASSERT_EQ(TakeStatus(kiln_session_set_input(art.session(), "b", &db2)), "");
  std::string e = TakeStatus(kiln_session_run(art.session()));
  EXPECT_NE(e.find("do not broadcast"), std::string::npos) << e;
}

// A chain of broadcasts of unrelated `?` extents, each value read twice by
// the next step: written out (inlined, or as the shape function's Selects)
// it doubles per step; with the extents bound once and the values read
// twice computed into buffers it compiles in well under a second.
TEST(Vm, ChainOfAnyBroadcastsReadTwiceCompilesAndRuns) {
  std::string body;
  std::string prev = "%x0";
  for (int i = 0; i < 9; ++i) {
    const std::string other = absl::StrCat("%y", i % 3);
    body += absl::StrCat("  %v", i, " = add(multiply(", prev, ", 0.5f), sin(subtract(", prev, ", ",
                         other, ")));\n");
    prev = absl::StrCat("%v", i);
  }
  const std::string text = absl::StrCat(
      "#[version = \"0.1\"]\n"
      "def @main(%x0: Tensor[(?,), float32], %y0: Tensor[(?,), float32], "
      "%y1: Tensor[(?,), float32], %y2: Tensor[(?,), float32]) {\n",
      body, "  ", prev, "\n}\n");
  const std::string path = TempPath("any_chain.so");
  ASSERT_EQ(Compile(text, path), "");
  Artifact art(path);
  ASSERT_EQ(art.status(), "");
  // (x0 has the full extent: the type relation takes add(multiply(v, ..), `?`)
  // to have v's extent, so a shorter x0 broadcast up is outside what the
  // types promise.)
  for (auto s : {std::vector<int64_t>{3, 3, 1, 3}, {5, 1, 1, 5}, {2, 1, 2, 1}, {4, 4, 4, 4}}) {
    SCOPED_TRACE(absl::StrCat(s[0], " ", s[1], " ", s[2], " ", s[3]));
    RunAndCompare(art, text, {{kF32, {s[0]}, {}}, {kF32, {s[1]}, {}}, {kF32, {s[2]}, {}},
                              {kF32, {s[3]}, {}}}, 5);
  }
}

TEST(Vm, IfAndGlobalRecursion) {
  const std::string text = R"(#[version = "0.1"]
def @loop(%i: Tensor[(), int32], %x: Tensor[(4,), float32]) -> Tensor[(4,), float32] {
  if (less(%i, 1)) {
    %x
  } else {
    @loop(subtract(%i, 1), add(multiply(%x, 0.5f), 1f))
  }
}

def @main(%n: Tensor[(), int32], %c: Tensor[(), bool], %x: Tensor[(4,), float32]) {
  %0 = @loop(%n, %x);
  if (%c) { negative(%0) } else { exp(%0) }
}
)";
  const std::string path = TempPath("if_rec.so");
  ASSERT_EQ(Compile(text, path), "");
  Artifact art(path);
  ASSERT_EQ(art.status(), "");
  for (double n : {0.0, 1.0, 5.0, 300.0}) {
    for (double c : {0.0, 1.0}) {
      SCOPED_TRACE(absl::StrCat(n, " ", c));
      RunAndCompare(art, text, {{kI32, {}, {n}}, {DataType::Bool(), {}, {c}}, {kF32, {4}, {}}}, 3);
    }
  }
}

TEST(Vm, ClosuresCaptureAndRecurse) {
  const std::string text = R"(#[version = "0.1"]
def @main(%x: Tensor[(3,), float32], %k: Tensor[(), int32]) {
  let %add_x = fn (%y: Tensor[(3,), float32]) { add(%y, %x) };
  let %twice = fn (%f: fn (Tensor[(3,), float32]) -> Tensor[(3,), float32], %v: Tensor[(3,), float32]) {
    %f(%f(%v))
  };
  let %count = fn (%j: Tensor[(), int32], %acc: Tensor[(3,), float32]) -> Tensor[(3,), float32] {
    if (less(%j, 1)) { %acc } else { %count(subtract(%j, 1), %add_x(%acc)) }
  };
  (%twice(%add_x, %x), %count(%k, %x))
}
)";
  const std::string path = TempPath("closures.so");
  ASSERT_EQ(Compile(text, path), "");
  Artifact art(path);
  ASSERT_EQ(art.status(), "");
  for (double k : {0.0, 4.0}) RunAndCompare(art, text, {{kF32, {3}, {}}, {kI32, {}, {k}}}, 5);
}

TEST(Vm, AdtsAndMatch) {
  const std::string text = R"(#[version = "0.1"]
type List[A] {
  Cons(A, List[A]),
  Nil,
}

def @build(%n: Tensor[(), int32], %x: Tensor[(2,), float32]) -> List[Tensor[(2,), float32]] {
  if (less(%n, 1)) { Nil() } else { Cons(%x, @build(subtract(%n, 1), add(%x, 1f))) }
}

def @sum(%l: List[Tensor[(2,), float32]], %acc: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
  match (%l) {
    Cons(%h, %t) => @sum(%t, add(%acc, %h)),
    Nil => %acc,
  }
}

def @main(%n: Tensor[(), int32], %x: Tensor[(2,), float32]) {
  @sum(@build(%n, %x), zeros_like(%x))
}
)";
  const std::string path = TempPath("adt.so");
  ASSERT_EQ(Compile(text, path), "");
  Artifact art(path);
  ASSERT_EQ(art.status(), "");
  for (double n : {0.0, 1.0, 6.0}) RunAndCompare(art, text, {{kI32, {}, {n}}, {kF32, {2}, {}}}, 9);
}

TEST(Vm, IncompleteMatchIsAFatalError) {
  const std::string text = R"(#[version = "0.1"]
type Opt {
  Some(Tensor[(2,), float32]),
  None,
}

def @pick(%c: Tensor[(), bool], %x: Tensor[(2,), float32]) -> Opt[] {
  if (%c) { Some(%x) } else { None() }
}

def @main(%c: Tensor[(), bool], %x: Tensor[(2,), float32]) {
  match? (@pick(%c, %x)) {
    Some(%v) => add(%v, %v),
  }
}
)";
  const std::string path = TempPath("fatal.so");
  ASSERT_EQ(Compile(text, path), "");
  Artifact art(path);
  ASSERT_EQ(art.status(), "");
  RunAndCompare(art, text, {{DataType::Bool(), {}, {1}}, {kF32, {2}, {}}}, 2);
  uint8_t c = 0;
  float x[2] = {1, 2};
  int64_t two = 2;
  DLTensor dc{&c, {kDLCPU, 0}, 0, {6, 8, 1}, nullptr, nullptr, 0};
  DLTensor dx{x, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, &two, nullptr, 0};
  ASSERT_EQ(TakeStatus(kiln_session_set_input(art.session(), "c", &dc)), "");
  ASSERT_EQ(TakeStatus(kiln_session_set_input(art.session(), "x", &dx)), "");
  std::string e = TakeStatus(kiln_session_run(art.session()));
  EXPECT_NE(e.find("no clause of a match"), std::string::npos) << e;
  // The session still works afterwards.
  c = 1;
  ASSERT_EQ(TakeStatus(kiln_session_set_input(art.session(), "c", &dc)), "");
  EXPECT_EQ(TakeStatus(kiln_session_run(art.session())), "");
}

TEST(Vm, UnboundedRecursionStopsWithAnError) {
  const std::string text = R"(#[version = "0.1"]
def @forever(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
  @forever(add(%x, 1f))
}

def @main(%x: Tensor[(2,), float32]) {
  @forever(%x)
}
)";
  const std::string path = TempPath("forever.so");
  ASSERT_EQ(Compile(text, path), "");
  Artifact art(path);
  ASSERT_EQ(art.status(), "");
  float x[2] = {1, 2};
  int64_t two = 2;
  DLTensor dx{x, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, &two, nullptr, 0};
  ASSERT_EQ(TakeStatus(kiln_session_set_input(art.session(), "x", &dx)), "");
  std::string e = TakeStatus(kiln_session_run(art.session()));
  EXPECT_NE(e.find("RESOURCE_EXHAUSTED"), std::string::npos) << e;
  EXPECT_NE(e.find("deeper than"), std::string::npos) << e;
}

TEST(Vm, References) {
  const std::string text = R"(#[version = "0.1"]
def @bump(%r: ref(Tensor[(2,), float32]), %n: Tensor[(), int32]) -> () {
  if (less(%n, 1)) { () } else {
    let %u = ref_write(%r, add(ref_read(%r), 1f));
    @bump(%r, subtract(%n, 1))
  }
}

def @main(%x: Tensor[(2,), float32], %n: Tensor[(), int32]) {
  let %r = ref(%x);
  let %u = @bump(%r, %n);
  let %before = ref_read(%r);
  let %w = ref_write(%r, multiply(%before, 2f));
  (%before, ref_read(%r))
}
)";
  const std::string path = TempPath("refs.so");
  ASSERT_EQ(Compile(text, path), "");
  Artifact art(path);
  ASSERT_EQ(art.status(), "");
  for (double n : {0.0, 3.0}) RunAndCompare(art, text, {{kF32, {2}, {}}, {kI32, {}, {n}}}, 4);
}

// kiln_model_evaluate (the interpreter through the C API) on a program with
// closures, recursion and a reference: the same values as the VM artifact;
// its errors are statuses.
TEST(Vm, EvaluateThroughTheCApiMatchesTheVm) {
  const std::string text = R"(#[version = "0.1"]
def @main(%x: Tensor[(N,), float32], %k: Tensor[(), int32]) {
  let %r = ref(%x);
  let %step = fn (%j: Tensor[(), int32]) -> () {
    if (less(%j, 1)) { () } else {
      let %u = ref_write(%r, add(ref_read(%r), %x));
      %step(subtract(%j, 1))
    }
  };
  let %u = %step(%k);
  (ref_read(%r), multiply(%x, 3f))
}
)";
  const std::string path = TempPath("evaluate.so");
  ASSERT_EQ(Compile(text, path), "");
  Artifact art(path);
  ASSERT_EQ(art.status(), "");
  KilnModel* model = nullptr;
  ASSERT_EQ(TakeStatus(kiln_model_parse_text(text.c_str(), "vm_test", &model)), "");
  float x[3] = {1.5f, -2, 0.25f};
  int32_t k = 4;
  int64_t three = 3;
  DLTensor dx{x, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, &three, nullptr, 0};
  DLTensor dk{&k, {kDLCPU, 0}, 0, {kDLInt, 32, 1}, nullptr, nullptr, 0};
  const DLTensor* in[2] = {&dx, &dk};
  DLManagedTensor** outs = nullptr;
  int32_t n = 0;
  ASSERT_EQ(TakeStatus(kiln_model_evaluate(model, in, 2, &outs, &n)), "");
  ASSERT_EQ(n, 2);
  ASSERT_EQ(TakeStatus(kiln_session_set_input_index(art.session(), 0, &dx)), "");
  ASSERT_EQ(TakeStatus(kiln_session_set_input_index(art.session(), 1, &dk)), "");
  ASSERT_EQ(TakeStatus(kiln_session_run(art.session())), "");
  for (int32_t o = 0; o < n; ++o) {
    const DLTensor* got = nullptr;
    ASSERT_EQ(TakeStatus(kiln_session_get_output(art.session(), o, &got)), "");
    const DLTensor& want = outs[o]->dl_tensor;
    ASSERT_EQ(want.ndim, 1);
    ASSERT_EQ(want.shape[0], 3);
    ASSERT_EQ(got->shape[0], 3);
    for (int i = 0; i < 3; ++i) {
      EXPECT_FLOAT_EQ(static_cast<const float*>(got->data)[i], static_cast<const float*>(want.data)[i]);
    }
  }
  EXPECT_FLOAT_EQ(static_cast<const float*>(outs[0]->dl_tensor.data)[0], 1.5f * 5);
  for (int32_t o = 0; o < n; ++o) outs[o]->deleter(outs[o]);
  kiln_free(outs);
  // Errors: a wrong count, a wrong dtype, a NULL input.
  std::string e = TakeStatus(kiln_model_evaluate(model, in, 1, &outs, &n));
  EXPECT_NE(e.find("main takes 2 inputs, got 1"), std::string::npos) << e;
  EXPECT_EQ(outs, nullptr);
  const DLTensor* swapped[2] = {&dk, &dx};
  e = TakeStatus(kiln_model_evaluate(model, swapped, 2, &outs, &n));
  EXPECT_NE(e.find("input 0 ('x'): expected float32 of rank 1"), std::string::npos) << e;
  const DLTensor* null_in[2] = {&dx, nullptr};
  e = TakeStatus(kiln_model_evaluate(model, null_in, 2, &outs, &n));
  EXPECT_NE(e.find("input 1 ('k') is NULL"), std::string::npos) << e;
  kiln_model_release(model);
}

// Every byte of the VM section flipped in turn (the file re-sealed so the
// checksum passes): the loader refuses the artifact with a status, or it
// loads and its run returns a status or a value — never a crash.
TEST(Vm, CorruptedProgramsAreRefusedNotRun) {
  const std::string text = R"(#[version = "0.1"]
def @main(%n: Tensor[(), int32], %x: Tensor[(N, 2), float32]) {
  if (less(%n, 1)) { nn.relu(%x) } else { (add(%x, %x)) }
}
)";
  const std::string path = TempPath("victim.so");
  ASSERT_EQ(Compile(text, path), "");
  std::string bytes;
  {
    std::ifstream f(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(f), {});
  }
  const std::string magic("KILNVM\0\0", 8);
  size_t at = bytes.find(magic);
  ASSERT_NE(at, std::string::npos);
  // The section ends where the code ends: header fields at 96 (code offset)
  // and 104 (code words).
  uint64_t code_off = 0, code_words = 0;
  std::memcpy(&code_off, bytes.data() + at + 96, 8);
  std::memcpy(&code_words, bytes.data() + at + 104, 8);
  const size_t size = static_cast<size_t>(code_off + 4 * code_words);
  ASSERT_LT(at + size, bytes.size());
  int refused = 0, ran = 0;
  const std::string mutant = TempPath("mutant.so");
  for (size_t i = 0; i < size; ++i) {
    for (uint8_t flip : {uint8_t{0x01}, uint8_t{0x80}, uint8_t{0xff}}) {
      std::string m = bytes;
      m[at + i] = static_cast<char>(m[at + i] ^ flip);
      {
        std::ofstream f(mutant, std::ios::binary | std::ios::trunc);
        f.write(m.data(), static_cast<std::streamsize>(m.size()));
      }
      ASSERT_EQ(TakeStatus(kiln_artifact_seal_file(mutant.c_str())), "");
      Artifact art(mutant);
      if (!art.status().empty()) {
        ++refused;
        continue;
      }
      int32_t n = 1;
      float x[4] = {1, -2, 3, -4};
      int64_t shape[2] = {2, 2};
      DLTensor dn{&n, {kDLCPU, 0}, 0, {kDLInt, 32, 1}, nullptr, nullptr, 0};
      DLTensor dx{x, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, nullptr, 0};
      TakeStatus(kiln_session_set_input_index(art.session(), 0, &dn));
      TakeStatus(kiln_session_set_input_index(art.session(), 1, &dx));
      TakeStatus(kiln_session_run(art.session()));
      ++ran;
    }
  }
  // Most single-byte changes must be caught by the validator.
  EXPECT_GT(refused, 0);
  std::printf("VM section of %zu bytes: %d mutants refused at load, %d loaded and ran\n", size,
              refused, ran);
  unlink(mutant.c_str());
}


// Kernels whose output extent is `?` because two inputs' `?` extents meet
// (x_0 vs y_0 after naming) and then pass through a reduction with
// keepdims, a transpose and a projection of a tuple parameter: the composed
// shape function follows each of them (one artifact, several shapes).
TEST(Vm, ComposedShapesThroughReductionsTransposesAndTupleParameters) {
  const std::string text = R"(#[version = "0.1"]
def @main(%x: Tensor[(?, 3), float32], %y: Tensor[(?, 3), float32]) {
  %0 = add(%x, %y);
  %1 = transpose(mean(%0, axis=[1], keepdims=true), axes=[1, 0]);
  %2 = sum(multiply(%0, 2f), axis=[0]);
  let %t = (tanh(%0), %y);
  (%1, %2, minimum(%t.0, %t.1), max(%0, axis=[1], exclude=true))
}
)";
  const std::string path = TempPath("composed_reduce.so");
  ASSERT_EQ(Compile(text, path), "");
  Artifact art(path);
  ASSERT_EQ(art.status(), "");
  for (auto [n, m] : {std::pair<int64_t, int64_t>{4, 4}, {1, 5}, {3, 1}, {2, 2}}) {
    SCOPED_TRACE(absl::StrCat(n, " ", m));
    RunAndCompare(art, text, {{kF32, {n, 3}, {}}, {kF32, {m, 3}, {}}}, 13);
  }
}

// A program whose `?` extents of two inputs must be the same type (a
// reference written with values shaped like either input) compiles, keeping
// its `?` dims as written when naming them per input would not type-check.
TEST(Vm, AnyDimsThatMeetInAReferenceCompile) {
  const std::string text = R"(#[version = "0.1"]
def @main(%x: Tensor[(?, 2), float32], %y: Tensor[(?, 2), float32]) {
  let %r = ref(%x);
  let %u = ref_write(%r, tanh(%y));
  add(ref_read(%r), %x)
}
)";
  const std::string path = TempPath("any_ref.so");
  ASSERT_EQ(Compile(text, path), "");
  Artifact art(path);
  ASSERT_EQ(art.status(), "");
  for (int64_t n : {1, 3}) RunAndCompare(art, text, {{kF32, {n, 2}, {}}, {kF32, {n, 2}, {}}}, 17);
}


// A convolutional block over a symbolic batch: its kernels (convolution with
// a residual add, pooling, dense, softmax, the layout transforms) are the
// static N = 1 schedules inside a loop over the batch
// (lowering/vm/batch_split.h); the sum over the batch axis is not split.
// Every output matches the interpreter at several batch sizes.
TEST(Vm, SymbolicBatchKernelsRunTheStaticSchedules) {
  const std::string text = R"(#[version = "0.1"]
def @main(%x: Tensor[(N, 3, 8, 8), float32], %r: Tensor[(N, 8, 8, 8), float32]) {
  %w = sin(reshape(dyn.arange(0f, 216f, 1f), newshape=[8, 3, 3, 3]));
  %b = cos(dyn.arange(0f, 8f, 1f));
  %d = multiply(sin(reshape(dyn.arange(0f, 160f, 1f), newshape=[10, 16])), 0.25f);
  %0 = nn.bias_add(nn.conv2d(%x, %w, padding=[1, 1], channels=8, kernel_size=[3, 3]), %b);
  %1 = nn.relu(add(%0, %r));
  %2 = nn.max_pool2d(%1, pool_size=[2, 2], strides=[2, 2]);
  %3 = reshape(nn.global_avg_pool2d(%2), newshape=[-1, 8]);
  %4 = concatenate((%3, nn.relu(%3)), axis=1);
  (nn.softmax(nn.dense(%4, %d, units=10)), sum(%1, axis=[0]), %2)
}
)";
  const std::string path = TempPath("batch_split.so");
  ASSERT_EQ(Compile(text, path), "");
  Artifact art(path);
  ASSERT_EQ(art.status(), "");
  for (int64_t n : {1, 2, 5}) {
    SCOPED_TRACE(n);
    RunAndCompare(art, text, {{kF32, {n, 3, 8, 8}, {}}, {kF32, {n, 8, 8, 8}, {}}},
                  21 + static_cast<uint32_t>(n));
  }
}

}  // namespace
}  // namespace kiln
