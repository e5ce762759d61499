// FoldScaleAxis: backward folding at each `multiply`, forward folding at each
// conv2d / dense, in one memoized bottom-up rewrite. Patterns are matched on
// the original (typed) nodes; rewritten operands come from the memo.
#include "passes/fold_scale_axis/fold_scale_axis.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "ir/op.h"
#include "ir/op_attrs.h"
#include "ir/status_macros.h"
#include "ir/traversal.h"

namespace kiln::passes {
namespace {

const CallNode* OpCall(const Expr& e, absl::string_view name) {
  const auto* c = e.as<CallNode>();
  if (c == nullptr) return nullptr;
  const auto* op = c->op.as<OpNode>();
  return (op != nullptr && op->name() == name) ? c : nullptr;
}

const TensorTypeNode* TT(const Expr& e) {
  return e->checked_type() ? e->checked_type().as<TensorTypeNode>() : nullptr;
}

bool SameTensorType(const Expr& a, const Expr& b) {
  const TensorTypeNode* ta = TT(a);
  const TensorTypeNode* tb = TT(b);
  return ta != nullptr && tb != nullptr && ta->dtype == tb->dtype && ta->shape == tb->shape;
}

// The values of a float32 constant that varies only along axis `cpos` of a
// rank-`rank` tensor (its shape right-aligned to `rank`): C values, or one
// value for a uniform scale.
std::optional<std::vector<float>> ChannelValues(const Expr& s, int rank, int cpos) {
  const auto* c = s.as<ConstantNode>();
  if (c == nullptr || c->data->dtype() != DataType::Float(32)) return std::nullopt;
  const HostTensor& t = *c->data;
  if (t.ndim() > rank) return std::nullopt;
  for (int i = 0; i < t.ndim(); ++i) {
    const int axis = rank - t.ndim() + i;
    if (axis != cpos && t.shape()[static_cast<size_t>(i)] != 1) return std::nullopt;
  }
  const float* p = t.data<float>();
  return std::vector<float>(p, p + t.num_elements());
}

bool AllPositive(const std::vector<float>& v) {
  for (float x : v) {
    if (!(x > 0)) return false;
  }
  return true;
}

// Position of `axis` in a 4-letter permuted layout such as NCHW or HWIO; -1
// for anything else (blocked layouts).
int AxisOf(const std::string& layout, char axis) {
  if (layout.size() != 4) return -1;
  size_t p = layout.find(axis);
  return p == std::string::npos ? -1 : static_cast<int>(p);
}

absl::StatusOr<Constant> FloatConstant(std::vector<int64_t> shape, const std::vector<float>& v) {
  KILN_ASSIGN_OR_RETURN(Ref<HostTensor> t,
                        HostTensor::FromVector(DataType::Float(32), std::move(shape), v));
  return MakeConstant(t);
}

// `w` scaled by `s` along `axis` (w has rank `rank`): computed when `w` is a
// float32 constant, else `multiply(w, s reshaped to broadcast along axis)`.
absl::StatusOr<Expr> ScaleAlongAxis(const Expr& w, int axis, int rank,
                                    const std::vector<float>& s) {
  if (const auto* c = w.as<ConstantNode>()) {
    const HostTensor& t = *c->data;
    const bool fits = s.size() == 1 || (t.ndim() == rank && t.shape()[static_cast<size_t>(axis)] ==
                                                                 static_cast<int64_t>(s.size()));
    if (t.dtype() == DataType::Float(32) && fits) {
      // outer x channel x inner loops: no division per element (weights are
      // tens of millions of floats).
      const int64_t n = static_cast<int64_t>(s.size());
      int64_t inner = 1;
      if (n == 1) {
        inner = t.num_elements();
      } else {
        for (int i = axis + 1; i < t.ndim(); ++i) inner *= t.shape()[static_cast<size_t>(i)];
      }
      const int64_t outer = (n * inner) == 0 ? 0 : t.num_elements() / (n * inner);
      KILN_ASSIGN_OR_RETURN(Ref<HostTensor> out,
                            HostTensor::CreateUninitialized(DataType::Float(32), t.shape()));
      const float* p = t.data<float>();
      float* q = out->mutable_data<float>();
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t ch = 0; ch < n; ++ch) {
          const float sc = s[static_cast<size_t>(ch)];
          for (int64_t k = 0; k < inner; ++k) *q++ = *p++ * sc;
        }
      }
      // The scaled weight keeps the weight's name (its ONNX initializer).
      KILN_ASSIGN_OR_RETURN(Constant k,
                            MakeConstant(Ref<const HostTensor>(std::move(out)), c->name_hint));
      return Expr(k);
    }
  }
  std::vector<int64_t> shape{static_cast<int64_t>(s.size())};
  if (s.size() == 1) {
    shape.clear();
  } else {
    for (int i = axis + 1; i < rank; ++i) shape.push_back(1);
  }
  KILN_ASSIGN_OR_RETURN(Constant k, FloatConstant(shape, s));
  KILN_ASSIGN_OR_RETURN(Op mul, GetOp("multiply"));
  KILN_ASSIGN_OR_RETURN(Call c, MakeCall(mul, {w, k}));
  return Expr(c);
}

class Folder : public ExprRewriter {
 public:
  explicit Folder(const Expr& body) {
    uses_[body.get()] = 1;
    for (const Expr& e : PostOrder(body)) {
      ForEachChild(e, [&](const Expr& c) { ++uses_[c.get()]; });
    }
  }

 protected:
  absl::StatusOr<Expr> PostVisit(const Expr& pre, Expr post) override {
    if (OpCall(pre, "multiply") != nullptr) {
      KILN_ASSIGN_OR_RETURN(std::optional<Expr> r, Backward(pre));
      if (r) return *r;
    } else if (OpCall(pre, "nn.conv2d") != nullptr || OpCall(pre, "nn.dense") != nullptr) {
      KILN_ASSIGN_OR_RETURN(std::optional<Expr> r, Forward(pre, post));
      if (r) return *r;
    }
    return post;
  }

 private:
  bool SingleUse(const Expr& e) const {
    auto it = uses_.find(e.get());
    return it != uses_.end() && it->second == 1;
  }

  // Where the channel axis of the op's output is, and the weight axis it maps
  // to (`out_channel`: O of the kernel / units of dense; else I / K).
  struct Site {
    int rank = 0;
    int channel = -1;
    int weight_axis = -1;
    int weight_rank = 0;
  };
  static std::optional<Site> SiteOf(const CallNode* op, bool out_channel) {
    Site s;
    if (const auto* a = op->attrs.as<Conv2DAttrs>()) {
      if (!out_channel && a->groups != 1) return std::nullopt;
      const std::string& dl = out_channel && !a->out_layout.empty() ? a->out_layout
                                                                     : a->data_layout;
      s.rank = 4;
      s.channel = AxisOf(dl, 'C');
      s.weight_axis = AxisOf(a->kernel_layout, out_channel ? 'O' : 'I');
      s.weight_rank = 4;
    } else if (op->attrs.as<DenseAttrs>() != nullptr) {
      const TensorTypeNode* t = TT(op->args[0]);
      if (t == nullptr) return std::nullopt;
      s.rank = t->ndim();
      s.channel = s.rank - 1;
      s.weight_axis = out_channel ? 0 : 1;
      s.weight_rank = 2;
    } else {
      return std::nullopt;
    }
    if (s.channel < 0 || s.weight_axis < 0) return std::nullopt;
    return s;
  }

  // multiply(chain(conv2d | dense), s) -> chain'(op with scaled weight).
  absl::StatusOr<std::optional<Expr>> Backward(const Expr& pre) {
    const CallNode* mul = OpCall(pre, "multiply");
    for (int k = 1; k >= 0; --k) {
      const Expr& s = mul->args[static_cast<size_t>(k)];
      const Expr& e = mul->args[static_cast<size_t>(1 - k)];
      if (s.as<ConstantNode>() == nullptr || !SameTensorType(e, pre)) continue;
      std::vector<Expr> chain;  // outermost first
      Expr cur = e;
      bool through_relu = false;
      const CallNode* anchor = nullptr;
      while (SingleUse(cur)) {
        const CallNode* c = cur.as<CallNode>();
        size_t next = 0;
        if (OpCall(cur, "nn.relu") != nullptr) {
          through_relu = true;
        } else if (OpCall(cur, "nn.bias_add") != nullptr) {
          if (c->args[1].as<ConstantNode>() == nullptr) break;
        } else if (OpCall(cur, "add") != nullptr) {
          const bool lhs_const = c->args[0].as<ConstantNode>() != nullptr;
          const bool rhs_const = c->args[1].as<ConstantNode>() != nullptr;
          next = lhs_const ? 1 : 0;
          if (lhs_const == rhs_const || !SameTensorType(c->args[next], cur)) break;
        } else if (OpCall(cur, "nn.conv2d") != nullptr || OpCall(cur, "nn.dense") != nullptr) {
          anchor = c;
          break;
        } else {
          break;
        }
        chain.push_back(cur);
        cur = c->args[next];
      }
      if (anchor == nullptr) continue;
      std::optional<Site> site = SiteOf(anchor, /*out_channel=*/true);
      if (!site) continue;
      std::optional<std::vector<float>> sv = ChannelValues(s, site->rank, site->channel);
      if (!sv || (through_relu && !AllPositive(*sv))) continue;
      // Scale each bias; give up if one is not per-channel.
      std::vector<Expr> new_consts(chain.size());
      bool ok = true;
      for (size_t i = 0; i < chain.size() && ok; ++i) {
        const CallNode* c = chain[i].as<CallNode>();
        if (OpCall(chain[i], "nn.relu") != nullptr) continue;
        const bool is_bias_add = OpCall(chain[i], "nn.bias_add") != nullptr;
        const size_t ci = (!is_bias_add && c->args[0].as<ConstantNode>()) ? 0 : 1;
        const Expr& b = c->args[ci];
        if (is_bias_add) {
          const auto* a = c->attrs.as<BiasAddAttrs>();
          const int axis = static_cast<int>(a->axis < 0 ? a->axis + site->rank : a->axis);
          const auto* bc = b.as<ConstantNode>();
          if (axis != site->channel || bc->data->ndim() != 1) ok = false;
          if (!ok) break;
          KILN_ASSIGN_OR_RETURN(new_consts[i], ScaleAlongAxis(b, 0, 1, *sv));
          if (new_consts[i].as<ConstantNode>() == nullptr) ok = false;
        } else {
          std::optional<std::vector<float>> bv = ChannelValues(b, site->rank, site->channel);
          if (!bv) {
            ok = false;
            break;
          }
          const HostTensor& bt = *b.as<ConstantNode>()->data;
          if (bv->size() == sv->size() || sv->size() == 1) {
            std::vector<float> out(bv->size());
            for (size_t j = 0; j < out.size(); ++j) out[j] = (*bv)[j] * (*sv)[sv->size() == 1 ? 0 : j];
            KILN_ASSIGN_OR_RETURN(new_consts[i], FloatConstant(bt.shape(), out));
          } else if (bv->size() == 1) {
            std::vector<float> out(sv->size());
            for (size_t j = 0; j < out.size(); ++j) out[j] = (*bv)[0] * (*sv)[j];
            std::vector<int64_t> shape{static_cast<int64_t>(out.size())};
            for (int r = site->channel + 1; r < site->rank; ++r) shape.push_back(1);
            KILN_ASSIGN_OR_RETURN(new_consts[i], FloatConstant(shape, out));
          } else {
            ok = false;
          }
        }
      }
      if (!ok) continue;
      // The anchor as rewritten so far (forward folding may have changed it).
      const CallNode* now = Memo(Expr(anchor)).as<CallNode>();
      if (now == nullptr) continue;
      KILN_ASSIGN_OR_RETURN(Expr w,
                            ScaleAlongAxis(now->args[1], site->weight_axis, site->weight_rank, *sv));
      KILN_ASSIGN_OR_RETURN(Call folded, MakeCall(now->op, {now->args[0], w}, now->attrs));
      Expr out = folded;
      for (size_t i = chain.size(); i-- > 0;) {
        const CallNode* c = chain[i].as<CallNode>();
        std::vector<Expr> args{out};
        if (OpCall(chain[i], "nn.relu") == nullptr) {
          const bool const_first = OpCall(chain[i], "add") != nullptr &&
                                   c->args[0].as<ConstantNode>() != nullptr;
          args = const_first ? std::vector<Expr>{new_consts[i], out}
                             : std::vector<Expr>{out, new_consts[i]};
        }
        KILN_ASSIGN_OR_RETURN(Call rebuilt, MakeCall(c->op, std::move(args), c->attrs));
        out = rebuilt;
      }
      return std::optional<Expr>(out);
    }
    return std::optional<Expr>();
  }

  // op(chain(multiply(x, s)), w) -> op(chain(x), w scaled along its input axis).
  absl::StatusOr<std::optional<Expr>> Forward(const Expr& pre, const Expr& post) {
    const CallNode* op = pre.as<CallNode>();
    const CallNode* now = post.as<CallNode>();
    Expr cur = op->args[0];
    bool through_relu = false;
    if (OpCall(cur, "nn.relu") != nullptr && SingleUse(cur)) {
      through_relu = true;
      cur = cur.as<CallNode>()->args[0];
    }
    const CallNode* mul = OpCall(cur, "multiply");
    if (mul == nullptr || !SingleUse(cur)) return std::optional<Expr>();
    std::optional<Site> site = SiteOf(op, /*out_channel=*/false);
    if (!site) return std::optional<Expr>();
    for (int k = 1; k >= 0; --k) {
      const Expr& s = mul->args[static_cast<size_t>(k)];
      const Expr& x = mul->args[static_cast<size_t>(1 - k)];
      if (!SameTensorType(x, cur)) continue;
      std::optional<std::vector<float>> sv = ChannelValues(s, site->rank, site->channel);
      if (!sv || (through_relu && !AllPositive(*sv))) continue;
      Expr data = Memo(x);
      if (through_relu) {
        KILN_ASSIGN_OR_RETURN(Op relu, GetOp("nn.relu"));
        KILN_ASSIGN_OR_RETURN(Call r, MakeCall(relu, {data}));
        data = r;
      }
      KILN_ASSIGN_OR_RETURN(Expr w,
                            ScaleAlongAxis(now->args[1], site->weight_axis, site->weight_rank, *sv));
      KILN_ASSIGN_OR_RETURN(Call folded, MakeCall(now->op, {data, w}, now->attrs));
      return std::optional<Expr>(Expr(folded));
    }
    return std::optional<Expr>();
  }

  absl::flat_hash_map<const ExprNode*, int> uses_;
};

}  // namespace

absl::StatusOr<Function> FoldScaleAxisFunction(const Function& f) {
  Folder folder(f->body);
  KILN_ASSIGN_OR_RETURN(Expr body, folder.Rewrite(f->body));
  if (body == f->body) return f;
  return MakeFunction(f->params, body, f->ret_type, f->type_params, f->attrs);
}

PassPtr FoldScaleAxis() {
  return MakeFunctionPass(
      PassInfo{"FoldScaleAxis", 3, {"InferType"}},
      [](const Function& f, const Module&, const PassContext&) -> absl::StatusOr<Function> {
        return FoldScaleAxisFunction(f);
      });
}

}  // namespace kiln::passes
