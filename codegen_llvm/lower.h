// File: codegen_llvm/lower.h
//
// Internal to codegen_llvm: the translation of loop IR into an llvm::Module.
// One FunctionLowering per PrimFunc; lower_expr.cc holds the expressions,
// lower_memory.cc loads, stores and alias metadata, lower_stmt.cc the kernel
// entry (argument checks), statements, parallel outlining and workspaces.
// backend.cc (targets, the optimization pipeline, object emission, the JIT)
// calls LowerPrimFuncs.
#ifndef KILN_CODEGEN_LLVM_LOWER_H_
#define KILN_CODEGEN_LLVM_LOWER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/dtype.h"
#include "ir/tir.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace llvm {
class MCSubtargetInfo;
}  // namespace llvm

namespace kiln::codegen::internal {

// Adds one kernel function per PrimFunc to `module` (whose triple and data
// layout are already set). cpu/features become each function's "target-cpu"
// and "target-features" attributes. Names must be unique and non-empty.
absl::Status LowerPrimFuncs(const std::vector<tir::PrimFunc>& funcs, absl::string_view cpu,
                            absl::string_view features, llvm::Module* module);

class FunctionLowering {
 public:
  FunctionLowering(llvm::Module* module, tir::PrimFunc func, absl::string_view cpu,
                   absl::string_view features);
  absl::Status Run();

 private:
  // The function being emitted: the kernel, or an outlined parallel lambda.
  struct Frame {
    llvm::Function* fn = nullptr;
    llvm::BasicBlock* entry = nullptr;     // allocas go to its top
    llvm::Value* kctx = nullptr;           // KilnKernelContext*
    std::vector<llvm::Value*> workspaces;  // live heap workspaces, innermost last
    bool in_parallel = false;
  };

  // Where a Load/Store goes: either one scalar element offset with a constant
  // distance between lanes (0: all lanes at `offset`, 1: contiguous), or one
  // offset per lane (`lane_offsets`, a <lanes x i64> vector).
  struct Address {
    llvm::Value* base = nullptr;  // buffer data pointer
    llvm::Type* elem = nullptr;   // element type in memory
    llvm::Value* offset = nullptr;
    int64_t lane_stride = 0;
    llvm::Value* lane_offsets = nullptr;
    int lanes = 1;
  };

  // ---- Errors -------------------------------------------------------------
  absl::Status Unsupported(absl::string_view what) const;
  absl::Status Invalid(absl::string_view what) const;

  // ---- Types and conversions (lower_expr.cc) ------------------------------
  absl::StatusOr<llvm::Type*> ScalarRegType(DataType t);
  absl::StatusOr<llvm::Type*> RegType(DataType t);  // i1 for bool, i16 for bfloat16
  absl::StatusOr<llvm::Type*> MemType(DataType t);  // scalar element: i8 for bool
  llvm::Type* WithLanes(llvm::Type* scalar, int lanes);
  llvm::Value* Splat(llvm::Value* v, int lanes);
  llvm::Value* WidenToF32(llvm::Value* v, DataType t);     // float16/bfloat16 -> float
  llvm::Value* NarrowFromF32(llvm::Value* v, DataType t);  // float -> float16/bfloat16
  llvm::Value* ToBool(llvm::Value* v, DataType t);

  // ---- Expressions (lower_expr.cc) ----------------------------------------
  absl::StatusOr<llvm::Value*> EmitExpr(const tir::PrimExpr& e);
  // An integer expression as i64 (or <lanes x i64>).
  absl::StatusOr<llvm::Value*> EmitIndex(const tir::PrimExpr& e);
  // `e` converted to type `t` (a Cast).
  absl::StatusOr<llvm::Value*> EmitAs(const tir::PrimExpr& e, DataType t);
  absl::StatusOr<llvm::Value*> EmitConst(const tir::ExprNode* e);
  absl::StatusOr<llvm::Value*> EmitBinary(const tir::ExprNode* e);
  absl::StatusOr<llvm::Value*> EmitIntDivMod(tir::ExprKind k, llvm::Value* a, llvm::Value* b,
                                             DataType t, const tir::PrimExpr& rhs);
  absl::StatusOr<llvm::Value*> EmitCast(llvm::Value* v, DataType from, DataType to);
  absl::StatusOr<llvm::Value*> EmitCall(const tir::ExprNode* e);
  absl::StatusOr<llvm::Value*> EmitMath(const tir::ExprNode* e);
  absl::StatusOr<llvm::Value*> EmitExternCall(const tir::ExprNode* e);
  absl::StatusOr<llvm::Value*> EmitLazySelect(const tir::ExprNode* e);
  absl::StatusOr<llvm::Value*> EmitRamp(const tir::ExprNode* e);
  llvm::Value* CallLibmPerLane(absl::string_view base_name, llvm::Value* x);
  // x * 2^n for float32 x and an integral float32 n (scalars or vectors):
  // AVX-512's vscalefps where the target has it, else two exponent-field
  // multiplies (exact for n in [-252, 254]).
  llvm::Value* EmitLdexp(llvm::Value* x, llvm::Value* n);
  // Whether the function's target (triple, cpu_, features_) has `feature`
  // ("+avx512f"); answered by an MCSubtargetInfo made on first use.
  bool HasTargetFeature(absl::string_view feature);

  // ---- Memory (lower_memory.cc) ---------------------------------------------
  absl::StatusOr<Address> ComputeAddress(const tir::Buffer& buf,
                                         const std::vector<tir::PrimExpr>& indices, int lanes);
  absl::StatusOr<llvm::Value*> EmitLoad(const tir::ExprNode* e);
  absl::Status EmitStore(const tir::StmtNode* s);
  void AddAliasInfo(llvm::Instruction* inst, const tir::Buffer& buf);
  void CollectAliasScopes();

  // ---- Statements (lower_stmt.cc) -----------------------------------------
  absl::Status EmitArgumentChecks(llvm::Value* args, llvm::Value* num_args);
  absl::Status EmitStmt(const tir::Stmt& s);
  absl::Status EmitFor(const tir::StmtNode* s);
  absl::Status EmitLoop(const tir::Var& var, llvm::Value* begin, llvm::Value* end,
                        const tir::Stmt& body, tir::ForKind kind);
  absl::Status EmitParallelFor(const tir::StmtNode* s);
  absl::Status EmitAllocate(const tir::StmtNode* s);
  absl::Status EmitIfThenElse(const tir::StmtNode* s);
  // if (!ok) { kiln_kernel_error(ctx, code, message); free workspaces; return code; }
  void EmitCheck(llvm::Value* ok, int32_t code, const std::string& message);
  // if (rc != 0) { free workspaces; return rc; }
  void EmitReturnIfError(llvm::Value* rc);
  void EmitReturn(llvm::Value* rc);  // frees live workspaces, then ret
  void SetFunctionAttributes(llvm::Function* fn);
  llvm::Value* StringConstant(const std::string& s);
  llvm::FunctionCallee RuntimeFunction(absl::string_view name);
  llvm::StructType* DLTensorType();
  llvm::AllocaInst* EntryAlloca(llvm::Type* t, llvm::Value* count, uint64_t align,
                                absl::string_view name);

  // Variable bindings (loop vars, lets, shape vars, buffer data pointers).
  llvm::Value* Bind(const tir::Var& v, llvm::Value* value);  // returns the old binding
  void Restore(const tir::Var& v, llvm::Value* old);

  llvm::Module* module_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
  tir::PrimFunc func_;
  std::string cpu_;
  std::string features_;
  std::shared_ptr<const llvm::MCSubtargetInfo> subtarget_;  // made by HasTargetFeature
  Frame frame_;
  std::unordered_map<const tir::ExprNode*, llvm::Value*> vars_;
  // Scoped-noalias metadata per buffer data var: distinct parameters and
  // allocations never overlap.
  std::unordered_map<const tir::ExprNode*, llvm::MDNode*> alias_scope_;
  std::unordered_map<const tir::ExprNode*, llvm::MDNode*> noalias_;
  std::map<std::string, llvm::Constant*> strings_;
  int num_lambdas_ = 0;
};

}  // namespace kiln::codegen::internal

#endif  // KILN_CODEGEN_LLVM_LOWER_H_
