// File: lowering/vm/compiler.cc
#include "lowering/vm/compiler.h"

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

bool IsPrimitive(const FunctionNode* fn) {
  const AttrValue* prim = fn->GetAttr("Primitive");
  return prim != nullptr && prim->kind == AttrValue::Kind::kInt && prim->i != 0;
}

std::string Where(const Expr& e) {
  if (e->span.line > 0) return absl::StrCat(" (line ", e->span.line, ")");
  return "";
}

class ProgramCompiler;

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

// One VM function being emitted.
class FunctionCompiler {
 public:
  FunctionCompiler(ProgramCompiler* top, uint32_t index) : top_(top), index_(index) {}

  absl::Status CompileBody(const std::vector<Var>& captured, const std::vector<Var>& params,
                           const Expr& body, const Var& self);

 private:
  VmFunction& fn();
  int32_t NewReg();
  size_t Emit(int32_t op, std::vector<int32_t> operands) { return fn().Emit(op, std::move(operands)); }
  std::optional<int32_t> Lookup(const ExprNode* e) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto f = it->find(e);
      if (f != it->end()) return f->second;
    }
    return std::nullopt;
  }
  void Bind(const ExprNode* e, int32_t r) { scopes_.back()[e] = r; }

  absl::StatusOr<int32_t> Compile(const Expr& e);
  absl::StatusOr<int32_t> CompileOne(const Expr& e);
  absl::StatusOr<int32_t> CompileCall(const Expr& e, const CallNode& call);
  absl::StatusOr<int32_t> CompilePrimitiveCall(const Expr& e, const CallNode& call,
                                               const Function& callee);
  absl::StatusOr<int32_t> CompileClosure(const Function& f, const Var& self);
  absl::StatusOr<int32_t> CompileIf(const IfNode& n);
  absl::StatusOr<int32_t> CompileMatch(const Expr& e, const MatchNode& n);
  absl::Status TestPattern(const Pattern& p, int32_t reg, std::vector<size_t>* fails);
  absl::StatusOr<int32_t> AllocTensor(const TensorTypeNode& t, std::optional<int32_t> shape_reg);
  int32_t LoadConsti(int64_t v) {
    int32_t r = NewReg();
    std::vector<int32_t> ops = {r};
    AppendI64(&ops, v);
    Emit(KILN_VM_LOAD_CONSTI, std::move(ops));
    return r;
  }
  void PatchJump(size_t at, int operand, size_t target) {
    fn().instrs[at].operands[operand] = static_cast<int32_t>(target) - static_cast<int32_t>(at);
  }

  ProgramCompiler* top_;
  uint32_t index_;
  std::vector<absl::flat_hash_map<const ExprNode*, int32_t>> scopes_;
  // The let-bound variable of the function being compiled (a closure that
  // calls itself), and the registers of its captured values.
  const VarNode* self_ = nullptr;
  std::vector<int32_t> captured_regs_;
};

class ProgramCompiler {
 public:
  ProgramCompiler(const Module& m, const LowerOptions& o) : module_(m), options_(o) {}

  absl::StatusOr<VmCompiled> Run();

  VmProgram& program() { return out_.program; }
  const Module& module() const { return module_; }

  absl::StatusOr<uint32_t> GlobalIndex(const std::string& name) const {
    auto it = global_index_.find(name);
    if (it == global_index_.end()) {
      return absl::InvalidArgumentError(absl::StrCat("VM compiler: @", name, " is not defined"));
    }
    return it->second;
  }

  uint32_t NewFunction(std::string name, uint32_t num_params) {
    VmFunction f;
    f.name = std::move(name);
    f.num_params = num_params;
    f.num_registers = num_params;
    out_.program.functions.push_back(std::move(f));
    return static_cast<uint32_t>(out_.program.functions.size() - 1);
  }

  int32_t ConstantIndex(const Ref<const HostTensor>& t) {
    auto it = constant_index_.find(t.get());
    if (it != constant_index_.end()) return it->second;
    int32_t i = static_cast<int32_t>(out_.program.constants.size());
    out_.program.constants.push_back(t);
    constant_index_[t.get()] = i;
    return i;
  }

  struct Kernel {
    int32_t index = -1;        // the fused kernel
    int32_t shape_index = -1;  // its shape function, when an output shape is symbolic
    std::vector<Ref<const HostTensor>> constants;
  };
  absl::StatusOr<const Kernel*> KernelFor(const Function& fn);
  // `fn` with every `?` dim of its parameters named, its body typed again
  // (memoized): an output shape computed from `?` input dims then becomes an
  // expression of them, so a shape function can compute it. Values whose
  // shape changes from call to call (a loop's growing scan output, typed
  // `?` in a recursive function's parameter) need it.
  absl::StatusOr<Function> WithNamedAnyDims(const Function& fn);

 private:
  int32_t AddKernel(tir::PrimFunc f, VmCompiled::Source source = {}) {
    out_.program.kernels.push_back(f->name);
    out_.kernels.push_back(std::move(f));
    out_.sources.push_back(std::move(source));
    return static_cast<int32_t>(out_.kernels.size() - 1);
  }
  std::string UniqueName(const std::string& base) {
    int n = name_count_[base]++;
    return n == 0 ? base : absl::StrCat(base, "_", n);
  }
  absl::Status Signature(const Function& main);

  const Module& module_;
  const LowerOptions& options_;
  VmCompiled out_;
  std::map<std::string, uint32_t> global_index_;
  absl::flat_hash_map<const HostTensor*, int32_t> constant_index_;
  absl::flat_hash_map<const FunctionNode*, Kernel> kernels_;
  absl::flat_hash_map<const FunctionNode*, Function> named_any_;
  std::map<std::string, int> name_count_;
};

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
