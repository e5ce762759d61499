// Differential test over random control-flow programs (random_program.h):
// `if`, `let`, closures, higher-order functions, local, global and mutual
// recursion, ADTs with `match`, references and tuples. For each program:
//
//   1. it parses and type-checks (the generator is well-typed by
//      construction, so a refusal is a bug in the generator or the checker);
//   2. the reference interpreter runs it on several inputs (%n decides the
//      loop counts, %c and computed conditions the branches);
//   3. every registered pass on its own, and the O3 pipeline, leave those
//      results unchanged (interpreter before vs after);
//   4. it compiles through the C API (kiln_model_parse_text ->
//      kiln_model_compile, the VM since main is not a dataflow graph) and the
//      C runtime's results agree with the interpreter's on the same inputs.
//
// Floats compare within rtol 1e-4 / atol 1e-4 (passes and kernels may
// reassociate). KILN_DIFFERENTIAL_CF_CASES overrides the number of programs
// (default 40, 10 under ASan; seeds 1..N, fixed so CI is reproducible).
// Every third program has a `?` first dim and runs at three extents of it.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "interpreter/interpreter.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/status_macros.h"
#include "kiln/kiln.h"
#include "passes/infra/pass.h"
#include "passes/pipeline.h"
#include "passes/registry/register_passes.h"
#include "tests/differential/random_program.h"
#include "types/infer_type.h"
#include "tests/vm/c_api_test_util.h"

namespace kiln::testing {
namespace {


constexpr double kRtol = 1e-4;
constexpr double kAtol = 1e-4;

// Fewer programs by default under ASan (about 5x slower), which CI runs.
#if defined(__SANITIZE_ADDRESS__)
constexpr int kDefaultCases = 10;
#else
constexpr int kDefaultCases = 40;
#endif

int NumCases() {
  const char* env = std::getenv("KILN_DIFFERENTIAL_CF_CASES");
  int n = env ? std::atoi(env) : 0;
  return n > 0 ? n : kDefaultCases;
}



// One set of inputs for @main(%x: T, %y: T, %n: int32, %c: bool).
struct Inputs {
  Ref<HostTensor> x, y, n, c;
  std::vector<interp::Value> Values() const {
    return {interp::Value::Tensor(x), interp::Value::Tensor(y), interp::Value::Tensor(n),
            interp::Value::Tensor(c)};
  }
};

Inputs MakeInputs(const std::vector<int64_t>& shape, int32_t n, bool c, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  Inputs in;
  in.x = *HostTensor::Create(DataType::Float(32), shape);
  in.y = *HostTensor::Create(DataType::Float(32), shape);
  for (int64_t i = 0; i < in.x->num_elements(); ++i) {
    in.x->mutable_data<float>()[i] = dist(rng);
    in.y->mutable_data<float>()[i] = dist(rng);
  }
  in.n = *HostTensor::Create(DataType::Int(32), {});
  in.n->mutable_data<int32_t>()[0] = n;
  in.c = *HostTensor::Create(DataType::Bool(), {});
  in.c->mutable_data<uint8_t>()[0] = c ? 1 : 0;
  return in;
}

// The input sets every program runs on: no iterations, some, more; with a
// `?` first dim, at three extents of it (one artifact, several shapes).
std::vector<Inputs> InputSets(const RandomProgram& p, uint64_t seed) {
  std::vector<int64_t> a = p.shape, b = p.shape, c = p.shape;
  if (p.dynamic_first_dim) {
    a[0] = 1;
    b[0] = 3;
    c[0] = 6;
  }
  return {MakeInputs(a, 0, false, seed * 31 + 1), MakeInputs(b, 2, true, seed * 31 + 2),
          MakeInputs(c, 5, seed % 2 == 0, seed * 31 + 3)};
}

// Every third program has a `?` first dim.
RandomProgramOptions OptionsFor(uint64_t seed) {
  RandomProgramOptions opts;
  opts.seed = seed;
  opts.dynamic_first_dim = seed % 3 == 0;
  return opts;
}

// main's result as a list of tensors (a tuple flattened one level).
absl::StatusOr<std::vector<Ref<const HostTensor>>> Flatten(const interp::Value& v) {
  std::vector<Ref<const HostTensor>> out;
  if (v.is_tensor()) {
    out.push_back(v.tensor());
    return out;
  }
  if (!v.is_tuple()) return absl::InternalError("main returned neither a tensor nor a tuple");
  for (const interp::Value& f : v.fields()) {
    if (!f.is_tensor()) return absl::InternalError("main returned a tuple of non-tensors");
    out.push_back(f.tensor());
  }
  return out;
}


// Runs every input set through a compiled artifact and compares with
// `expected` (one entry per input set); "" or the first difference.
std::string RunArtifact(const std::string& path, const std::vector<Inputs>& sets,
                        const std::vector<std::vector<Ref<const HostTensor>>>& expected) {
  KilnArtifact* art = nullptr;
  std::string e = TakeStatus(kiln_artifact_load(path.c_str(), &art));
  if (!e.empty()) return absl::StrCat("load: ", e);
  KilnSession* sess = nullptr;
  e = TakeStatus(kiln_session_create(art, nullptr, &sess));
  std::string result;
  for (size_t k = 0; k < sets.size() && e.empty() && result.empty(); ++k) {
    const Inputs& in = sets[k];
    const HostTensor* hosts[4] = {in.x.get(), in.y.get(), in.n.get(), in.c.get()};
    for (int32_t i = 0; i < 4 && e.empty(); ++i) {
      DLTensor d = ToDLTensor(*hosts[i]);
      e = TakeStatus(kiln_session_set_input_index(sess, i, &d));
    }
    if (e.empty()) e = TakeStatus(kiln_session_run(sess));
    if (!e.empty()) break;
    const auto& want = expected[k];
    if (kiln_artifact_num_outputs(art) != static_cast<int32_t>(want.size())) {
      result = absl::StrCat("input set ", k, ": ", kiln_artifact_num_outputs(art),
                            " outputs, the interpreter has ", want.size());
      break;
    }
    for (size_t o = 0; o < want.size() && result.empty(); ++o) {
      const DLTensor* got = nullptr;
      e = TakeStatus(kiln_session_get_output(sess, static_cast<int32_t>(o), &got));
      if (!e.empty()) break;
      const HostTensor& w = *want[o];
      bool same_shape = got->ndim == w.ndim();
      for (int d = 0; same_shape && d < w.ndim(); ++d) same_shape = got->shape[d] == w.shape()[d];
      if (!same_shape || got->dtype.code != kDLFloat || got->dtype.bits != 32) {
        result = absl::StrCat("input set ", k, ", output ", o, ": wrong shape or dtype");
        break;
      }
      for (int64_t i = 0; i < w.num_elements(); ++i) {
        float a = static_cast<const float*>(got->data)[i], b = w.data<float>()[i];
        if (!(std::fabs(a - b) <= kAtol + kRtol * std::fabs(b))) {
          result = absl::StrCat("input set ", k, ", output ", o, ", element ", i, ": VM ", a,
                                ", interpreter ", b);
          break;
        }
      }
    }
  }
  if (!e.empty()) result = absl::StrCat("C runtime: ", e);
  kiln_session_release(sess);
  kiln_artifact_release(art);
  return result;
}


struct Case {
  RandomProgram program;
  Module module;
  std::vector<Inputs> sets;
  std::vector<interp::Value> expected;
};

absl::StatusOr<Case> MakeCase(uint64_t seed) {
  Case c;
  c.program = RandomProgramText(OptionsFor(seed));
  absl::StatusOr<Module> parsed = ParseModule(c.program.text, "random_program");
  if (!parsed.ok())
    return absl::InternalError(
        absl::StrCat("seed ", seed, ": ", parsed.status().message(), "\n", c.program.text));
  absl::StatusOr<Module> typed = types::InferType(*parsed);
  if (!typed.ok())
    return absl::InternalError(
        absl::StrCat("seed ", seed, ": ", typed.status().message(), "\n", c.program.text));
  c.module = *typed;
  c.sets = InputSets(c.program, seed);
  for (const Inputs& in : c.sets) {
    absl::StatusOr<interp::Value> v = interp::RunFunction(c.module, "main", in.Values());
    if (!v.ok())
      return absl::InternalError(absl::StrCat("seed ", seed, ": the interpreter: ",
                                              v.status().message(), "\n", c.program.text));
    c.expected.push_back(*v);
  }
  return c;
}

// Runs `pass` on a copy of the case's module; an error describes the first
// difference (or the failure) with both programs.
absl::Status ComparePass(const Case& c, const passes::PassPtr& pass, uint64_t seed) {
  Module m = c.module;
  passes::PassContext ctx;
  ctx.opt_level = 3;
  absl::StatusOr<bool> changed = pass->Run(&m, ctx);
  if (!changed.ok())
    return absl::InternalError(absl::StrCat("seed ", seed, ", ", pass->name(), ": ",
                                            changed.status().message(), "\n", c.program.text));
  for (size_t k = 0; k < c.sets.size(); ++k) {
    absl::StatusOr<interp::Value> got = interp::RunFunction(m, "main", c.sets[k].Values());
    absl::Status close =
        got.ok() ? interp::AllClose(c.expected[k], *got, kRtol, kAtol) : got.status();
    if (!close.ok())
      return absl::InternalError(absl::StrCat("seed ", seed, ", input set ", k, ", ", pass->name(),
                                              " changed the result: ", close.message(),
                                              "\n--- before ---\n", c.program.text,
                                              "--- after ---\n", PrintModule(m)));
  }
  return absl::OkStatus();
}

std::string CompileAndCompare(const Case& c, const std::string& text, uint64_t seed) {
  const std::string path = TempPath(absl::StrCat("random_program_", seed, ".so"));
  std::string e = CompileText(text, path);
  if (!e.empty()) return e;
  std::vector<std::vector<Ref<const HostTensor>>> want;
  for (const interp::Value& v : c.expected) {
    absl::StatusOr<std::vector<Ref<const HostTensor>>> f = Flatten(v);
    if (!f.ok()) return std::string(f.status().message());
    want.push_back(*f);
  }
  e = RunArtifact(path, c.sets, want);
  std::remove(path.c_str());
  return e;
}

TEST(ControlFlowDifferential, GeneratedProgramsCoverEveryConstruct) {
  ProgramFeatures total;
  int with_recursion_and_adt = 0, dynamic = 0;
  for (int i = 1; i <= NumCases(); ++i) {
    RandomProgram p = RandomProgramText(OptionsFor(static_cast<uint64_t>(i)));
    ProgramFeatures f = p.features;
    dynamic += p.dynamic_first_dim;
    total.ifs += f.ifs;
    total.lets += f.lets;
    total.closures += f.closures;
    total.higher_order += f.higher_order;
    total.local_recursion += f.local_recursion;
    total.global_recursion += f.global_recursion;
    total.mutual_recursion += f.mutual_recursion;
    total.adt_builds += f.adt_builds;
    total.matches += f.matches;
    total.nested_patterns += f.nested_patterns;
    total.refs += f.refs;
    total.ref_loops += f.ref_loops;
    total.tuples += f.tuples;
    with_recursion_and_adt += (f.global_recursion + f.mutual_recursion + f.local_recursion) > 0 &&
                              f.matches > 0;
  }
  EXPECT_GT(total.ifs, 0);
  EXPECT_GT(total.lets, 0);
  EXPECT_GT(total.closures, 0);
  EXPECT_GT(total.higher_order, 0);
  EXPECT_GT(total.local_recursion, 0);
  EXPECT_GT(total.global_recursion, 0);
  EXPECT_GT(total.mutual_recursion, 0);
  EXPECT_GT(total.adt_builds, 0);
  EXPECT_GT(total.matches, 0);
  EXPECT_GT(total.nested_patterns, 0);
  EXPECT_GT(total.refs, 0);
  EXPECT_GT(total.ref_loops, 0);
  EXPECT_GT(total.tuples, 0);
  EXPECT_GT(with_recursion_and_adt, 0);
  EXPECT_GT(dynamic, 0);
}

TEST(ControlFlowDifferential, PassesPreserveResults) {
  passes::RegisterAllPasses();
  std::vector<passes::PassPtr> all;
  for (const std::string& name : passes::PassRegistry::Global().Names()) {
    auto p = passes::PassRegistry::Global().Create(name);
    ASSERT_TRUE(p.ok()) << p.status();
    all.push_back(*p);
  }
  auto o3 = passes::DefaultPipeline(3);
  ASSERT_TRUE(o3.ok()) << o3.status();
  for (int i = 1; i <= NumCases(); ++i) {
    uint64_t seed = static_cast<uint64_t>(i);
    absl::StatusOr<Case> c = MakeCase(seed);
    ASSERT_TRUE(c.ok()) << c.status().message();
    for (const passes::PassPtr& p : all) {
      absl::Status s = ComparePass(*c, passes::MakeSequential(p->name(), {p}, 3), seed);
      ASSERT_TRUE(s.ok()) << s.message();
    }
    absl::Status s = ComparePass(*c, *o3, seed);
    ASSERT_TRUE(s.ok()) << s.message();
  }
}

TEST(ControlFlowDifferential, CompiledProgramsAgreeWithTheInterpreter) {
  for (int i = 1; i <= NumCases(); ++i) {
    uint64_t seed = static_cast<uint64_t>(i);
    absl::StatusOr<Case> c = MakeCase(seed);
    ASSERT_TRUE(c.ok()) << c.status().message();
    std::string e = CompileAndCompare(*c, c->program.text, seed);
    ASSERT_EQ(e, "") << "seed " << seed << "\n" << c->program.text;
  }
  std::printf("%d random control-flow programs compiled and agreed with the interpreter\n",
              NumCases());
}

// The comparison can fail: the same programs compiled with every `add`
// turned into `subtract` disagree with the interpreter's results on most
// programs that have an `add` on a path to an output.
TEST(ControlFlowDifferential, CatchesAWrongCompilation) {
  int with_add = 0, caught = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    absl::StatusOr<Case> c = MakeCase(seed);
    ASSERT_TRUE(c.ok()) << c.status().message();
    // Only main's own adds: the helpers (@build's add) stay right.
    const std::string& text = c->program.text;
    size_t main_at = text.find("def @main");
    ASSERT_NE(main_at, std::string::npos);
    std::string main_text = text.substr(main_at);
    if (main_text.find(" add(") == std::string::npos && main_text.find("(add(") == std::string::npos)
      continue;
    ++with_add;
    std::string wrong = text.substr(0, main_at) + absl::StrReplaceAll(main_text, {{"add(", "subtract("}});
    caught += !CompileAndCompare(*c, wrong, 1000 + seed).empty();
  }
  std::printf("add -> subtract in main: %d of %d programs caught\n", caught, with_add);
  EXPECT_GE(with_add, 4);
  EXPECT_GE(caught, with_add / 2) << caught << " of " << with_add;
}

}  // namespace
}  // namespace kiln::testing
