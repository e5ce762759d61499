// File: passes/infra/testing.h
//
// Helpers for pass tests written as IR text (Before / Expected + structural
// equality, as TVM's tests):
//
//   Module m = RunPasses(kBefore, {SimplifyExpr()});   // InferType is registered
//   ExpectModule(m, kExpected);                         // ModuleDifference on failure
#ifndef KILN_PASSES_INFRA_TESTING_H_
#define KILN_PASSES_INFRA_TESTING_H_

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "interpreter/interpreter.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/structural.h"
#include "passes/infer_type/infer_type.h"
#include "passes/infra/pass.h"
#include "types/infer_type.h"

namespace kiln::passes::testing {

inline Module ParseOrFail(const std::string& text) {
  absl::StatusOr<Module> m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *m : Module();
}

// Runs `passes` (after registering InferType for prerequisites) at opt level 3.
inline absl::StatusOr<Module> TryRunPasses(Module m, std::vector<PassPtr> passes) {
  (void)PassRegistry::Global().Register("InferType", InferType);
  PassContext ctx;
  ctx.opt_level = 3;
  absl::StatusOr<bool> r = MakeSequential("test", std::move(passes))->Run(&m, ctx);
  if (!r.ok()) return r.status();
  return m;
}

inline Module RunPasses(const std::string& text, std::vector<PassPtr> passes) {
  absl::StatusOr<Module> m = TryRunPasses(ParseOrFail(text), std::move(passes));
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *m : Module();
}

inline void ExpectModule(const Module& got, const std::string& expected_text) {
  Module want = ParseOrFail(expected_text);
  std::optional<std::string> diff = ModuleDifference(got, want);
  EXPECT_FALSE(diff.has_value()) << *diff << "\n--- got ---\n"
                                 << PrintModule(got) << "--- expected ---\n"
                                 << PrintModule(want);
}

// Runs @main of `m` (types inferred first) on the reference interpreter with
// `args`; its single tensor result as doubles (empty after a gtest failure).
// Pass tests compare a program before and after a rewrite with it.
inline std::vector<double> RunMainOnInterpreter(const Module& m,
                                                const std::vector<Ref<const HostTensor>>& args) {
  absl::StatusOr<Module> typed = types::InferType(m);
  EXPECT_TRUE(typed.ok()) << typed.status();
  if (!typed.ok()) return {};
  std::vector<interp::Value> vals;
  for (const auto& a : args) vals.push_back(interp::Value::Tensor(a));
  absl::StatusOr<interp::Value> v = interp::RunFunction(*typed, "main", vals);
  EXPECT_TRUE(v.ok()) << v.status();
  if (!v.ok()) return {};
  auto t = interp::AsTensor(*v, "result");
  EXPECT_TRUE(t.ok());
  if (!t.ok()) return {};
  std::vector<double> out;
  for (int64_t i = 0; i < (*t)->num_elements(); ++i) out.push_back((*t)->GetAsDouble(i));
  return out;
}

}  // namespace kiln::passes::testing

#endif  // KILN_PASSES_INFRA_TESTING_H_
