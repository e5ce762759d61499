// File: lowering/vm/function_compiler.cc — one VM function's instructions
// (FunctionCompiler, compiler_internal.h): expressions in post order, calls
// (kernels with their allocations, globals, constructors), closures, `if`,
// `match` patterns, and the KillRegister of each value after its last use.
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

namespace kiln::lowering::vm::internal {
namespace {

// The register operands an instruction reads or writes (vm_format.h).
std::vector<int32_t> RegistersOf(const VmInstr& in) {
  const std::vector<int32_t>& o = in.operands;
  auto list = [&](size_t count_at) {
    std::vector<int32_t> r;
    for (int32_t i = 0; i < o[count_at]; ++i) r.push_back(o[count_at + 1 + static_cast<size_t>(i)]);
    return r;
  };
  switch (in.op) {
    case KILN_VM_MOVE: return {o[0], o[1]};
    case KILN_VM_RET: return {o[0]};
    case KILN_VM_INVOKE: {
      std::vector<int32_t> r = list(2);
      r.push_back(o[0]);
      return r;
    }
    case KILN_VM_INVOKE_CLOSURE: {
      std::vector<int32_t> r = list(2);
      r.push_back(o[0]);
      r.push_back(o[1]);
      return r;
    }
    case KILN_VM_INVOKE_PACKED: return list(2);
    case KILN_VM_ALLOC_TENSOR: return {o[0], o[1]};
    case KILN_VM_ALLOC_TENSOR_REG: return {o[0], o[1], o[4]};
    case KILN_VM_ALLOC_ADT:
    case KILN_VM_ALLOC_CLOSURE: {
      std::vector<int32_t> r = list(2);
      r.push_back(o[0]);
      return r;
    }
    case KILN_VM_GET_FIELD: return {o[0], o[1]};
    case KILN_VM_SET_FIELD: return {o[0], o[2]};
    case KILN_VM_IF: return {o[0], o[1]};
    case KILN_VM_LOAD_CONST:
    case KILN_VM_LOAD_CONSTI: return {o[0]};
    case KILN_VM_GET_TAG:
    case KILN_VM_SHAPE_OF: return {o[0], o[1]};
    case KILN_VM_ALLOC_STORAGE: return {o[0], o[1]};
    case KILN_VM_RESHAPE_TENSOR: return {o[0], o[1], o[2]};
    case KILN_VM_DEVICE_COPY: return {o[0], o[1]};
    case KILN_VM_KILL_REGISTER: return {o[0]};
    default: return {};
  }
}

// Frees each value as soon as nothing needs it: a KillRegister after the
// last instruction that names its register. Every jump goes forward (the
// compiler emits no loops; recursion is a call), so once execution passes a
// register's last mention in instruction order, no path reaches another.
// Jump offsets are rewritten for the inserted instructions.
void InsertKills(VmFunction* fn) {
  const size_t n = fn->instrs.size();
  std::vector<int64_t> last(fn->num_registers, -1);
  for (size_t i = 0; i < n; ++i) {
    for (int32_t r : RegistersOf(fn->instrs[i])) last[static_cast<size_t>(r)] = static_cast<int64_t>(i);
  }
  std::vector<std::vector<int32_t>> kills_after(n);
  for (size_t r = 0; r < last.size(); ++r) {
    if (last[r] < 0) continue;
    const VmInstr& in = fn->instrs[static_cast<size_t>(last[r])];
    // Nothing runs after these in their path, or the value moves on.
    if (in.op == KILN_VM_RET || in.op == KILN_VM_GOTO || in.op == KILN_VM_FATAL ||
        in.op == KILN_VM_IF) {
      continue;
    }
    kills_after[static_cast<size_t>(last[r])].push_back(static_cast<int32_t>(r));
  }
  std::vector<size_t> new_index(n + 1);
  std::vector<VmInstr> out;
  for (size_t i = 0; i < n; ++i) {
    new_index[i] = out.size();
    out.push_back(fn->instrs[i]);
    for (int32_t r : kills_after[i]) out.push_back(VmInstr{KILN_VM_KILL_REGISTER, {r}});
  }
  new_index[n] = out.size();
  for (size_t i = 0; i < n; ++i) {
    VmInstr& in = out[new_index[i]];
    auto fix = [&](size_t operand) {
      const int64_t target = static_cast<int64_t>(i) + in.operands[operand];
      in.operands[operand] = static_cast<int32_t>(static_cast<int64_t>(new_index[static_cast<size_t>(target)]) -
                                                  static_cast<int64_t>(new_index[i]));
    };
    if (in.op == KILN_VM_IF) {
      fix(2);
      fix(3);
    } else if (in.op == KILN_VM_GOTO) {
      fix(0);
    }
  }
  fn->instrs = std::move(out);
}

}  // namespace

VmFunction& FunctionCompiler::fn() { return top_->program().functions[index_]; }

int32_t FunctionCompiler::NewReg() { return static_cast<int32_t>(fn().num_registers++); }

absl::Status FunctionCompiler::CompileBody(const std::vector<Var>& captured,
                                           const std::vector<Var>& params, const Expr& body,
                                           const Var& self) {
  scopes_.emplace_back();
  int32_t r = 0;
  for (const Var& v : captured) {
    captured_regs_.push_back(r);
    Bind(v.get(), r++);
  }
  for (const Var& v : params) Bind(v.get(), r++);
  self_ = self ? self.get() : nullptr;
  KILN_ASSIGN_OR_RETURN(int32_t result, Compile(body));
  Emit(KILN_VM_RET, {result});
  InsertKills(&fn());
  return absl::OkStatus();
}

// Dataflow nodes (calls, tuples, projections) are compiled in post order
// with an explicit stack, so a chain of thousands of operators needs no
// deep C++ recursion; control flow recurses on its own nesting only.
absl::StatusOr<int32_t> FunctionCompiler::Compile(const Expr& root) {
  if (auto r = Lookup(root.get())) return *r;
  auto children = [](const Expr& e, std::vector<Expr>* out) {
    if (const auto* c = e.as<CallNode>()) {
      for (const Expr& a : c->args) out->push_back(a);
    } else if (const auto* t = e.as<TupleNode>()) {
      for (const Expr& f : t->fields) out->push_back(f);
    } else if (const auto* g = e.as<TupleGetItemNode>()) {
      out->push_back(g->tuple);
    }
  };
  std::vector<std::pair<Expr, bool>> stack = {{root, false}};
  while (!stack.empty()) {
    auto [e, expanded] = stack.back();
    stack.pop_back();
    if (Lookup(e.get())) continue;
    const bool dataflow = e->kind == ExprKind::kCall || e->kind == ExprKind::kTuple ||
                          e->kind == ExprKind::kTupleGetItem;
    if (dataflow && !expanded) {
      stack.push_back({e, true});
      std::vector<Expr> kids;
      children(e, &kids);
      for (auto it = kids.rbegin(); it != kids.rend(); ++it) {
        if (!Lookup(it->get())) stack.push_back({*it, false});
      }
      continue;
    }
    KILN_ASSIGN_OR_RETURN(int32_t r, CompileOne(e));
    Bind(e.get(), r);
  }
  return *Lookup(root.get());
}

absl::StatusOr<int32_t> FunctionCompiler::CompileOne(const Expr& e) {
  switch (e->kind) {
    case ExprKind::kVar: {
      if (e.get() == self_) {
        int32_t r = NewReg();
        std::vector<int32_t> ops = {r, static_cast<int32_t>(index_),
                                    static_cast<int32_t>(captured_regs_.size())};
        ops.insert(ops.end(), captured_regs_.begin(), captured_regs_.end());
        Emit(KILN_VM_ALLOC_CLOSURE, std::move(ops));
        return r;
      }
      return absl::InvalidArgumentError(absl::StrCat("VM compiler: free variable %",
                                                     e.as<VarNode>()->name_hint, Where(e)));
    }
    case ExprKind::kGlobalVar: {
      KILN_ASSIGN_OR_RETURN(uint32_t g, top_->GlobalIndex(e.as<GlobalVarNode>()->name));
      int32_t r = NewReg();
      Emit(KILN_VM_ALLOC_CLOSURE, {r, static_cast<int32_t>(g), 0});
      return r;
    }
    case ExprKind::kConstant: {
      int32_t r = NewReg();
      Emit(KILN_VM_LOAD_CONST, {r, top_->ConstantIndex(e.as<ConstantNode>()->data)});
      return r;
    }
    case ExprKind::kTuple: {
      const auto* t = e.as<TupleNode>();
      int32_t r = NewReg();
      std::vector<int32_t> ops = {r, KILN_VM_TUPLE_TAG, static_cast<int32_t>(t->fields.size())};
      for (const Expr& f : t->fields) ops.push_back(*Lookup(f.get()));
      Emit(KILN_VM_ALLOC_ADT, std::move(ops));
      return r;
    }
    case ExprKind::kTupleGetItem: {
      const auto* g = e.as<TupleGetItemNode>();
      int32_t r = NewReg();
      Emit(KILN_VM_GET_FIELD, {r, *Lookup(g->tuple.get()), g->index});
      return r;
    }
    case ExprKind::kCall:
      return CompileCall(e, *e.as<CallNode>());
    case ExprKind::kFunction: {
      Function f = e.cast<FunctionNode>();
      if (IsPrimitive(f.get())) {
        return absl::UnimplementedError(
            absl::StrCat("VM compiler: a primitive function used as a value", Where(e)));
      }
      return CompileClosure(f, Var());
    }
    case ExprKind::kLet: {
      Expr cur = e;
      std::vector<const ExprNode*> bound;
      while (const auto* let = cur.as<LetNode>()) {
        int32_t r;
        if (const auto* fv = let->value.as<FunctionNode>(); fv != nullptr && !IsPrimitive(fv)) {
          KILN_ASSIGN_OR_RETURN(r, CompileClosure(let->value.cast<FunctionNode>(), let->var));
        } else {
          KILN_ASSIGN_OR_RETURN(r, Compile(let->value));
        }
        Bind(let->var.get(), r);
        cur = let->body;
      }
      return Compile(cur);
    }
    case ExprKind::kIf:
      return CompileIf(*e.as<IfNode>());
    case ExprKind::kConstructor: {
      const auto* c = e.as<ConstructorNode>();
      int32_t r = NewReg();
      Emit(KILN_VM_ALLOC_ADT, {r, c->tag, 0});
      return r;
    }
    case ExprKind::kMatch:
      return CompileMatch(e, *e.as<MatchNode>());
    case ExprKind::kOp:
      return absl::UnimplementedError(absl::StrCat("VM compiler: the operator ",
                                                   e.as<OpNode>()->name(),
                                                   " used as a value", Where(e)));
    // A reference is a cell: an ADT of one field (kiln's SetField writes it).
    case ExprKind::kRefCreate: {
      KILN_ASSIGN_OR_RETURN(int32_t v, Compile(static_cast<const RefCreateNode*>(e.get())->value));
      int32_t r = NewReg();
      Emit(KILN_VM_ALLOC_ADT, {r, 0, 1, v});
      return r;
    }
    case ExprKind::kRefRead: {
      KILN_ASSIGN_OR_RETURN(int32_t ref, Compile(static_cast<const RefReadNode*>(e.get())->ref));
      int32_t r = NewReg();
      Emit(KILN_VM_GET_FIELD, {r, ref, 0});
      return r;
    }
    case ExprKind::kRefWrite: {
      const auto* w = static_cast<const RefWriteNode*>(e.get());
      KILN_ASSIGN_OR_RETURN(int32_t ref, Compile(w->ref));
      KILN_ASSIGN_OR_RETURN(int32_t v, Compile(w->value));
      Emit(KILN_VM_SET_FIELD, {ref, 0, v});
      int32_t r = NewReg();  // the value of ref_write: the empty tuple
      Emit(KILN_VM_ALLOC_ADT, {r, KILN_VM_TUPLE_TAG, 0});
      return r;
    }
  }
  return absl::InternalError("VM compiler: unknown expression kind");
}

absl::StatusOr<int32_t> FunctionCompiler::CompileCall(const Expr& e, const CallNode& call) {
  std::vector<int32_t> args;
  for (const Expr& a : call.args) {
    KILN_ASSIGN_OR_RETURN(int32_t r, Compile(a));
    args.push_back(r);
  }
  if (const auto* fn = call.op.as<FunctionNode>(); fn != nullptr && IsPrimitive(fn)) {
    return CompilePrimitiveCall(e, call, call.op.cast<FunctionNode>());
  }
  if (const auto* gv = call.op.as<GlobalVarNode>()) {
    KILN_ASSIGN_OR_RETURN(uint32_t g, top_->GlobalIndex(gv->name));
    const VmFunction& callee = top_->program().functions[g];
    if (callee.num_params != args.size()) {
      return absl::InvalidArgumentError(absl::StrCat("VM compiler: @", gv->name, " takes ",
                                                     callee.num_params, " arguments, called with ",
                                                     args.size(), Where(e)));
    }
    int32_t r = NewReg();
    std::vector<int32_t> ops = {r, static_cast<int32_t>(g), static_cast<int32_t>(args.size())};
    ops.insert(ops.end(), args.begin(), args.end());
    Emit(KILN_VM_INVOKE, std::move(ops));
    return r;
  }
  if (const auto* c = call.op.as<ConstructorNode>()) {
    int32_t r = NewReg();
    std::vector<int32_t> ops = {r, c->tag, static_cast<int32_t>(args.size())};
    ops.insert(ops.end(), args.begin(), args.end());
    Emit(KILN_VM_ALLOC_ADT, std::move(ops));
    return r;
  }
  if (const auto* op = call.op.as<OpNode>()) {
    return absl::UnimplementedError(absl::StrCat(
        "VM compiler: the operator ", op->name(),
        " is called outside a primitive function (run FuseOps before the VM compiler)", Where(e)));
  }
  // A closure: a local function, a variable holding one, any other callee.
  KILN_ASSIGN_OR_RETURN(int32_t clo, Compile(call.op));
  int32_t r = NewReg();
  std::vector<int32_t> ops = {r, clo, static_cast<int32_t>(args.size())};
  ops.insert(ops.end(), args.begin(), args.end());
  Emit(KILN_VM_INVOKE_CLOSURE, std::move(ops));
  return r;
}

absl::StatusOr<int32_t> FunctionCompiler::AllocTensor(const TensorTypeNode& t,
                                                      std::optional<int32_t> shape_reg) {
  const int32_t storage = NewReg();
  const int32_t tensor = NewReg();
  const int32_t dtype = DTypeWord(t.dtype);
  if (!shape_reg) {
    std::optional<std::vector<int64_t>> dims = StaticShape(t.shape);
    if (!dims) return absl::InternalError("VM compiler: AllocTensor of a symbolic shape");
    uint64_t bytes = static_cast<uint64_t>((t.dtype.bits() * t.dtype.lanes() + 7) / 8);
    for (int64_t d : *dims) {
      if (d != 0 && bytes > (uint64_t{1} << 56) / static_cast<uint64_t>(d)) {
        return absl::InvalidArgumentError(
            absl::StrCat("VM compiler: a tensor of type ", t.dtype.ToString(),
                         ShapeToString(t.shape), " exceeds 2^56 bytes"));
      }
      bytes *= static_cast<uint64_t>(d);
    }
    int32_t size = LoadConsti(static_cast<int64_t>(bytes));
    Emit(KILN_VM_ALLOC_STORAGE, {storage, size, 64, dtype});
    std::vector<int32_t> ops = {tensor, storage};
    AppendI64(&ops, 0);
    ops.push_back(dtype);
    ops.push_back(static_cast<int32_t>(dims->size()));
    for (int64_t d : *dims) AppendI64(&ops, d);
    Emit(KILN_VM_ALLOC_TENSOR, std::move(ops));
    return tensor;
  }
  Emit(KILN_VM_ALLOC_STORAGE, {storage, *shape_reg, 64, dtype});
  std::vector<int32_t> ops = {tensor, storage};
  AppendI64(&ops, 0);
  ops.push_back(*shape_reg);
  ops.push_back(dtype);
  Emit(KILN_VM_ALLOC_TENSOR_REG, std::move(ops));
  return tensor;
}

absl::StatusOr<int32_t> FunctionCompiler::CompilePrimitiveCall(const Expr& e, const CallNode& call,
                                                               const Function& callee) {
  KILN_ASSIGN_OR_RETURN(Function named, top_->WithNamedAnyDims(callee));
  KILN_ASSIGN_OR_RETURN(const ProgramCompiler::Kernel* k, top_->KernelFor(named));
  std::vector<int32_t> args;
  for (const Expr& a : call.args) args.push_back(*Lookup(a.get()));
  std::vector<const TensorTypeNode*> outs;
  if (!FlattenTensorTypes(e->checked_type(), &outs) || outs.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("VM compiler: a primitive call whose result is not tensors", Where(e)));
  }
  // Shapes computed at run time, when any output's is symbolic.
  std::vector<std::optional<int32_t>> shape_regs(outs.size());
  if (k->shape_index >= 0) {
    std::vector<int32_t> shape_tensors;
    for (const TensorTypeNode* t : outs) {
      const int32_t storage = NewReg();
      const int32_t tensor = NewReg();
      const int64_t rank = static_cast<int64_t>(t->shape.size());
      const int32_t dtype = DTypeWord(DataType::Int(64));
      int32_t size = LoadConsti(8 * std::max<int64_t>(rank, 1));
      Emit(KILN_VM_ALLOC_STORAGE, {storage, size, 64, dtype});
      std::vector<int32_t> ops = {tensor, storage};
      AppendI64(&ops, 0);
      ops.push_back(dtype);
      ops.push_back(1);
      AppendI64(&ops, rank);
      Emit(KILN_VM_ALLOC_TENSOR, std::move(ops));
      shape_tensors.push_back(tensor);
    }
    std::vector<int32_t> ops = {k->shape_index, static_cast<int32_t>(outs.size()),
                                static_cast<int32_t>(args.size() + shape_tensors.size())};
    ops.insert(ops.end(), args.begin(), args.end());
    ops.insert(ops.end(), shape_tensors.begin(), shape_tensors.end());
    Emit(KILN_VM_INVOKE_PACKED, std::move(ops));
    for (size_t i = 0; i < outs.size(); ++i) {
      if (!ShapeIsStatic(outs[i]->shape)) shape_regs[i] = shape_tensors[i];
    }
  }
  std::vector<int32_t> out_regs;
  for (size_t i = 0; i < outs.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(int32_t r, AllocTensor(*outs[i], shape_regs[i]));
    out_regs.push_back(r);
  }
  std::vector<int32_t> consts;
  for (const Ref<const HostTensor>& c : k->constants) {
    int32_t r = NewReg();
    Emit(KILN_VM_LOAD_CONST, {r, top_->ConstantIndex(c)});
    consts.push_back(r);
  }
  std::vector<int32_t> ops = {k->index, static_cast<int32_t>(out_regs.size()),
                              static_cast<int32_t>(args.size() + consts.size() + out_regs.size())};
  ops.insert(ops.end(), args.begin(), args.end());
  ops.insert(ops.end(), consts.begin(), consts.end());
  ops.insert(ops.end(), out_regs.begin(), out_regs.end());
  Emit(KILN_VM_INVOKE_PACKED, std::move(ops));
  if (e->checked_type().as<TensorTypeNode>() != nullptr) return out_regs[0];
  // A tuple result (one level: FuseOps' primitive functions return tensors
  // or a tuple of tensors).
  int32_t r = NewReg();
  std::vector<int32_t> adt = {r, KILN_VM_TUPLE_TAG, static_cast<int32_t>(out_regs.size())};
  adt.insert(adt.end(), out_regs.begin(), out_regs.end());
  Emit(KILN_VM_ALLOC_ADT, std::move(adt));
  return r;
}

absl::StatusOr<int32_t> FunctionCompiler::CompileClosure(const Function& f, const Var& self) {
  std::vector<Var> free = FreeVars(f);
  if (self) {
    free.erase(std::remove_if(free.begin(), free.end(),
                              [&](const Var& v) { return v.get() == self.get(); }),
               free.end());
  }
  std::vector<int32_t> captured;
  for (const Var& v : free) {
    std::optional<int32_t> r = Lookup(v.get());
    if (!r && v.get() == self_) {
      // A closure inside a self-recursive one that names the outer function.
      KILN_ASSIGN_OR_RETURN(int32_t s, CompileOne(v));
      r = s;
    }
    if (!r) {
      return absl::InvalidArgumentError(
          absl::StrCat("VM compiler: free variable %", v->name_hint, " in a local function"));
    }
    captured.push_back(*r);
  }
  // A let-bound function keeps its variable's name (the VM's messages name
  // the function: "no clause of a match in main_lambda1_SequenceAt_...").
  std::string name = absl::StrCat(fn().name, "_lambda", top_->program().functions.size());
  if (self && !self->name_hint.empty()) absl::StrAppend(&name, "_", self->name_hint);
  const uint32_t index =
      top_->NewFunction(name, static_cast<uint32_t>(free.size() + f->params.size()));
  FunctionCompiler inner(top_, index);
  KILN_RETURN_IF_ERROR(inner.CompileBody(free, f->params, f->body, self));
  int32_t r = NewReg();
  std::vector<int32_t> ops = {r, static_cast<int32_t>(index), static_cast<int32_t>(captured.size())};
  ops.insert(ops.end(), captured.begin(), captured.end());
  Emit(KILN_VM_ALLOC_CLOSURE, std::move(ops));
  return r;
}

absl::StatusOr<int32_t> FunctionCompiler::CompileIf(const IfNode& n) {
  KILN_ASSIGN_OR_RETURN(int32_t cond, Compile(n.cond));
  const int32_t result = NewReg();
  const int32_t one = LoadConsti(1);
  const size_t if_at = Emit(KILN_VM_IF, {cond, one, 1, 0});
  scopes_.emplace_back();
  KILN_ASSIGN_OR_RETURN(int32_t t, Compile(n.true_branch));
  scopes_.pop_back();
  Emit(KILN_VM_MOVE, {result, t});
  const size_t goto_at = Emit(KILN_VM_GOTO, {0});
  PatchJump(if_at, 3, fn().instrs.size());
  scopes_.emplace_back();
  KILN_ASSIGN_OR_RETURN(int32_t f, Compile(n.false_branch));
  scopes_.pop_back();
  Emit(KILN_VM_MOVE, {result, f});
  PatchJump(goto_at, 0, fn().instrs.size());
  return result;
}

absl::Status FunctionCompiler::TestPattern(const Pattern& p, int32_t reg,
                                           std::vector<size_t>* fails) {
  switch (p->kind) {
    case PatternKind::kWildcard:
      return absl::OkStatus();
    case PatternKind::kVar:
      Bind(static_cast<const PatternVarNode*>(p.get())->var.get(), reg);
      return absl::OkStatus();
    case PatternKind::kConstructor: {
      const auto* pc = static_cast<const PatternConstructorNode*>(p.get());
      const int32_t tag = NewReg();
      Emit(KILN_VM_GET_TAG, {tag, reg});
      const int32_t want = LoadConsti(pc->constructor->tag);
      fails->push_back(Emit(KILN_VM_IF, {tag, want, 1, 0}));
      for (size_t i = 0; i < pc->patterns.size(); ++i) {
        if (pc->patterns[i]->kind == PatternKind::kWildcard) continue;
        const int32_t field = NewReg();
        Emit(KILN_VM_GET_FIELD, {field, reg, static_cast<int32_t>(i)});
        KILN_RETURN_IF_ERROR(TestPattern(pc->patterns[i], field, fails));
      }
      return absl::OkStatus();
    }
    case PatternKind::kTuple: {
      const auto* pt = static_cast<const PatternTupleNode*>(p.get());
      for (size_t i = 0; i < pt->patterns.size(); ++i) {
        if (pt->patterns[i]->kind == PatternKind::kWildcard) continue;
        const int32_t field = NewReg();
        Emit(KILN_VM_GET_FIELD, {field, reg, static_cast<int32_t>(i)});
        KILN_RETURN_IF_ERROR(TestPattern(pt->patterns[i], field, fails));
      }
      return absl::OkStatus();
    }
  }
  return absl::InternalError("VM compiler: unknown pattern kind");
}

absl::StatusOr<int32_t> FunctionCompiler::CompileMatch(const Expr& e, const MatchNode& n) {
  KILN_ASSIGN_OR_RETURN(int32_t data, Compile(n.data));
  const int32_t result = NewReg();
  std::vector<size_t> to_end;
  for (const Clause& c : n.clauses) {
    std::vector<size_t> fails;
    scopes_.emplace_back();
    KILN_RETURN_IF_ERROR(TestPattern(c.lhs, data, &fails));
    KILN_ASSIGN_OR_RETURN(int32_t r, Compile(c.rhs));
    scopes_.pop_back();
    Emit(KILN_VM_MOVE, {result, r});
    to_end.push_back(Emit(KILN_VM_GOTO, {0}));
    for (size_t at : fails) PatchJump(at, 3, fn().instrs.size());
  }
  Emit(KILN_VM_FATAL,
       top_->program().FatalOperands(absl::StrCat("no clause of a match in ", fn().name,
                                                  " matches the value", Where(e))));
  for (size_t at : to_end) PatchJump(at, 0, fn().instrs.size());
  return result;
}

}  // namespace kiln::lowering::vm::internal
