// File: frontends/onnx/control_test_models.h (tests only)
//
// ONNX models with If, Loop and Scan, built with the protobuf API, shared by
// //frontends/onnx:convert_control_test (import, types, interpreter) and
// //tests/control_flow:onnx_control_flow_test (compiled, run by the C
// runtime). Each comment says what the model computes; the tests compute the
// expected values themselves.
#ifndef KILN_FRONTENDS_ONNX_CONTROL_TEST_MODELS_H_
#define KILN_FRONTENDS_ONNX_CONTROL_TEST_MODELS_H_

#include <string>
#include <utility>
#include <vector>

#include "frontends/onnx/onnx_test_util.h"
#include "onnx/onnx_pb.h"

namespace kiln::onnx_frontend::testing {

inline constexpr int32_t kF = onnx::TensorProto::FLOAT;
inline constexpr int32_t kI = onnx::TensorProto::INT64;
inline constexpr int32_t kB = onnx::TensorProto::BOOL;

inline onnx::GraphProto Graph(const std::string& name, std::vector<onnx::NodeProto> nodes,
                              std::vector<onnx::ValueInfoProto> inputs,
                              std::vector<onnx::ValueInfoProto> outputs,
                              std::vector<onnx::TensorProto> initializers = {}) {
  onnx::GraphProto g;
  g.set_name(name);
  for (auto& n : nodes) *g.add_node() = std::move(n);
  for (auto& i : inputs) *g.add_input() = std::move(i);
  for (auto& o : outputs) *g.add_output() = std::move(o);
  for (auto& t : initializers) *g.add_initializer() = std::move(t);
  return g;
}

inline onnx::AttributeProto AttrGraph(const std::string& name, onnx::GraphProto g) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::GRAPH);
  *a.mutable_g() = std::move(g);
  return a;
}

inline onnx::ModelProto ModelOf(int64_t opset, onnx::GraphProto g) {
  onnx::ModelProto m = MakeModel(opset, {}, {}, {});
  *m.mutable_graph() = std::move(g);
  return m;
}

// x, y: float[2,3]. If sum(x) > 0: (relu(x + y), x * y) else (relu(x - y), x).
// The branches read x and y from the enclosing graph.
inline onnx::ModelProto IfTwoOutputsModel() {
  onnx::GraphProto then_g = Graph("then", {MakeNode("Add", {"x", "y"}, {"a"}),
                                           MakeNode("Mul", {"x", "y"}, {"b"})},
                                  {}, {MakeValueInfo("a", kF, {2, 3}), MakeValueInfo("b", kF, {2, 3})});
  onnx::GraphProto else_g = Graph("else", {MakeNode("Sub", {"x", "y"}, {"a2"}),
                                           MakeNode("Identity", {"x"}, {"b2"})},
                                  {}, {MakeValueInfo("a2", kF, {2, 3}), MakeValueInfo("b2", kF, {2, 3})});
  return ModelOf(
      13, Graph("if2",
                {MakeNode("ReduceSum", {"x"}, {"s"}, {AttrInt("keepdims", 0)}),
                 MakeNode("Greater", {"s", "zero"}, {"c"}),
                 MakeNode("If", {"c"}, {"o1", "o2"},
                          {AttrGraph("then_branch", then_g), AttrGraph("else_branch", else_g)}),
                 MakeNode("Relu", {"o1"}, {"r"})},
                {MakeValueInfo("x", kF, {2, 3}), MakeValueInfo("y", kF, {2, 3})},
                {MakeValueInfo("r", kF, {2, 3}), MakeValueInfo("o2", kF, {2, 3})},
                {MakeFloatTensor("zero", {}, {0.f})}));
}

// v0, w: float[3]; M = 4 (an initializer), no condition. Each iteration i:
// v = v + w, scan output v * i. Outputs: v, the scans stacked: float[4,3].
inline onnx::ModelProto LoopTripCountModel() {
  onnx::GraphProto body =
      Graph("body",
            {MakeNode("Add", {"v_in", "w"}, {"v_out"}), MakeNode("Cast", {"i"}, {"fi"}, {AttrInt("to", kF)}),
             MakeNode("Mul", {"v_out", "fi"}, {"s"}), MakeNode("Identity", {"c_in"}, {"c_out"})},
            {MakeValueInfo("i", kI, {}), MakeValueInfo("c_in", kB, {}), MakeValueInfo("v_in", kF, {3})},
            {MakeValueInfo("c_out", kB, {}), MakeValueInfo("v_out", kF, {3}), MakeValueInfo("s", kF, {3})});
  return ModelOf(13, Graph("loop_m", {MakeNode("Loop", {"M", "", "v0"}, {"v", "scan"}, {AttrGraph("body", body)})},
                           {MakeValueInfo("v0", kF, {3}), MakeValueInfo("w", kF, {3})},
                           {MakeValueInfo("v", kF, {3}), MakeValueInfo("scan", kF, {4, 3})},
                           {MakeInt64Tensor("M", {}, {4})}));
}

// M: int64 scalar, c0: bool, v0: float[2], limit: float (all graph inputs).
// While i < M and the condition: v = v * 2, condition = sum(v) < limit, scan
// output v. Outputs: v, the scans stacked: float[n,2], n known at run time.
inline onnx::ModelProto LoopWhileModel() {
  onnx::GraphProto body =
      Graph("body",
            {MakeNode("Mul", {"v_in", "two"}, {"v_out"}),
             MakeNode("ReduceSum", {"v_out"}, {"sv"}, {AttrInt("keepdims", 0)}),
             MakeNode("Less", {"sv", "limit"}, {"c_out"}), MakeNode("Identity", {"v_out"}, {"s"})},
            {MakeValueInfo("i", kI, {}), MakeValueInfo("c_in", kB, {}), MakeValueInfo("v_in", kF, {2})},
            {MakeValueInfo("c_out", kB, {}), MakeValueInfo("v_out", kF, {2}), MakeValueInfo("s", kF, {2})});
  return ModelOf(13, Graph("loop_while",
                           {MakeNode("Loop", {"M", "c0", "v0"}, {"v", "scan"}, {AttrGraph("body", body)})},
                           {MakeValueInfo("M", kI, {}), MakeValueInfo("c0", kB, {}),
                            MakeValueInfo("v0", kF, {2}), MakeValueInfo("limit", kF, {})},
                           {MakeValueInfo("v", kF, {2}), MakeValueInfo("scan", kF, {"n", 2})},
                           {MakeFloatTensor("two", {}, {2.f})}));
}

// Scan (opset 11): s0: float[2], x: float[2,5], scanned along axis 1 in
// reverse; each step s = s + e, output e * e, stacked along axis 1 in step
// order. Outputs: s, ys: float[2,5].
inline onnx::ModelProto ScanReverseModel() {
  onnx::GraphProto body = Graph("body", {MakeNode("Add", {"s_in", "e"}, {"s_out"}), MakeNode("Mul", {"e", "e"}, {"o"})},
                                {MakeValueInfo("s_in", kF, {2}), MakeValueInfo("e", kF, {2})},
                                {MakeValueInfo("s_out", kF, {2}), MakeValueInfo("o", kF, {2})});
  return ModelOf(
      11, Graph("scan_rev",
                {MakeNode("Scan", {"s0", "x"}, {"s", "ys"},
                          {AttrGraph("body", body), AttrInt("num_scan_inputs", 1),
                           AttrInts("scan_input_axes", {1}), AttrInts("scan_input_directions", {1}),
                           AttrInts("scan_output_axes", {1}), AttrInts("scan_output_directions", {0})})},
                {MakeValueInfo("s0", kF, {2}), MakeValueInfo("x", kF, {2, 5})},
                {MakeValueInfo("s", kF, {2}), MakeValueInfo("ys", kF, {2, 5})}));
}

// Scan (opset 8): batch 2. s0: float[2,2], x: float[2,3,2]; per batch entry b
// and step t: s = s + x[b,t], output s. Outputs: s float[2,2], ys float[2,3,2].
// With `lens`, sequence_lens is an initializer holding them.
inline onnx::ModelProto Scan8Model(std::vector<int64_t> lens = {}) {
  onnx::GraphProto body = Graph("body", {MakeNode("Add", {"s_in", "e"}, {"s_out"}), MakeNode("Identity", {"s_out"}, {"o"})},
                                {MakeValueInfo("s_in", kF, {2}), MakeValueInfo("e", kF, {2})},
                                {MakeValueInfo("s_out", kF, {2}), MakeValueInfo("o", kF, {2})});
  std::vector<onnx::TensorProto> inits;
  if (!lens.empty()) inits.push_back(MakeInt64Tensor("lens", {static_cast<int64_t>(lens.size())}, lens));
  return ModelOf(8, Graph("scan8",
                          {MakeNode("Scan", {lens.empty() ? "" : "lens", "s0", "x"}, {"s", "ys"},
                                    {AttrGraph("body", body), AttrInt("num_scan_inputs", 1)})},
                          {MakeValueInfo("s0", kF, {2, 2}), MakeValueInfo("x", kF, {2, 3, 2})},
                          {MakeValueInfo("s", kF, {2, 2}), MakeValueInfo("ys", kF, {2, 3, 2})},
                          std::move(inits)));
}

// M, K: int64 scalars; v0, w: float[3]. M times: u = v, K times u = u + w
// (an inner Loop), then v = u - w on even i, u + w on odd i (an If in the
// body reading w from the outermost graph).
inline onnx::ModelProto NestedModel() {
  onnx::GraphProto inner = Graph("inner", {MakeNode("Add", {"u_in", "w"}, {"u_out"}), MakeNode("Identity", {"ci"}, {"co"})},
                                 {MakeValueInfo("j", kI, {}), MakeValueInfo("ci", kB, {}), MakeValueInfo("u_in", kF, {3})},
                                 {MakeValueInfo("co", kB, {}), MakeValueInfo("u_out", kF, {3})});
  onnx::GraphProto then_g = Graph("then", {MakeNode("Neg", {"w"}, {"t"})}, {}, {MakeValueInfo("t", kF, {3})});
  onnx::GraphProto else_g = Graph("else", {MakeNode("Identity", {"w"}, {"t2"})}, {}, {MakeValueInfo("t2", kF, {3})});
  onnx::GraphProto body = Graph(
      "body",
      {MakeNode("Loop", {"K", "", "v_in"}, {"u"}, {AttrGraph("body", inner)}),
       MakeNode("Mod", {"i", "two"}, {"im"}), MakeNode("Equal", {"im", "zero"}, {"even"}),
       MakeNode("If", {"even"}, {"d"}, {AttrGraph("then_branch", then_g), AttrGraph("else_branch", else_g)}),
       MakeNode("Add", {"u", "d"}, {"v_out"}), MakeNode("Identity", {"c_in"}, {"c_out"})},
      {MakeValueInfo("i", kI, {}), MakeValueInfo("c_in", kB, {}), MakeValueInfo("v_in", kF, {3})},
      {MakeValueInfo("c_out", kB, {}), MakeValueInfo("v_out", kF, {3})});
  return ModelOf(13, Graph("nested", {MakeNode("Loop", {"M", "", "v0"}, {"v"}, {AttrGraph("body", body)})},
                           {MakeValueInfo("M", kI, {}), MakeValueInfo("K", kI, {}),
                            MakeValueInfo("v0", kF, {3}), MakeValueInfo("w", kF, {3})},
                           {MakeValueInfo("v", kF, {3})},
                           {MakeInt64Tensor("two", {}, {2}), MakeInt64Tensor("zero", {}, {0})}));
}

// M: int64, n: int64[1], x: float[5], v0: float. M times: s = x[0:n] (a
// Slice whose end is known at run time), v = v + sum(s), scan output s.
// Outputs: v, the scans stacked: float[M, n].
inline onnx::ModelProto LoopRunTimeSliceModel() {
  onnx::GraphProto body =
      Graph("body",
            {MakeNode("Slice", {"x", "zero1", "n"}, {"s"}),
             MakeNode("ReduceSum", {"s"}, {"rs"}, {AttrInt("keepdims", 0)}),
             MakeNode("Add", {"v_in", "rs"}, {"v_out"}), MakeNode("Identity", {"c_in"}, {"c_out"})},
            {MakeValueInfo("i", kI, {}), MakeValueInfo("c_in", kB, {}), MakeValueInfo("v_in", kF, {})},
            {MakeValueInfo("c_out", kB, {}), MakeValueInfo("v_out", kF, {}), MakeValueInfo("s", kF, {"k"})});
  return ModelOf(13, Graph("loop_slice", {MakeNode("Loop", {"M", "", "v0"}, {"v", "scan"}, {AttrGraph("body", body)})},
                           {MakeValueInfo("M", kI, {}), MakeValueInfo("n", kI, {1}),
                            MakeValueInfo("x", kF, {5}), MakeValueInfo("v0", kF, {})},
                           {MakeValueInfo("v", kF, {}), MakeValueInfo("scan", kF, {"m", "k"})},
                           {MakeInt64Tensor("zero1", {1}, {0})}));
}

// ---- The models' results, computed directly (row-major float vectors) ------

using Vec = std::vector<float>;

// IfTwoOutputsModel.
inline std::pair<Vec, Vec> RefIfTwoOutputs(const Vec& x, const Vec& y) {
  float sum = 0;
  for (float v : x) sum += v;
  Vec r(x.size()), o2(x.size());
  for (size_t k = 0; k < x.size(); ++k) {
    const float a = sum > 0 ? x[k] + y[k] : x[k] - y[k];
    r[k] = a > 0 ? a : 0;
    o2[k] = sum > 0 ? x[k] * y[k] : x[k];
  }
  return {r, o2};
}

// LoopTripCountModel: v and the stacked scans ([4,3]).
inline std::pair<Vec, Vec> RefLoopTripCount(Vec v, const Vec& w) {
  Vec scan;
  for (int i = 0; i < 4; ++i) {
    for (size_t k = 0; k < v.size(); ++k) v[k] += w[k];
    for (float e : v) scan.push_back(e * static_cast<float>(i));
  }
  return {v, scan};
}

// LoopWhileModel: v and the stacked scans ([n,2], n = scan.size() / 2).
inline std::pair<Vec, Vec> RefLoopWhile(int64_t m, bool cond, Vec v, float limit) {
  Vec scan;
  for (int64_t i = 0; i < m && cond; ++i) {
    for (float& e : v) e *= 2;
    cond = v[0] + v[1] < limit;
    scan.insert(scan.end(), v.begin(), v.end());
  }
  return {v, scan};
}

// ScanReverseModel: s and ys ([2,5]).
inline std::pair<Vec, Vec> RefScanReverse(Vec s, const Vec& x) {
  Vec ys(10);
  for (int step = 0; step < 5; ++step) {
    const int t = 4 - step;
    for (int r = 0; r < 2; ++r) {
      const float e = x[static_cast<size_t>(r * 5 + t)];
      s[static_cast<size_t>(r)] += e;
      ys[static_cast<size_t>(r * 5 + step)] = e * e;
    }
  }
  return {s, ys};
}

// Scan8Model: s ([2,2]) and ys ([2,3,2]).
inline std::pair<Vec, Vec> RefScan8(Vec s, const Vec& x) {
  Vec ys(12);
  for (int b = 0; b < 2; ++b) {
    for (int t = 0; t < 3; ++t) {
      for (int k = 0; k < 2; ++k) {
        s[static_cast<size_t>(b * 2 + k)] += x[static_cast<size_t>((b * 3 + t) * 2 + k)];
        ys[static_cast<size_t>((b * 3 + t) * 2 + k)] = s[static_cast<size_t>(b * 2 + k)];
      }
    }
  }
  return {s, ys};
}

// NestedModel.
inline Vec RefNested(int64_t m, int64_t kk, Vec v, const Vec& w) {
  for (int64_t i = 0; i < m; ++i) {
    Vec u = v;
    for (int64_t j = 0; j < kk; ++j) {
      for (size_t k = 0; k < u.size(); ++k) u[k] += w[k];
    }
    for (size_t k = 0; k < u.size(); ++k) v[k] = u[k] + (i % 2 == 0 ? -w[k] : w[k]);
  }
  return v;
}

}  // namespace kiln::onnx_frontend::testing

#endif  // KILN_FRONTENDS_ONNX_CONTROL_TEST_MODELS_H_
