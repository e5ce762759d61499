// File: ir/module.h
//
// Module: a program — global functions by name (`def @main(...) {...}`) and
// algebraic data types (`type List[A] { Cons(A, List[A]), Nil }`).
// A Module is a value: copying one is cheap (nodes are shared) and passes
// return a new Module rather than editing the one they were given.
//
//   Module m;
//   KILN_ASSIGN_OR_RETURN(GlobalVar main, m.AddFunction("main", fn));
//   KILN_ASSIGN_OR_RETURN(Function f, m.Lookup("main"));
#ifndef KILN_IR_MODULE_H_
#define KILN_IR_MODULE_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/expr.h"
#include "ir/type.h"

namespace kiln {

class Module {
 public:
  Module() = default;

  // Adds (or, with `update`, replaces) a global function. The name must be new
  // unless `update`.
  absl::StatusOr<GlobalVar> AddFunction(absl::string_view name, Function fn, bool update = false);
  absl::Status Add(const GlobalVar& gv, Function fn, bool update = false);
  // Declares a global name before its body exists (for mutual recursion while
  // parsing); the function must be added before the module is used.
  absl::StatusOr<GlobalVar> DeclareFunction(absl::string_view name);
  absl::Status Remove(absl::string_view name);

  absl::StatusOr<GlobalVar> GetGlobalVar(absl::string_view name) const;
  absl::StatusOr<Function> Lookup(absl::string_view name) const;
  absl::StatusOr<Function> Lookup(const GlobalVar& gv) const;
  bool ContainsFunction(absl::string_view name) const;
  // Global functions in the order they were first added.
  const std::vector<std::pair<GlobalVar, Function>>& functions() const { return functions_; }

  // ADTs.
  absl::Status AddTypeDef(TypeData data, bool update = false);
  absl::StatusOr<TypeData> LookupTypeDef(absl::string_view name) const;
  absl::StatusOr<GlobalTypeVar> GetGlobalTypeVar(absl::string_view name) const;
  absl::StatusOr<Constructor> LookupConstructor(absl::string_view name) const;
  const std::vector<TypeData>& type_defs() const { return type_defs_; }

  // Declared but never defined functions (for diagnostics).
  std::vector<std::string> UndefinedFunctions() const;

 private:
  std::vector<std::pair<GlobalVar, Function>> functions_;  // Function null while only declared
  absl::flat_hash_map<std::string, size_t> function_index_;
  std::vector<TypeData> type_defs_;
  absl::flat_hash_map<std::string, size_t> type_index_;
  absl::flat_hash_map<std::string, Constructor> constructors_;
};

}  // namespace kiln

#endif  // KILN_IR_MODULE_H_
