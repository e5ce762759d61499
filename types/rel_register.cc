// RegisterCoreTypeRelations: attaches the relation of every core operator
// (one family per rel_*.cc file) to the operator registry, each wrapped with
// the checks all relations share (arity, null arguments, attribute kind).
#include <string>

#include "absl/base/call_once.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/op.h"
#include "types/core_relations.h"
#include "types/rel_common.h"
#include "types/relation.h"

namespace kiln::types {
namespace rel {

absl::Status AddRelation(absl::string_view op_name, TypeRelationFn fn) {
  const OpDef* def = OpRegistry::Global().Find(op_name);
  if (def == nullptr)
    return absl::InternalError(
        absl::StrCat("type relation for unknown operator '", op_name, "'"));
  TypeRelationFn checked = [def, fn = std::move(fn)](const RelationCall& call,
                                                     TypeReporter& r) -> absl::StatusOr<bool> {
    if (call.num_inputs < 0 || call.args.size() != static_cast<size_t>(call.num_inputs) + 1)
      return call.Error(absl::StrCat("relation called with ", call.args.size(),
                                     " types for ", call.num_inputs,
                                     " inputs (expected inputs followed by one output)"));
    if (def->num_inputs >= 0 && call.num_inputs != def->num_inputs)
      return call.Error(absl::StrCat("expected ", def->num_inputs, " input",
                                     def->num_inputs == 1 ? "" : "s", ", got ", call.num_inputs));
    for (size_t i = 0; i < call.args.size(); ++i)
      if (!call.args[i]) return call.Error(absl::StrCat("type of argument ", i, " is null"));
    if (call.attrs && def->default_attrs &&
        call.attrs->type_id() != def->default_attrs->type_id())
      return call.Error(absl::StrCat("expected attributes ", def->default_attrs->type_key(),
                                     ", got ", call.attrs->type_key()));
    return fn(call, r);
  };
  return RegisterTypeRelation(op_name, std::move(checked));
}

}  // namespace rel

void RegisterCoreTypeRelations() {
  static absl::once_flag once;
  absl::call_once(once, [] {
    // Failures here are internal (an op name missing from ir/core_ops.cc); the
    // all-ops test catches them, and a missing relation is reported by the
    // solver as "no type relation for <op>".
    (void)rel::RegisterElemwiseRelations();
    (void)rel::RegisterReduceRelations();
    (void)rel::RegisterConvRelations();
    (void)rel::RegisterDenseRelations();
    (void)rel::RegisterPoolRelations();
    (void)rel::RegisterNormRelations();
    (void)rel::RegisterTransformRelations();
    (void)rel::RegisterDynRelations();
  });
}

}  // namespace kiln::types
