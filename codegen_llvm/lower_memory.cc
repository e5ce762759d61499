// File: codegen_llvm/lower_memory.cc — buffer accesses: address
// computation (flat or multi-dim indices, contiguous / broadcast / gathered
// lanes), loads and stores, and the scoped-noalias metadata that tells LLVM
// distinct buffers never overlap.
#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen_llvm/lower.h"
#include "ir/status_macros.h"
#include "ir/tir_functor.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/MDBuilder.h"

namespace kiln::codegen::internal {

using tir::ExprKind;
using tir::ExprNode;
using tir::PrimExpr;

namespace {

bool SameScalar(DataType a, DataType b) { return a.code() == b.code() && a.bits() == b.bits(); }

}  // namespace

// Scoped-noalias metadata in space linear in the number of buffers. Only a
// store can conflict with another access, so the buffers this function never
// stores to (its inputs) share one scope: a load from one of them is marked
// as not aliasing any written buffer, a store as not aliasing any input. The
// written buffers get a scope each (their stores do not alias each other)
// up to kMaxDistinctWrittenScopes; past that they share one scope too (no
// store-store disambiguation, still no list longer than that bound). One
// scope per buffer with a "noalias: every other buffer" list would be
// quadratic: a concatenation of 8,000 tensors made 64 million metadata
// operands (most of its compile time and 4.9 GB at 20,000).
void FunctionLowering::CollectAliasScopes() {
  constexpr size_t kMaxDistinctWrittenScopes = 64;
  std::vector<tir::Buffer> buffers;
  std::vector<const ExprNode*> handles;
  std::unordered_set<const ExprNode*> seen;
  std::unordered_set<const ExprNode*> written;
  auto add = [&](const tir::Buffer& b) {
    if (!b || !b->data) return;
    if (!seen.insert(b->data.get()).second) return;
    handles.push_back(b->data.get());
    buffers.push_back(b);
  };
  for (const tir::Buffer& p : func_->params) add(p);
  if (func_->body) {
    tir::PostOrderVisit(
        func_->body, [](const ExprNode*) {},
        [&](const tir::StmtNode* s) {
          if (s->kind == tir::StmtKind::kAllocate) add(s->buffer);
          if (s->kind == tir::StmtKind::kStore && s->buffer && s->buffer->data) {
            written.insert(s->buffer->data.get());
          }
        });
  }
  if (handles.size() < 2) return;
  std::vector<size_t> inputs, outputs;
  for (size_t i = 0; i < handles.size(); ++i) {
    (written.count(handles[i]) ? outputs : inputs).push_back(i);
  }
  llvm::MDBuilder mdb(ctx_);
  llvm::MDNode* domain = mdb.createAnonymousAliasScopeDomain(func_->name);
  auto scope_named = [&](const std::vector<size_t>& group, const char* shared_name) {
    return mdb.createAnonymousAliasScope(
        domain, group.size() == 1 ? llvm::StringRef(buffers[group[0]]->name) : shared_name);
  };
  llvm::MDNode* input_scope = inputs.empty() ? nullptr : scope_named(inputs, "inputs");
  std::vector<llvm::Metadata*> output_scopes;  // one per output, or one shared
  if (outputs.size() <= kMaxDistinctWrittenScopes) {
    for (size_t i : outputs) {
      output_scopes.push_back(mdb.createAnonymousAliasScope(domain, buffers[i]->name));
    }
  } else {
    output_scopes.push_back(scope_named(outputs, "outputs"));
  }
  if (input_scope) {
    llvm::MDNode* scope = llvm::MDNode::get(ctx_, {input_scope});
    llvm::MDNode* noalias =
        output_scopes.empty() ? nullptr : llvm::MDNode::get(ctx_, output_scopes);
    for (size_t i : inputs) {
      alias_scope_[handles[i]] = scope;
      noalias_[handles[i]] = noalias;
    }
  }
  const bool distinct = outputs.size() <= kMaxDistinctWrittenScopes;
  llvm::MDNode* shared_noalias = nullptr;  // outputs sharing one scope
  if (!distinct && input_scope) shared_noalias = llvm::MDNode::get(ctx_, {input_scope});
  for (size_t k = 0; k < outputs.size(); ++k) {
    const ExprNode* h = handles[outputs[k]];
    if (!distinct) {
      alias_scope_[h] = llvm::MDNode::get(ctx_, {output_scopes[0]});
      noalias_[h] = shared_noalias;
      continue;
    }
    std::vector<llvm::Metadata*> others;
    if (input_scope) others.push_back(input_scope);
    for (size_t j = 0; j < outputs.size(); ++j) {
      if (j != k) others.push_back(output_scopes[j]);
    }
    alias_scope_[h] = llvm::MDNode::get(ctx_, {output_scopes[k]});
    noalias_[h] = others.empty() ? nullptr : llvm::MDNode::get(ctx_, others);
  }
}

void FunctionLowering::AddAliasInfo(llvm::Instruction* inst, const tir::Buffer& buf) {
  auto it = alias_scope_.find(buf->data.get());
  if (it == alias_scope_.end()) return;
  inst->setMetadata(llvm::LLVMContext::MD_alias_scope, it->second);
  auto na = noalias_.find(buf->data.get());
  if (na != noalias_.end() && na->second)
    inst->setMetadata(llvm::LLVMContext::MD_noalias, na->second);
}

absl::StatusOr<FunctionLowering::Address> FunctionLowering::ComputeAddress(
    const tir::Buffer& buf, const std::vector<PrimExpr>& indices, int lanes) {
  if (!buf || !buf->data) return Invalid("access to a null buffer");
  if (buf->dtype.lanes() != 1) {
    return Unsupported(
        absl::StrCat("buffer ", buf->name, " of vector type ", buf->dtype.ToString()));
  }
  Address addr;
  addr.lanes = lanes;
  auto bit = vars_.find(buf->data.get());
  if (bit == vars_.end()) {
    return Invalid(absl::StrCat("buffer ", buf->name,
                                " is accessed but is neither a parameter nor allocated"));
  }
  addr.base = bit->second;
  KILN_ASSIGN_OR_RETURN(addr.elem, MemType(buf->dtype));
  llvm::Type* i64 = b_.getInt64Ty();

  // Element strides of the indices (llvm::IRBuilder folds constants).
  size_t rank = buf->shape.size();
  std::vector<llvm::Value*> strides;
  if (indices.size() == 1 && buf->strides.size() != 1) {
    strides.push_back(llvm::ConstantInt::get(i64, 1));  // a flat index
  } else if (indices.size() == rank) {
    if (!buf->strides.empty()) {
      if (buf->strides.size() != rank) {
        return Invalid(absl::StrCat("buffer ", buf->name, " has ", buf->strides.size(),
                                    " strides for ", rank, " dims"));
      }
      for (const PrimExpr& s : buf->strides) {
        KILN_ASSIGN_OR_RETURN(llvm::Value * v, EmitIndex(s));
        strides.push_back(v);
      }
    } else {
      strides.assign(rank, nullptr);
      llvm::Value* acc = llvm::ConstantInt::get(i64, 1);
      for (size_t d = rank; d-- > 0;) {
        strides[d] = acc;
        if (d > 0) {
          KILN_ASSIGN_OR_RETURN(llvm::Value * dim, EmitIndex(buf->shape[d]));
          acc = b_.CreateMul(acc, dim, "", false, true);
        }
      }
    }
  } else {
    return Invalid(absl::StrCat("buffer ", buf->name, " of rank ", rank, " is indexed with ",
                                indices.size(), " indices"));
  }

  // Classify: every index scalar, a Ramp with a constant stride, or a
  // Broadcast keeps one scalar offset with a constant lane distance.
  bool per_lane = false;
  for (size_t d = 0; d < indices.size(); ++d) {
    const PrimExpr& idx = indices[d];
    if (!idx) return Invalid("null index");
    int il = idx->dtype.lanes();
    if (il != 1 && il != lanes) {
      return Invalid(
          absl::StrCat("index of buffer ", buf->name, " has ", il, " lanes, access ", lanes));
    }
    if (il == 1 || idx->kind == ExprKind::kBroadcast) continue;
    int64_t s = 0;
    if (idx->kind == ExprKind::kRamp && idx->args[0]->dtype.lanes() == 1 &&
        tir::IsConstInt(idx->args[1], &s) && llvm::isa<llvm::ConstantInt>(strides[d])) {
      continue;
    }
    per_lane = true;
  }

  llvm::Value* offset = llvm::ConstantInt::get(i64, 0);
  if (buf->elem_offset) {
    KILN_ASSIGN_OR_RETURN(offset, EmitIndex(buf->elem_offset));
  }
  if (per_lane) {
    llvm::Value* vec = Splat(offset, lanes);
    for (size_t d = 0; d < indices.size(); ++d) {
      KILN_ASSIGN_OR_RETURN(llvm::Value * idx, EmitIndex(indices[d]));
      vec = b_.CreateAdd(vec,
                         b_.CreateMul(Splat(idx, lanes), Splat(strides[d], lanes), "", false, true),
                         "", false, true);
    }
    addr.lane_offsets = vec;
    return addr;
  }
  int64_t lane_stride = 0;
  for (size_t d = 0; d < indices.size(); ++d) {
    const PrimExpr& idx = indices[d];
    const PrimExpr& scalar = idx->dtype.lanes() == 1 ? idx : idx->args[0];
    KILN_ASSIGN_OR_RETURN(llvm::Value * v, EmitIndex(scalar));
    offset = b_.CreateAdd(offset, b_.CreateMul(v, strides[d], "", false, true), "", false, true);
    if (idx->kind == ExprKind::kRamp && idx->dtype.lanes() > 1) {
      int64_t s = 0;
      tir::IsConstInt(idx->args[1], &s);
      lane_stride += s * llvm::cast<llvm::ConstantInt>(strides[d])->getSExtValue();
    }
  }
  addr.offset = offset;
  addr.lane_stride = lane_stride;
  if (lanes > 1 && lane_stride != 0 && lane_stride != 1) {
    std::vector<llvm::Constant*> steps;
    for (int i = 0; i < lanes; ++i) steps.push_back(llvm::ConstantInt::get(i64, lane_stride * i));
    addr.lane_offsets = b_.CreateAdd(Splat(offset, lanes), llvm::ConstantVector::get(steps));
  }
  return addr;
}

absl::StatusOr<llvm::Value*> FunctionLowering::EmitLoad(const ExprNode* n) {
  int lanes = n->dtype.lanes();
  KILN_ASSIGN_OR_RETURN(Address a, ComputeAddress(n->buffer, n->args, lanes));
  llvm::Align align = module_->getDataLayout().getABITypeAlign(a.elem);
  llvm::Instruction* inst = nullptr;
  llvm::Value* v = nullptr;
  if (a.lane_offsets != nullptr && a.lane_stride != 0) {
    // A constant lane stride (an NCHW16c -> NCHW transposition reads lanes
    // 16 floats apart): one scalar load per lane at a constant distance from
    // one address. As a gather, x86 without fast gathers scalarized it with
    // every lane's address computed in vector registers and extracted (about
    // 30 instructions per 8 lanes instead of 16).
    llvm::Value* ptr = b_.CreateInBoundsGEP(a.elem, a.base, a.offset);
    v = llvm::PoisonValue::get(WithLanes(a.elem, lanes));
    for (int i = 0; i < lanes; ++i) {
      llvm::Value* p = i == 0 ? ptr : b_.CreateInBoundsGEP(a.elem, ptr, b_.getInt64(i * a.lane_stride));
      llvm::LoadInst* ld = b_.CreateAlignedLoad(a.elem, p, align);
      AddAliasInfo(ld, n->buffer);
      v = b_.CreateInsertElement(v, ld, b_.getInt64(i));
    }
  } else if (a.lane_offsets != nullptr) {
    llvm::Value* ptrs = b_.CreateGEP(a.elem, a.base, a.lane_offsets);
    inst = b_.CreateMaskedGather(WithLanes(a.elem, lanes), ptrs, align);
    v = inst;
  } else {
    llvm::Value* ptr = b_.CreateInBoundsGEP(a.elem, a.base, a.offset);
    bool contiguous = lanes > 1 && a.lane_stride == 1;
    inst = b_.CreateAlignedLoad(contiguous ? WithLanes(a.elem, lanes) : a.elem, ptr, align);
    v = inst;
    if (lanes > 1 && !contiguous) v = Splat(v, lanes);  // every lane reads one element
  }
  if (inst != nullptr) AddAliasInfo(inst, n->buffer);
  if (n->buffer->dtype.is_bool())
    v = b_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
  return v;
}

absl::Status FunctionLowering::EmitStore(const tir::StmtNode* s) {
  const tir::Buffer& buf = s->buffer;
  if (!buf || !s->a) return Invalid("store without a buffer or value");
  DataType vt = s->a->dtype;
  if (!SameScalar(vt, buf->dtype)) {
    return Invalid(absl::StrCat("store of a ", vt.ToString(), " value into buffer ", buf->name,
                                " of ", buf->dtype.ToString(), " (insert a Cast)"));
  }
  int lanes = vt.lanes();
  for (const PrimExpr& i : s->indices) {
    if (i) lanes = std::max(lanes, i->dtype.lanes());
  }
  if (vt.lanes() != 1 && vt.lanes() != lanes) {
    return Invalid(absl::StrCat("store of ", vt.lanes(), " lanes into buffer ", buf->name,
                                " with a ", lanes, "-lane index"));
  }
  KILN_ASSIGN_OR_RETURN(llvm::Value * v, EmitExpr(s->a));
  v = Splat(v, lanes);
  KILN_ASSIGN_OR_RETURN(Address a, ComputeAddress(buf, s->indices, lanes));
  if (buf->dtype.is_bool()) v = b_.CreateZExt(v, WithLanes(b_.getInt8Ty(), lanes));
  llvm::Align align = module_->getDataLayout().getABITypeAlign(a.elem);
  llvm::Instruction* inst = nullptr;
  if (a.lane_offsets != nullptr && a.lane_stride != 0) {
    // A constant lane stride: one scalar store per lane (as EmitLoad).
    llvm::Value* ptr = b_.CreateInBoundsGEP(a.elem, a.base, a.offset);
    for (int i = 0; i < lanes; ++i) {
      llvm::Value* p = i == 0 ? ptr : b_.CreateInBoundsGEP(a.elem, ptr, b_.getInt64(i * a.lane_stride));
      llvm::StoreInst* st = b_.CreateAlignedStore(b_.CreateExtractElement(v, b_.getInt64(i)), p, align);
      AddAliasInfo(st, buf);
    }
    return absl::OkStatus();
  }
  if (a.lane_offsets != nullptr || (lanes > 1 && a.lane_stride == 0)) {
    llvm::Value* offsets = a.lane_offsets != nullptr ? a.lane_offsets : Splat(a.offset, lanes);
    llvm::Value* ptrs = b_.CreateGEP(a.elem, a.base, offsets);
    inst = b_.CreateMaskedScatter(v, ptrs, align);
  } else {
    llvm::Value* ptr = b_.CreateInBoundsGEP(a.elem, a.base, a.offset);
    inst = b_.CreateAlignedStore(v, ptr, align);
  }
  AddAliasInfo(inst, buf);
  return absl::OkStatus();
}

}  // namespace kiln::codegen::internal
