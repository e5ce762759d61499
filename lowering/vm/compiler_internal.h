// File: lowering/vm/compiler_internal.h  (internal to the VM compiler:
// compiler.cc and function_compiler.cc; not exported)
//
// The two halves of CompileForVm (compiler.h): ProgramCompiler walks the
// module (global functions, kernels and their shape functions, constants, the
// signature of main) and FunctionCompiler emits one VM function's
// instructions (function_compiler.cc: expressions, calls, closures, `if`,
// `match`, register kills).
#ifndef KILN_LOWERING_VM_COMPILER_INTERNAL_H_
#define KILN_LOWERING_VM_COMPILER_INTERNAL_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "lowering/vm/compiler.h"

namespace kiln::lowering::vm::internal {


inline bool IsPrimitive(const FunctionNode* fn) {
  const AttrValue* prim = fn->GetAttr("Primitive");
  return prim != nullptr && prim->kind == AttrValue::Kind::kInt && prim->i != 0;
}

inline std::string Where(const Expr& e) {
  if (e->span.line > 0) return absl::StrCat(" (line ", e->span.line, ")");
  return "";
}

class ProgramCompiler;

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

}  // namespace kiln::lowering::vm::internal

#endif  // KILN_LOWERING_VM_COMPILER_INTERNAL_H_
