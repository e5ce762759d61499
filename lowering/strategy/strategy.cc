// File: lowering/strategy/strategy.cc — the implementation registry.
#include "lowering/strategy/strategy.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "lowering/te/arith.h"

namespace kiln::lowering::strategy {
namespace {

struct Registry {
  std::mutex mu;
  std::map<std::string, std::unique_ptr<OpImplementation>> by_name;
  std::map<std::string, std::vector<const OpImplementation*>> by_op;
};

Registry& Reg() {
  static Registry* r = new Registry();
  return *r;
}

}  // namespace

bool IsUntouched(const te::Stage& s) {
  return s.relations.empty() && s.attach_type == te::AttachType::kGroupRoot;
}

bool SameShape(const te::Operation& a, const te::Operation& b) {
  if (a->output_shapes.empty() || b->output_shapes.empty()) return false;
  const auto& x = a->output_shapes[0];
  const auto& y = b->output_shapes[0];
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!te::arith::ProveEqual(x[i], y[i])) return false;
  }
  return true;
}

absl::StatusOr<AccumulatorStages> SplitAccumulator(
    te::Schedule& s, const te::Tensor& anchor,
    const std::function<bool(const te::Operation&, const te::Operation&)>& covers) {
  te::Stage* sc = s[anchor];
  if (!sc->is_output) {
    KILN_ASSIGN_OR_RETURN(std::vector<te::Stage*> readers, s.ReadersOf(sc));
    if (readers.size() == 1 && readers[0]->is_output && IsUntouched(*readers[0]) &&
        readers[0]->op->reduce_axis.empty() && covers(readers[0]->op, anchor.op())) {
      KILN_RETURN_IF_ERROR(sc->set_scope("local"));
      return AccumulatorStages{readers[0], sc};
    }
  }
  KILN_ASSIGN_OR_RETURN(te::Tensor cl, s.cache_write(anchor, "local"));
  return AccumulatorStages{s[anchor], s[cl]};
}

void RegisterImplementation(OpImplementation impl) {
  Registry& r = Reg();
  std::lock_guard<std::mutex> lock(r.mu);
  if (r.by_name.count(impl.name)) return;
  auto owned = std::make_unique<OpImplementation>(std::move(impl));
  const OpImplementation* p = owned.get();
  std::vector<const OpImplementation*>& list = r.by_op[p->op];
  list.push_back(p);
  std::stable_sort(list.begin(), list.end(), [](const OpImplementation* a,
                                                const OpImplementation* b) {
    return a->plevel > b->plevel;
  });
  r.by_name[p->name] = std::move(owned);
}

std::vector<const OpImplementation*> ImplementationsOf(const std::string& op) {
  Registry& r = Reg();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.by_op.find(op);
  return it == r.by_op.end() ? std::vector<const OpImplementation*>{} : it->second;
}

const OpImplementation* FindImplementation(const std::string& name) {
  Registry& r = Reg();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.by_name.find(name);
  return it == r.by_name.end() ? nullptr : it->second.get();
}

absl::StatusOr<std::optional<StrategyChoice>> ComputeWithStrategy(const StrategyComputeCtx& ctx) {
  for (const OpImplementation* impl : ImplementationsOf(ctx.base.op.name)) {
    if (impl->x86_only && !ctx.target.is_x86()) continue;
    KILN_ASSIGN_OR_RETURN(std::optional<std::vector<te::Tensor>> outs, impl->compute(ctx));
    if (!outs) continue;
    return std::optional<StrategyChoice>(StrategyChoice{impl, std::move(*outs)});
  }
  return std::optional<StrategyChoice>();
}

absl::StatusOr<std::vector<std::string>> ScheduleWithStrategies(
    te::Schedule& s, const std::vector<te::Tensor>& outputs, const CpuTarget& target) {
  std::vector<std::string> applied;
  for (const te::Operation& op : te::PostOrderOps(outputs)) {
    auto it = op->attrs.find(kStrategyAttr);
    if (it == op->attrs.end()) continue;
    const OpImplementation* impl = FindImplementation(it->second);
    if (impl == nullptr || !impl->schedule) continue;
    te::Stage* st = s[op];
    if (st == nullptr || !IsUntouched(*st)) continue;
    absl::Status status = impl->schedule(s, outputs, op->output(0), target);
    if (!status.ok()) {
      return absl::Status(status.code(), absl::StrCat("strategy ", impl->name, " on ", op->name,
                                                      ": ", status.message()));
    }
    applied.push_back(impl->name);
  }
  return applied;
}

absl::Status InlineInjective(te::Schedule& s, const std::vector<te::Tensor>& outputs) {
  std::vector<const te::OperationNode*> outs;
  for (const te::Tensor& t : outputs) outs.push_back(t.op().get());
  for (te::Stage* st : s.stages()) {
    if (st->is_placeholder() || st->is_output || st->is_inlined() || !IsUntouched(*st)) continue;
    if (std::find(outs.begin(), outs.end(), st->op.get()) != outs.end()) continue;
    if (!st->op->reduce_axis.empty() || st->op->attrs.count("no_inline")) continue;
    KILN_RETURN_IF_ERROR(st->compute_inline());
  }
  return absl::OkStatus();
}

int64_t IntAttr(const te::Operation& op, const std::string& key, int64_t def) {
  auto it = op->attrs.find(key);
  int64_t v = 0;
  if (it == op->attrs.end() || !absl::SimpleAtoi(it->second, &v)) return def;
  return v;
}

}  // namespace kiln::lowering::strategy
