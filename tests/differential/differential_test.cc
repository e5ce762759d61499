// Differential test: random well-typed programs (random_graph.h), run through
// every registered pass on its own and through the default O3 pipeline; the
// reference interpreter's outputs before and after must agree — exactly for
// integers, within rtol 1e-4 / atol 1e-5 for floats (passes may reassociate
// float arithmetic, e.g. FoldScaleAxis and SimplifyInference).
//
// KILN_DIFFERENTIAL_CASES overrides the number of programs (default 200, seeds
// 1..N, fixed so CI is reproducible).
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "interpreter/interpreter.h"
#include "ir/op.h"
#include "ir/printer.h"
#include "ir/traversal.h"
#include "ir/status_macros.h"
#include "passes/infra/pass.h"
#include "passes/pipeline.h"
#include "passes/registry/register_passes.h"
#include "tests/differential/random_graph.h"

namespace kiln::testing {
namespace {

constexpr double kRtol = 1e-4;
constexpr double kAtol = 1e-5;

int NumCases() {
  const char* env = std::getenv("KILN_DIFFERENTIAL_CASES");
  int n = env ? std::atoi(env) : 0;
  return n > 0 ? n : 200;
}

struct Case {
  Module module;
  std::vector<interp::Value> inputs;
  interp::Value expected;
};

absl::StatusOr<Case> MakeCase(uint64_t seed) {
  RandomGraphOptions opts;
  opts.seed = seed;
  opts.num_ops = 16 + static_cast<int>(seed % 16);
  KILN_ASSIGN_OR_RETURN(Module m, RandomModule(opts));
  KILN_ASSIGN_OR_RETURN(Function main, m.Lookup("main"));
  KILN_ASSIGN_OR_RETURN(auto tensors, RandomInputs(main, seed * 7919));
  Case c{m, {}, {}};
  for (auto& t : tensors) c.inputs.push_back(interp::Value::Tensor(t));
  KILN_ASSIGN_OR_RETURN(c.expected, interp::RunFunction(m, "main", c.inputs));
  return c;
}

// Runs `pass` on a copy of the case's module; an error describes the first
// difference (or the failure) with both programs.
absl::Status Compare(const Case& c, const passes::PassPtr& pass, uint64_t seed) {
  Module m = c.module;
  passes::PassContext ctx;
  ctx.opt_level = 3;
  absl::StatusOr<bool> changed = pass->Run(&m, ctx);
  if (!changed.ok())
    return absl::InternalError(absl::StrCat("seed ", seed, ", ", pass->name(), ": ",
                                            changed.status().message(), "\n",
                                            PrintModule(c.module)));
  absl::StatusOr<interp::Value> got = interp::RunFunction(m, "main", c.inputs);
  absl::Status close = got.ok() ? interp::AllClose(c.expected, *got, kRtol, kAtol) : got.status();
  if (!close.ok())
    return absl::InternalError(absl::StrCat("seed ", seed, ", ", pass->name(),
                                            " changed the result: ", close.message(),
                                            "\n--- before ---\n", PrintModule(c.module),
                                            "--- after ---\n", PrintModule(m)));
  return absl::OkStatus();
}

TEST(DifferentialTest, EveryPassAndTheO3PipelinePreserveResults) {
  passes::RegisterAllPasses();
  std::vector<passes::PassPtr> all;
  for (const std::string& name : passes::PassRegistry::Global().Names()) {
    auto p = passes::PassRegistry::Global().Create(name);
    ASSERT_TRUE(p.ok()) << p.status();
    all.push_back(*p);
  }
  ASSERT_GE(all.size(), 10u);
  auto o3 = passes::DefaultPipeline(3);
  ASSERT_TRUE(o3.ok()) << o3.status();
  int cases = NumCases();
  for (int i = 1; i <= cases; ++i) {
    uint64_t seed = static_cast<uint64_t>(i);
    absl::StatusOr<Case> c = MakeCase(seed);
    ASSERT_TRUE(c.ok()) << "seed " << seed << ": " << c.status();
    for (const passes::PassPtr& p : all) {
      // Run each pass with its prerequisites through a one-pass Sequential.
      absl::Status s = Compare(*c, passes::MakeSequential(p->name(), {p}, 3), seed);
      ASSERT_TRUE(s.ok()) << s.message();
    }
    absl::Status s = Compare(*c, *o3, seed);
    ASSERT_TRUE(s.ok()) << s.message();
  }
  std::printf("%d programs x (%zu passes + O3 pipeline): %d checks passed\n", cases, all.size(),
              cases * static_cast<int>(all.size() + 1));
}

// The harness can fail: a pass that quietly turns `add` into `subtract` is
// caught on most programs.
TEST(DifferentialTest, CatchesAWrongPass) {
  passes::RegisterAllPasses();
  passes::PassPtr wrong = passes::MakeModulePass(
      passes::PassInfo{"AddToSubtract", 0, {}},
      [](Module& m, const passes::PassContext&) -> absl::StatusOr<bool> {
        class Rewriter : public ExprRewriter {
         protected:
          absl::StatusOr<Expr> PostVisit(const Expr&, Expr post) override {
            const auto* c = post.as<CallNode>();
            const auto* op = c ? c->op.as<OpNode>() : nullptr;
            if (op == nullptr || op->name() != "add") return post;
            KILN_ASSIGN_OR_RETURN(Op sub, GetOp("subtract"));
            KILN_ASSIGN_OR_RETURN(Call out, MakeCall(sub, c->args));
            return Expr(out);
          }
        };
        Module out = m;
        for (const auto& [gv, fn] : m.functions()) {
          Rewriter r;
          KILN_ASSIGN_OR_RETURN(Expr e, r.Rewrite(fn));
          KILN_RETURN_IF_ERROR(out.Add(gv, e.cast<FunctionNode>(), /*update=*/true));
        }
        m = out;
        return true;
      });
  int caught = 0, with_add = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    absl::StatusOr<Case> c = MakeCase(seed);
    ASSERT_TRUE(c.ok()) << c.status();
    if (PrintModule(c->module).find(" add(") == std::string::npos) continue;
    ++with_add;
    caught += !Compare(*c, wrong, seed).ok();
  }
  EXPECT_GT(with_add, 10);
  EXPECT_GE(caught, with_add * 3 / 4) << caught << " of " << with_add;
}

}  // namespace
}  // namespace kiln::testing
