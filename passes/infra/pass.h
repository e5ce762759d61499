// File: passes/infra/pass.h
//
// The pass infrastructure, in the manner of TVM's and XLA's:
//   - a Pass has a stable name, an opt level and prerequisite passes, and says
//     whether it changed the module (absl::StatusOr<bool>);
//   - a failing pass returns a status and leaves the module it was given
//     untouched (passes work on a copy; Module copies are cheap, nodes are shared);
//   - PassContext carries the opt level (0-3), required and disabled pass names,
//     typed configuration values and instruments (hooks before/after each pass,
//     timing, IR dumps);
//   - Sequential runs a list of passes: a pass above the context's opt level is
//     skipped unless required; a disabled pass is skipped; declared
//     prerequisites (such as InferType) run first, unless they already ran
//     since the last pass that changed the module.
//
//   PassContext ctx;
//   ctx.opt_level = 3;
//   ctx.instruments.push_back(std::make_shared<TimingInstrument>());
//   KILN_ASSIGN_OR_RETURN(std::shared_ptr<Pass> pipeline, DefaultPipeline(3));
//   KILN_ASSIGN_OR_RETURN(bool changed, pipeline->Run(&module, ctx));
//
// Every pass registers a factory under its name (PassRegistry), so a pass list
// such as "SimplifyInference,FoldConstant,FuseOps" can be built from text.
#ifndef KILN_PASSES_INFRA_PASS_H_
#define KILN_PASSES_INFRA_PASS_H_

#include <functional>
#include <map>
#include <set>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "ir/module.h"

namespace kiln::passes {

struct PassInfo {
  std::string name;           // stable, e.g. "FoldConstant"
  int opt_level = 0;          // runs when PassContext::opt_level >= opt_level (or when required)
  std::vector<std::string> required;  // passes to run first, e.g. {"InferType"}
};

class PassContext;

// Hooks around every pass run by Pass::Run.
class PassInstrument {
 public:
  virtual ~PassInstrument() = default;
  virtual void BeforePass(const PassInfo& /*info*/, const Module& /*module*/) {}
  virtual void AfterPass(const PassInfo& /*info*/, const Module& /*module*/, bool /*changed*/,
                         absl::Duration /*elapsed*/) {}
};

// A typed configuration value.
using ConfigValue = std::variant<bool, int64_t, double, std::string>;

class PassContext {
 public:
  int opt_level = 2;
  absl::flat_hash_set<std::string> required_passes;
  absl::flat_hash_set<std::string> disabled_passes;
  std::vector<std::shared_ptr<PassInstrument>> instruments;

  void SetConfig(const std::string& key, ConfigValue value) { config_[key] = std::move(value); }
  // The value of `key` if set with type T; `fallback` when unset; an error
  // naming the key when set with another type.
  template <typename T>
  absl::StatusOr<T> GetConfig(const std::string& key, T fallback) const;

  // Whether Sequential should run a pass with this info.
  bool ShouldRun(const PassInfo& info) const;

 private:
  std::map<std::string, ConfigValue> config_;
};

class Pass {
 public:
  virtual ~Pass() = default;
  virtual const PassInfo& info() const = 0;
  const std::string& name() const { return info().name; }

  // Runs the pass on *module with the context's instruments around it. On
  // success *module is replaced by the result and the return value says
  // whether anything changed; on failure *module is untouched and the status
  // is prefixed with the pass name.
  absl::StatusOr<bool> Run(Module* module, const PassContext& ctx) const;

 protected:
  // A container of passes (Sequential) is not itself instrumented and does
  // not prefix its passes' errors: its passes are.
  virtual bool is_container() const { return false; }

  // The transformation itself: rewrite `module` in place (it is the pass's own copy).
  virtual absl::StatusOr<bool> RunOnModule(Module& module, const PassContext& ctx) const = 0;
};

using PassPtr = std::shared_ptr<const Pass>;

// A pass from a function over the whole module.
PassPtr MakeModulePass(PassInfo info,
                       std::function<absl::StatusOr<bool>(Module&, const PassContext&)> fn);

// A pass that rewrites each global function on its own. Functions marked
// Primitive=1 (already fused) or with a Compiler attribute (offloaded) are
// left alone, as in TVM. `fn` returns the new function, or the same object
// when nothing changed.
PassPtr MakeFunctionPass(
    PassInfo info,
    std::function<absl::StatusOr<Function>(const Function&, const Module&, const PassContext&)> fn);

// Runs passes in order, honouring opt levels, required and disabled passes,
// and running each pass's prerequisites first.
PassPtr MakeSequential(std::string name, std::vector<PassPtr> passes, int opt_level = 0);

// ---- Registry --------------------------------------------------------------

class PassRegistry {
 public:
  static PassRegistry& Global();
  absl::Status Register(const std::string& name, std::function<PassPtr()> factory);
  // Records a pass of kiln's that this build leaves out (a selective build,
  // docs/selective_builds.md): Create(name) then says so (Unimplemented)
  // instead of calling it unknown. A name that is registered stays registered.
  void RegisterAbsent(const std::string& name);
  // Unknown names give an error that lists the known ones; absent ones say
  // they are not in this build.
  absl::StatusOr<PassPtr> Create(absl::string_view name) const;
  std::vector<std::string> Names() const;
  bool IsAbsent(absl::string_view name) const;
  std::vector<std::string> AbsentNames() const;  // sorted

 private:
  std::map<std::string, std::function<PassPtr()>> factories_;
  std::set<std::string, std::less<>> absent_;
};

// Builds a Sequential from "A,B,C" (names are trimmed; empty entries are errors).
absl::StatusOr<PassPtr> ParsePassList(absl::string_view list);

// ---- Instruments -------------------------------------------------------------

// Records wall time per pass, in run order.
class TimingInstrument : public PassInstrument {
 public:
  void AfterPass(const PassInfo& info, const Module& module, bool changed,
                 absl::Duration elapsed) override;
  struct Entry {
    std::string pass;
    absl::Duration elapsed;
    bool changed;
  };
  const std::vector<Entry>& entries() const { return entries_; }
  std::string Report() const;  // a table: pass, time (ms), changed

 private:
  std::vector<Entry> entries_;
};

// Writes the module as text after each pass: to `dir/NN_<pass>.kir`, or to
// stdout when `dir` is empty.
class IrDumpInstrument : public PassInstrument {
 public:
  explicit IrDumpInstrument(std::string dir) : dir_(std::move(dir)) {}
  void AfterPass(const PassInfo& info, const Module& module, bool changed,
                 absl::Duration elapsed) override;
  // The first error writing a dump file (instruments cannot fail a pass).
  const absl::Status& status() const { return status_; }

 private:
  std::string dir_;
  absl::Status status_;
  int count_ = 0;
};

}  // namespace kiln::passes

#endif  // KILN_PASSES_INFRA_PASS_H_
