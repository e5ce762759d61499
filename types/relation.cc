#include "types/relation.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace kiln::types {
namespace {

// "argument 1 (weight)" when the operator is registered and names its inputs,
// else "argument 1".
std::string ArgLabel(absl::string_view op_name, int i) {
  std::string label = absl::StrCat("argument ", i);
  const OpDef* def = OpRegistry::Global().Find(op_name);
  if (def != nullptr && i >= 0 && static_cast<size_t>(i) < def->arguments.size())
    absl::StrAppend(&label, " (", def->arguments[static_cast<size_t>(i)].name, ")");
  return label;
}

}  // namespace

absl::Status RelationCall::ArgError(int i, absl::string_view expected) const {
  std::string got = (i >= 0 && static_cast<size_t>(i) < args.size())
                        ? TypeToString(args[static_cast<size_t>(i)])
                        : std::string("<missing>");
  return absl::InvalidArgumentError(absl::StrCat(op_name, ": ", ArgLabel(op_name, i),
                                                 " has type ", got, "; expected ", expected));
}

absl::Status RelationCall::Error(absl::string_view message) const {
  return absl::InvalidArgumentError(absl::StrCat(op_name, ": ", message));
}

absl::Status RegisterTypeRelation(absl::string_view op_name, TypeRelationFn fn) {
  if (!fn)
    return absl::InvalidArgumentError(
        absl::StrCat("cannot register an empty type relation for '", op_name, "'"));
  return OpRegistry::Global().SetFacet<TypeRelationFn>(op_name, kTypeRelationFacet,
                                                       std::move(fn));
}

const TypeRelationFn* FindTypeRelation(const OpDef* op) {
  if (op == nullptr) return nullptr;
  return OpRegistry::Global().GetFacet<TypeRelationFn>(op, kTypeRelationFacet);
}

}  // namespace kiln::types
