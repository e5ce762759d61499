// The RNN, GRU and LSTM converters (convert_rnn.cc): one-node models imported
// and run by the interpreter, against a plain reference written here from
// ONNX's equations (loops over directions, time, batch and gates).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "frontends/onnx/convert_test_util.h"
#include "frontends/onnx/onnx_test_util.h"
#include "gtest/gtest.h"

namespace kiln::onnx_frontend::testing {
namespace {

using V = std::vector<double>;
using S = std::vector<int64_t>;

enum class Cell { kRnn, kGru, kLstm };

int Gates(Cell c) { return c == Cell::kRnn ? 1 : c == Cell::kGru ? 3 : 4; }

struct Problem {
  Cell cell = Cell::kRnn;
  int64_t seq = 3, batch = 2, input = 3, hidden = 4;
  std::string direction = "forward";
  bool bias = false, init_h = false, init_c = false, peephole = false;
  bool linear_before_reset = false, input_forget = false;
  int64_t layout = 0;
  std::vector<int64_t> seq_lens;  // empty: none
  std::vector<std::string> activations;  // empty: defaults
  V alphas, betas;
  double clip = 0.0;  // 0: none
  // Data (layout 0 shapes).
  V x, w, r, b, h0, c0, p;
};

int64_t Dirs(const Problem& p) { return p.direction == "bidirectional" ? 2 : 1; }

// Deterministic values in [-scale, scale].
V Fill(size_t n, int seed, double scale) {
  V v(n, 0.0);
  uint32_t s = static_cast<uint32_t>(seed) * 2654435761u + 12345u;
  for (size_t i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    v[i] = scale * (static_cast<double>(s >> 8) / static_cast<double>(1u << 24) * 2.0 - 1.0);
  }
  return v;
}

void MakeData(Problem& p) {
  const int64_t d = Dirs(p), g = Gates(p.cell), h = p.hidden;
  p.x = Fill(static_cast<size_t>(p.seq * p.batch * p.input), 1, 1.0);
  p.w = Fill(static_cast<size_t>(d * g * h * p.input), 2, 0.6);
  p.r = Fill(static_cast<size_t>(d * g * h * h), 3, 0.6);
  p.b = Fill(static_cast<size_t>(d * 2 * g * h), 4, 0.5);
  p.h0 = Fill(static_cast<size_t>(d * p.batch * h), 5, 0.8);
  p.c0 = Fill(static_cast<size_t>(d * p.batch * h), 6, 0.8);
  p.p = Fill(static_cast<size_t>(d * 3 * h), 7, 0.5);
}

double Act(const std::string& name, double x, double alpha, double beta) {
  if (name == "Tanh") return std::tanh(x);
  if (name == "Sigmoid") return 1.0 / (1.0 + std::exp(-x));
  if (name == "Relu") return std::max(0.0, x);
  if (name == "LeakyRelu") return x >= 0 ? x : alpha * x;
  if (name == "HardSigmoid") return std::clamp(alpha * x + beta, 0.0, 1.0);
  if (name == "ScaledTanh") return alpha * std::tanh(beta * x);
  if (name == "Affine") return alpha * x + beta;
  if (name == "Elu") return x >= 0 ? x : alpha * (std::exp(x) - 1.0);
  if (name == "Softsign") return x / (1.0 + std::abs(x));
  if (name == "Softplus") return std::log(std::exp(x) + 1.0);
  if (name == "ThresholdedRelu") return x > alpha ? x : 0.0;
  ADD_FAILURE() << "unknown activation " << name;
  return 0.0;
}

struct Ref {
  V y, y_h, y_c;  // layout 0: [S, D, B, H], [D, B, H]
};

Ref Reference(const Problem& p) {
  const int64_t D = Dirs(p), G = Gates(p.cell), H = p.hidden, B = p.batch, I = p.input,
                T = p.seq;
  std::vector<std::string> acts = p.activations;
  const size_t per = p.cell == Cell::kRnn ? 1 : p.cell == Cell::kGru ? 2 : 3;
  if (acts.empty()) {
    for (int64_t d = 0; d < D; ++d) {
      if (p.cell == Cell::kRnn) acts.push_back("Tanh");
      else if (p.cell == Cell::kGru) { acts.push_back("Sigmoid"); acts.push_back("Tanh"); }
      else { acts.push_back("Sigmoid"); acts.push_back("Tanh"); acts.push_back("Tanh"); }
    }
  }
  // alpha/beta per activation, consumed in order by those that take them.
  V al(acts.size(), 0.0), be(acts.size(), 0.0);
  size_t ai = 0, bi = 0;
  for (size_t k = 0; k < acts.size(); ++k) {
    const std::string& n = acts[k];
    const bool one = n == "LeakyRelu" || n == "Elu" || n == "ThresholdedRelu";
    const bool two = n == "HardSigmoid" || n == "ScaledTanh" || n == "Affine";
    if ((one || two) && ai < p.alphas.size()) al[k] = p.alphas[ai++];
    if (two && bi < p.betas.size()) be[k] = p.betas[bi++];
  }
  auto act = [&](int64_t d, size_t j, double v) {
    if (p.clip > 0) v = std::clamp(v, -p.clip, p.clip);
    const size_t k = static_cast<size_t>(d) * per + j;
    return Act(acts[k], v, al[k], be[k]);
  };
  Ref out;
  out.y.assign(static_cast<size_t>(T * D * B * H), 0.0);
  out.y_h.assign(static_cast<size_t>(D * B * H), 0.0);
  out.y_c.assign(static_cast<size_t>(D * B * H), 0.0);
  auto W = [&](int64_t d, int64_t row, int64_t col) { return p.w[static_cast<size_t>((d * G * H + row) * I + col)]; };
  auto R = [&](int64_t d, int64_t row, int64_t col) { return p.r[static_cast<size_t>((d * G * H + row) * H + col)]; };
  auto Wb = [&](int64_t d, int64_t row) { return p.bias ? p.b[static_cast<size_t>(d * 2 * G * H + row)] : 0.0; };
  auto Rb = [&](int64_t d, int64_t row) { return p.bias ? p.b[static_cast<size_t>(d * 2 * G * H + G * H + row)] : 0.0; };
  for (int64_t d = 0; d < D; ++d) {
    const bool rev = p.direction == "reverse" || d == 1;
    for (int64_t b = 0; b < B; ++b) {
      const int64_t len = p.seq_lens.empty() ? T : p.seq_lens[static_cast<size_t>(b)];
      V h(static_cast<size_t>(H), 0.0), c(static_cast<size_t>(H), 0.0);
      for (int64_t j = 0; j < H; ++j) {
        if (p.init_h) h[static_cast<size_t>(j)] = p.h0[static_cast<size_t>((d * B + b) * H + j)];
        if (p.init_c) c[static_cast<size_t>(j)] = p.c0[static_cast<size_t>((d * B + b) * H + j)];
      }
      for (int64_t k = 0; k < len; ++k) {
        const int64_t t = rev ? len - 1 - k : k;
        auto xw = [&](int64_t row) {
          double s = Wb(d, row);
          for (int64_t i = 0; i < I; ++i) s += p.x[static_cast<size_t>((t * B + b) * I + i)] * W(d, row, i);
          return s;
        };
        auto hr = [&](int64_t row, const V& hv) {
          double s = 0.0;
          for (int64_t i = 0; i < H; ++i) s += hv[static_cast<size_t>(i)] * R(d, row, i);
          return s;
        };
        V hn(static_cast<size_t>(H), 0.0), cn(static_cast<size_t>(H), 0.0);
        if (p.cell == Cell::kRnn) {
          for (int64_t j = 0; j < H; ++j) hn[static_cast<size_t>(j)] = act(d, 0, xw(j) + hr(j, h) + Rb(d, j));
        } else if (p.cell == Cell::kGru) {
          V z(static_cast<size_t>(H), 0.0), rg(static_cast<size_t>(H), 0.0);
          for (int64_t j = 0; j < H; ++j) {
            z[static_cast<size_t>(j)] = act(d, 0, xw(j) + hr(j, h) + Rb(d, j));
            rg[static_cast<size_t>(j)] = act(d, 0, xw(H + j) + hr(H + j, h) + Rb(d, H + j));
          }
          V rh(static_cast<size_t>(H), 0.0);
          for (int64_t j = 0; j < H; ++j) rh[static_cast<size_t>(j)] = rg[static_cast<size_t>(j)] * h[static_cast<size_t>(j)];
          for (int64_t j = 0; j < H; ++j) {
            const int64_t row = 2 * H + j;
            double pre = 0.0;
            if (p.linear_before_reset) pre = xw(row) + rg[static_cast<size_t>(j)] * (hr(row, h) + Rb(d, row));
            else pre = xw(row) + hr(row, rh) + Rb(d, row);
            const double ht = act(d, 1, pre);
            const double zz = z[static_cast<size_t>(j)];
            hn[static_cast<size_t>(j)] = (1 - zz) * ht + zz * h[static_cast<size_t>(j)];
          }
        } else {
          auto P = [&](int64_t gate, int64_t j) { return p.peephole ? p.p[static_cast<size_t>(d * 3 * H + gate * H + j)] : 0.0; };
          for (int64_t j = 0; j < H; ++j) {
            auto pre = [&](int64_t gate) { const int64_t row = gate * H + j; return xw(row) + hr(row, h) + Rb(d, row); };
            const double cj = c[static_cast<size_t>(j)];
            const double ig = act(d, 0, pre(0) + P(0, j) * cj);
            const double fg = p.input_forget ? 1.0 - ig : act(d, 0, pre(2) + P(2, j) * cj);
            const double cg = act(d, 1, pre(3));
            const double cnew = fg * cj + ig * cg;
            const double og = act(d, 0, pre(1) + P(1, j) * cnew);
            cn[static_cast<size_t>(j)] = cnew;
            hn[static_cast<size_t>(j)] = og * act(d, 2, cnew);
          }
        }
        h = hn;
        c = cn;
        for (int64_t j = 0; j < H; ++j) out.y[static_cast<size_t>(((t * D + d) * B + b) * H + j)] = h[static_cast<size_t>(j)];
      }
      for (int64_t j = 0; j < H; ++j) {
        out.y_h[static_cast<size_t>((d * B + b) * H + j)] = h[static_cast<size_t>(j)];
        out.y_c[static_cast<size_t>((d * B + b) * H + j)] = c[static_cast<size_t>(j)];
      }
    }
  }
  return out;
}

// [A, B, C] with axes 0 and 1 swapped.
V Swap01(const V& v, int64_t a, int64_t b, int64_t c) {
  V out(v.size(), 0.0);
  for (int64_t i = 0; i < a; ++i)
    for (int64_t j = 0; j < b; ++j)
      for (int64_t k = 0; k < c; ++k)
        out[static_cast<size_t>((j * a + i) * c + k)] = v[static_cast<size_t>((i * b + j) * c + k)];
  return out;
}

void ExpectNear(const HostTensor& got, const S& shape, const V& want, const std::string& what) {
  ASSERT_EQ(got.shape(), shape) << what;
  V g = Values(got);
  ASSERT_EQ(g.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(g[i], want[i], 1e-5 * std::max(1.0, std::abs(want[i]))) << what << " element " << i;
}

void Check(Problem p, int64_t opset = 14) {
  MakeData(p);
  const int64_t D = Dirs(p), G = Gates(p.cell), H = p.hidden, B = p.batch, T = p.seq;
  const Ref want = Reference(p);
  const char* op = p.cell == Cell::kRnn ? "RNN" : p.cell == Cell::kGru ? "GRU" : "LSTM";
  std::vector<onnx::AttributeProto> attrs = {AttrInt("hidden_size", H), AttrString("direction", p.direction)};
  if (p.layout != 0) attrs.push_back(AttrInt("layout", p.layout));
  if (p.linear_before_reset) attrs.push_back(AttrInt("linear_before_reset", 1));
  if (p.input_forget) attrs.push_back(AttrInt("input_forget", 1));
  if (!p.activations.empty()) attrs.push_back(AttrStrings("activations", p.activations));
  auto floats = [](const V& v) { return std::vector<float>(v.begin(), v.end()); };
  if (!p.alphas.empty()) attrs.push_back(AttrFloats("activation_alpha", floats(p.alphas)));
  if (!p.betas.empty()) attrs.push_back(AttrFloats("activation_beta", floats(p.betas)));
  if (p.clip > 0) attrs.push_back(AttrFloat("clip", static_cast<float>(p.clip)));
  std::vector<std::string> names = {"x", "w", "r", p.bias ? "b" : "", p.seq_lens.empty() ? "" : "sl",
                                    p.init_h ? "h0" : ""};
  if (p.cell == Cell::kLstm) {
    names.push_back(p.init_c ? "c0" : "");
    names.push_back(p.peephole ? "p" : "");
  }
  while (!names.empty() && names.back().empty()) names.pop_back();
  std::vector<std::string> outs = {"y", "y_h"};
  if (p.cell == Cell::kLstm) outs.push_back("y_c");
  const bool bf = p.layout == 1;
  std::vector<NamedTensor> in;
  if (bf) in.push_back(F32In("x", {B, T, p.input}, Swap01(p.x, T, B, p.input)));
  else in.push_back(F32In("x", {T, B, p.input}, p.x));
  in.push_back(F32In("w", {D, G * H, p.input}, p.w));
  in.push_back(F32In("r", {D, G * H, H}, p.r));
  if (p.bias) in.push_back(F32In("b", {D, 2 * G * H}, p.b));
  if (!p.seq_lens.empty()) {
    V sl(p.seq_lens.begin(), p.seq_lens.end());
    in.push_back(In("sl", DataType::Int(32), {B}, sl));
  }
  auto state = [&](const std::string& n, const V& v) {
    if (bf) in.push_back(F32In(n, {B, D, H}, Swap01(v, D, B, H)));
    else in.push_back(F32In(n, {D, B, H}, v));
  };
  if (p.init_h) state("h0", p.h0);
  if (p.init_c) state("c0", p.c0);
  if (p.peephole) in.push_back(F32In("p", {D, 3 * H}, p.p));
  auto r = RunNode(opset, MakeNode(op, names, outs, attrs), in);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), outs.size());
  if (bf) {
    // Y [B, S, D, H] from [S, D, B, H].
    V y(want.y.size(), 0.0);
    for (int64_t t = 0; t < T; ++t)
      for (int64_t d = 0; d < D; ++d)
        for (int64_t b = 0; b < B; ++b)
          for (int64_t j = 0; j < H; ++j)
            y[static_cast<size_t>(((b * T + t) * D + d) * H + j)] = want.y[static_cast<size_t>(((t * D + d) * B + b) * H + j)];
    ExpectNear(*(*r)[0], {B, T, D, H}, y, "Y");
    ExpectNear(*(*r)[1], {B, D, H}, Swap01(want.y_h, D, B, H), "Y_h");
    if (p.cell == Cell::kLstm) ExpectNear(*(*r)[2], {B, D, H}, Swap01(want.y_c, D, B, H), "Y_c");
  } else {
    ExpectNear(*(*r)[0], {T, D, B, H}, want.y, "Y");
    ExpectNear(*(*r)[1], {D, B, H}, want.y_h, "Y_h");
    if (p.cell == Cell::kLstm) ExpectNear(*(*r)[2], {D, B, H}, want.y_c, "Y_c");
  }
}

TEST(Rnn, Defaults) {
  for (int64_t opset : {7, 14}) {
    Problem p;
    Check(p, opset);
  }
}

TEST(Rnn, BiasInitialStateReverse) {
  Problem p;
  p.bias = p.init_h = true;
  p.direction = "reverse";
  Check(p);
}

TEST(Rnn, BidirectionalWithActivations) {
  Problem p;
  p.bias = p.init_h = true;
  p.direction = "bidirectional";
  p.activations = {"Relu", "LeakyRelu"};
  p.alphas = {0.3};
  Check(p);
}

TEST(Rnn, MoreActivationsAndClip) {
  for (const char* a : {"HardSigmoid", "ScaledTanh", "Affine", "Elu", "Softsign", "Softplus",
                        "ThresholdedRelu", "Sigmoid"}) {
    Problem p;
    p.bias = true;
    p.activations = {a};
    p.alphas = {0.4};
    p.betas = {0.3};
    p.clip = 0.7;
    SCOPED_TRACE(a);
    Check(p);
  }
}

TEST(Rnn, BatchFirst) {
  Problem p;
  p.bias = p.init_h = true;
  p.layout = 1;
  p.direction = "bidirectional";
  Check(p);
}

TEST(Rnn, SequenceLengths) {
  Problem p;
  p.bias = p.init_h = true;
  p.direction = "bidirectional";
  p.batch = 3;
  p.seq_lens = {3, 1, 2};
  Check(p);
}

TEST(Gru, Defaults) {
  for (int64_t opset : {7, 14}) {
    Problem p;
    p.cell = Cell::kGru;
    Check(p, opset);
  }
}

TEST(Gru, LinearBeforeReset) {
  for (bool lbr : {false, true}) {
    Problem p;
    p.cell = Cell::kGru;
    p.bias = p.init_h = true;
    p.linear_before_reset = lbr;
    Check(p);
  }
}

TEST(Gru, BidirectionalBatchFirstSequenceLengths) {
  Problem p;
  p.cell = Cell::kGru;
  p.bias = p.init_h = true;
  p.direction = "bidirectional";
  p.layout = 1;
  p.linear_before_reset = true;
  p.seq_lens = {2, 3};
  Check(p);
}

TEST(Lstm, Defaults) {
  for (int64_t opset : {7, 14}) {
    Problem p;
    p.cell = Cell::kLstm;
    Check(p, opset);
  }
}

TEST(Lstm, PeepholesAndInitialStates) {
  Problem p;
  p.cell = Cell::kLstm;
  p.bias = p.init_h = p.init_c = p.peephole = true;
  Check(p);
}

TEST(Lstm, BidirectionalInputForgetBatchFirst) {
  Problem p;
  p.cell = Cell::kLstm;
  p.bias = p.init_h = p.init_c = p.peephole = true;
  p.direction = "bidirectional";
  p.input_forget = true;
  p.layout = 1;
  Check(p);
}

TEST(Lstm, ActivationsClipReverseSequenceLengths) {
  Problem p;
  p.cell = Cell::kLstm;
  p.bias = p.init_h = p.init_c = true;
  p.direction = "reverse";
  p.activations = {"HardSigmoid", "LeakyRelu", "Softsign"};
  p.alphas = {0.25, 0.2};
  p.betas = {0.45};
  p.clip = 1.5;
  p.seq_lens = {1, 3};
  Check(p);
}

}  // namespace
}  // namespace kiln::onnx_frontend::testing
