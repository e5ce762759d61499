#include "ir/module.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"

namespace kiln {

absl::StatusOr<GlobalVar> Module::DeclareFunction(absl::string_view name) {
  auto it = function_index_.find(name);
  if (it != function_index_.end()) return functions_[it->second].first;
  KILN_ASSIGN_OR_RETURN(GlobalVar gv, MakeGlobalVar(std::string(name)));
  function_index_.emplace(std::string(name), functions_.size());
  functions_.emplace_back(gv, nullptr);
  return gv;
}

absl::StatusOr<GlobalVar> Module::AddFunction(absl::string_view name, Function fn, bool update) {
  auto it = function_index_.find(name);
  GlobalVar gv;
  if (it != function_index_.end()) {
    gv = functions_[it->second].first;
  } else {
    KILN_ASSIGN_OR_RETURN(gv, MakeGlobalVar(std::string(name)));
  }
  KILN_RETURN_IF_ERROR(Add(gv, std::move(fn), update));
  return gv;
}

absl::Status Module::Add(const GlobalVar& gv, Function fn, bool update) {
  if (!gv) return absl::InvalidArgumentError("global var is null");
  if (!fn) return absl::InvalidArgumentError(absl::StrCat("function @", gv->name, " is null"));
  auto it = function_index_.find(gv->name);
  if (it == function_index_.end()) {
    function_index_.emplace(gv->name, functions_.size());
    functions_.emplace_back(gv, std::move(fn));
    return absl::OkStatus();
  }
  auto& slot = functions_[it->second];
  if (slot.first.get() != gv.get())
    return absl::InvalidArgumentError(
        absl::StrCat("a different global var named @", gv->name, " is already in the module"));
  if (slot.second && !update)
    return absl::AlreadyExistsError(absl::StrCat("function @", gv->name, " is already defined"));
  slot.second = std::move(fn);
  return absl::OkStatus();
}

absl::Status Module::Remove(absl::string_view name) {
  auto it = function_index_.find(name);
  if (it == function_index_.end())
    return absl::NotFoundError(absl::StrCat("no function @", name, " in the module"));
  functions_.erase(functions_.begin() + static_cast<ptrdiff_t>(it->second));
  function_index_.clear();
  for (size_t i = 0; i < functions_.size(); ++i) function_index_[functions_[i].first->name] = i;
  return absl::OkStatus();
}

absl::StatusOr<GlobalVar> Module::GetGlobalVar(absl::string_view name) const {
  auto it = function_index_.find(name);
  if (it == function_index_.end())
    return absl::NotFoundError(absl::StrCat("no function @", name, " in the module"));
  return functions_[it->second].first;
}

absl::StatusOr<Function> Module::Lookup(absl::string_view name) const {
  auto it = function_index_.find(name);
  if (it == function_index_.end() || !functions_[it->second].second)
    return absl::NotFoundError(absl::StrCat("no function @", name, " in the module"));
  return functions_[it->second].second;
}

absl::StatusOr<Function> Module::Lookup(const GlobalVar& gv) const {
  if (!gv) return absl::InvalidArgumentError("global var is null");
  return Lookup(gv->name);
}

bool Module::ContainsFunction(absl::string_view name) const {
  auto it = function_index_.find(name);
  return it != function_index_.end() && functions_[it->second].second;
}

absl::Status Module::AddTypeDef(TypeData data, bool update) {
  if (!data) return absl::InvalidArgumentError("type definition is null");
  const std::string& name = data->header->name;
  auto it = type_index_.find(name);
  if (it != type_index_.end() && !update)
    return absl::AlreadyExistsError(absl::StrCat("type ", name, " is already defined"));
  for (const Constructor& c : data->constructors) {
    auto cit = constructors_.find(c->name);
    if (cit != constructors_.end() && cit->second->belong_to->name != name)
      return absl::AlreadyExistsError(absl::StrCat("constructor ", c->name, " already belongs to type ",
                                                   cit->second->belong_to->name));
  }
  for (const Constructor& c : data->constructors) constructors_[c->name] = c;
  if (it != type_index_.end()) {
    type_defs_[it->second] = std::move(data);
  } else {
    type_index_.emplace(name, type_defs_.size());
    type_defs_.push_back(std::move(data));
  }
  return absl::OkStatus();
}

absl::StatusOr<TypeData> Module::LookupTypeDef(absl::string_view name) const {
  auto it = type_index_.find(name);
  if (it == type_index_.end())
    return absl::NotFoundError(absl::StrCat("no type ", name, " in the module"));
  return type_defs_[it->second];
}

absl::StatusOr<GlobalTypeVar> Module::GetGlobalTypeVar(absl::string_view name) const {
  KILN_ASSIGN_OR_RETURN(TypeData d, LookupTypeDef(name));
  return d->header;
}

absl::StatusOr<Constructor> Module::LookupConstructor(absl::string_view name) const {
  auto it = constructors_.find(name);
  if (it == constructors_.end())
    return absl::NotFoundError(absl::StrCat("no constructor ", name, " in the module"));
  return it->second;
}

std::vector<std::string> Module::UndefinedFunctions() const {
  std::vector<std::string> out;
  for (const auto& [gv, fn] : functions_)
    if (!fn) out.push_back(gv->name);
  return out;
}

}  // namespace kiln
