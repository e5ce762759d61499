// File: lowering/vm/compiler.cc — the VM compiler's program level
// (ProgramCompiler, compiler_internal.h): global functions, kernels and their
// shape functions, the signature of main (tensors, sequences, optionals), and
// the entry points of compiler.h. One function's instructions are
// function_compiler.cc.
#include "lowering/vm/compiler.h"
#include "lowering/vm/compiler_internal.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "ir/attrs.h"
#include "ir/op.h"
#include "ir/op_attrs.h"
#include "ir/printer.h"
#include "ir/status_macros.h"
#include "ir/traversal.h"
#include "ir/type.h"
#include "lowering/compute/op_compute.h"
#include "lowering/vm/batch_split.h"
#include "lowering/vm/shape_func.h"
#include "types/infer_type.h"

namespace kiln::lowering::vm {
namespace {

// The element type when `t` is a sequence ADT (an ONNX sequence:
// convert_sequence.cc): no type parameters, tag 0 (Tensor, itself) and tag 1
// () -- the list the runtime builds from, and reads into, arrays of tensors
// (KILN_VM_TYPE_SEQUENCE).
const TensorTypeNode* SequenceElement(const Module& m, const Type& t) {
  if (!t) return nullptr;
  const TypeNode* n = t.get();
  if (const auto* call = t.as<TypeCallNode>()) {
    if (!call->args.empty() || !call->func) return nullptr;
    n = call->func.get();
  }
  if (n->kind != TypeKind::kGlobalTypeVar) return nullptr;
  const std::string& name = static_cast<const GlobalTypeVarNode*>(n)->name;
  absl::StatusOr<TypeData> td = m.LookupTypeDef(name);
  if (!td.ok() || !(*td)->type_vars.empty() || (*td)->constructors.size() != 2) return nullptr;
  const Constructor& cons = (*td)->constructors[0];
  const Constructor& nil = (*td)->constructors[1];
  if (cons->tag != KILN_VM_SEQ_CONS_TAG || nil->tag != KILN_VM_SEQ_NIL_TAG || !nil->inputs.empty() ||
      cons->inputs.size() != 2) {
    return nullptr;
  }
  const auto* elem = cons->inputs[0].as<TensorTypeNode>();
  const Type& rest = cons->inputs[1];
  const TypeNode* r = rest.get();
  if (const auto* call = rest.as<TypeCallNode>()) r = call->args.empty() ? call->func.get() : nullptr;
  if (elem == nullptr || r == nullptr || r->kind != TypeKind::kGlobalTypeVar ||
      static_cast<const GlobalTypeVarNode*>(r)->name != name) {
    return nullptr;
  }
  return elem;
}

// When `t` is an optional ADT (an ONNX optional: convert_optional.cc): no
// type parameters, tag 0 (a tensor or a sequence ADT) and tag 1 () -- the
// payload's tensor type (a sequence's element type) and whether it is a
// sequence (KILN_VM_TYPE_OPTIONAL).
struct OptionalPayloadInfo {
  const TensorTypeNode* elem = nullptr;
  bool sequence = false;
};

OptionalPayloadInfo OptionalPayload(const Module& m, const Type& t) {
  if (!t) return {};
  const TypeNode* n = t.get();
  if (const auto* call = t.as<TypeCallNode>()) {
    if (!call->args.empty() || !call->func) return {};
    n = call->func.get();
  }
  if (n->kind != TypeKind::kGlobalTypeVar) return {};
  absl::StatusOr<TypeData> td = m.LookupTypeDef(static_cast<const GlobalTypeVarNode*>(n)->name);
  if (!td.ok() || !(*td)->type_vars.empty() || (*td)->constructors.size() != 2) return {};
  const Constructor& some = (*td)->constructors[0];
  const Constructor& none = (*td)->constructors[1];
  if (some->tag != KILN_VM_OPT_SOME_TAG || none->tag != KILN_VM_OPT_NONE_TAG || !none->inputs.empty() ||
      some->inputs.size() != 1) {
    return {};
  }
  if (const auto* tt = some->inputs[0].as<TensorTypeNode>()) return {tt, false};
  if (const TensorTypeNode* elem = SequenceElement(m, some->inputs[0])) return {elem, true};
  return {};
}

}  // namespace

namespace internal {

absl::StatusOr<const ProgramCompiler::Kernel*> ProgramCompiler::KernelFor(const Function& fn) {
  auto it = kernels_.find(fn.get());
  if (it != kernels_.end()) return &it->second;
  const std::string name = UniqueName(KernelName(fn));
  // A symbolic batch: the static schedules inside a loop over it, when the
  // kernel's operators allow (batch_split.h).
  KILN_ASSIGN_OR_RETURN(std::optional<LoweredFunc> split, LowerBatchSplit(fn, name, options_));
  LoweredFunc lowered;
  if (split) {
    lowered = *std::move(split);
  } else {
    KILN_ASSIGN_OR_RETURN(lowered, LowerPrimitive(fn, name, options_));
  }
  Kernel k;
  k.index = AddKernel(lowered.func, {fn, lowered.constants});
  ++out_.num_fused_kernels;
  k.constants = lowered.constants;
  std::vector<const TensorTypeNode*> outs;
  if (!FlattenTensorTypes(fn->body->checked_type(), &outs)) {
    return absl::UnimplementedError(absl::StrCat("VM compiler: kernel ", name,
                                                 " returns something other than tensors"));
  }
  bool symbolic = false;
  for (const TensorTypeNode* t : outs) symbolic |= !ShapeIsStatic(t->shape);
  if (symbolic) {
    KILN_ASSIGN_OR_RETURN(tir::PrimFunc sf, ShapeFunctionFor(fn, UniqueName(name + "_shape")));
    k.shape_index = AddKernel(std::move(sf));
  }
  return &(kernels_[fn.get()] = std::move(k));
}

absl::StatusOr<Function> ProgramCompiler::WithNamedAnyDims(const Function& fn) {
  auto it = named_any_.find(fn.get());
  if (it != named_any_.end()) return it->second;
  std::set<std::string> taken;
  bool any = false;
  for (const Var& p : fn->params) {
    std::vector<const TensorTypeNode*> ts;
    const Type t = p->checked_type() ? p->checked_type() : p->type_annotation;
    if (!FlattenTensorTypes(t, &ts)) continue;
    for (const TensorTypeNode* tt : ts) {
      for (const Dim& d : tt->shape) {
        DimVars(d, &taken);
        any |= d.is_any();
      }
    }
  }
  Function out = fn;
  if (any) {
    int next = 0;
    auto fresh = [&]() {
      std::string name;
      do {
        name = absl::StrCat("any", next++);
      } while (taken.count(name));
      taken.insert(name);
      return Dim::Var(name);
    };
    std::vector<Var> params;
    absl::flat_hash_map<const VarNode*, Expr> subst;
    for (const Var& p : fn->params) {
      const Type t = p->checked_type() ? p->checked_type() : p->type_annotation;
      const auto* tt = t ? t.as<TensorTypeNode>() : nullptr;
      bool has_any = false;
      if (tt != nullptr) {
        for (const Dim& d : tt->shape) has_any |= d.is_any();
      }
      if (!has_any) {  // (a `?` inside a tuple parameter stays: its shape function refuses it)
        params.push_back(p);
        continue;
      }
      Shape shape;
      for (const Dim& d : tt->shape) shape.push_back(d.is_any() ? fresh() : d);
      Var v = MakeVar(p->name_hint, MakeTensorType(std::move(shape), tt->dtype));
      subst[p.get()] = v;
      params.push_back(v);
    }
    KILN_ASSIGN_OR_RETURN(Expr body, Substitute(fn->body, subst));
    KILN_ASSIGN_OR_RETURN(out, MakeFunction(std::move(params), std::move(body), nullptr,
                                            fn->type_params, fn->attrs));
    absl::StatusOr<Type> typed = types::InferExprType(out, &module_);
    if (!typed.ok()) {
      return absl::InternalError(absl::StrCat("VM compiler: kernel ", KernelName(fn),
                                              " with its ? dims named does not type-check: ",
                                              typed.status().message()));
    }
    // Only when every output extent is then known from the input shapes; an
    // output that still depends on values keeps the function as it was (the
    // operator's own data-dependent shape function handles it).
    std::vector<const TensorTypeNode*> outs;
    bool known = FlattenTensorTypes(out->body->checked_type(), &outs);
    for (const TensorTypeNode* t : outs) {
      for (const Dim& d : t->shape) known &= !d.is_any();
    }
    if (!known) out = fn;
  }
  named_any_.emplace(fn.get(), out);
  return out;
}

absl::Status ProgramCompiler::Signature(const Function& main) {
  std::map<std::string, int64_t> var_index;
  auto encode = [&](const TensorTypeNode& t, bool add_vars) {
    VmTensorType out;
    out.dtype = t.dtype;
    for (const Dim& d : t.shape) {
      if (d.is_static()) {
        out.dims.push_back(d.value());
      } else if (auto v = d.var_name()) {
        auto it = var_index.find(*v);
        if (it == var_index.end() && add_vars) {
          it = var_index.emplace(*v, static_cast<int64_t>(out_.program.dim_vars.size())).first;
          out_.program.dim_vars.push_back(*v);
        }
        out.dims.push_back(it == var_index.end() ? KILN_VM_DIM_ANY : -1 - it->second);
      } else {
        out.dims.push_back(KILN_VM_DIM_ANY);
      }
    }
    return out;
  };
  for (const Var& p : main->params) {
    const Type t = p->checked_type() ? p->checked_type() : p->type_annotation;
    const auto* tt = t ? t.as<TensorTypeNode>() : nullptr;
    const TensorTypeNode* elem = tt == nullptr ? SequenceElement(module_, t) : nullptr;
    const OptionalPayloadInfo opt = tt == nullptr && elem == nullptr ? OptionalPayload(module_, t)
                                                                     : OptionalPayloadInfo{};
    if (opt.elem != nullptr) {
      if (opt.elem->shape.size() > 32) {
        return absl::InvalidArgumentError(absl::StrCat("VM compiler: main's parameter %", p->name_hint,
                                                       " holds tensors of rank ", opt.elem->shape.size(),
                                                       " (at most 32)"));
      }
      VmTensorType v = encode(*opt.elem, false);
      v.sequence = opt.sequence;
      v.optional = true;
      out_.program.inputs.push_back(std::move(v));
      out_.input_names.push_back(p->name_hint);
      continue;
    }
    if (tt == nullptr && elem == nullptr) {
      return absl::UnimplementedError(absl::StrCat(
          "VM compiler: main's parameter %", p->name_hint,
          " is not a tensor, a sequence of tensors or an optional of those; the VM takes those as "
          "inputs (pass tuples as separate tensors)"));
    }
    if (elem != nullptr) {
      if (elem->shape.size() > 32) {
        return absl::InvalidArgumentError(absl::StrCat("VM compiler: main's parameter %", p->name_hint,
                                                       " holds tensors of rank ", elem->shape.size(),
                                                       " (at most 32)"));
      }
      VmTensorType v = encode(*elem, true);
      v.sequence = true;
      out_.program.inputs.push_back(std::move(v));
      out_.input_names.push_back(p->name_hint);
      continue;
    }
    if (tt->shape.size() > 32) {
      return absl::InvalidArgumentError(absl::StrCat("VM compiler: main's parameter %", p->name_hint,
                                                     " has rank ", tt->shape.size(), " (at most 32)"));
    }
    out_.program.inputs.push_back(encode(*tt, true));
    out_.input_names.push_back(p->name_hint);
  }
  // A tensor, a sequence, or a tuple of those.
  std::vector<Type> fields;
  const Type& body_t = main->body->checked_type();
  if (const auto* tup = body_t.as<TupleTypeNode>()) {
    fields = tup->fields;
  } else {
    fields = {body_t};
  }
  std::vector<const TensorTypeNode*> outs;
  for (const Type& f : fields) {
    const TensorTypeNode* t = f.as<TensorTypeNode>();
    const TensorTypeNode* elem = t == nullptr ? SequenceElement(module_, f) : nullptr;
    const OptionalPayloadInfo opt = t == nullptr && elem == nullptr ? OptionalPayload(module_, f)
                                                                    : OptionalPayloadInfo{};
    if (t == nullptr && elem == nullptr && opt.elem == nullptr) {
      return absl::UnimplementedError(
          "VM compiler: main must return a tensor, a sequence of tensors, an optional of those, or a "
          "tuple of those");
    }
    const TensorTypeNode* shape = t != nullptr ? t : elem != nullptr ? elem : opt.elem;
    if (shape->shape.size() > 32) {
      return absl::InvalidArgumentError("VM compiler: an output of main has rank above 32");
    }
    VmTensorType v = encode(*shape, false);
    v.sequence = elem != nullptr || opt.sequence;
    v.optional = opt.elem != nullptr;
    out_.program.outputs.push_back(std::move(v));
    outs.push_back(shape);
  }
  if (outs.empty()) return absl::UnimplementedError("VM compiler: main returns an empty tuple");
  // Names: main's "output_names" when it names each output once, else output<i>.
  std::vector<std::string> names;
  if (const AttrValue* a = main->GetAttr("output_names");
      a != nullptr && a->kind == AttrValue::Kind::kList && a->list.size() == outs.size()) {
    for (const AttrValue& v : a->list) {
      if (v.kind != AttrValue::Kind::kString || v.s.empty() ||
          std::find(names.begin(), names.end(), v.s) != names.end()) {
        names.clear();
        break;
      }
      names.push_back(v.s);
    }
  }
  if (names.size() != outs.size()) {
    names.clear();
    for (size_t i = 0; i < outs.size(); ++i) names.push_back(absl::StrCat("output", i));
  }
  out_.output_names = std::move(names);
  return absl::OkStatus();
}

absl::StatusOr<VmCompiled> ProgramCompiler::Run() {
  KILN_ASSIGN_OR_RETURN(Function main, module_.Lookup("main"));
  // Globals first (so calls know their indices), main among them.
  for (const auto& [gv, f] : module_.functions()) {
    if (!f) continue;
    if (IsPrimitive(f.get())) continue;
    global_index_[gv->name] = NewFunction(gv->name, static_cast<uint32_t>(f->params.size()));
  }
  out_.program.main = global_index_.at("main");
  KILN_RETURN_IF_ERROR(Signature(main));
  for (const auto& [gv, f] : module_.functions()) {
    if (!f || IsPrimitive(f.get())) continue;
    FunctionCompiler fc(this, global_index_.at(gv->name));
    KILN_RETURN_IF_ERROR(fc.CompileBody({}, f->params, f->body, Var()));
  }
  return std::move(out_);
}

}  // namespace internal

namespace {

using internal::IsPrimitive;
using internal::ProgramCompiler;

// main returning one optional returns a 1-tuple of it instead: the runtime
// could not tell a lone Some(x) (one field) from a tuple of one value.
absl::StatusOr<Module> TupleALoneOptionalOutput(const Module& module) {
  absl::StatusOr<Function> main = module.Lookup("main");
  if (!main.ok() || !(*main)->body->checked_type()) return module;
  const Type body_t = (*main)->body->checked_type();
  if (OptionalPayload(module, body_t).elem == nullptr) return module;
  KILN_ASSIGN_OR_RETURN(Tuple tup, MakeTuple({(*main)->body}));
  const Type tup_t = MakeTupleType({body_t});
  tup->set_checked_type(tup_t);
  KILN_ASSIGN_OR_RETURN(Function f, MakeFunction((*main)->params, tup, tup_t, (*main)->type_params,
                                                 (*main)->attrs));
  if ((*main)->checked_type()) {
    std::vector<Type> params;
    for (const Var& p : (*main)->params) params.push_back(p->checked_type() ? p->checked_type() : p->type_annotation);
    KILN_ASSIGN_OR_RETURN(FuncType ft, MakeFuncType(params, tup_t));
    f->set_checked_type(ft);
  }
  Module out = module;
  for (const auto& [gv, fn] : module.functions()) {
    if (gv->name == "main") KILN_RETURN_IF_ERROR(out.Add(gv, f, /*update=*/true));
  }
  return out;
}

}  // namespace

absl::StatusOr<VmCompiled> CompileForVm(const Module& fused, const LowerOptions& options) {
  RegisterCoreComputes();
  KILN_ASSIGN_OR_RETURN(Module module, TupleALoneOptionalOutput(fused));
  ProgramCompiler pc(module, options);
  return pc.Run();
}

absl::StatusOr<Module> NameAnyInputDims(const Module& module) {
  absl::StatusOr<Function> main = module.Lookup("main");
  if (!main.ok()) return module;
  std::set<std::string> taken;
  for (const Var& p : (*main)->params) {
    std::vector<const TensorTypeNode*> ts;
    if (p->type_annotation && FlattenTensorTypes(p->type_annotation, &ts)) {
      for (const TensorTypeNode* t : ts) {
        for (const Dim& d : t->shape) DimVars(d, &taken);
      }
    }
  }
  bool changed = false;
  std::vector<Var> params;
  absl::flat_hash_map<const VarNode*, Expr> subst;
  for (const Var& p : (*main)->params) {
    const auto* tt = p->type_annotation ? p->type_annotation.as<TensorTypeNode>() : nullptr;
    bool any = false;
    if (tt != nullptr) {
      for (const Dim& d : tt->shape) any |= d.is_any();
    }
    if (!any) {
      params.push_back(p);
      continue;
    }
    Shape shape;
    for (size_t i = 0; i < tt->shape.size(); ++i) {
      if (!tt->shape[i].is_any()) {
        shape.push_back(tt->shape[i]);
        continue;
      }
      std::string name = absl::StrCat(p->name_hint, "_", i);
      for (int k = 2; taken.count(name); ++k) name = absl::StrCat(p->name_hint, "_", i, "_", k);
      taken.insert(name);
      shape.push_back(Dim::Var(name));
    }
    Var fresh = MakeVar(p->name_hint, MakeTensorType(std::move(shape), tt->dtype));
    subst[p.get()] = fresh;
    params.push_back(fresh);
    changed = true;
  }
  if (!changed) return module;
  KILN_ASSIGN_OR_RETURN(Expr body, Substitute((*main)->body, subst));
  KILN_ASSIGN_OR_RETURN(Function f, MakeFunction(std::move(params), std::move(body), (*main)->ret_type,
                                                 (*main)->type_params, (*main)->attrs));
  Module out = module;
  for (const auto& [gv, fn] : module.functions()) {
    if (gv->name == "main") {
      KILN_RETURN_IF_ERROR(out.Add(gv, f, /*update=*/true));
    }
  }
  return out;
}

const TensorTypeNode* SequenceElementType(const Module& m, const Type& t) { return SequenceElement(m, t); }

bool IsOptionalType(const Module& m, const Type& t) { return OptionalPayload(m, t).elem != nullptr; }

bool NeedsVm(const Module& fused) {
  int globals = 0;
  for (const auto& [gv, f] : fused.functions()) {
    if (f && !IsPrimitive(f.get())) ++globals;
  }
  if (globals != 1) return true;
  absl::StatusOr<Function> main = fused.Lookup("main");
  if (!main.ok()) return false;
  for (const Var& p : (*main)->params) {
    const Type t = p->checked_type() ? p->checked_type() : p->type_annotation;
    const auto* tt = t ? t.as<TensorTypeNode>() : nullptr;
    if (tt != nullptr && !ShapeIsStatic(tt->shape)) return true;
    if (tt == nullptr && SequenceElement(fused, t) != nullptr) return true;  // an ONNX sequence
    if (tt == nullptr && OptionalPayload(fused, t).elem != nullptr) return true;  // an ONNX optional
  }
  {
    const Type& r = (*main)->body->checked_type();
    const auto* tup = r.as<TupleTypeNode>();
    for (const Type& f : tup != nullptr ? tup->fields : std::vector<Type>{r}) {
      if (SequenceElement(fused, f) != nullptr || OptionalPayload(fused, f).elem != nullptr) return true;
    }
  }
  bool vm = false;
  PostOrderVisit((*main)->body, [&](const Expr& e) {
    switch (e->kind) {
      case ExprKind::kIf:
      case ExprKind::kLet:
      case ExprKind::kMatch:
      case ExprKind::kConstructor:
      case ExprKind::kGlobalVar:
      case ExprKind::kRefCreate:
      case ExprKind::kRefRead:
      case ExprKind::kRefWrite:
        vm = true;
        break;
      case ExprKind::kFunction:
        if (!IsPrimitive(e.as<FunctionNode>())) vm = true;
        break;
      case ExprKind::kCall: {
        const auto* c = e.as<CallNode>();
        if (c->op.as<OpNode>() != nullptr) break;  // inside a primitive function
        std::vector<const TensorTypeNode*> ts;
        if (FlattenTensorTypes(e->checked_type(), &ts)) {
          for (const TensorTypeNode* t : ts) vm |= !ShapeIsStatic(t->shape);
        }
        const auto* fn = c->op.as<FunctionNode>();
        if (fn == nullptr || !IsPrimitive(fn)) vm = true;
        break;
      }
      default:
        break;
    }
  });
  return vm;
}

}  // namespace kiln::lowering::vm
