#include "types/model_zoo.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/op.h"
#include "ir/op_attrs.h"
#include "ir/status_macros.h"

namespace kiln::types {
namespace {

class Builder {
 public:
  explicit Builder(bool constant_weights) : constant_weights_(constant_weights) {}

  // A model input: always a parameter.
  Var Input(const std::string& name, Shape shape) {
    Var v = MakeVar(name, MakeTensorType(std::move(shape), DataType::Float(32)));
    params_.push_back(v);
    return v;
  }

  // A weight: a parameter, or a constant of small pseudo-random values
  // (positive for variances and scales, so the model stays well-defined).
  Expr Param(const std::string& name, Shape shape) {
    if (!constant_weights_) return Input(name, std::move(shape));
    std::vector<int64_t> dims = *StaticShape(shape);
    Ref<HostTensor> t = *HostTensor::Create(DataType::Float(32), dims);
    float* p = t->mutable_data<float>();
    bool positive = name.find("var") != std::string::npos || name.find("gamma") != std::string::npos;
    for (int64_t i = 0; i < t->num_elements(); ++i) {
      state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
      float u = static_cast<float>((state_ >> 40) & 0xffffff) / 16777216.0f;  // [0, 1)
      p[i] = positive ? 0.5f + u : (u - 0.5f) * 0.1f;
    }
    return *MakeConstant(Ref<const HostTensor>(std::move(t)));
  }

  absl::StatusOr<Expr> Call(const char* op_name, std::vector<Expr> args, Ref<AttrsNode> attrs = nullptr) {
    KILN_ASSIGN_OR_RETURN(Op op, GetOp(op_name));
    KILN_ASSIGN_OR_RETURN(kiln::Call c, MakeCall(op, std::move(args), Attrs(attrs)));
    return Expr(c);
  }

  absl::StatusOr<Expr> Conv(const Expr& x, const std::string& name, int64_t in_c, int64_t out_c,
                            int64_t k, int64_t stride, int64_t pad) {
    auto* a = new Conv2DAttrs();
    a->strides = {stride, stride};
    a->padding = {pad, pad};
    a->channels = out_c;
    a->kernel_size = std::vector<int64_t>{k, k};
    Expr w = Param(name + "_weight", {Dim(out_c), Dim(in_c), Dim(k), Dim(k)});
    return Call("nn.conv2d", {x, w}, Ref<AttrsNode>(a));
  }

  absl::StatusOr<Expr> BatchNorm(const Expr& x, const std::string& name, int64_t c) {
    std::vector<Expr> args = {x};
    for (const char* p : {"gamma", "beta", "moving_mean", "moving_var"})
      args.push_back(Param(absl::StrCat(name, "_", p), {Dim(c)}));
    KILN_ASSIGN_OR_RETURN(Expr bn, Call("nn.batch_norm", std::move(args)));
    KILN_ASSIGN_OR_RETURN(TupleGetItem out, MakeTupleGetItem(bn, 0));
    return Expr(out);
  }

  absl::StatusOr<Expr> ConvBnRelu(const Expr& x, const std::string& name, int64_t in_c,
                                  int64_t out_c, int64_t k, int64_t stride, int64_t pad,
                                  bool relu = true) {
    KILN_ASSIGN_OR_RETURN(Expr y, Conv(x, name + "_conv", in_c, out_c, k, stride, pad));
    KILN_ASSIGN_OR_RETURN(y, BatchNorm(y, name + "_bn", out_c));
    if (!relu) return y;
    return Call("nn.relu", {y});
  }

  absl::StatusOr<Expr> Dense(const Expr& x, const std::string& name, int64_t in, int64_t out,
                             bool bias = true) {
    Expr w = Param(name + "_weight", {Dim(out), Dim(in)});
    KILN_ASSIGN_OR_RETURN(Expr y, Call("nn.dense", {x, w}));
    if (!bias) return y;
    Expr b = Param(name + "_bias", {Dim(out)});
    auto* a = new BiasAddAttrs();
    a->axis = -1;
    return Call("nn.bias_add", {y, b}, Ref<AttrsNode>(a));
  }

  absl::StatusOr<Module> Finish(const Expr& body) {
    KILN_ASSIGN_OR_RETURN(Function f, MakeFunction(params_, body));
    Module m;
    KILN_RETURN_IF_ERROR(m.AddFunction("main", f).status());
    return m;
  }

 private:
  bool constant_weights_;
  uint64_t state_ = 42;
  std::vector<Var> params_;
};

}  // namespace

absl::StatusOr<Module> ResNet50(Dim batch, bool constant_weights) {
  Builder b(constant_weights);
  Var data = b.Input("data", {batch, Dim(3), Dim(224), Dim(224)});
  KILN_ASSIGN_OR_RETURN(Expr x, b.ConvBnRelu(data, "stem", 3, 64, 7, 2, 3));
  auto* pool = new Pool2DAttrs();
  pool->pool_size = {3, 3};
  pool->strides = {2, 2};
  pool->padding = {1, 1};
  KILN_ASSIGN_OR_RETURN(x, b.Call("nn.max_pool2d", {x}, Ref<AttrsNode>(pool)));
  const int64_t blocks[4] = {3, 4, 6, 3};
  int64_t in_c = 64;
  for (int stage = 0; stage < 4; ++stage) {
    int64_t mid = 64 << stage;
    int64_t out_c = mid * 4;
    for (int64_t i = 0; i < blocks[stage]; ++i) {
      std::string name = absl::StrCat("stage", stage + 1, "_unit", i + 1);
      int64_t stride = (i == 0 && stage > 0) ? 2 : 1;
      KILN_ASSIGN_OR_RETURN(Expr y, b.ConvBnRelu(x, name + "_1", in_c, mid, 1, 1, 0));
      KILN_ASSIGN_OR_RETURN(y, b.ConvBnRelu(y, name + "_2", mid, mid, 3, stride, 1));
      KILN_ASSIGN_OR_RETURN(y, b.ConvBnRelu(y, name + "_3", mid, out_c, 1, 1, 0, /*relu=*/false));
      Expr shortcut = x;
      if (i == 0) {
        KILN_ASSIGN_OR_RETURN(shortcut,
                              b.ConvBnRelu(x, name + "_sc", in_c, out_c, 1, stride, 0, false));
      }
      KILN_ASSIGN_OR_RETURN(y, b.Call("add", {y, shortcut}));
      KILN_ASSIGN_OR_RETURN(x, b.Call("nn.relu", {y}));
      in_c = out_c;
    }
  }
  KILN_ASSIGN_OR_RETURN(x, b.Call("nn.global_avg_pool2d", {x}));
  auto* flat = new ReshapeAttrs();
  flat->newshape = {0, -1};
  KILN_ASSIGN_OR_RETURN(x, b.Call("reshape", {x}, Ref<AttrsNode>(flat)));
  KILN_ASSIGN_OR_RETURN(x, b.Dense(x, "fc", 2048, 1000));
  KILN_ASSIGN_OR_RETURN(x, b.Call("nn.softmax", {x}));
  return b.Finish(x);
}

absl::StatusOr<Module> BertLayer(Dim batch, int64_t seq_len, bool constant_weights) {
  const int64_t hidden = 768, heads = 12, head_dim = 64, ffn = 3072;
  Builder b(constant_weights);
  Var x = b.Input("hidden_states", {batch, Dim(seq_len), Dim(hidden)});
  auto heads_of = [&](const Expr& t) -> absl::StatusOr<Expr> {
    auto* r = new ReshapeAttrs();
    r->newshape = {0, 0, heads, head_dim};
    KILN_ASSIGN_OR_RETURN(Expr y, b.Call("reshape", {t}, Ref<AttrsNode>(r)));
    auto* tr = new TransposeAttrs();
    tr->axes = std::vector<int64_t>{0, 2, 1, 3};
    KILN_ASSIGN_OR_RETURN(y, b.Call("transpose", {y}, Ref<AttrsNode>(tr)));
    auto* r2 = new ReshapeAttrs();
    r2->newshape = {-1, seq_len, head_dim};
    return b.Call("reshape", {y}, Ref<AttrsNode>(r2));
  };
  KILN_ASSIGN_OR_RETURN(Expr q, b.Dense(x, "query", hidden, hidden));
  KILN_ASSIGN_OR_RETURN(Expr k, b.Dense(x, "key", hidden, hidden));
  KILN_ASSIGN_OR_RETURN(Expr v, b.Dense(x, "value", hidden, hidden));
  KILN_ASSIGN_OR_RETURN(q, heads_of(q));
  KILN_ASSIGN_OR_RETURN(k, heads_of(k));
  KILN_ASSIGN_OR_RETURN(v, heads_of(v));
  KILN_ASSIGN_OR_RETURN(Expr scores, b.Call("nn.batch_matmul", {q, k}));
  KILN_ASSIGN_OR_RETURN(scores, b.Call("divide", {scores, MakeScalarConstant(DataType::Float(32), 8.0)}));
  KILN_ASSIGN_OR_RETURN(scores, b.Call("nn.softmax", {scores}));
  auto* bm = new BatchMatmulAttrs();
  bm->transpose_b = false;
  KILN_ASSIGN_OR_RETURN(Expr ctx, b.Call("nn.batch_matmul", {scores, v}, Ref<AttrsNode>(bm)));
  auto* r = new ReshapeAttrs();
  r->newshape = {-1, heads, seq_len, head_dim};
  KILN_ASSIGN_OR_RETURN(ctx, b.Call("reshape", {ctx}, Ref<AttrsNode>(r)));
  auto* tr = new TransposeAttrs();
  tr->axes = std::vector<int64_t>{0, 2, 1, 3};
  KILN_ASSIGN_OR_RETURN(ctx, b.Call("transpose", {ctx}, Ref<AttrsNode>(tr)));
  auto* r2 = new ReshapeAttrs();
  r2->newshape = {0, 0, hidden};
  KILN_ASSIGN_OR_RETURN(ctx, b.Call("reshape", {ctx}, Ref<AttrsNode>(r2)));
  KILN_ASSIGN_OR_RETURN(Expr attn, b.Dense(ctx, "attn_out", hidden, hidden));
  KILN_ASSIGN_OR_RETURN(attn, b.Call("add", {attn, x}));
  Expr g1 = b.Param("ln1_gamma", {Dim(hidden)});
  Expr b1 = b.Param("ln1_beta", {Dim(hidden)});
  KILN_ASSIGN_OR_RETURN(attn, b.Call("nn.layer_norm", {attn, g1, b1}));
  KILN_ASSIGN_OR_RETURN(Expr h, b.Dense(attn, "ffn_in", hidden, ffn));
  KILN_ASSIGN_OR_RETURN(h, b.Call("nn.gelu", {h}));
  KILN_ASSIGN_OR_RETURN(h, b.Dense(h, "ffn_out", ffn, hidden));
  KILN_ASSIGN_OR_RETURN(h, b.Call("add", {h, attn}));
  Expr g2 = b.Param("ln2_gamma", {Dim(hidden)});
  Expr b2 = b.Param("ln2_beta", {Dim(hidden)});
  KILN_ASSIGN_OR_RETURN(h, b.Call("nn.layer_norm", {h, g2, b2}));
  return b.Finish(h);
}

absl::StatusOr<Module> AddChain(int length, bool as_lets) {
  Var x = MakeVar("x", MakeTensorType({Dim(1), Dim(16)}, DataType::Float(32)));
  KILN_ASSIGN_OR_RETURN(Op add, GetOp("add"));
  Expr one = MakeScalarConstant(DataType::Float(32), 1.0);
  Expr body;
  if (!as_lets) {
    Expr e = x;
    for (int i = 0; i < length; ++i) {
      KILN_ASSIGN_OR_RETURN(Call c, MakeCall(add, {e, one}));
      e = c;
    }
    body = e;
  } else {
    // let %v0 = add(%x, 1f); let %v1 = add(%v0, 1f); ... %v{n-1}
    std::vector<std::pair<Var, Expr>> lets;
    Expr prev = x;
    for (int i = 0; i < length; ++i) {
      KILN_ASSIGN_OR_RETURN(Call c, MakeCall(add, {prev, one}));
      Var v = MakeVar(absl::StrCat("v", i));
      lets.emplace_back(v, c);
      prev = v;
    }
    body = prev;
    for (auto it = lets.rbegin(); it != lets.rend(); ++it) {
      KILN_ASSIGN_OR_RETURN(Let l, MakeLet(it->first, it->second, body));
      body = l;
    }
  }
  KILN_ASSIGN_OR_RETURN(Function f, MakeFunction({x}, body));
  Module m;
  KILN_RETURN_IF_ERROR(m.AddFunction("main", f).status());
  return m;
}

}  // namespace kiln::types
