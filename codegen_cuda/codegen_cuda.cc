// File: codegen_cuda/codegen_cuda.cc — loop IR to CUDA C: GenerateKernel, the
// CUDA prelude, and the Emitter's kernel level (codegen_cuda_internal.h): the
// parameters and launch dims, the root statements and the barriers between
// them, statements and loops, the tensor-core calls. Memory accesses and
// expressions are codegen_cuda_expr.cc.
#include "codegen_cuda/codegen_cuda.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "codegen_cuda/codegen_cuda_internal.h"
#include "codegen_cuda/tensor_core.h"
#include "codegen_cuda/thread_sync.h"
#include "codegen_cuda/warp_reduce.h"
#include "ir/status_macros.h"
#include "ir/tir_functor.h"

namespace kiln::codegen_cuda {
namespace internal {
namespace {

const char* const kReserved[] = {
    "auto",     "bool",   "break",  "case",     "char",     "const",    "continue", "default",
    "do",       "double", "else",   "enum",     "extern",   "float",    "for",      "goto",
    "if",       "int",    "long",   "register", "return",   "short",    "signed",   "sizeof",
    "static",   "struct", "switch", "typedef",  "union",    "unsigned", "void",     "volatile",
    "while",    "true",   "false",  "class",    "new",      "delete",   "this",     "template",
    "operator", "inline", "friend", "private",  "public",   "virtual",  "threadIdx", "blockIdx",
    "blockDim", "gridDim", "warpSize", "asm",   "namespace", "using",   "try",      "catch"};

std::string Sanitize(absl::string_view name) {
  std::string s;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_';
    s.push_back(ok ? c : '_');
  }
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) s.insert(s.begin(), 'v');
  // Names starting with "kiln_" or "__" belong to the prelude and the compiler.
  // (One char by iterator: g++ 12 -O2 -Werror gives a false -Wrestrict on
  // s.insert(0, "v"), GCC bug 105329, which broke --config=opt builds.)
  if (s.rfind("kiln_", 0) == 0 || s.rfind("__", 0) == 0) s.insert(s.begin(), 'v');
  for (const char* r : kReserved) {
    if (s == r) {
      s += "_";
      break;
    }
  }
  return s;
}

// Static __shared__ memory per block (CUDA's limit without a dynamic opt-in).
constexpr int64_t kMaxStaticShared = 48 * 1024;
// A block's shared memory, static and dynamic, on the largest GPUs kiln
// targets (sm_90: 227 KiB with the opt-in attribute).
constexpr int64_t kMaxBlockShared = 227 * 1024;
// The attribute the GPU schedule puts around a loop of 4 consecutive
// elements (Stage::pragma "kiln_vector", lowering/te/schedule_cuda.h).
constexpr char kVectorPragma[] = "pragma_kiln_vector";

}  // namespace

absl::StatusOr<std::string> StorageType(DataType t) {
  if (t.lanes() != 1) {
    return absl::UnimplementedError(
        absl::StrCat("vector type ", t.ToString(), " (the CUDA backend emits scalar code)"));
  }
  switch (t.code()) {
    case DTypeCode::kBool:
      return std::string("bool");
    case DTypeCode::kInt:
      switch (t.bits()) {
        case 8: return std::string("signed char");
        case 16: return std::string("short");
        case 32: return std::string("int");
        case 64: return std::string("long long");
        default: break;
      }
      break;
    case DTypeCode::kUInt:
      switch (t.bits()) {
        case 1: return std::string("bool");
        case 8: return std::string("unsigned char");
        case 16: return std::string("unsigned short");
        case 32: return std::string("unsigned int");
        case 64: return std::string("unsigned long long");
        default: break;
      }
      break;
    case DTypeCode::kFloat:
      if (t.bits() == 16) return std::string("unsigned short");
      if (t.bits() == 32) return std::string("float");
      if (t.bits() == 64) return std::string("double");
      break;
    case DTypeCode::kBFloat:
      if (t.bits() == 16) return std::string("unsigned short");
      break;
    case DTypeCode::kOpaqueHandle:
      return std::string("void*");
  }
  return absl::UnimplementedError(absl::StrCat("data type ", t.ToString(), " in CUDA code"));
}

absl::StatusOr<std::string> ValueType(DataType t) {
  if (Is16BitFloat(t) && t.lanes() == 1) return std::string("float");
  return StorageType(t);
}

absl::StatusOr<CudaKernel> Emitter::Run() {
  CudaKernel k;
  k.name = Sanitize(f_->name);
  KILN_RETURN_IF_ERROR(CollectLaunch(f_->body));
  KILN_RETURN_IF_ERROR(CollectBatchRows());
  KILN_RETURN_IF_ERROR(PlanWarpSpecialization());
  // Parameters: buffers, then the shape variables they name.
  std::vector<std::string> params;
  std::unordered_set<const ExprNode*> stored;
  tir::PostOrderVisit(f_->body, [](const ExprNode*) {}, [&](const StmtNode* s) {
    if (s->kind == StmtKind::kStore) stored.insert(s->buffer->data.get());
  });
  for (const Buffer& b : f_->params) {
    const std::string name = Bind(b->data, b->name);
    KILN_ASSIGN_OR_RETURN(std::string ty, StorageType(b->dtype));
    const bool is_const = !stored.count(b->data.get());
    params.push_back(absl::StrCat(is_const ? "const " : "", ty, "* __restrict__ ", name));
    k.param_names.push_back(name);
    k.param_types.push_back(absl::StrCat(is_const ? "const " : "", ty, "*"));
    buffer_names_[b->data.get()] = name;
  }
  k.num_buffers = f_->params.size();
  for (const Buffer& b : f_->params) {
    auto visit = [&](const PrimExpr& e) {
      if (!e) return;
      tir::PostOrderVisit(e, [&](const ExprNode* n) {
        if (n->kind != ExprKind::kVar || names_.count(n)) return;
        k.shape_vars.push_back(PrimExpr(n));
      });
      for (const PrimExpr& v : k.shape_vars) {
        if (!names_.count(v.get())) {
          const std::string name = Bind(v, v->name);
          params.push_back(absl::StrCat("long long ", name));
          k.param_names.push_back(name);
          k.param_types.push_back("long long");
        }
      }
    };
    for (const PrimExpr& e : b->shape) visit(e);
    for (const PrimExpr& e : b->strides) visit(e);
    visit(b->elem_offset);
  }
  for (int d = 0; d < 3; ++d) {
    k.grid[d] = launch_[d] ? launch_[d] : tir::IntImm(1);
    k.block[d] = launch_[d + 3] ? launch_[d + 3] : tir::IntImm(1);
  }
  int64_t bt = 1, gb = 1;
  for (int d = 0; d < 3; ++d) {
    int64_t v = 0;
    if (bt > 0 && tir::IsConstInt(k.block[d], &v)) {
      bt *= v;
    } else {
      bt = 0;
    }
    if (gb > 0 && tir::IsConstInt(k.grid[d], &v)) {
      gb *= v;
    } else {
      gb = 0;
    }
  }
  k.block_threads = bt;
  k.grid_blocks = gb;
  static_launch_ = k.shape_vars.empty() && batch_rows_.empty();

  indent_ = 1;
  // A batch over blockIdx.z: each batched buffer starts at the block's row.
  for (const auto& [param, per_row] : batch_rows_) {
    KILN_ASSIGN_OR_RETURN(std::string name, BufferName(f_->params[param]));
    Line(absl::StrCat(name, " += (long long)blockIdx.z * ", per_row, "LL;"));
  }
  KILN_RETURN_IF_ERROR(EmitRoot(f_->body));
  FinishWarpSpecialization();
  k.shared_bytes = shared_bytes_;
  k.dynamic_shared_bytes = dynamic_shared_bytes_;
  // The tensor maps the GEMM tiles asked for: parameters after the buffers.
  for (size_t i = 0; i < tensor_maps_.size(); ++i) {
    CudaTensorMap tm = tensor_maps_[i];
    tm.param = k.param_names.size();
    params.push_back(absl::StrCat("const __grid_constant__ kiln_tmap ", tensor_map_names_[i]));
    k.param_names.push_back(tensor_map_names_[i]);
    k.param_types.push_back("kiln_tmap");
    k.tensor_maps.push_back(std::move(tm));
  }
  if (shared_bytes_ > kMaxStaticShared) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "its __shared__ arrays take ", shared_bytes_, " bytes per block, more than the ",
        kMaxStaticShared, " a kernel may declare statically"));
  }
  if (shared_bytes_ + dynamic_shared_bytes_ > kMaxBlockShared) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "its shared memory takes ", shared_bytes_, " static and ", dynamic_shared_bytes_,
        " dynamic bytes per block, more than the ", kMaxBlockShared, " a block may have"));
  }
  std::string head = absl::StrCat("extern \"C\" __global__ void ");
  if (bt > 0) absl::StrAppend(&head, "__launch_bounds__(", bt, ") ");
  absl::StrAppend(&head, k.name, "(", absl::StrJoin(params, ", "), ") {\n");
  k.source = absl::StrCat("// ", f_->name, "\n", head, body_, "}\n");
  return k;
}

// ---- Names ----
std::string Emitter::Bind(const PrimExpr& var, absl::string_view hint) {
  std::string base = Sanitize(hint);
  std::string name = base;
  for (int i = 1; used_.count(name); ++i) name = absl::StrCat(base, "_", i);
  used_.insert(name);
  names_[var.get()] = name;
  return name;
}

absl::StatusOr<std::string> Emitter::NameOf(const ExprNode* v) {
  auto it = names_.find(v);
  if (it == names_.end()) {
    return absl::InvalidArgumentError(absl::StrCat("unbound variable '", v->name, "'"));
  }
  return it->second;
}

// ---- A batch over blockIdx.z (lowering/vm/batch_split.h on a GPU) ----
// attrs["kiln.batch_z"] = "param:elements_per_row,...": the body computes
// one row (the kernel lowered for a batch of 1); the launch's z is the
// batch (each batched parameter's axis 0, one variable), and block z
// offsets each batched parameter by z rows.
absl::Status Emitter::CollectBatchRows() {
  auto it = f_->attrs.find("kiln.batch_z");
  if (it == f_->attrs.end()) return absl::OkStatus();
  if (launch_[2]) {
    return absl::InvalidArgumentError("a batch over blockIdx.z in a kernel that binds blockIdx.z");
  }
  PrimExpr batch;
  for (absl::string_view item : absl::StrSplit(it->second, ',')) {
    std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(item, ':');
    size_t param = 0;
    int64_t per_row = 0;
    if (!absl::SimpleAtoi(kv.first, &param) || !absl::SimpleAtoi(kv.second, &per_row) ||
        param >= f_->params.size() || per_row < 0 || f_->params[param]->shape.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("kiln.batch_z: bad entry '", item, "'"));
    }
    const PrimExpr& n = f_->params[param]->shape[0];
    if (!n->is_var() || (batch && batch.get() != n.get())) {
      return absl::InvalidArgumentError("kiln.batch_z: the batched axes are not one variable");
    }
    batch = n;
    batch_rows_.emplace_back(param, per_row);
  }
  if (!batch) return absl::InvalidArgumentError("kiln.batch_z: no batched parameter");
  launch_[2] = batch;
  batch_z_ = true;
  return absl::OkStatus();
}

// ---- Launch dims ----
int Emitter::TagIndex(absl::string_view tag) {
  static const char* const kTags[] = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z",
                                      "threadIdx.x", "threadIdx.y", "threadIdx.z"};
  for (int i = 0; i < 6; ++i) {
    if (tag == kTags[i]) return i;
  }
  return -1;
}

absl::Status Emitter::AddExtent(absl::string_view tag, const PrimExpr& extent) {
  const int i = TagIndex(tag);
  if (i < 0) {
    return absl::UnimplementedError(absl::StrCat("thread tag '", tag, "' (supported: blockIdx.{x,y,z}, threadIdx.{x,y,z})"));
  }
  if (!launch_[i]) {
    launch_[i] = extent;
    return absl::OkStatus();
  }
  int64_t a = 0, b = 0;
  if (tir::IsConstInt(launch_[i], &a) && tir::IsConstInt(extent, &b)) {
    if (b > a) launch_[i] = extent;
    return absl::OkStatus();
  }
  if (tir::ExprDeepEqual(launch_[i], extent)) return absl::OkStatus();
  return absl::UnimplementedError(absl::StrCat(
      "loops bound to ", tag, " have different symbolic extents; the launch size is unknown"));
}

absl::Status Emitter::CollectLaunch(const Stmt& body) {
  absl::Status st;
  tir::PostOrderVisit(body, [](const ExprNode*) {}, [&](const StmtNode* s) {
    if (!st.ok()) return;
    if (s->kind == StmtKind::kFor && s->for_kind == ForKind::kThreadBinding) {
      if (!tir::IsConstValue(s->a, 0)) {
        st = absl::UnimplementedError(absl::StrCat("loop bound to ", s->tag, " starts at ",
                                                   "a nonzero minimum"));
        return;
      }
      st = AddExtent(s->tag, s->b);
    } else if (s->kind == StmtKind::kAttr && s->tag == "thread_extent") {
      const auto* iv = dynamic_cast<const tir::IterVarNode*>(s->node.get());
      if (iv == nullptr) {
        st = absl::InvalidArgumentError("a thread_extent attribute without an iteration variable");
        return;
      }
      st = AddExtent(iv->thread_tag, s->a);
    }
  });
  return st;
}

bool Emitter::HasBinding(const Stmt& s) {
  bool found = false;
  tir::PostOrderVisit(s, [](const ExprNode*) {}, [&](const StmtNode* n) {
    if ((n->kind == StmtKind::kFor && n->for_kind == ForKind::kThreadBinding) ||
        (n->kind == StmtKind::kAttr && n->tag == "thread_extent")) {
      found = true;
    }
  });
  return found;
}

// ---- Root: which statements run on every thread, which on one ----
absl::Status Emitter::EmitRoot(const Stmt& s) {
  switch (s->kind) {
    case StmtKind::kSeq:
      for (const Stmt& c : s->body) KILN_RETURN_IF_ERROR(EmitRoot(c));
      return absl::OkStatus();
    case StmtKind::kLetStmt: {
      KILN_RETURN_IF_ERROR(EmitLetHead(s));
      return EmitRoot(s->body0());
    }
    case StmtKind::kAllocate: {
      KILN_RETURN_IF_ERROR(EmitAllocHead(s));
      return EmitRoot(s->body0());
    }
    case StmtKind::kAttr:
      if (s->tag != "thread_extent") return EmitRoot(s->body0());
      break;
    default:
      break;
  }
  Unit u;
  u.single_thread = !HasBinding(s);
  tir::PostOrderVisit(s, [&](const ExprNode* e) {
    if (e->kind == ExprKind::kLoad) u.reads.insert(e->buffer->data.get());
  }, [&](const StmtNode* n) {
    if (n->kind == StmtKind::kStore) u.writes.insert(n->buffer->data.get());
  });
  KILN_RETURN_IF_ERROR(OrderAfterEarlierUnits(u));
  units_.push_back(std::move(u));
  if (units_.back().single_thread) {
    if (tir::IsNoOp(s)) return absl::OkStatus();
    // (Once per row of a batch over blockIdx.z.)
    Line(batch_z_ ? "if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0 && blockIdx.x == 0 "
                    "&& blockIdx.y == 0) {"
                  : "if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0 && blockIdx.x == 0 && "
                    "blockIdx.y == 0 && blockIdx.z == 0) {");
    ++indent_;
    KILN_RETURN_IF_ERROR(EmitStmt(s));
    --indent_;
    Line("}");
    return absl::OkStatus();
  }
  return EmitStmt(s);
}

// Whether the launch is one block (every blockIdx extent 1 or unbound).
// (A batch over blockIdx.z: one block per row, each row independent.)
bool Emitter::OneBlock() const {
  for (int d = 0; d < (batch_z_ ? 2 : 3); ++d) {
    if (launch_[d] && !tir::IsConstValue(launch_[d], 1)) return false;
  }
  return true;
}

// A root nest that reads what an earlier one wrote in other threads: in a
// one-block launch a block barrier between them orders them (emitted
// here); otherwise one kernel has no grid-wide barrier, and it is refused.
absl::Status Emitter::OrderAfterEarlierUnits(const Unit& u) {
  for (size_t i = synced_units_; i < units_.size(); ++i) {
    if (units_[i].single_thread && u.single_thread) continue;
    for (const ExprNode* b : u.reads) {
      if (!units_[i].writes.count(b)) continue;
      if (OneBlock()) {
        Line("__syncthreads();  // the next nest reads what the one before wrote");
        synced_units_ = units_.size();
        return absl::OkStatus();
      }
      auto it = buffer_names_.find(b);
      const std::string name = it != buffer_names_.end() ? it->second : b->name;
      return absl::UnimplementedError(absl::StrCat(
          "loop nest ", units_.size() + 1, " reads '", name, "', which loop nest ", i + 1,
          " writes in other threads; one CUDA kernel has no grid-wide barrier between them "
          "(compute the producer inside its reader, or split the function)"));
    }
  }
  return absl::OkStatus();
}

// ---- Statements ----
void Emitter::Line(absl::string_view text) {
  body_.append(static_cast<size_t>(indent_) * 2, ' ');
  body_.append(text.data(), text.size());
  body_.push_back('\n');
}

absl::Status Emitter::EmitLetHead(const Stmt& s) {
  KILN_ASSIGN_OR_RETURN(std::string ty, ValueType(s->var->dtype));
  KILN_ASSIGN_OR_RETURN(std::string v, Expr(s->a));
  const std::string name = Bind(s->var, s->var->name);
  Line(absl::StrCat("const ", ty, " ", name, " = ", v, ";"));
  return absl::OkStatus();
}

absl::Status Emitter::EmitAllocHead(const Stmt& s) {
  const Buffer& b = s->buffer;
  const std::string scope = s->tag.empty() ? b->scope : s->tag;
  PrimExpr n = tir::ShapeProduct(b->shape);
  int64_t count = 1;
  if (n && !tir::IsConstInt(n, &count)) {
    return absl::UnimplementedError(absl::StrCat("temporary '", b->name,
                                                 "' has a symbolic size (", scope, " memory)"));
  }
  KILN_ASSIGN_OR_RETURN(std::string ty, StorageType(b->dtype));
  const std::string name = Bind(b->data, b->name);
  buffer_names_[b->data.get()] = name;
  if (count < 1) count = 1;
  if (scope == "local") {
    Line(absl::StrCat(ty, " ", name, "[", count, "];"));
  } else if (scope == "shared") {
    Line(absl::StrCat("__shared__ ", ty, " ", name, "[", count, "];"));
    shared_bytes_ += count * b->dtype.bytes();
  } else {
    return absl::UnimplementedError(absl::StrCat(
        "temporary '", b->name, "' in ", scope,
        " memory (a CUDA kernel has no global workspace yet; schedule its stage inside its "
        "reader, in \"local\" or \"shared\" memory)"));
  }
  return absl::OkStatus();
}

absl::Status Emitter::EmitBody(const Stmt& s) {
  ++indent_;
  absl::Status st = EmitStmt(s);
  --indent_;
  return st;
}

absl::Status Emitter::EmitStmt(const Stmt& s) {
  switch (s->kind) {
    case StmtKind::kSeq:
      for (const Stmt& c : s->body) KILN_RETURN_IF_ERROR(EmitStmt(c));
      return absl::OkStatus();
    case StmtKind::kLetStmt:
      KILN_RETURN_IF_ERROR(EmitLetHead(s));
      return EmitStmt(s->body0());
    case StmtKind::kAllocate:
      KILN_RETURN_IF_ERROR(EmitAllocHead(s));
      return EmitStmt(s->body0());
    case StmtKind::kStore: {
      const Buffer& b = s->buffer;
      if (s->indices.size() != 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "store to '", b->name, "' with ", s->indices.size(),
            " indices (run storage_flatten first: the CUDA backend takes flat buffers)"));
      }
      KILN_ASSIGN_OR_RETURN(std::string name, BufferName(b));
      KILN_ASSIGN_OR_RETURN(std::string idx, Index(b, s->indices[0]));
      KILN_ASSIGN_OR_RETURN(std::string v, Expr(s->a));
      if (IsHalf(b->dtype)) v = absl::StrCat("kiln_f2h(", v, ")");
      if (IsBF16(b->dtype)) v = absl::StrCat("kiln_f2bf(", v, ")");
      Line(absl::StrCat(name, "[", idx, "] = ", v, ";"));
      return absl::OkStatus();
    }
    case StmtKind::kFor:
      return EmitFor(s);
    case StmtKind::kIfThenElse: {
      KILN_ASSIGN_OR_RETURN(std::string c, Expr(s->a));
      Line(absl::StrCat("if (", c, ") {"));
      KILN_RETURN_IF_ERROR(EmitBody(s->body[0]));
      if (s->body.size() > 1 && s->body[1]) {
        Line("} else {");
        KILN_RETURN_IF_ERROR(EmitBody(s->body[1]));
      }
      Line("}");
      return absl::OkStatus();
    }
    case StmtKind::kAttr: {
      if (s->tag == "thread_extent") {
        const auto* iv = dynamic_cast<const tir::IterVarNode*>(s->node.get());
        if (iv == nullptr) return absl::InvalidArgumentError("thread_extent without an iteration variable");
        return EmitBound(iv->var, iv->thread_tag, s->a, s->body0());
      }
      if (s->tag == kVectorPragma) {
        KILN_ASSIGN_OR_RETURN(bool done, EmitVector(s->body0()));
        if (done) return absl::OkStatus();
      }
      return EmitStmt(s->body0());  // pragmas, alignment: nothing to emit
    }
    case StmtKind::kEvaluate:
      if (tir::IsConstInt(s->a)) return absl::OkStatus();
      if (IsSyncThreads(s)) {
        Line("__syncthreads();");
        return absl::OkStatus();
      }
      if (s->a->kind == ExprKind::kCall && (absl::StartsWith(s->a->name, "kiln.mma_") ||
                                            absl::StartsWith(s->a->name, "kiln.gemm_tc") ||
                                            absl::StartsWith(s->a->name, "kiln.gemm_wg") ||
                                            absl::StartsWith(s->a->name, "kiln.gemm_tf32") ||
                                            absl::StartsWith(s->a->name, "kiln.conv_tc") ||
                                            absl::StartsWith(s->a->name, "kiln.conv_wg"))) {
        return EmitMma(s->a);  // codegen_cuda/tensor_core.h
      }
      return absl::UnimplementedError(
          absl::StrCat("a call evaluated for its effect (", s->a->name, ") in CUDA code"));
    case StmtKind::kAssert: {
      KILN_ASSIGN_OR_RETURN(std::string c, Expr(s->a));
      // A failed check ends the launch; the runtime reports the launch error.
      std::string msg = Sanitize(s->tag);
      Line(absl::StrCat("if (!(", c, ")) { __trap(); }  // ", msg));
      return EmitStmt(s->body0());
    }
  }
  return absl::InternalError("unknown statement kind");
}

absl::Status Emitter::EmitMma(const PrimExpr& call) {
  if (call->name == kGemmTcF16 || call->name == kGemmTcBF16 || call->name == kGemmTf32) {
    return EmitGemmTc(call);
  }
  if (call->name == kGemmWgF16 || call->name == kGemmWgBF16 || call->name == kGemmWgwF16 ||
      call->name == kGemmWgwBF16 || call->name == kGemmWgtF16 || call->name == kGemmWgtBF16 ||
      call->name == kGemmWgsF16 || call->name == kGemmWgsBF16) {
    return EmitGemmWg(call);
  }
  if (call->name == kConvTcF16 || call->name == kConvTcBF16 || call->name == kConvTcTf32 ||
      call->name == kConvWgF16 || call->name == kConvWgBF16) {
    return EmitConvTc(call);
  }
  std::vector<std::string> args;
  for (const PrimExpr& a : call->args) {
    KILN_ASSIGN_OR_RETURN(std::string v, Expr(a));
    args.push_back(std::move(v));
  }
  std::string fn;
  if (call->name == kMmaZero && args.size() == 1) {
    fn = "kiln_mma_zero";
  } else if (call->name == kMmaBlockF16 && args.size() == 9) {
    fn = "kiln_mma_block<false>";
  } else if (call->name == kMmaBlockBF16 && args.size() == 9) {
    fn = "kiln_mma_block<true>";
  } else if (call->name == kMmaFinish && args.size() == 2) {
    fn = "kiln_mma_finish";
    if (!mma_finish_) shared_bytes_ += kMmaFinishSharedBytes;
    mma_finish_ = true;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("call '", call->name, "' with ", args.size(), " arguments"));
  }
  Line(absl::StrCat(fn, "(", absl::StrJoin(args, ", "), ");"));
  return absl::OkStatus();
}

// A call's arguments as C expressions.
absl::StatusOr<std::vector<std::string>> Emitter::Args(const PrimExpr& call) {
  std::vector<std::string> a;
  for (const PrimExpr& e : call->args) {
    KILN_ASSIGN_OR_RETURN(std::string v, Expr(e));
    a.push_back(std::move(v));
  }
  return a;
}

// kiln_gemm_tc<bf16, a_k_stride == 1, b_k_stride == 1>(cl, A + a_base,
// a_row_stride, a_k_stride, B + b_base, b_col_stride, b_k_stride, steps,
// rows, cols, k); kiln_gemm_tf32<a_k_stride == 1, b_k_stride == 1>(...)
// likewise.
absl::Status Emitter::EmitGemmTc(const PrimExpr& call) {
  int64_t ak = 0, bk = 0;
  if (call->args.size() != 13 || !tir::IsConstInt(call->args[4], &ak) ||
      !tir::IsConstInt(call->args[8], &bk)) {
    return absl::InvalidArgumentError(
        absl::StrCat("call '", call->name, "' with ", call->args.size(), " arguments"));
  }
  KILN_ASSIGN_OR_RETURN(std::vector<std::string> a, Args(call));
  const std::string bf =
      call->name == kGemmTf32 ? "" : (call->name == kGemmTcBF16 ? "true, " : "false, ");
  Line(absl::StrCat(call->name == kGemmTf32 ? "kiln_gemm_tf32<" : "kiln_gemm_tc<", bf,
                    ak == 1 ? "true" : "false", ", ", bk == 1 ? "true" : "false", ">(", a[0],
                    ", ", a[1], " + (", a[2], "), ", a[3], ", ", a[4], ", ", a[5], " + (", a[6],
                    "), ", a[7], ", ", a[8], ", ", a[9], ", ", a[10], ", ", a[11], ", ",
                    a[12], ");"));
  if (!gemm_tc_) shared_bytes_ += kGemmTcSharedBytes;
  gemm_tc_ = true;
  return absl::OkStatus();
}

// kiln_conv_nchw_tc<T, bf16, C, H, W, OC, KH, KW, SH, SW, PH, PW, DH, DW,
// OH, OW, min(OW, 8)>(cl, X, W, n, oc0, oh0, ow0), or kiln_conv_nhwc_tc<T,
// bf16, w_k_major, ...>(...) (codegen_cuda/tensor_core.h).
absl::Status Emitter::EmitConvTc(const PrimExpr& call) {
  constexpr size_t kConsts = 16;
  if (call->args.size() != 3 + kConsts + 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("call '", call->name, "' with ", call->args.size(), " arguments"));
  }
  std::vector<std::string> consts;
  int64_t nhwc = 0;
  for (size_t i = 0; i < kConsts; ++i) {
    int64_t v = 0;
    if (!tir::IsConstInt(call->args[3 + i], &v)) {
      return absl::InvalidArgumentError(
          absl::StrCat("call '", call->name, "': geometry argument ", i, " is not a constant"));
    }
    if (i == 0) {
      nhwc = v;
    } else if (i > 1 || nhwc) {
      consts.push_back(i == 1 ? (v ? "true" : "false") : absl::StrCat(v));
    }
  }
  // The thread's block: 8 x min(OW, 8) (NCHW) or min(OW, 8) x 8 (NHWC).
  int64_t ow = 0;
  tir::IsConstInt(call->args[3 + 15], &ow);
  consts.push_back(absl::StrCat(std::min<int64_t>(ow, 8)));
  KILN_ASSIGN_OR_RETURN(std::vector<std::string> a, Args(call));
  const bool wg = call->name == kConvWgF16 || call->name == kConvWgBF16;
  if (wg && nhwc) return absl::InvalidArgumentError("kiln.conv_wg_*: NCHW only");
  const char* type = wg ? "" : call->name == kConvTcTf32 ? "float, " : "unsigned short, ";
  Line(absl::StrCat(wg ? "kiln_conv_nchw_wg<" : nhwc ? "kiln_conv_nhwc_tc<" : "kiln_conv_nchw_tc<",
                    type,
                    call->name == kConvTcBF16 || call->name == kConvWgBF16 ? "true" : "false", ", ",
                    absl::StrJoin(consts, ", "), ">(", a[0], ", ", a[1], ", ", a[2], ", ",
                    a[3 + kConsts], ", ", a[4 + kConsts], ", ", a[5 + kConsts], ", ",
                    a[6 + kConsts], ");"));
  if (!gemm_tc_) shared_bytes_ += kGemmTcSharedBytes;
  gemm_tc_ = true;
  return absl::OkStatus();
}

absl::Status Emitter::EmitBound(const PrimExpr& var, absl::string_view tag, const PrimExpr& extent,
                                const Stmt& body) {
  const int i = TagIndex(tag);
  if (i < 0) return absl::UnimplementedError(absl::StrCat("thread tag '", tag, "'"));
  static const char* const kIdx[] = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z",
                                     "threadIdx.x", "threadIdx.y", "threadIdx.z"};
  KILN_ASSIGN_OR_RETURN(std::string ty, ValueType(var->dtype));
  const std::string name = Bind(var, var->name);
  Line(absl::StrCat("{  // ", tag));
  ++indent_;
  Line(absl::StrCat("const ", ty, " ", name, " = (", ty, ")", kIdx[i], ";"));
  const bool guard = !tir::ExprDeepEqual(extent, launch_[i]);
  if (guard) {
    KILN_ASSIGN_OR_RETURN(std::string e, Expr(extent));
    Line(absl::StrCat("if (", name, " < ", e, ") {"));
    ++indent_;
  }
  // A nest inside a nest bound to the same tag (a stage computed inside
  // its reader's thread loop, its own loops bound to the same threads: a
  // cooperative load into shared memory) reads the same thread index.
  KILN_RETURN_IF_ERROR(EmitStmt(body));
  if (guard) {
    --indent_;
    Line("}");
  }
  --indent_;
  Line("}");
  return absl::OkStatus();
}

absl::Status Emitter::EmitFor(const Stmt& s) {
  switch (s->for_kind) {
    case ForKind::kThreadBinding:
      return EmitBound(s->var, s->tag, s->b, s->body0());
    case ForKind::kParallel:
    case ForKind::kVectorized:
      return absl::UnimplementedError(absl::StrCat(
          "a ", tir::ForKindName(s->for_kind), " loop (", s->var->name,
          ") in a CUDA kernel: GPU schedules bind loops to threads (a CPU schedule was used?)"));
    case ForKind::kUnrolled:
      Line("#pragma unroll");
      break;
    case ForKind::kSerial:
      break;
  }
  KILN_ASSIGN_OR_RETURN(std::string ty, ValueType(s->var->dtype));
  KILN_ASSIGN_OR_RETURN(std::string lo, Expr(s->a));
  KILN_ASSIGN_OR_RETURN(std::string ext, Expr(s->b));
  const std::string name = Bind(s->var, s->var->name);
  std::string end = tir::IsConstValue(s->a, 0) ? ext : absl::StrCat("(", lo, " + ", ext, ")");
  Line(absl::StrCat("for (", ty, " ", name, " = ", lo, "; ", name, " < ", end, "; ++", name,
                    ") {"));
  ++serial_depth_;
  KILN_RETURN_IF_ERROR(EmitBody(s->body0()));
  --serial_depth_;
  Line("}");
  return absl::OkStatus();
}

}  // namespace internal

const std::string& CudaPrelude() {
  static const std::string* const kPrelude = new std::string(R"(// kiln CUDA prelude
// float16 / bfloat16 values are 16-bit words in memory and float in registers.
#ifdef __CUDA_ARCH__
__device__ __forceinline__ float kiln_h2f(unsigned short h) {
  float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f;
}
__device__ __forceinline__ unsigned short kiln_f2h(float f) {
  unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h;
}
__device__ __forceinline__ unsigned short kiln_f2bf(float f) {
  unsigned short h; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h;
}
#else
inline float kiln_h2f(unsigned short h) { _Float16 x; __builtin_memcpy(&x, &h, 2); return (float)x; }
inline unsigned short kiln_f2h(float f) {
  _Float16 x = (_Float16)f; unsigned short h; __builtin_memcpy(&h, &x, 2); return h;
}
inline unsigned short kiln_f2bf(float f) {
  unsigned int u; __builtin_memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u); return (unsigned short)(u >> 16);
}
#endif
__device__ __forceinline__ float kiln_bf2f(unsigned short h) {
  return __uint_as_float(((unsigned int)h) << 16);
}
__device__ __forceinline__ float kiln_rh(float f) { return kiln_h2f(kiln_f2h(f)); }
__device__ __forceinline__ float kiln_rbf(float f) { return kiln_bf2f(kiln_f2bf(f)); }
__device__ __forceinline__ bool kiln_isnan(double x) { return x != x; }
template <typename To, typename From> __device__ __forceinline__ To kiln_bitcast(From x) {
  union { From f; To t; } u; u.f = x; return u.t;
}
// Floats to integers: truncation, saturating at [lo, hi], NaN -> 0 (the
// interpreter's and codegen_llvm's semantics).
template <typename T> __device__ __forceinline__ T kiln_f2i(double x, double lo, double hi, T tlo, T thi) {
  return x != x ? (T)0 : x <= lo ? tlo : x >= hi ? thi : (T)x;
}
template <typename T> __device__ __forceinline__ T kiln_mod(T a, T b) { return a % b; }
template <> __device__ __forceinline__ float kiln_mod<float>(float a, float b) { return fmodf(a, b); }
template <> __device__ __forceinline__ double kiln_mod<double>(double a, double b) { return fmod(a, b); }
template <typename T> __device__ __forceinline__ T kiln_floordiv(T a, T b) {
  T q = a / b; return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
}
template <> __device__ __forceinline__ float kiln_floordiv<float>(float a, float b) { return floorf(a / b); }
template <> __device__ __forceinline__ double kiln_floordiv<double>(double a, double b) { return floor(a / b); }
template <typename T> __device__ __forceinline__ T kiln_floormod(T a, T b) {
  T r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
template <> __device__ __forceinline__ float kiln_floormod<float>(float a, float b) { return a - floorf(a / b) * b; }
template <> __device__ __forceinline__ double kiln_floormod<double>(double a, double b) { return a - floor(a / b) * b; }
// min/max: NaN propagates (LLVM's minimum/maximum, as the CPU code does).
template <typename T> __device__ __forceinline__ T kiln_min(T a, T b) { return a < b ? a : b; }
template <typename T> __device__ __forceinline__ T kiln_max(T a, T b) { return a > b ? a : b; }
template <> __device__ __forceinline__ float kiln_min<float>(float a, float b) { return (a != a || b != b) ? a + b : fminf(a, b); }
template <> __device__ __forceinline__ float kiln_max<float>(float a, float b) { return (a != a || b != b) ? a + b : fmaxf(a, b); }
template <> __device__ __forceinline__ double kiln_min<double>(double a, double b) { return (a != a || b != b) ? a + b : fmin(a, b); }
template <> __device__ __forceinline__ double kiln_max<double>(double a, double b) { return (a != a || b != b) ? a + b : fmax(a, b); }
)" + TensorCorePrelude());
  return *kPrelude;
}

KernelOptions KernelOptionsFor(const CudaTarget& target) {
  KernelOptions ko;
  ko.wgmma = target.wgmma();
  ko.tf32 = target.tf32;
  ko.wgmma_swizzle = target.wgmma_tma ? 128 : target.wgmma_swizzle;
  ko.wgmma_tma = target.wgmma_tma;
  ko.wgmma_ws = target.wgmma_ws;
  return ko;
}

absl::StatusOr<CudaKernel> GenerateKernel(const tir::PrimFunc& f, const KernelOptions& options) {
  absl::StatusOr<tir::PrimFunc> mma = LowerTensorCoreGemm(
      f, {options.wgmma, options.tf32, options.wgmma_swizzle, options.wgmma_tma, options.wgmma_ws});
  absl::StatusOr<tir::PrimFunc> shuffled = mma.ok() ? LowerWarpReduce(*mma) : mma.status();
  absl::StatusOr<tir::PrimFunc> synced =
      shuffled.ok() ? InsertThreadSync(*shuffled) : shuffled.status();
  absl::StatusOr<CudaKernel> k = absl::InternalError("no kernel");
  if (!synced.ok()) {
    k = synced.status();
  } else {
    // The warp-specialized GEMM tile changes the launch (16 x 24 threads):
    // where the kernel cannot take it (its call below a loop, other
    // barriers), the same kernel without it.
    internal::Emitter ws(*synced, /*warp_specialize=*/true);
    k = ws.Run();
    if (k.ok() && ws.warp_specialize_refused()) k = internal::Emitter(*synced).Run();
  }
  if (!k.ok()) {
    return absl::Status(k.status().code(),
                        absl::StrCat("CUDA code for ", f->name, ": ", k.status().message()));
  }
  return k;
}

std::string ModuleSource(const std::vector<CudaKernel>& kernels) {
  std::string s = CudaPrelude();
  for (const CudaKernel& k : kernels) absl::StrAppend(&s, "\n", k.source);
  return s;
}

}  // namespace kiln::codegen_cuda
