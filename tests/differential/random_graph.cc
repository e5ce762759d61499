#include "tests/differential/random_graph.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/op.h"
#include "ir/op_attrs.h"
#include "ir/status_macros.h"
#include "types/infer_type.h"

namespace kiln::testing {
namespace {

class Generator {
 public:
  explicit Generator(uint64_t seed) : rng_(seed) {}

  int Int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  double Real(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng_); }
  bool Coin(double p = 0.5) { return Real(0, 1) < p; }

  Var AddInput(std::vector<int64_t> shape) {
    Var v = MakeVar(absl::StrCat("in", params_.size()),
                    MakeTensorType(ShapeFromInts(shape), DataType::Float(32)));
    params_.push_back(v);
    pool_.push_back(v);
    shapes_.push_back(shape);
    return v;
  }

  // A recent pool entry (deep chains are more interesting than wide ones).
  size_t PickIndex() {
    int n = static_cast<int>(pool_.size());
    int back = std::min(n - 1, static_cast<int>(std::abs(std::normal_distribution<double>(0, 2.5)(rng_))));
    return static_cast<size_t>(n - 1 - back);
  }

  Expr Const(const std::vector<int64_t>& shape, double lo, double hi) {
    Ref<HostTensor> t = *HostTensor::Create(DataType::Float(32), shape);
    float* p = t->mutable_data<float>();
    for (int64_t i = 0; i < t->num_elements(); ++i) p[i] = static_cast<float>(Real(lo, hi));
    return *MakeConstant(Ref<const HostTensor>(std::move(t)));
  }

  Expr Scalar(double v) { return MakeScalarConstant(DataType::Float(32), v); }

  // Builds op(args, attrs); null if the factory refuses.
  Expr Call(const char* name, std::vector<Expr> args, AttrsNode* attrs = nullptr) {
    Ref<AttrsNode> owned(attrs);
    auto op = GetOp(name);
    if (!op.ok()) return nullptr;
    auto c = MakeCall(*op, std::move(args), Attrs(owned));
    return c.ok() ? Expr(*c) : nullptr;
  }

  Expr Item(const Expr& tuple, int i) {
    if (!tuple) return nullptr;
    auto g = MakeTupleGetItem(tuple, i);
    return g.ok() ? Expr(*g) : nullptr;
  }

  // Keeps `e` if it type-checks to a static float32 tensor.
  bool Keep(const Expr& e) {
    if (!e) return false;
    auto t = types::InferExprType(e);
    if (!t.ok()) return false;
    const auto* tt = t->as<TensorTypeNode>();
    if (!tt || tt->dtype != DataType::Float(32)) return false;
    auto shape = StaticShape(tt->shape);
    if (!shape) return false;
    int64_t n = 1;
    for (int64_t d : *shape) n *= d;
    if (n == 0 || n > 4096) return false;  // keep the interpreter quick
    pool_.push_back(e);
    shapes_.push_back(*shape);
    return true;
  }

  bool Step() {
    size_t i = PickIndex();
    const Expr x = pool_[i];
    const std::vector<int64_t> s = shapes_[i];
    const int rank = static_cast<int>(s.size());
    switch (Int(0, 15)) {
      case 0: {  // smooth unary
        static const char* kOps[] = {"nn.relu", "sigmoid", "tanh", "negative", "abs", "erf",
                                     "sin", "cos", "nn.gelu", "nn.leaky_relu"};
        return Keep(Call(kOps[Int(0, 9)], {x}));
      }
      case 1: {  // guarded unary
        switch (Int(0, 4)) {
          case 0: {
            auto* a = new ClipAttrs();
            a->a_min = -4;
            a->a_max = 4;
            return Keep(Call("exp", {Call("clip", {x}, a)}));
          }
          case 1: return Keep(Call("log", {Call("add", {Call("abs", {x}), Scalar(1)})}));
          case 2: return Keep(Call("sqrt", {Call("abs", {x})}));
          case 3: return Keep(Call("rsqrt", {Call("add", {Call("abs", {x}), Scalar(1)})}));
          default: {
            auto* a = new ClipAttrs();
            a->a_min = Real(-2, 0);
            a->a_max = Real(0, 2);
            return Keep(Call("clip", {x}, a));
          }
        }
      }
      case 2:
      case 3: {  // binary with another node of the same shape, or a broadcast constant
        static const char* kOps[] = {"add", "subtract", "multiply", "maximum", "minimum"};
        const char* op = kOps[Int(0, 4)];
        Expr y;
        for (size_t j = 0; j < pool_.size() && !y; ++j) {
          size_t k = PickIndex();
          if (k != i && shapes_[k] == s) y = pool_[k];
        }
        if (!y || Coin(0.4)) {
          std::vector<int64_t> cs(s.size(), 1);
          if (rank >= 2 && Coin()) cs[1] = s[1];  // per-channel
          else if (rank >= 1 && Coin()) cs.back() = s.back();
          y = Const(cs, 0.5, 1.5);
        }
        if (Coin(0.15)) return Keep(Call("divide", {x, Call("add", {Call("abs", {y}), Scalar(1)})}));
        return Keep(Coin() ? Call(op, {x, y}) : Call(op, {y, x}));
      }
      case 4: {  // reductions
        if (rank < 2) return false;
        static const char* kOps[] = {"sum", "mean", "max", "min"};
        auto* a = new ReduceAttrs();
        a->axis = std::vector<int64_t>{Int(1, rank - 1)};
        a->keepdims = Coin();
        return Keep(Call(kOps[Int(0, 3)], {x}, a));
      }
      case 5: {  // softmax family
        auto* a = new SoftmaxAttrs();
        a->axis = Int(-rank, rank - 1);
        return Keep(Call(Coin() ? "nn.softmax" : "nn.log_softmax", {x}, a));
      }
      case 6:
      case 7: {  // conv2d (+ bias, relu)
        if (rank != 4) return false;
        int64_t c = s[1];
        int64_t o = Int(1, 6);
        int64_t k = Coin() ? 1 : 3;
        auto* a = new Conv2DAttrs();
        a->padding = {k / 2, k / 2};
        int64_t stride = (s[2] >= 4 && Coin(0.3)) ? 2 : 1;
        a->strides = {stride, stride};
        int64_t groups = 1;
        if (Coin(0.25)) {
          groups = c;
          o = c;
        }
        a->groups = groups;
        Expr w = Const({o, c / groups, k, k}, -0.5, 0.5);
        Expr y = Call("nn.conv2d", {x, w}, a);
        if (Coin(0.6)) y = Call("nn.bias_add", {y, Const({o}, -0.5, 0.5)});
        if (Coin(0.5)) y = Call("nn.relu", {y});
        return Keep(y);
      }
      case 8: {  // dense (+ bias)
        if (rank != 2) return false;
        int64_t units = Int(1, 8);
        Expr y = Call("nn.dense", {x, Const({units, s[1]}, -0.5, 0.5)});
        if (Coin()) {
          auto* b = new BiasAddAttrs();
          b->axis = -1;
          y = Call("nn.bias_add", {y, Const({units}, -0.5, 0.5)}, b);
        }
        return Keep(y);
      }
      case 9: {  // pooling
        if (rank != 4) return false;
        if (Coin(0.3)) return Keep(Call("nn.global_avg_pool2d", {x}));
        auto* a = new Pool2DAttrs();
        int64_t p = Int(1, 3);
        a->pool_size = {p, p};
        int64_t st = Int(1, 2);
        a->strides = {st, st};
        int64_t pad = p > 1 ? Int(0, 1) : 0;
        a->padding = {pad, pad};
        a->ceil_mode = Coin(0.3);
        a->count_include_pad = Coin();
        return Keep(Call(Coin() ? "nn.max_pool2d" : "nn.avg_pool2d", {x}, a));
      }
      case 10: {  // normalization
        if (rank < 2) return false;
        if (Coin()) {
          int64_t c = s[1];
          Expr bn = Call("nn.batch_norm", {x, Const({c}, 0.5, 1.5), Const({c}, -0.5, 0.5),
                                           Const({c}, -0.5, 0.5), Const({c}, 0.5, 1.5)});
          return Keep(Item(bn, 0));
        }
        int64_t c = s.back();
        return Keep(Call("nn.layer_norm", {x, Const({c}, 0.5, 1.5), Const({c}, -0.5, 0.5)}));
      }
      case 11: {  // reshape / transpose
        if (Coin()) {
          std::vector<int64_t> perm(static_cast<size_t>(rank));
          std::iota(perm.begin(), perm.end(), 0);
          std::shuffle(perm.begin(), perm.end(), rng_);
          auto* a = new TransposeAttrs();
          a->axes = perm;
          return Keep(Call("transpose", {x}, a));
        }
        auto* a = new ReshapeAttrs();
        if (rank >= 2 && Coin()) {
          a->newshape = {0, -1};
        } else if (rank == 2 && s[1] % 4 == 0) {
          a->newshape = {s[0], 1, 2, s[1] / 2};  // back to 4-D for convs
        } else {
          a->newshape = {-1};
        }
        return Keep(Call("reshape", {x}, a));
      }
      case 12: {  // slicing and splitting
        if (rank < 1) return false;
        int axis = Int(0, rank - 1);
        if (s[axis] >= 2 && s[axis] % 2 == 0 && Coin()) {
          auto* a = new SplitAttrs();
          a->sections = 2;
          a->axis = axis;
          return Keep(Item(Call("split", {x}, a), Int(0, 1)));
        }
        auto* a = new StridedSliceAttrs();
        a->begin.assign(static_cast<size_t>(rank), 0);
        a->end = s;
        a->begin[axis] = Int(0, static_cast<int>(s[axis]) - 1);
        return Keep(Call("strided_slice", {x}, a));
      }
      case 13: {  // concatenate with a same-shaped node
        if (rank < 1) return false;
        size_t k = PickIndex();
        if (shapes_[k] != s) return false;
        auto* a = new ConcatenateAttrs();
        a->axis = Int(0, rank - 1);
        auto t = MakeTuple({x, pool_[k]});
        if (!t.ok()) return false;
        return Keep(Call("concatenate", {*t}, a));
      }
      case 14: {  // expand_dims then squeeze, dropout, a cast round trip
        switch (Int(0, 2)) {
          case 0: {
            auto* e = new ExpandDimsAttrs();
            e->axis = Int(0, rank);
            auto* q = new SqueezeAttrs();
            q->axis = std::vector<int64_t>{e->axis};
            return Keep(Call("squeeze", {Call("expand_dims", {x}, e)}, q));
          }
          case 1: return Keep(Item(Call("nn.dropout", {x}), 0));
          default: {
            auto* to64 = new CastAttrs();
            to64->dtype = DataType::Float(64);
            auto* to32 = new CastAttrs();
            to32->dtype = DataType::Float(32);
            return Keep(Call("cast", {Call("cast", {x}, to64)}, to32));
          }
        }
      }
      default: {  // x * 1, x + 0 and friends: food for SimplifyExpr
        switch (Int(0, 2)) {
          case 0: return Keep(Call("multiply", {x, Scalar(1)}));
          case 1: return Keep(Call("add", {Scalar(0), x}));
          default: return Keep(Call("subtract", {x, Scalar(0)}));
        }
      }
    }
  }

  absl::StatusOr<Module> Finish() {
    Expr result = pool_.back();
    if (pool_.size() > params_.size() + 1 && Coin(0.3)) {
      KILN_ASSIGN_OR_RETURN(Tuple t, MakeTuple({result, pool_[PickIndex()]}));
      result = t;
    }
    KILN_ASSIGN_OR_RETURN(Function f, MakeFunction(params_, result));
    Module m;
    KILN_RETURN_IF_ERROR(m.AddFunction("main", f).status());
    return m;
  }

  size_t pool_size() const { return pool_.size(); }

 private:
  std::mt19937_64 rng_;
  std::vector<Var> params_;
  std::vector<Expr> pool_;
  std::vector<std::vector<int64_t>> shapes_;
};

}  // namespace

absl::StatusOr<Module> RandomModule(const RandomGraphOptions& opts) {
  Generator g(opts.seed);
  for (int i = 0; i < std::max(1, opts.num_inputs); ++i) {
    if (i % 2 == 0) {
      g.AddInput({1, g.Int(2, 4), g.Int(4, 7), g.Int(4, 7)});
    } else {
      g.AddInput({g.Int(1, 3), g.Int(2, 8)});
    }
  }
  size_t target = g.pool_size() + static_cast<size_t>(opts.num_ops);
  for (int attempt = 0; attempt < opts.num_ops * 20 && g.pool_size() < target; ++attempt) g.Step();
  return g.Finish();
}

absl::StatusOr<std::vector<Ref<const HostTensor>>> RandomInputs(const Function& fn, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<Ref<const HostTensor>> out;
  for (const Var& p : fn->params) {
    const auto* tt = p->type_annotation.as<TensorTypeNode>();
    auto shape = tt ? StaticShape(tt->shape) : std::nullopt;
    if (!shape || tt->dtype != DataType::Float(32))
      return absl::InvalidArgumentError(
          absl::StrCat("parameter %", p->name_hint, " is not a static float32 tensor"));
    KILN_ASSIGN_OR_RETURN(Ref<HostTensor> t, HostTensor::Create(DataType::Float(32), *shape));
    float* d = t->mutable_data<float>();
    for (int64_t i = 0; i < t->num_elements(); ++i) d[i] = dist(rng);
    out.push_back(Ref<const HostTensor>(std::move(t)));
  }
  return out;
}

}  // namespace kiln::testing
