// The pass infrastructure: Pass::Run (copy, instrument, prefix errors),
// module/function passes, Sequential, the registry and the instruments.
#include "passes/infra/pass.h"

#include <cstdio>
#include <fstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/strings/ascii.h"
#include "absl/time/clock.h"
#include "ir/printer.h"
#include "ir/status_macros.h"

namespace kiln::passes {
namespace {

absl::Status Prefixed(const absl::Status& s, const std::string& name) {
  return absl::Status(s.code(), absl::StrCat(name, ": ", s.message()));
}

template <typename T>
const char* ConfigTypeName() {
  if constexpr (std::is_same_v<T, bool>) return "bool";
  if constexpr (std::is_same_v<T, int64_t>) return "int";
  if constexpr (std::is_same_v<T, double>) return "float";
  return "string";
}

const char* ConfigTypeName(const ConfigValue& v) {
  switch (v.index()) {
    case 0: return "bool";
    case 1: return "int";
    case 2: return "float";
    default: return "string";
  }
}

class ModulePass : public Pass {
 public:
  ModulePass(PassInfo info, std::function<absl::StatusOr<bool>(Module&, const PassContext&)> fn)
      : info_(std::move(info)), fn_(std::move(fn)) {}
  const PassInfo& info() const override { return info_; }

 protected:
  absl::StatusOr<bool> RunOnModule(Module& module, const PassContext& ctx) const override {
    return fn_(module, ctx);
  }

 private:
  PassInfo info_;
  std::function<absl::StatusOr<bool>(Module&, const PassContext&)> fn_;
};

bool IsSkippedFunction(const FunctionNode& f) {
  if (const AttrValue* p = f.GetAttr("Primitive")) {
    if ((p->kind == AttrValue::Kind::kInt && p->i != 0) ||
        (p->kind == AttrValue::Kind::kBool && p->b))
      return true;
  }
  return f.GetAttr("Compiler") != nullptr;
}

class FunctionPass : public Pass {
 public:
  using Fn =
      std::function<absl::StatusOr<Function>(const Function&, const Module&, const PassContext&)>;
  FunctionPass(PassInfo info, Fn fn) : info_(std::move(info)), fn_(std::move(fn)) {}
  const PassInfo& info() const override { return info_; }

 protected:
  absl::StatusOr<bool> RunOnModule(Module& module, const PassContext& ctx) const override {
    bool changed = false;
    const std::vector<std::pair<GlobalVar, Function>> fns = module.functions();
    for (const auto& [gv, fn] : fns) {
      if (!fn || IsSkippedFunction(*fn)) continue;
      absl::StatusOr<Function> out = fn_(fn, module, ctx);
      if (!out.ok()) return Prefixed(out.status(), absl::StrCat("in @", gv->name));
      if (!*out) return absl::InternalError(absl::StrCat("in @", gv->name, ": null function"));
      if (out->get() == fn.get()) continue;
      changed = true;
      KILN_RETURN_IF_ERROR(module.Add(gv, *out, /*update=*/true));
    }
    return changed;
  }

 private:
  PassInfo info_;
  Fn fn_;
};

class Sequential : public Pass {
 public:
  Sequential(PassInfo info, std::vector<PassPtr> passes)
      : info_(std::move(info)), passes_(std::move(passes)) {}
  const PassInfo& info() const override { return info_; }

 protected:
  bool is_container() const override { return true; }

  absl::StatusOr<bool> RunOnModule(Module& module, const PassContext& ctx) const override {
    bool changed = false;
    // Passes that ran since the module last changed: a prerequisite among
    // them need not run again.
    absl::flat_hash_set<std::string> fresh;
    for (const PassPtr& p : passes_) {
      if (!p || !ctx.ShouldRun(p->info())) continue;
      KILN_RETURN_IF_ERROR(RunPrerequisites(*p, module, ctx, &fresh, &changed, 0));
      KILN_ASSIGN_OR_RETURN(bool c, p->Run(&module, ctx));
      Ran(p->name(), c, &fresh, &changed);
    }
    return changed;
  }

 private:
  // Runs the passes `p` requires (and theirs first), skipping one that just ran.
  static void Ran(const std::string& name, bool c, absl::flat_hash_set<std::string>* fresh,
                  bool* changed) {
    if (c) fresh->clear();
    fresh->insert(name);
    *changed |= c;
  }

  absl::Status RunPrerequisites(const Pass& p, Module& module, const PassContext& ctx,
                                absl::flat_hash_set<std::string>* fresh, bool* changed,
                                int depth) const {
    if (depth > 8)
      return absl::FailedPreconditionError(
          absl::StrCat(p.name(), ": prerequisites nest too deeply (a cycle?)"));
    for (const std::string& req : p.info().required) {
      if (fresh->contains(req)) continue;
      absl::StatusOr<PassPtr> rp = PassRegistry::Global().Create(req);
      if (!rp.ok())
        return absl::FailedPreconditionError(absl::StrCat(
            p.name(), ": requires pass '", req, "', which is not registered: ",
            rp.status().message()));
      KILN_RETURN_IF_ERROR(RunPrerequisites(**rp, module, ctx, fresh, changed, depth + 1));
      KILN_ASSIGN_OR_RETURN(bool c, (*rp)->Run(&module, ctx));
      Ran(req, c, fresh, changed);
    }
    return absl::OkStatus();
  }

  PassInfo info_;
  std::vector<PassPtr> passes_;
};

}  // namespace

// ---- PassContext -------------------------------------------------------------

template <typename T>
absl::StatusOr<T> PassContext::GetConfig(const std::string& key, T fallback) const {
  auto it = config_.find(key);
  if (it == config_.end()) return fallback;
  if (const T* v = std::get_if<T>(&it->second)) return *v;
  return absl::InvalidArgumentError(absl::StrCat("pass config '", key, "' has type ",
                                                 ConfigTypeName(it->second), ", expected ",
                                                 ConfigTypeName<T>()));
}
template absl::StatusOr<bool> PassContext::GetConfig<bool>(const std::string&, bool) const;
template absl::StatusOr<int64_t> PassContext::GetConfig<int64_t>(const std::string&,
                                                                 int64_t) const;
template absl::StatusOr<double> PassContext::GetConfig<double>(const std::string&, double) const;
template absl::StatusOr<std::string> PassContext::GetConfig<std::string>(const std::string&,
                                                                         std::string) const;

bool PassContext::ShouldRun(const PassInfo& info) const {
  if (disabled_passes.contains(info.name)) return false;
  if (required_passes.contains(info.name)) return true;
  return info.opt_level <= opt_level;
}

// ---- Pass ----------------------------------------------------------------------

absl::StatusOr<bool> Pass::Run(Module* module, const PassContext& ctx) const {
  if (module == nullptr) return absl::InvalidArgumentError(absl::StrCat(name(), ": null module"));
  Module work = *module;
  const bool instrument = !is_container();
  if (instrument)
    for (const auto& ins : ctx.instruments) ins->BeforePass(info(), work);
  const absl::Time start = absl::Now();
  absl::StatusOr<bool> changed = RunOnModule(work, ctx);
  const absl::Duration elapsed = absl::Now() - start;
  if (!changed.ok()) return instrument ? Prefixed(changed.status(), name()) : changed.status();
  if (instrument)
    for (const auto& ins : ctx.instruments) ins->AfterPass(info(), work, *changed, elapsed);
  *module = std::move(work);
  return *changed;
}

PassPtr MakeModulePass(PassInfo info,
                       std::function<absl::StatusOr<bool>(Module&, const PassContext&)> fn) {
  return std::make_shared<ModulePass>(std::move(info), std::move(fn));
}

PassPtr MakeFunctionPass(
    PassInfo info,
    std::function<absl::StatusOr<Function>(const Function&, const Module&, const PassContext&)>
        fn) {
  return std::make_shared<FunctionPass>(std::move(info), std::move(fn));
}

PassPtr MakeSequential(std::string name, std::vector<PassPtr> passes, int opt_level) {
  return std::make_shared<Sequential>(PassInfo{std::move(name), opt_level, {}}, std::move(passes));
}

// ---- Registry ------------------------------------------------------------------

PassRegistry& PassRegistry::Global() {
  static PassRegistry* r = new PassRegistry();
  return *r;
}

absl::Status PassRegistry::Register(const std::string& name, std::function<PassPtr()> factory) {
  if (name.empty()) return absl::InvalidArgumentError("a pass needs a name");
  if (!factory) return absl::InvalidArgumentError(absl::StrCat("pass ", name, ": null factory"));
  if (!factories_.emplace(name, std::move(factory)).second)
    return absl::AlreadyExistsError(absl::StrCat("pass '", name, "' is already registered"));
  return absl::OkStatus();
}

void PassRegistry::RegisterAbsent(const std::string& name) {
  if (!name.empty()) absent_.insert(name);
}

bool PassRegistry::IsAbsent(absl::string_view name) const {
  return absent_.find(name) != absent_.end() && factories_.count(std::string(name)) == 0;
}

std::vector<std::string> PassRegistry::AbsentNames() const {
  std::vector<std::string> out;
  for (const std::string& n : absent_)
    if (factories_.count(n) == 0) out.push_back(n);
  return out;
}

absl::StatusOr<PassPtr> PassRegistry::Create(absl::string_view name) const {
  auto it = factories_.find(std::string(name));
  if (it == factories_.end() && IsAbsent(name))
    return absl::UnimplementedError(absl::StrCat(
        "pass ", name, " is not in this build (a selective build without it; ",
        "docs/selective_builds.md)"));
  if (it == factories_.end())
    return absl::NotFoundError(absl::StrCat("unknown pass '", name, "'; known passes: ",
                                            factories_.empty() ? "(none registered)"
                                                               : absl::StrJoin(Names(), ", ")));
  PassPtr p = it->second();
  if (!p) return absl::InternalError(absl::StrCat("pass '", name, "': factory returned null"));
  return p;
}

std::vector<std::string> PassRegistry::Names() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : factories_) out.push_back(k);
  return out;
}

absl::StatusOr<PassPtr> ParsePassList(absl::string_view list) {
  std::vector<PassPtr> passes;
  int index = 0;
  for (absl::string_view piece : absl::StrSplit(list, ',')) {
    ++index;
    absl::string_view name = absl::StripAsciiWhitespace(piece);
    if (name.empty())
      return absl::InvalidArgumentError(
          absl::StrCat("empty pass name at position ", index, " in pass list '", list, "'"));
    KILN_ASSIGN_OR_RETURN(PassPtr p, PassRegistry::Global().Create(name));
    passes.push_back(std::move(p));
  }
  return MakeSequential("sequential", std::move(passes));
}

// ---- Instruments ---------------------------------------------------------------

void TimingInstrument::AfterPass(const PassInfo& info, const Module&, bool changed,
                                 absl::Duration elapsed) {
  entries_.push_back({info.name, elapsed, changed});
}

std::string TimingInstrument::Report() const {
  std::string out = absl::StrFormat("%-28s %12s  %s\n", "pass", "time (ms)", "changed");
  absl::Duration total;
  for (const Entry& e : entries_) {
    total += e.elapsed;
    absl::StrAppendFormat(&out, "%-28s %12.3f  %s\n", e.pass,
                          absl::ToDoubleMilliseconds(e.elapsed), e.changed ? "yes" : "no");
  }
  absl::StrAppendFormat(&out, "%-28s %12.3f\n", "total", absl::ToDoubleMilliseconds(total));
  return out;
}

void IrDumpInstrument::AfterPass(const PassInfo& info, const Module& module, bool,
                                 absl::Duration) {
  const int n = count_++;
  std::string text = PrintModule(module);
  if (dir_.empty()) {
    std::printf("// ---- after %s ----\n%s", info.name.c_str(), text.c_str());
    std::fflush(stdout);
    return;
  }
  std::string path = absl::StrFormat("%s/%02d_%s.kir", dir_, n, info.name);
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out && status_.ok())
    status_ = absl::UnavailableError(absl::StrCat("cannot write IR dump '", path, "'"));
}

}  // namespace kiln::passes
