// ONNX RNN, GRU and LSTM -> graph IR (part of the nn family; registered by
// RegisterNnConverters through RegisterRnnConverters).
//
// The recurrence is unrolled over the static sequence length: the input
// projection X * W^T (+ Wb + Rb) is one nn.dense over all steps, then each
// step slices its row, adds nn.dense(H, R) and applies the gate activations
// (split into gates along the last axis). Directions forward, reverse and
// bidirectional; hidden_size; activations (Relu, Tanh, Sigmoid, LeakyRelu,
// ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus, Affine;
// alpha/beta consumed in order by the functions that take them); clip (on
// the input of every activation); optional B, initial_h, initial_c (zeros when
// absent); sequence_lens by masking with `where` (a step t >= len[b] keeps
// the state and writes zeros to Y, which also gives the per-batch reversal
// of the reverse direction); LSTM peepholes P and input_forget; GRU
// linear_before_reset; layout (opset 14: batch-first X, Y, states).
// Outputs Y [seq, num_dir, batch, hidden], Y_h, Y_c [num_dir, batch, hidden].
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "frontends/onnx/convert_util.h"
#include "frontends/onnx/converter.h"
#include "ir/op_attrs.h"
#include "ir/status_macros.h"
#include "onnx/onnx_pb.h"

namespace kiln::onnx_frontend::cvt {
namespace {

enum class Cell { kRnn, kGru, kLstm };

struct Activation {
  std::string name;  // lower case
  double alpha = 0.0;
  double beta = 0.0;
};

std::string Lower(const std::string& s) {
  std::string out = s;
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

// The default alpha/beta of an activation and how many of them it takes.
bool ActivationDefaults(const std::string& name, int* n_params, double* alpha, double* beta) {
  *n_params = 0;
  *alpha = 0.0;
  *beta = 0.0;
  if (name == "relu" || name == "tanh" || name == "sigmoid" || name == "softsign" ||
      name == "softplus")
    return true;
  if (name == "leakyrelu") { *n_params = 1; *alpha = 0.01; return true; }
  if (name == "thresholdedrelu") { *n_params = 1; *alpha = 1.0; return true; }
  if (name == "elu") { *n_params = 1; *alpha = 1.0; return true; }
  if (name == "scaledtanh") { *n_params = 2; *alpha = 1.0; *beta = 1.0; return true; }
  if (name == "hardsigmoid") { *n_params = 2; *alpha = 0.2; *beta = 0.5; return true; }
  if (name == "affine") { *n_params = 2; *alpha = 1.0; *beta = 0.0; return true; }
  return false;
}

class RnnBuilder {
 public:
  RnnBuilder(ConvertContext& c, Cell cell) : c_(c), cell_(cell) {}

  Outs Run();

 private:
  int NumGates() const { return cell_ == Cell::kRnn ? 1 : cell_ == Cell::kGru ? 3 : 4; }
  absl::StatusOr<Expr> Scalar(double v) { return c_.ScalarConst(dtype_, v); }
  absl::StatusOr<Expr> Mul(Expr a, Expr b) { return Binary(c_, "multiply", std::move(a), std::move(b)); }
  absl::StatusOr<Expr> AddE(Expr a, Expr b) { return Binary(c_, "add", std::move(a), std::move(b)); }
  absl::StatusOr<Expr> Sub(Expr a, Expr b) { return Binary(c_, "subtract", std::move(a), std::move(b)); }
  // x[d] of a [num_dir, ...] tensor.
  absl::StatusOr<Expr> Dir(const Expr& x, int64_t d) {
    KILN_ASSIGN_OR_RETURN(Expr s, SliceAxis(c_, x, 0, d, d + 1));
    return Squeeze(c_, s, {0});
  }
  absl::StatusOr<Expr> Concat(const std::vector<Expr>& fields, int64_t axis);
  absl::StatusOr<std::vector<Expr>> SplitGates(const Expr& x, int n);
  absl::StatusOr<Expr> Apply(const Activation& a, Expr x);
  absl::StatusOr<Expr> Clip(Expr x);
  absl::StatusOr<Expr> Dense(Expr x, Expr w) {
    return c_.Call("nn.dense", {std::move(x), std::move(w)}, NewAttrs<DenseAttrs>());
  }
  absl::Status ParseActivations();
  // One direction: the hidden state at each step (in time order) and the final
  // states.
  absl::Status RunDirection(int64_t d, bool reverse, std::vector<Expr>* ys, Expr* h_last,
                            Expr* c_last);

  ConvertContext& c_;
  Cell cell_;
  DataType dtype_;
  int64_t seq_ = 0;
  int64_t hidden_ = 0;
  int64_t num_dir_ = 1;
  std::optional<double> clip_;
  bool input_forget_ = false;
  bool linear_before_reset_ = false;
  std::vector<Activation> acts_;  // per direction, NumActs() each
  Expr x_;                        // [seq, batch, input]
  Expr w_, r_;
  std::optional<Expr> b_, h0_, c0_, p_;
  std::optional<Expr> seq_lens_;
  DataType seq_lens_dtype_;
};

int NumActs(Cell cell) { return cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 2 : 3; }

absl::StatusOr<Expr> RnnBuilder::Concat(const std::vector<Expr>& fields, int64_t axis) {
  if (fields.size() == 1) return fields[0];
  std::vector<Type> types;
  for (const Expr& f : fields) {
    KILN_ASSIGN_OR_RETURN(TensorType t, TypeOf(f));
    types.push_back(t);
  }
  KILN_ASSIGN_OR_RETURN(Tuple tup, MakeTuple(fields));
  tup->set_checked_type(MakeTupleType(types));
  auto a = NewAttrs<ConcatenateAttrs>();
  a->axis = axis;
  return c_.Call("concatenate", {Expr(tup)}, a);
}

absl::StatusOr<std::vector<Expr>> RnnBuilder::SplitGates(const Expr& x, int n) {
  std::vector<Expr> out;
  if (n == 1) {
    out.push_back(x);
    return out;
  }
  KILN_ASSIGN_OR_RETURN(TensorType t, TypeOf(x));
  auto a = NewAttrs<SplitAttrs>();
  a->sections = n;
  a->axis = t->ndim() - 1;
  KILN_ASSIGN_OR_RETURN(Expr tup, c_.Call("split", {x}, a));
  for (int i = 0; i < n; ++i) {
    KILN_ASSIGN_OR_RETURN(Expr g, c_.TupleGet(tup, i));
    out.push_back(g);
  }
  return out;
}

absl::StatusOr<Expr> RnnBuilder::Clip(Expr x) {
  if (!clip_.has_value()) return x;
  auto a = NewAttrs<ClipAttrs>();
  a->a_min = -*clip_;
  a->a_max = *clip_;
  return c_.Call("clip", {std::move(x)}, a);
}

absl::StatusOr<Expr> RnnBuilder::Apply(const Activation& a, Expr x) {
  const std::string& n = a.name;
  if (n == "tanh" || n == "sigmoid") return c_.Call(n, {x});
  if (n == "relu") return c_.Call("nn.relu", {x});
  if (n == "leakyrelu") {
    auto la = NewAttrs<LeakyReluAttrs>();
    la->alpha = a.alpha;
    return c_.Call("nn.leaky_relu", {x}, la);
  }
  if (n == "thresholdedrelu") {
    KILN_ASSIGN_OR_RETURN(Expr th, Scalar(a.alpha));
    KILN_ASSIGN_OR_RETURN(Expr gt, c_.Call("greater", {x, th}));
    KILN_ASSIGN_OR_RETURN(Expr z, c_.Call("zeros_like", {x}));
    return c_.Call("where", {gt, x, z});
  }
  if (n == "elu") {
    KILN_ASSIGN_OR_RETURN(Expr zero, Scalar(0.0));
    KILN_ASSIGN_OR_RETURN(Expr one, Scalar(1.0));
    KILN_ASSIGN_OR_RETURN(Expr al, Scalar(a.alpha));
    KILN_ASSIGN_OR_RETURN(Expr pos, c_.Call("greater_equal", {x, zero}));
    KILN_ASSIGN_OR_RETURN(Expr e, c_.Call("exp", {x}));
    KILN_ASSIGN_OR_RETURN(e, Sub(e, one));
    KILN_ASSIGN_OR_RETURN(e, Mul(e, al));
    return c_.Call("where", {pos, x, e});
  }
  if (n == "scaledtanh") {
    KILN_ASSIGN_OR_RETURN(Expr be, Scalar(a.beta));
    KILN_ASSIGN_OR_RETURN(Expr al, Scalar(a.alpha));
    KILN_ASSIGN_OR_RETURN(Expr y, Mul(x, be));
    KILN_ASSIGN_OR_RETURN(y, c_.Call("tanh", {y}));
    return Mul(y, al);
  }
  if (n == "hardsigmoid" || n == "affine") {
    KILN_ASSIGN_OR_RETURN(Expr al, Scalar(a.alpha));
    KILN_ASSIGN_OR_RETURN(Expr be, Scalar(a.beta));
    KILN_ASSIGN_OR_RETURN(Expr y, Mul(x, al));
    KILN_ASSIGN_OR_RETURN(y, AddE(y, be));
    if (n == "affine") return y;
    auto ca = NewAttrs<ClipAttrs>();
    ca->a_min = 0.0;
    ca->a_max = 1.0;
    return c_.Call("clip", {y}, ca);
  }
  if (n == "softsign") {
    KILN_ASSIGN_OR_RETURN(Expr one, Scalar(1.0));
    KILN_ASSIGN_OR_RETURN(Expr ab, c_.Call("abs", {x}));
    KILN_ASSIGN_OR_RETURN(ab, AddE(ab, one));
    return Binary(c_, "divide", x, ab);
  }
  if (n == "softplus") {
    KILN_ASSIGN_OR_RETURN(Expr one, Scalar(1.0));
    KILN_ASSIGN_OR_RETURN(Expr e, c_.Call("exp", {x}));
    KILN_ASSIGN_OR_RETURN(e, AddE(e, one));
    return c_.Call("log", {e});
  }
  return c_.Unsupported(absl::StrCat("activation ", n));
}

absl::Status RnnBuilder::ParseActivations() {
  std::vector<std::string> defaults;
  if (cell_ == Cell::kRnn) defaults = {"Tanh"};
  else if (cell_ == Cell::kGru) defaults = {"Sigmoid", "Tanh"};
  else defaults = {"Sigmoid", "Tanh", "Tanh"};
  const size_t per_dir = defaults.size();
  std::vector<std::string> def_all;
  for (int64_t d = 0; d < num_dir_; ++d) def_all.insert(def_all.end(), defaults.begin(), defaults.end());
  KILN_ASSIGN_OR_RETURN(std::vector<std::string> names, c_.AttrStrings("activations", def_all));
  KILN_ASSIGN_OR_RETURN(std::vector<double> alphas, c_.AttrFloats("activation_alpha"));
  KILN_ASSIGN_OR_RETURN(std::vector<double> betas, c_.AttrFloats("activation_beta"));
  if (names.size() == per_dir && num_dir_ == 2) {
    // One list for both directions.
    std::vector<std::string> both = names;
    both.insert(both.end(), names.begin(), names.end());
    names = both;
  }
  if (names.size() != per_dir * static_cast<size_t>(num_dir_))
    return c_.Invalid(absl::StrCat("expected ", per_dir * static_cast<size_t>(num_dir_),
                                   " activations, got ", names.size()));
  size_t ai = 0, bi = 0;
  for (const std::string& raw : names) {
    Activation a;
    a.name = Lower(raw);
    int n_params = 0;
    double alpha = 0.0, beta = 0.0;
    if (!ActivationDefaults(a.name, &n_params, &alpha, &beta))
      return c_.Unsupported(absl::StrCat("activation function '", raw, "'"));
    if (n_params >= 1 && ai < alphas.size()) alpha = alphas[ai++];
    if (n_params >= 2 && bi < betas.size()) beta = betas[bi++];
    a.alpha = alpha;
    a.beta = beta;
    acts_.push_back(a);
  }
  return absl::OkStatus();
}

absl::Status RnnBuilder::RunDirection(int64_t d, bool reverse, std::vector<Expr>* ys,
                                      Expr* h_last, Expr* c_last) {
  const int g = NumGates();
  const int64_t gh = g * hidden_;
  const Activation* acts = &acts_[static_cast<size_t>(d) * static_cast<size_t>(NumActs(cell_))];
  KILN_ASSIGN_OR_RETURN(Expr w, Dir(w_, d));  // [G*H, I]
  KILN_ASSIGN_OR_RETURN(Expr r, Dir(r_, d));  // [G*H, H]
  // The input projection of every step, with the biases that add to it.
  KILN_ASSIGN_OR_RETURN(Expr xp, Dense(x_, w));  // [S, B, G*H]
  std::optional<Expr> rbh;                       // GRU linear_before_reset: Rb of the h gate
  if (b_.has_value()) {
    KILN_ASSIGN_OR_RETURN(Expr b, Dir(*b_, d));  // [2*G*H]
    KILN_ASSIGN_OR_RETURN(Expr wb, SliceAxis(c_, b, 0, 0, gh));
    KILN_ASSIGN_OR_RETURN(Expr rb, SliceAxis(c_, b, 0, gh, 2 * gh));
    Expr bias;
    if (cell_ == Cell::kGru && linear_before_reset_) {
      KILN_ASSIGN_OR_RETURN(Expr rb_zr, SliceAxis(c_, rb, 0, 0, 2 * hidden_));
      KILN_ASSIGN_OR_RETURN(Expr rb_h, SliceAxis(c_, rb, 0, 2 * hidden_, gh));
      KILN_ASSIGN_OR_RETURN(Expr zero_h, c_.Call("zeros_like", {rb_h}));
      KILN_ASSIGN_OR_RETURN(Expr rb_x, Concat({rb_zr, zero_h}, 0));
      KILN_ASSIGN_OR_RETURN(bias, AddE(wb, rb_x));
      rbh = rb_h;
    } else {
      KILN_ASSIGN_OR_RETURN(bias, AddE(wb, rb));
    }
    KILN_ASSIGN_OR_RETURN(xp, AddE(xp, bias));
  }
  // GRU: R of the z and r gates, and of the h gate.
  Expr r_zr, r_h;
  if (cell_ == Cell::kGru) {
    KILN_ASSIGN_OR_RETURN(r_zr, SliceAxis(c_, r, 0, 0, 2 * hidden_));
    KILN_ASSIGN_OR_RETURN(r_h, SliceAxis(c_, r, 0, 2 * hidden_, gh));
  }
  std::vector<Expr> peep;  // LSTM: P_i, P_o, P_f
  if (cell_ == Cell::kLstm && p_.has_value()) {
    KILN_ASSIGN_OR_RETURN(Expr p, Dir(*p_, d));
    KILN_ASSIGN_OR_RETURN(peep, SplitGates(p, 3));
  }
  // Initial states (zeros shaped as one step's [B, H] when absent).
  Expr h, cst;
  {
    KILN_ASSIGN_OR_RETURN(Expr x0, SliceAxis(c_, xp, 0, 0, 1));
    KILN_ASSIGN_OR_RETURN(x0, Squeeze(c_, x0, {0}));
    KILN_ASSIGN_OR_RETURN(x0, SliceAxis(c_, x0, 1, 0, hidden_));
    KILN_ASSIGN_OR_RETURN(Expr zeros, c_.Call("zeros_like", {x0}));
    if (h0_.has_value()) {
      KILN_ASSIGN_OR_RETURN(h, Dir(*h0_, d));
    } else {
      h = zeros;
    }
    if (c0_.has_value()) {
      KILN_ASSIGN_OR_RETURN(cst, Dir(*c0_, d));
    } else {
      cst = zeros;
    }
  }
  std::vector<Expr> outs(static_cast<size_t>(seq_));
  for (int64_t k = 0; k < seq_; ++k) {
    const int64_t t = reverse ? seq_ - 1 - k : k;
    KILN_ASSIGN_OR_RETURN(Expr xt, SliceAxis(c_, xp, 0, t, t + 1));
    KILN_ASSIGN_OR_RETURN(xt, Squeeze(c_, xt, {0}));  // [B, G*H]
    Expr h_new, c_new;
    if (cell_ == Cell::kRnn) {
      KILN_ASSIGN_OR_RETURN(Expr hr, Dense(h, r));
      KILN_ASSIGN_OR_RETURN(Expr pre, AddE(xt, hr));
      KILN_ASSIGN_OR_RETURN(pre, Clip(pre));
      KILN_ASSIGN_OR_RETURN(h_new, Apply(acts[0], pre));
    } else if (cell_ == Cell::kGru) {
      KILN_ASSIGN_OR_RETURN(std::vector<Expr> xg, SplitGates(xt, 3));
      KILN_ASSIGN_OR_RETURN(Expr hzr, Dense(h, r_zr));
      KILN_ASSIGN_OR_RETURN(std::vector<Expr> hg, SplitGates(hzr, 2));
      KILN_ASSIGN_OR_RETURN(Expr z, AddE(xg[0], hg[0]));
      KILN_ASSIGN_OR_RETURN(z, Clip(z));
      KILN_ASSIGN_OR_RETURN(z, Apply(acts[0], z));
      KILN_ASSIGN_OR_RETURN(Expr rg, AddE(xg[1], hg[1]));
      KILN_ASSIGN_OR_RETURN(rg, Clip(rg));
      KILN_ASSIGN_OR_RETURN(rg, Apply(acts[0], rg));
      Expr hh;
      if (linear_before_reset_) {
        KILN_ASSIGN_OR_RETURN(hh, Dense(h, r_h));
        if (rbh.has_value()) {
          KILN_ASSIGN_OR_RETURN(hh, AddE(hh, *rbh));
        }
        KILN_ASSIGN_OR_RETURN(hh, Mul(rg, hh));
      } else {
        KILN_ASSIGN_OR_RETURN(Expr rh, Mul(rg, h));
        KILN_ASSIGN_OR_RETURN(hh, Dense(rh, r_h));
      }
      KILN_ASSIGN_OR_RETURN(hh, AddE(xg[2], hh));
      KILN_ASSIGN_OR_RETURN(hh, Clip(hh));
      KILN_ASSIGN_OR_RETURN(hh, Apply(acts[1], hh));
      // (1 - z) * hh + z * h = hh + z * (h - hh)
      KILN_ASSIGN_OR_RETURN(Expr diff, Sub(h, hh));
      KILN_ASSIGN_OR_RETURN(diff, Mul(z, diff));
      KILN_ASSIGN_OR_RETURN(h_new, AddE(hh, diff));
    } else {
      KILN_ASSIGN_OR_RETURN(Expr hr, Dense(h, r));
      KILN_ASSIGN_OR_RETURN(Expr pre, AddE(xt, hr));
      KILN_ASSIGN_OR_RETURN(std::vector<Expr> gs, SplitGates(pre, 4));  // i, o, f, c
      Expr i = gs[0], o = gs[1], f = gs[2], cc = gs[3];
      if (!peep.empty()) {
        KILN_ASSIGN_OR_RETURN(Expr pi, Mul(peep[0], cst));
        KILN_ASSIGN_OR_RETURN(i, AddE(i, pi));
        KILN_ASSIGN_OR_RETURN(Expr pf, Mul(peep[2], cst));
        KILN_ASSIGN_OR_RETURN(f, AddE(f, pf));
      }
      KILN_ASSIGN_OR_RETURN(i, Clip(i));
      KILN_ASSIGN_OR_RETURN(i, Apply(acts[0], i));
      if (input_forget_) {
        KILN_ASSIGN_OR_RETURN(Expr one, Scalar(1.0));
        KILN_ASSIGN_OR_RETURN(f, Sub(one, i));
      } else {
        KILN_ASSIGN_OR_RETURN(f, Clip(f));
        KILN_ASSIGN_OR_RETURN(f, Apply(acts[0], f));
      }
      KILN_ASSIGN_OR_RETURN(cc, Clip(cc));
      KILN_ASSIGN_OR_RETURN(cc, Apply(acts[1], cc));
      KILN_ASSIGN_OR_RETURN(Expr fc, Mul(f, cst));
      KILN_ASSIGN_OR_RETURN(Expr ic, Mul(i, cc));
      KILN_ASSIGN_OR_RETURN(c_new, AddE(fc, ic));
      if (!peep.empty()) {
        KILN_ASSIGN_OR_RETURN(Expr po, Mul(peep[1], c_new));
        KILN_ASSIGN_OR_RETURN(o, AddE(o, po));
      }
      KILN_ASSIGN_OR_RETURN(o, Clip(o));
      KILN_ASSIGN_OR_RETURN(o, Apply(acts[0], o));
      KILN_ASSIGN_OR_RETURN(Expr hc, Clip(c_new));
      KILN_ASSIGN_OR_RETURN(hc, Apply(acts[2], hc));
      KILN_ASSIGN_OR_RETURN(h_new, Mul(o, hc));
    }
    Expr y = h_new;
    if (seq_lens_.has_value()) {
      // Steps at or past a batch entry's length keep its state and output 0.
      KILN_ASSIGN_OR_RETURN(Expr tc, c_.ScalarConst(seq_lens_dtype_, static_cast<double>(t)));
      KILN_ASSIGN_OR_RETURN(Expr valid, c_.Call("less", {tc, *seq_lens_}));
      KILN_ASSIGN_OR_RETURN(valid, ExpandDims(c_, valid, 1));  // [B, 1]
      KILN_ASSIGN_OR_RETURN(Expr zeros, c_.Call("zeros_like", {h_new}));
      KILN_ASSIGN_OR_RETURN(y, c_.Call("where", {valid, h_new, zeros}));
      KILN_ASSIGN_OR_RETURN(h_new, c_.Call("where", {valid, h_new, h}));
      if (cell_ == Cell::kLstm) {
        KILN_ASSIGN_OR_RETURN(c_new, c_.Call("where", {valid, c_new, cst}));
      }
    }
    h = h_new;
    if (cell_ == Cell::kLstm) cst = c_new;
    outs[static_cast<size_t>(t)] = y;
  }
  *ys = std::move(outs);
  *h_last = h;
  *c_last = cst;
  return absl::OkStatus();
}

Outs RnnBuilder::Run() {
  const int g = NumGates();
  KILN_ASSIGN_OR_RETURN(Expr x, c_.Input(0));
  KILN_ASSIGN_OR_RETURN(TensorType xt, c_.InputType(0));
  KILN_ASSIGN_OR_RETURN(w_, c_.Input(1));
  KILN_ASSIGN_OR_RETURN(r_, c_.Input(2));
  KILN_ASSIGN_OR_RETURN(TensorType wt, c_.InputType(1));
  KILN_ASSIGN_OR_RETURN(TensorType rt, c_.InputType(2));
  if (xt->ndim() != 3 || wt->ndim() != 3 || rt->ndim() != 3)
    return c_.Invalid("X, W and R must be 3-D");
  dtype_ = xt->dtype;
  KILN_ASSIGN_OR_RETURN(int64_t layout, c_.AttrInt("layout", 0));
  if (layout != 0 && layout != 1) return c_.Invalid(absl::StrCat("layout must be 0 or 1, got ", layout));
  KILN_ASSIGN_OR_RETURN(std::string direction, c_.AttrString("direction", "forward"));
  if (direction == "forward" || direction == "reverse") num_dir_ = 1;
  else if (direction == "bidirectional") num_dir_ = 2;
  else return c_.Invalid(absl::StrCat("unknown direction '", direction, "'"));
  // Hidden size from R ([num_dir, G*H, H]) when the attribute is absent.
  const Dim& rh = rt->shape[2];
  if (!rh.is_static()) return c_.Unsupported("R needs a static hidden size");
  KILN_ASSIGN_OR_RETURN(hidden_, c_.AttrInt("hidden_size", rh.value()));
  if (hidden_ != rh.value())
    return c_.Invalid(absl::StrCat("hidden_size ", hidden_, " differs from R's last dim ", rh.value()));
  if (hidden_ < 1) return c_.Invalid("hidden_size must be positive");
  if (!rt->shape[1].is_static() || rt->shape[1].value() != g * hidden_)
    return c_.Invalid(absl::StrCat("R must be [num_directions, ", g * hidden_, ", ", hidden_, "]; got ",
                                   ShapeToString(rt->shape)));
  if (!wt->shape[0].is_static() || wt->shape[0].value() != num_dir_)
    return c_.Invalid(absl::StrCat("W's first dim must be num_directions = ", num_dir_));
  if (c_.HasAttr("clip")) {
    KILN_ASSIGN_OR_RETURN(double clip, c_.AttrFloat("clip", 0.0));
    clip_ = clip;
  }
  if (cell_ == Cell::kLstm) {
    KILN_ASSIGN_OR_RETURN(int64_t inf, c_.AttrInt("input_forget", 0));
    input_forget_ = inf != 0;
  }
  if (cell_ == Cell::kGru) {
    KILN_ASSIGN_OR_RETURN(int64_t lbr, c_.AttrInt("linear_before_reset", 0));
    linear_before_reset_ = lbr != 0;
  }
  KILN_RETURN_IF_ERROR(ParseActivations());

  if (layout == 1) {
    KILN_ASSIGN_OR_RETURN(x, Transpose(c_, x, {1, 0, 2}));
  }
  x_ = x;
  KILN_ASSIGN_OR_RETURN(TensorType xst, TypeOf(x_));
  const Dim& sd = xst->shape[0];
  if (!sd.is_static()) return c_.Unsupported("the sequence length must be static (the loop is unrolled)");
  seq_ = sd.value();
  if (seq_ < 1) return c_.Unsupported("an empty sequence");

  if (c_.HasInput(3)) {
    KILN_ASSIGN_OR_RETURN(Expr b, c_.Input(3));
    b_ = b;
  }
  if (c_.HasInput(4)) {
    // A constant equal to seq_length everywhere is the same as none.
    bool trivial = false;
    auto ints = c_.ConstantInts(4);
    if (ints.ok() && ints->has_value()) {
      trivial = std::all_of((*ints)->begin(), (*ints)->end(), [&](int64_t v) { return v == seq_; });
    }
    if (!trivial) {
      KILN_ASSIGN_OR_RETURN(Expr sl, c_.Input(4));
      KILN_ASSIGN_OR_RETURN(TensorType slt, c_.InputType(4));
      if (slt->ndim() != 1) return c_.Invalid("sequence_lens must be 1-D");
      seq_lens_ = sl;
      seq_lens_dtype_ = slt->dtype;
    }
  }
  auto state = [&](int i) -> absl::StatusOr<std::optional<Expr>> {
    if (!c_.HasInput(i)) return std::optional<Expr>();
    KILN_ASSIGN_OR_RETURN(Expr s, c_.Input(i));
    if (layout == 1) {
      KILN_ASSIGN_OR_RETURN(s, Transpose(c_, s, {1, 0, 2}));
    }
    return std::optional<Expr>(s);
  };
  KILN_ASSIGN_OR_RETURN(h0_, state(5));
  if (cell_ == Cell::kLstm) {
    KILN_ASSIGN_OR_RETURN(c0_, state(6));
    if (c_.HasInput(7)) {
      KILN_ASSIGN_OR_RETURN(Expr p, c_.Input(7));
      p_ = p;
    }
  }

  std::vector<Expr> y_dirs, h_dirs, c_dirs;
  for (int64_t d = 0; d < num_dir_; ++d) {
    const bool reverse = direction == "reverse" || d == 1;
    std::vector<Expr> ys;
    Expr h_last, c_last;
    KILN_RETURN_IF_ERROR(RunDirection(d, reverse, &ys, &h_last, &c_last));
    // [S, 1, B, H]
    std::vector<Expr> steps;
    for (const Expr& y : ys) {
      KILN_ASSIGN_OR_RETURN(Expr y4, ExpandDims(c_, y, 0, 2));
      steps.push_back(y4);
    }
    KILN_ASSIGN_OR_RETURN(Expr yd, Concat(steps, 0));
    y_dirs.push_back(yd);
    KILN_ASSIGN_OR_RETURN(Expr hd, ExpandDims(c_, h_last, 0));
    h_dirs.push_back(hd);
    if (cell_ == Cell::kLstm) {
      KILN_ASSIGN_OR_RETURN(Expr cd, ExpandDims(c_, c_last, 0));
      c_dirs.push_back(cd);
    }
  }
  KILN_ASSIGN_OR_RETURN(Expr y, Concat(y_dirs, 1));      // [S, D, B, H]
  KILN_ASSIGN_OR_RETURN(Expr y_h, Concat(h_dirs, 0));    // [D, B, H]
  std::vector<Expr> result;
  if (layout == 1) {
    KILN_ASSIGN_OR_RETURN(y, Transpose(c_, y, {2, 0, 1, 3}));  // [B, S, D, H]
    KILN_ASSIGN_OR_RETURN(y_h, Transpose(c_, y_h, {1, 0, 2}));  // [B, D, H]
  }
  result.push_back(y);
  result.push_back(y_h);
  if (cell_ == Cell::kLstm) {
    KILN_ASSIGN_OR_RETURN(Expr y_c, Concat(c_dirs, 0));
    if (layout == 1) {
      KILN_ASSIGN_OR_RETURN(y_c, Transpose(c_, y_c, {1, 0, 2}));
    }
    result.push_back(y_c);
  }
  return result;
}

Outs ConvertRnn(ConvertContext& c) { return RnnBuilder(c, Cell::kRnn).Run(); }
Outs ConvertGru(ConvertContext& c) { return RnnBuilder(c, Cell::kGru).Run(); }
Outs ConvertLstm(ConvertContext& c) { return RnnBuilder(c, Cell::kLstm).Run(); }

}  // namespace

void RegisterRnnConverters(ConverterRegistry& r) {
  for (int v : {7, 14}) {
    r.Add("RNN", v, ConvertRnn);
    r.Add("GRU", v, ConvertGru);
    r.Add("LSTM", v, ConvertLstm);
  }
}

}  // namespace kiln::onnx_frontend::cvt
