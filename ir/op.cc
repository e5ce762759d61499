#include "ir/op.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace kiln {

const char* OpPatternName(OpPattern p) {
  switch (p) {
    case OpPattern::kElemWise: return "elemwise";
    case OpPattern::kBroadcast: return "broadcast";
    case OpPattern::kInjective: return "injective";
    case OpPattern::kCommReduce: return "reduction";
    case OpPattern::kOutEWiseFusable: return "out_elemwise_fusable";
    case OpPattern::kTuple: return "tuple";
    case OpPattern::kOpaque: return "opaque";
  }
  return "?";
}

const std::string& OpNode::name() const { return def->name; }

OpRegistry& OpRegistry::Global() {
  static OpRegistry* registry = [] {
    auto* r = new OpRegistry();
    RegisterCoreOps(*r);
    return r;
  }();
  return *registry;
}

absl::StatusOr<Op> OpRegistry::Register(OpDef def) {
  if (def.name.empty()) return absl::InvalidArgumentError("operator name is empty");
  absl::MutexLock lock(&mu_);
  if (ops_.contains(def.name))
    return absl::AlreadyExistsError(absl::StrCat("operator '", def.name, "' is already registered"));
  auto owned = std::make_unique<OpDef>(std::move(def));
  if (owned->make_attrs) owned->default_attrs = owned->make_attrs();
  owned->op = Op(new OpNode(owned.get()));
  Op op = owned->op;
  ops_.emplace(owned->name, std::move(owned));
  return op;
}

absl::StatusOr<Op> OpRegistry::Get(absl::string_view name) const {
  const OpDef* def = Find(name);
  if (def == nullptr) return absl::NotFoundError(absl::StrCat("unknown operator '", name, "'"));
  return def->op;
}

const OpDef* OpRegistry::Find(absl::string_view name) const {
  absl::MutexLock lock(&mu_);
  auto it = ops_.find(name);
  return it == ops_.end() ? nullptr : it->second.get();
}

std::vector<std::string> OpRegistry::ListNames() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> names;
  for (const auto& [name, def] : ops_) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

absl::Status OpRegistry::SetFacetAny(absl::string_view op_name, absl::string_view key,
                                     std::shared_ptr<std::any> value) {
  const OpDef* def = Find(op_name);
  if (def == nullptr)
    return absl::NotFoundError(
        absl::StrCat("cannot attach facet '", key, "': unknown operator '", op_name, "'"));
  absl::MutexLock lock(&mu_);
  facets_[{def, std::string(key)}] = std::move(value);
  return absl::OkStatus();
}

std::shared_ptr<const std::any> OpRegistry::GetFacetAny(const OpDef* op,
                                                        absl::string_view key) const {
  absl::MutexLock lock(&mu_);
  auto it = facets_.find(std::make_pair(op, std::string(key)));
  return it == facets_.end() ? nullptr : it->second;
}

absl::StatusOr<Op> GetOp(absl::string_view name) { return OpRegistry::Global().Get(name); }

}  // namespace kiln
