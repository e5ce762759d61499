// File: codegen_cuda/codegen_cuda.cc — loop IR to CUDA C.
#include "codegen_cuda/codegen_cuda.h"

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
#include "codegen_cuda/tensor_core.h"
#include "codegen_cuda/thread_sync.h"
#include "codegen_cuda/warp_reduce.h"
#include "ir/status_macros.h"
#include "ir/tir_functor.h"

namespace kiln::codegen_cuda {
namespace {

using tir::Buffer;
using tir::ExprKind;
using tir::ExprNode;
using tir::ForKind;
using tir::PrimExpr;
using tir::Stmt;
using tir::StmtKind;
using tir::StmtNode;

bool IsHalf(DataType t) { return t.code() == DTypeCode::kFloat && t.bits() == 16; }
bool IsBF16(DataType t) { return t.code() == DTypeCode::kBFloat && t.bits() == 16; }
bool Is16BitFloat(DataType t) { return IsHalf(t) || IsBF16(t); }

// The C type a value of `t` is stored as (buffers, arrays).
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

// The C type a value of `t` is computed in (16-bit floats in float).
absl::StatusOr<std::string> ValueType(DataType t) {
  if (Is16BitFloat(t) && t.lanes() == 1) return std::string("float");
  return StorageType(t);
}

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

std::string FloatLiteral(double v, DataType t) {
  const bool f64 = t.code() == DTypeCode::kFloat && t.bits() == 64;
  if (std::isnan(v)) return f64 ? "__longlong_as_double(0x7ff8000000000000LL)" : "__int_as_float(0x7fc00000)";
  if (std::isinf(v)) {
    if (f64) return v > 0 ? "__longlong_as_double(0x7ff0000000000000LL)"
                          : "__longlong_as_double((long long)0xfff0000000000000ULL)";
    return v > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float((int)0xff800000u)";
  }
  std::string s = f64 ? absl::StrFormat("%.17g", v) : absl::StrFormat("%.9g", static_cast<float>(v));
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  if (!f64) s += "f";
  return s[0] == '-' ? absl::StrCat("(", s, ")") : s;
}

// Static __shared__ memory per block (CUDA's limit without a dynamic opt-in).
constexpr int64_t kMaxStaticShared = 48 * 1024;
// The attribute the GPU schedule puts around a loop of 4 consecutive
// elements (Stage::pragma "kiln_vector", lowering/te/schedule_cuda.h).
constexpr char kVectorPragma[] = "pragma_kiln_vector";

// A root statement of the kernel: a nest bound to threads, or one run by a
// single thread; what it reads and writes (buffer data vars).
struct Unit {
  bool single_thread = false;
  std::set<const ExprNode*> reads, writes;
};

class Emitter {
 public:
  explicit Emitter(const tir::PrimFunc& f) : f_(f) {}

  absl::StatusOr<CudaKernel> Run() {
    CudaKernel k;
    k.name = Sanitize(f_->name);
    KILN_RETURN_IF_ERROR(CollectLaunch(f_->body));
    KILN_RETURN_IF_ERROR(CollectBatchRows());
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

    indent_ = 1;
    // A batch over blockIdx.z: each batched buffer starts at the block's row.
    for (const auto& [param, per_row] : batch_rows_) {
      KILN_ASSIGN_OR_RETURN(std::string name, BufferName(f_->params[param]));
      Line(absl::StrCat(name, " += (long long)blockIdx.z * ", per_row, "LL;"));
    }
    KILN_RETURN_IF_ERROR(EmitRoot(f_->body));
    k.shared_bytes = shared_bytes_;
    if (shared_bytes_ > kMaxStaticShared) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "its __shared__ arrays take ", shared_bytes_, " bytes per block, more than the ",
          kMaxStaticShared, " a kernel may declare statically"));
    }
    std::string head = absl::StrCat("extern \"C\" __global__ void ");
    if (bt > 0) absl::StrAppend(&head, "__launch_bounds__(", bt, ") ");
    absl::StrAppend(&head, k.name, "(", absl::StrJoin(params, ", "), ") {\n");
    k.source = absl::StrCat("// ", f_->name, "\n", head, body_, "}\n");
    return k;
  }

 private:
  // ---- Names ----
  std::string Bind(const PrimExpr& var, absl::string_view hint) {
    std::string base = Sanitize(hint);
    std::string name = base;
    for (int i = 1; used_.count(name); ++i) name = absl::StrCat(base, "_", i);
    used_.insert(name);
    names_[var.get()] = name;
    return name;
  }

  absl::StatusOr<std::string> NameOf(const ExprNode* v) {
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
  absl::Status CollectBatchRows() {
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
  static int TagIndex(absl::string_view tag) {
    static const char* const kTags[] = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z",
                                        "threadIdx.x", "threadIdx.y", "threadIdx.z"};
    for (int i = 0; i < 6; ++i) {
      if (tag == kTags[i]) return i;
    }
    return -1;
  }

  absl::Status AddExtent(absl::string_view tag, const PrimExpr& extent) {
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

  absl::Status CollectLaunch(const Stmt& body) {
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

  static bool HasBinding(const Stmt& s) {
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
  absl::Status EmitRoot(const Stmt& s) {
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
  bool OneBlock() const {
    for (int d = 0; d < (batch_z_ ? 2 : 3); ++d) {
      if (launch_[d] && !tir::IsConstValue(launch_[d], 1)) return false;
    }
    return true;
  }

  // A root nest that reads what an earlier one wrote in other threads: in a
  // one-block launch a block barrier between them orders them (emitted
  // here); otherwise one kernel has no grid-wide barrier, and it is refused.
  absl::Status OrderAfterEarlierUnits(const Unit& u) {
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
  void Line(absl::string_view text) {
    body_.append(static_cast<size_t>(indent_) * 2, ' ');
    body_.append(text.data(), text.size());
    body_.push_back('\n');
  }

  absl::Status EmitLetHead(const Stmt& s) {
    KILN_ASSIGN_OR_RETURN(std::string ty, ValueType(s->var->dtype));
    KILN_ASSIGN_OR_RETURN(std::string v, Expr(s->a));
    const std::string name = Bind(s->var, s->var->name);
    Line(absl::StrCat("const ", ty, " ", name, " = ", v, ";"));
    return absl::OkStatus();
  }

  absl::Status EmitAllocHead(const Stmt& s) {
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

  absl::Status EmitBody(const Stmt& s) {
    ++indent_;
    absl::Status st = EmitStmt(s);
    --indent_;
    return st;
  }

  absl::Status EmitStmt(const Stmt& s) {
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

  // ---- Vectorized global accesses (the "pragma_kiln_vector" loop) ----
  //
  // The schedule marks the innermost loop of 4 consecutive elements of an
  // injective output (8 of 2-byte ones). When its body is one store
  // `out[base + v] = value` to a kernel parameter of that element size with
  // `base` a provable multiple of the lanes, the loop becomes one 16-byte
  // store, and every load in `value` of a parameter of the same element
  // size at `base' + v` (base' a multiple of the lanes) one 16-byte load
  // (float4 / int4 / uint4, or uint4 through an aligned array of 8 2-byte
  // words: ld.global.v4 / st.global.v4); other loads
  // (a broadcast bias) stay per lane. Whether the pointers themselves are
  // 16-byte aligned is only known at run time (a caller's tensor may start
  // anywhere), so the vector form runs under a test of all of them (the same
  // for every thread of the launch) and the scalar loop otherwise. Returns
  // false, emitting nothing, when the loop is not of that form.

  // e == base + v with v appearing once, as a top-level addend.
  static bool SplitLane(const PrimExpr& e, const ExprNode* v, PrimExpr* base) {
    std::vector<PrimExpr> terms;
    std::function<void(const PrimExpr&)> flat = [&](const PrimExpr& x) {
      if (x->kind == ExprKind::kAdd) {
        flat(x->args[0]);
        flat(x->args[1]);
      } else {
        terms.push_back(x);
      }
    };
    flat(e);
    int lane = 0;
    PrimExpr b;
    for (const PrimExpr& t : terms) {
      if (t.get() == v) {
        ++lane;
        continue;
      }
      if (tir::UsesVar(t, [&](const ExprNode* n) { return n == v; })) return false;
      b = b ? tir::Add(b, t) : t;
    }
    if (lane != 1) return false;
    *base = b ? b : tir::IntImm(0);
    return true;
  }

  // Whether e is provably a multiple of m (sums and products of constants).
  static bool MultipleOf(const PrimExpr& e, int64_t m) {
    int64_t c = 0;
    if (tir::IsConstInt(e, &c)) return c % m == 0;
    if (e->kind == ExprKind::kAdd || e->kind == ExprKind::kSub) {
      return MultipleOf(e->args[0], m) && MultipleOf(e->args[1], m);
    }
    if (e->kind == ExprKind::kMul) return MultipleOf(e->args[0], m) || MultipleOf(e->args[1], m);
    return false;
  }

  static const char* VectorType4(DataType t) {
    if (t.lanes() != 1 || t.bits() != 32) return nullptr;
    if (t.is_float()) return "float4";
    if (t.is_int()) return "int4";
    if (t.is_uint()) return "uint4";
    return nullptr;
  }

  bool IsParam(const Buffer& b) const {
    for (const Buffer& p : f_->params) {
      if (p->data.get() == b->data.get()) return !b->elem_offset || tir::IsConstValue(b->elem_offset, 0);
    }
    return false;
  }

  // 8 lanes of 2-byte elements (float16, bfloat16, 16-bit integers): a
  // 16-byte access through an aligned array of the storage type.
  static bool Vector8(DataType t) { return t.lanes() == 1 && t.bits() == 16; }
  // Whether a buffer of `t` is read or written `lanes` elements (16 bytes) at a time.
  static bool VectorOf(DataType t, int64_t lanes) {
    return (lanes == 4 && VectorType4(t) != nullptr) || (lanes == 8 && Vector8(t));
  }

  absl::StatusOr<bool> EmitVector(const Stmt& loop) {
    int64_t lanes = 0;
    if (loop->kind != StmtKind::kFor || loop->for_kind != ForKind::kSerial ||
        !tir::IsConstValue(loop->a, 0) || !tir::IsConstInt(loop->b, &lanes) ||
        (lanes != 4 && lanes != 8)) {
      return false;
    }
    const Stmt& st = loop->body0();
    const ExprNode* v = loop->var.get();
    PrimExpr out_base;
    if (st->kind != StmtKind::kStore || st->indices.size() != 1 || !IsParam(st->buffer) ||
        !VectorOf(st->buffer->dtype, lanes) || !SplitLane(st->indices[0], v, &out_base) ||
        !MultipleOf(out_base, lanes)) {
      return false;
    }
    // The loads to vectorize, each replaced by a placeholder var.
    struct VLoad {
      Buffer buffer;
      PrimExpr base;
      tir::Var slot;
    };
    std::vector<VLoad> vloads;
    class Replace : public tir::StmtExprMutator {
     public:
      Replace(const ExprNode* v, int64_t lanes, std::vector<VLoad>* out, const Emitter* em)
          : v_(v), lanes_(lanes), out_(out), em_(em) {}
      PrimExpr VisitExpr_(const PrimExpr& e) override {
        PrimExpr base;
        if (e->kind == ExprKind::kLoad && e->args.size() == 1 && em_->IsParam(e->buffer) &&
            VectorOf(e->buffer->dtype, lanes_) && SplitLane(e->args[0], v_, &base) &&
            MultipleOf(base, lanes_)) {
          for (const VLoad& l : *out_) {
            if (l.buffer->data.get() == e->buffer->data.get() && tir::ExprDeepEqual(l.base, base)) {
              return l.slot;
            }
          }
          tir::Var slot = tir::MakeVar(absl::StrCat("kv", out_->size()), e->dtype);
          out_->push_back({e->buffer, base, slot});
          return slot;
        }
        return MutateChildren(e);
      }

     private:
      const ExprNode* v_;
      int64_t lanes_;
      std::vector<VLoad>* out_;
      const Emitter* em_;
    };
    Replace rep(v, lanes, &vloads, this);
    const PrimExpr value = rep.VisitExpr(st->a);
    // Every pointer the vector form touches must be 16-byte aligned.
    KILN_ASSIGN_OR_RETURN(std::string out_name, BufferName(st->buffer));
    std::vector<std::string> ptrs = {absl::StrCat("(unsigned long long)", out_name)};
    for (const VLoad& l : vloads) {
      KILN_ASSIGN_OR_RETURN(std::string n, BufferName(l.buffer));
      ptrs.push_back(absl::StrCat("(unsigned long long)", n));
    }
    Line(absl::StrCat("if (((", absl::StrJoin(ptrs, " | "), ") & 15ull) == 0ull) {"));
    ++indent_;
    // Lane i of a vector value `name`: name.x .. name.w (float4, int4,
    // uint4), or name[i] of an aligned array of 8 2-byte words (read as
    // float for float16/bfloat16, as the scalar loads are).
    static const char* const kLane[] = {".x", ".y", ".z", ".w"};
    auto lane_of = [&](const std::string& name, DataType t, int64_t i) {
      if (lanes == 4) return absl::StrCat(name, kLane[i]);
      const std::string w = absl::StrCat(name, "[", i, "]");
      if (IsHalf(t)) return absl::StrCat("kiln_h2f(", w, ")");
      if (IsBF16(t)) return absl::StrCat("kiln_bf2f(", w, ")");
      return w;
    };
    std::vector<std::string> names;
    for (const VLoad& l : vloads) {
      KILN_ASSIGN_OR_RETURN(std::string n, BufferName(l.buffer));
      KILN_ASSIGN_OR_RETURN(std::string b, Expr(l.base));
      const std::string name = Bind(l.slot, l.slot->name);
      names.push_back(name);
      if (lanes == 4) {
        const char* ty = VectorType4(l.buffer->dtype);
        Line(absl::StrCat("const ", ty, " ", name, " = *(const ", ty, "*)(", n, " + ", b, ");"));
      } else {
        KILN_ASSIGN_OR_RETURN(std::string ty, StorageType(l.buffer->dtype));
        Line(absl::StrCat("__align__(16) ", ty, " ", name, "[8];"));
        Line(absl::StrCat("*(uint4*)", name, " = *(const uint4*)(", n, " + ", b, ");"));
      }
    }
    const DataType odt = st->buffer->dtype;
    const std::string o = Bind(loop->var, "kvo");
    if (lanes == 4) {
      Line(absl::StrCat(VectorType4(odt), " ", o, ";"));
    } else {
      KILN_ASSIGN_OR_RETURN(std::string ty, StorageType(odt));
      Line(absl::StrCat("__align__(16) ", ty, " ", o, "[8];"));
    }
    for (int64_t lane = 0; lane < lanes; ++lane) {
      tir::VarMap m;
      m[v] = tir::IntImm(lane);
      for (size_t i = 0; i < vloads.size(); ++i) {
        tir::Var lv = tir::MakeVar(absl::StrCat(names[i], "_", lane), vloads[i].slot->dtype);
        names_[lv.get()] = lane_of(names[i], vloads[i].buffer->dtype, lane);
        m[vloads[i].slot.get()] = lv;
      }
      KILN_ASSIGN_OR_RETURN(std::string e, Expr(tir::Substitute(value, m)));
      if (IsHalf(odt)) e = absl::StrCat("kiln_f2h(", e, ")");
      if (IsBF16(odt)) e = absl::StrCat("kiln_f2bf(", e, ")");
      Line(absl::StrCat(o, lanes == 4 ? kLane[lane] : absl::StrCat("[", lane, "]"), " = ", e, ";"));
    }
    KILN_ASSIGN_OR_RETURN(std::string ob, Expr(out_base));
    if (lanes == 4) {
      Line(absl::StrCat("*(", VectorType4(odt), "*)(", out_name, " + ", ob, ") = ", o, ";"));
    } else {
      Line(absl::StrCat("*(uint4*)(", out_name, " + ", ob, ") = *(const uint4*)", o, ";"));
    }
    --indent_;
    Line("} else {");
    ++indent_;
    KILN_RETURN_IF_ERROR(EmitFor(loop));
    --indent_;
    Line("}");
    return true;
  }

  absl::Status EmitMma(const PrimExpr& call) {
    if (call->name == kGemmTcF16 || call->name == kGemmTcBF16 || call->name == kGemmTf32) {
      return EmitGemmTc(call);
    }
    if (call->name == kGemmWgF16 || call->name == kGemmWgBF16) return EmitGemmWg(call);
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
  absl::StatusOr<std::vector<std::string>> Args(const PrimExpr& call) {
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
  absl::Status EmitGemmTc(const PrimExpr& call) {
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
  absl::Status EmitConvTc(const PrimExpr& call) {
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

  // kiln_gemm_wg<bf16>(cl, A + a_base, a_row_stride, B + b_base,
  // b_col_stride, steps, rows, cols, k) (both k strides 1).
  absl::Status EmitGemmWg(const PrimExpr& call) {
    if (call->args.size() != 11) {
      return absl::InvalidArgumentError(
          absl::StrCat("call '", call->name, "' with ", call->args.size(), " arguments"));
    }
    KILN_ASSIGN_OR_RETURN(std::vector<std::string> a, Args(call));
    Line(absl::StrCat("kiln_gemm_wg<", call->name == kGemmWgBF16 ? "true" : "false", ">(", a[0],
                      ", ", a[1], " + (", a[2], "), ", a[3], ", ", a[4], " + (", a[5], "), ", a[6],
                      ", ", a[7], ", ", a[8], ", ", a[9], ", ", a[10], ");"));
    if (!gemm_tc_) shared_bytes_ += kGemmTcSharedBytes;
    gemm_tc_ = true;
    return absl::OkStatus();
  }

  absl::Status EmitBound(const PrimExpr& var, absl::string_view tag, const PrimExpr& extent,
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

  absl::Status EmitFor(const Stmt& s) {
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
    KILN_RETURN_IF_ERROR(EmitBody(s->body0()));
    Line("}");
    return absl::OkStatus();
  }

  // ---- Expressions ----
  absl::StatusOr<std::string> BufferName(const Buffer& b) {
    auto it = buffer_names_.find(b->data.get());
    if (it == buffer_names_.end()) {
      return absl::InvalidArgumentError(absl::StrCat("buffer '", b->name, "' is not in scope"));
    }
    return it->second;
  }

  absl::StatusOr<std::string> Index(const Buffer& b, const PrimExpr& idx) {
    if (idx->dtype.lanes() != 1) {
      return absl::UnimplementedError(absl::StrCat(
          "a vector access of '", b->name, "' (the CUDA backend emits scalar code)"));
    }
    KILN_ASSIGN_OR_RETURN(std::string i, Expr(idx));
    if (b->elem_offset && !tir::IsConstValue(b->elem_offset, 0)) {
      KILN_ASSIGN_OR_RETURN(std::string off, Expr(b->elem_offset));
      return absl::StrCat("(", off, " + ", i, ")");
    }
    return i;
  }

  // Rounds a float computation of a 16-bit float type to that type.
  static std::string Round(DataType t, std::string v) {
    if (IsHalf(t)) return absl::StrCat("kiln_rh(", v, ")");
    if (IsBF16(t)) return absl::StrCat("kiln_rbf(", v, ")");
    return v;
  }

  // Narrow integer results wrap to their type (C promotes them to int).
  absl::StatusOr<std::string> Wrap(DataType t, std::string v) {
    if ((t.is_int() || t.is_uint()) && t.bits() < 32) {
      KILN_ASSIGN_OR_RETURN(std::string ty, StorageType(t));
      return absl::StrCat("((", ty, ")", v, ")");
    }
    return Round(t, std::move(v));
  }

  absl::StatusOr<std::string> Expr(const PrimExpr& e) {
    if (e->dtype.lanes() != 1) {
      return absl::UnimplementedError(absl::StrCat(
          "vector expression of type ", e->dtype.ToString(), " (the CUDA backend emits scalar code)"));
    }
    const DataType t = e->dtype;
    switch (e->kind) {
      case ExprKind::kIntImm: {
        if (t.is_bool()) return std::string(e->int_value != 0 ? "true" : "false");
        if (t.is_uint()) {
          const uint64_t u = static_cast<uint64_t>(e->int_value);
          if (t.bits() == 64) return absl::StrCat(u, "ULL");
          KILN_ASSIGN_OR_RETURN(std::string ty, StorageType(t));
          return absl::StrCat("((", ty, ")", u, "u)");
        }
        if (t.bits() == 64) {
          if (e->int_value == std::numeric_limits<int64_t>::min()) {
            return std::string("(-9223372036854775807LL - 1)");
          }
          return e->int_value < 0 ? absl::StrCat("(", e->int_value, "LL)")
                                  : absl::StrCat(e->int_value, "LL");
        }
        if (t.bits() == 32) {
          if (e->int_value == std::numeric_limits<int32_t>::min()) return std::string("(-2147483647 - 1)");
          return e->int_value < 0 ? absl::StrCat("(", e->int_value, ")") : absl::StrCat(e->int_value);
        }
        KILN_ASSIGN_OR_RETURN(std::string ty, StorageType(t));
        return absl::StrCat("((", ty, ")", e->int_value, ")");
      }
      case ExprKind::kFloatImm:
        return FloatLiteral(e->float_value, t);
      case ExprKind::kStringImm:
        return absl::UnimplementedError("a string value in CUDA code");
      case ExprKind::kVar:
        return NameOf(e.get());
      case ExprKind::kAdd:
      case ExprKind::kSub:
      case ExprKind::kMul:
      case ExprKind::kDiv: {
        KILN_ASSIGN_OR_RETURN(std::string a, Expr(e->args[0]));
        KILN_ASSIGN_OR_RETURN(std::string b, Expr(e->args[1]));
        const char* op = e->kind == ExprKind::kAdd   ? " + "
                         : e->kind == ExprKind::kSub ? " - "
                         : e->kind == ExprKind::kMul ? " * "
                                                     : " / ";
        return Wrap(t, absl::StrCat("(", a, op, b, ")"));
      }
      case ExprKind::kMod:
      case ExprKind::kFloorDiv:
      case ExprKind::kFloorMod:
      case ExprKind::kMin:
      case ExprKind::kMax: {
        KILN_ASSIGN_OR_RETURN(std::string a, Expr(e->args[0]));
        KILN_ASSIGN_OR_RETURN(std::string b, Expr(e->args[1]));
        static const std::map<ExprKind, std::string> kFn = {
            {ExprKind::kMod, "kiln_mod"},           {ExprKind::kFloorDiv, "kiln_floordiv"},
            {ExprKind::kFloorMod, "kiln_floormod"}, {ExprKind::kMin, "kiln_min"},
            {ExprKind::kMax, "kiln_max"}};
        if (e->kind == ExprKind::kMod && t.is_integral()) {
          return Wrap(t, absl::StrCat("(", a, " % ", b, ")"));
        }
        KILN_ASSIGN_OR_RETURN(std::string vt, ValueType(t));
        return Wrap(t, absl::StrCat(kFn.at(e->kind), "<", vt, ">(", a, ", ", b, ")"));
      }
      case ExprKind::kEQ:
      case ExprKind::kNE:
      case ExprKind::kLT:
      case ExprKind::kLE:
      case ExprKind::kGT:
      case ExprKind::kGE:
      case ExprKind::kAnd:
      case ExprKind::kOr: {
        KILN_ASSIGN_OR_RETURN(std::string a, Expr(e->args[0]));
        KILN_ASSIGN_OR_RETURN(std::string b, Expr(e->args[1]));
        static const std::map<ExprKind, std::string> kOp = {
            {ExprKind::kEQ, " == "}, {ExprKind::kNE, " != "}, {ExprKind::kLT, " < "},
            {ExprKind::kLE, " <= "}, {ExprKind::kGT, " > "},  {ExprKind::kGE, " >= "},
            {ExprKind::kAnd, " && "}, {ExprKind::kOr, " || "}};
        return absl::StrCat("(", a, kOp.at(e->kind), b, ")");
      }
      case ExprKind::kNot: {
        KILN_ASSIGN_OR_RETURN(std::string a, Expr(e->args[0]));
        return absl::StrCat("(!", a, ")");
      }
      case ExprKind::kSelect: {
        KILN_ASSIGN_OR_RETURN(std::string c, Expr(e->args[0]));
        KILN_ASSIGN_OR_RETURN(std::string a, Expr(e->args[1]));
        KILN_ASSIGN_OR_RETURN(std::string b, Expr(e->args[2]));
        return absl::StrCat("(", c, " ? ", a, " : ", b, ")");
      }
      case ExprKind::kCast:
        return CastExpr(t, e->args[0]);
      case ExprKind::kCall:
        return CallExpr(e);
      case ExprKind::kLoad: {
        if (e->args.size() != 1) {
          return absl::InvalidArgumentError(absl::StrCat(
              "load of '", e->buffer->name, "' with ", e->args.size(),
              " indices (run storage_flatten first: the CUDA backend takes flat buffers)"));
        }
        KILN_ASSIGN_OR_RETURN(std::string name, BufferName(e->buffer));
        KILN_ASSIGN_OR_RETURN(std::string idx, Index(e->buffer, e->args[0]));
        std::string v = absl::StrCat(name, "[", idx, "]");
        if (IsHalf(e->buffer->dtype)) return absl::StrCat("kiln_h2f(", v, ")");
        if (IsBF16(e->buffer->dtype)) return absl::StrCat("kiln_bf2f(", v, ")");
        return v;
      }
      case ExprKind::kLet: {
        KILN_ASSIGN_OR_RETURN(std::string vt, ValueType(e->args[0]->dtype));
        KILN_ASSIGN_OR_RETURN(std::string value, Expr(e->args[1]));
        const std::string name = Bind(e->args[0], e->args[0]->name);
        KILN_ASSIGN_OR_RETURN(std::string body, Expr(e->args[2]));
        return absl::StrCat("([&]() { const ", vt, " ", name, " = ", value, "; return ", body,
                            "; }())");
      }
      case ExprKind::kRamp:
      case ExprKind::kBroadcast:
        return absl::UnimplementedError("vector expression (ramp/broadcast) in CUDA code");
      case ExprKind::kReduce:
      case ExprKind::kProducerLoad:
        return absl::InvalidArgumentError(
            "a tensor-expression node (reduce / producer load) in loop IR: schedule and lower it "
            "first");
    }
    return absl::InternalError("unknown expression kind");
  }

  absl::StatusOr<std::string> CastExpr(DataType to, const PrimExpr& x) {
    KILN_ASSIGN_OR_RETURN(std::string v, Expr(x));
    const DataType from = x->dtype;
    if (to.is_bool()) return absl::StrCat("(", v, " != 0)");
    if (Is16BitFloat(to)) return Round(to, absl::StrCat("((float)", v, ")"));
    KILN_ASSIGN_OR_RETURN(std::string ty, StorageType(to));
    if (from.is_float() && (to.is_int() || to.is_uint())) {
      // C leaves out-of-range conversions undefined; PTX's cvt.rzi saturates
      // (NaN to 0), which is what this does on every GPU.
      const bool sgn = to.is_int();
      const int bits = to.bits();
      // The range as doubles (hi rounds up to 2^bits-ish for 64 bits: x >= it
      // saturates) and as values of the type.
      const double lo = sgn ? -std::ldexp(1.0, bits - 1) : 0.0;
      const double hi = sgn ? std::ldexp(1.0, bits - 1) - 1.0 : std::ldexp(1.0, bits) - 1.0;
      std::string tlo, thi;
      if (sgn) {
        tlo = bits == 64 ? "(-9223372036854775807LL - 1)" : absl::StrCat("(", ty, ")(", static_cast<int64_t>(lo), ")");
        thi = bits == 64 ? "9223372036854775807LL" : absl::StrCat("(", ty, ")", static_cast<int64_t>(hi));
      } else {
        tlo = absl::StrCat("(", ty, ")0");
        thi = bits == 64 ? "18446744073709551615ULL" : absl::StrCat("(", ty, ")", static_cast<uint64_t>(hi), "u");
      }
      return absl::StrCat("kiln_f2i<", ty, ">(", v, ", ", absl::StrFormat("%.17g", lo), ", ",
                          absl::StrFormat("%.17g", hi), ", ", tlo, ", ", thi, ")");
    }
    return absl::StrCat("((", ty, ")", v, ")");
  }

  absl::StatusOr<std::string> CallExpr(const PrimExpr& e) {
    const std::string& n = e->name;
    const DataType t = e->dtype;
    std::vector<std::string> args;
    for (const PrimExpr& a : e->args) {
      KILN_ASSIGN_OR_RETURN(std::string s, Expr(a));
      args.push_back(std::move(s));
    }
    auto need = [&](size_t k) -> absl::Status {
      if (args.size() != k) {
        return absl::InvalidArgumentError(
            absl::StrCat("call '", n, "' with ", args.size(), " arguments, expected ", k));
      }
      return absl::OkStatus();
    };
    if (n == "likely") {
      KILN_RETURN_IF_ERROR(need(1));
      return args[0];
    }
    if (n == "if_then_else") {
      KILN_RETURN_IF_ERROR(need(3));
      return absl::StrCat("(", args[0], " ? ", args[1], " : ", args[2], ")");
    }
    if (n == "isnan") {
      KILN_RETURN_IF_ERROR(need(1));
      if (!e->args[0]->dtype.is_float()) return std::string("false");
      return absl::StrCat("kiln_isnan(", args[0], ")");
    }
    if (n == kShflXor) {  // codegen_cuda/warp_reduce.h
      KILN_RETURN_IF_ERROR(need(2));
      return Round(t, absl::StrCat("__shfl_xor_sync(0xffffffffu, ", args[0], ", (int)(", args[1],
                                   "))"));
    }
    if (n == "reinterpret") {
      KILN_RETURN_IF_ERROR(need(1));
      const DataType from = e->args[0]->dtype;
      if (from.bits() != t.bits()) {
        return absl::InvalidArgumentError(absl::StrCat("reinterpret of ", from.ToString(), " as ",
                                                       t.ToString(), ": sizes differ"));
      }
      std::string bits = args[0];
      if (IsHalf(from)) bits = absl::StrCat("kiln_f2h(", bits, ")");
      if (IsBF16(from)) bits = absl::StrCat("kiln_f2bf(", bits, ")");
      KILN_ASSIGN_OR_RETURN(std::string from_ty, StorageType(from));
      KILN_ASSIGN_OR_RETURN(std::string to_ty, StorageType(t));
      std::string r = absl::StrCat("kiln_bitcast<", to_ty, ", ", from_ty, ">(", bits, ")");
      if (IsHalf(t)) return absl::StrCat("kiln_h2f(", r, ")");
      if (IsBF16(t)) return absl::StrCat("kiln_bf2f(", r, ")");
      return r;
    }
    if (!t.is_float()) {
      return absl::UnimplementedError(absl::StrCat(
          "call '", n, "' of type ", t.ToString(),
          (e->effect == tir::CallEffect::kOpaque ? " (an external function: none exist on the GPU)" : "")));
    }
    const bool f64 = t.code() == DTypeCode::kFloat && t.bits() == 64;
    const std::string sfx = f64 ? "" : "f";
    static const std::set<std::string> kUnary = {
        "exp",  "log",  "sqrt", "rsqrt", "tanh", "erf",  "fabs",  "floor", "ceil",
        "trunc", "sin", "cos",  "exp2",  "log2", "log1p", "expm1", "tan",   "asin",
        "acos", "atan", "sinh", "cosh",  "asinh", "acosh", "atanh"};
    static const std::set<std::string> kBinary = {"pow", "fmod", "copysign"};
    std::string r;
    if (kUnary.count(n)) {
      KILN_RETURN_IF_ERROR(need(1));
      r = absl::StrCat(n, sfx, "(", args[0], ")");
    } else if (kBinary.count(n)) {
      KILN_RETURN_IF_ERROR(need(2));
      r = absl::StrCat(n, sfx, "(", args[0], ", ", args[1], ")");
    } else if (n == "round") {  // half to even
      KILN_RETURN_IF_ERROR(need(1));
      r = absl::StrCat("rint", sfx, "(", args[0], ")");
    } else if (n == "sigmoid") {
      KILN_RETURN_IF_ERROR(need(1));
      r = f64 ? absl::StrCat("(1.0 / (1.0 + exp(-(", args[0], "))))")
              : absl::StrCat("(1.0f / (1.0f + expf(-(", args[0], "))))");
    } else if (n == "ldexp") {
      KILN_RETURN_IF_ERROR(need(2));
      r = absl::StrCat("ldexp", sfx, "(", args[0], ", (int)(", args[1], "))");
    } else {
      return absl::UnimplementedError(absl::StrCat(
          "call '", n, "'",
          (e->effect == tir::CallEffect::kOpaque ? " (an external function: none exist on the GPU)"
                                                 : " has no CUDA implementation")));
    }
    return Round(t, r);
  }

  const tir::PrimFunc& f_;
  std::string body_;
  int indent_ = 1;
  std::unordered_map<const ExprNode*, std::string> names_;
  std::unordered_map<const ExprNode*, std::string> buffer_names_;
  std::set<std::string> used_;
  std::array<PrimExpr, 6> launch_;  // blockIdx.xyz, threadIdx.xyz extents
  std::vector<std::pair<size_t, int64_t>> batch_rows_;  // kiln.batch_z: (param, elements per row)
  bool batch_z_ = false;
  std::vector<Unit> units_;
  size_t synced_units_ = 0;  // units before it are ordered by a barrier
  bool mma_finish_ = false;   // kiln_mma_finish's shared tile counted
  bool gemm_tc_ = false;      // kiln_gemm_tc's stages counted
  int64_t shared_bytes_ = 0;
};

}  // namespace

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

absl::StatusOr<CudaKernel> GenerateKernel(const tir::PrimFunc& f, const KernelOptions& options) {
  absl::StatusOr<tir::PrimFunc> mma = LowerTensorCoreGemm(f, {options.wgmma, options.tf32});
  absl::StatusOr<tir::PrimFunc> shuffled = mma.ok() ? LowerWarpReduce(*mma) : mma.status();
  absl::StatusOr<tir::PrimFunc> synced =
      shuffled.ok() ? InsertThreadSync(*shuffled) : shuffled.status();
  absl::StatusOr<CudaKernel> k = synced.ok() ? Emitter(*synced).Run()
                                             : absl::StatusOr<CudaKernel>(synced.status());
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
