// File: lowering/graph_plan_test.cc
//
// Modules in text IR go through the graph pipeline (through FuseOps), the
// lowering and the graph planner; the JSON is parsed back and checked against
// the IR and the lowered kernels by an independent checker (CheckGraph), and
// small cases are also checked node by node.
#include "lowering/graph_plan.h"

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ir/op.h"
#include "ir/parser.h"
#include "ir/tir.h"
#include "ir/type.h"
#include "lowering/lower.h"
#include "lowering/testing/fuse_for_test.h"
#include "nlohmann/json.hpp"
#include "types/infer_type.h"
#include "types/model_zoo.h"

namespace kiln::lowering {
namespace {

using nlohmann::json;

// The graph pipeline through FuseOps, then types (as tests/compiled/jit_runner.cc).
absl::StatusOr<Module> Fuse(const Module& in, int opt_level) {
  return testing::FuseForTest(in, opt_level);
}

struct Compiled {
  Module fused;
  LoweredModule lowered;
  GraphPlan plan;
  json graph;
};

// Fuses, lowers and plans; a failure is a test failure.
void CompileModule(const Module& m, Compiled* out, int opt_level = 1,
                   const GraphPlanOptions& options = {}) {
  absl::StatusOr<Module> fused = Fuse(m, opt_level);
  ASSERT_TRUE(fused.ok()) << fused.status();
  out->fused = *fused;
  absl::StatusOr<LoweredModule> lm = LowerModule(out->fused, {});
  ASSERT_TRUE(lm.ok()) << lm.status();
  out->lowered = *std::move(lm);
  absl::StatusOr<GraphPlan> plan = PlanGraph(out->fused, out->lowered, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  out->plan = *std::move(plan);
  out->graph = json::parse(out->plan.graph_json, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(out->graph.is_discarded()) << "not JSON: " << out->plan.graph_json;
}

void Compile(const std::string& text, Compiled* out, int opt_level = 1,
             const GraphPlanOptions& options = {}) {
  absl::StatusOr<Module> m = ParseModule(text, "test");
  ASSERT_TRUE(m.ok()) << m.status();
  CompileModule(*m, out, opt_level, options);
}

// Expected dltype strings, written out (not computed by the code under test).
std::string DLType(DataType d) {
  static const std::map<std::pair<int, int>, std::string> names = {
      {{2, 16}, "float16"}, {{4, 16}, "bfloat16"}, {{2, 32}, "float32"}, {{2, 64}, "float64"},
      {{0, 8}, "int8"},     {{0, 16}, "int16"},    {{0, 32}, "int32"},   {{0, 64}, "int64"},
      {{1, 8}, "uint8"},    {{1, 16}, "uint16"},   {{1, 32}, "uint32"},  {{1, 64}, "uint64"},
      {{6, 8}, "bool"}};
  auto it = names.find({static_cast<int>(d.code()), d.bits()});
  return it == names.end() ? "?" : it->second;
}

struct Leaf {
  std::vector<int64_t> shape;
  std::string dltype;
};

void Flatten(const Type& t, std::vector<Leaf>* out) {
  if (const auto* tup = t.as<TupleTypeNode>()) {
    for (const Type& f : tup->fields) Flatten(f, out);
    return;
  }
  const auto* tt = t.as<TensorTypeNode>();
  ASSERT_NE(tt, nullptr) << TypeToString(t);
  Leaf l;
  for (const Dim& d : tt->shape) l.shape.push_back(d.value());
  l.dltype = DLType(tt->dtype);
  out->push_back(l);
}

int64_t Bytes(const json& shape, const std::string& dltype) {
  int64_t n = 1;
  for (const json& d : shape) n *= d.get<int64_t>();
  int64_t elem = 4;
  if (dltype == "float16" || dltype == "bfloat16" || dltype == "int16" || dltype == "uint16")
    elem = 2;
  if (dltype == "float64" || dltype == "int64" || dltype == "uint64") elem = 8;
  if (dltype == "int8" || dltype == "uint8" || dltype == "bool") elem = 1;
  return n * elem;
}

// Everything the graph executor relies on, checked from the JSON alone plus
// the IR (main's types) and the lowered kernels (names, parameter buffers).
void CheckGraph(const Compiled& c) {
  const json& g = c.graph;
  ASSERT_TRUE(g.is_object());
  for (const char* key : {"nodes", "arg_nodes", "node_row_ptr", "heads", "attrs"}) {
    ASSERT_TRUE(g.contains(key)) << key;
  }
  const json& nodes = g["nodes"];
  const json& row_ptr = g["node_row_ptr"];
  const json& attrs = g["attrs"];
  ASSERT_TRUE(nodes.is_array());
  const size_t num_nodes = nodes.size();
  EXPECT_EQ(static_cast<int>(num_nodes), c.plan.num_nodes);
  ASSERT_EQ(row_ptr.size(), num_nodes + 1);
  ASSERT_EQ(row_ptr[0].get<int>(), 0);

  std::map<std::string, const LoweredFunc*> kernels;
  for (const LoweredFunc& k : c.lowered.kernels) kernels[k.func->name] = &k;

  std::set<std::string> names;
  std::vector<int> arg_nodes;
  std::vector<int> outputs_of(num_nodes, 0);
  int num_ops = 0;
  for (size_t i = 0; i < num_nodes; ++i) {
    const json& n = nodes[i];
    ASSERT_TRUE(n["name"].is_string());
    const std::string name = n["name"].get<std::string>();
    EXPECT_TRUE(names.insert(name).second) << "duplicate node name " << name;
    ASSERT_TRUE(n["inputs"].is_array()) << name;
    if (n["op"] == "null") {
      EXPECT_TRUE(n["inputs"].empty()) << name;
      arg_nodes.push_back(static_cast<int>(i));
      outputs_of[i] = 1;
    } else {
      ASSERT_EQ(n["op"], "tvm_op") << name;
      ++num_ops;
      const json& a = n["attrs"];
      for (const char* key :
           {"func_name", "num_inputs", "num_outputs", "flatten_data", "op_names"}) {
        ASSERT_TRUE(a.contains(key) && a[key].is_string()) << name << " attr " << key;
      }
      EXPECT_EQ(a["flatten_data"], "0");
      auto k = kernels.find(a["func_name"].get<std::string>());
      ASSERT_NE(k, kernels.end()) << name << " calls an unknown kernel " << a["func_name"];
      const int num_inputs = std::stoi(a["num_inputs"].get<std::string>());
      const int num_outputs = std::stoi(a["num_outputs"].get<std::string>());
      EXPECT_EQ(num_inputs, static_cast<int>(n["inputs"].size())) << name;
      EXPECT_EQ(num_inputs + num_outputs, static_cast<int>(k->second->func->params.size())) << name;
      EXPECT_EQ(num_inputs, k->second->num_inputs) << name;
      outputs_of[i] = num_outputs;
      // Names: the kernel's, or it with a numeric suffix.
      const std::string fn = a["func_name"].get<std::string>();
      EXPECT_TRUE(name == fn || absl::StartsWith(name, fn + "_")) << name << " vs " << fn;
      std::string ops;
      for (const std::string& op : k->second->op_names) ops += (ops.empty() ? "" : ",") + op;
      EXPECT_EQ(a["op_names"], ops) << name;
    }
    EXPECT_EQ(row_ptr[i + 1].get<int>() - row_ptr[i].get<int>(), outputs_of[i]) << name;
  }
  EXPECT_EQ(num_ops, c.plan.num_op_nodes);
  EXPECT_EQ(g["arg_nodes"].get<std::vector<int>>(), arg_nodes);
  const int num_entries = row_ptr[num_nodes].get<int>();

  // attrs: one value per entry.
  ASSERT_EQ(attrs["dltype"][0], "list_str");
  ASSERT_EQ(attrs["storage_id"][0], "list_int");
  ASSERT_EQ(attrs["shape"][0], "list_shape");
  ASSERT_EQ(attrs["device_index"][0], "list_int");
  const json& dltype = attrs["dltype"][1];
  const json& shape = attrs["shape"][1];
  const std::vector<int> sid = attrs["storage_id"][1].get<std::vector<int>>();
  ASSERT_EQ(static_cast<int>(dltype.size()), num_entries);
  ASSERT_EQ(static_cast<int>(shape.size()), num_entries);
  ASSERT_EQ(static_cast<int>(sid.size()), num_entries);
  ASSERT_EQ(static_cast<int>(attrs["device_index"][1].size()), num_entries);
  for (const json& d : attrs["device_index"][1]) EXPECT_EQ(d.get<int>(), 1);
  for (int s : sid) EXPECT_GE(s, 0);

  // Inputs refer to earlier nodes' existing outputs; the kernel's parameter
  // buffers have the entries' shapes and dtypes (inputs, then outputs).
  auto entry = [&](const json& e) -> int {
    const int node = e[0].get<int>();
    const int index = e[1].get<int>();
    EXPECT_EQ(e[2].get<int>(), 0);
    EXPECT_GE(node, 0);
    EXPECT_LT(node, static_cast<int>(num_nodes));
    EXPECT_GE(index, 0);
    EXPECT_LT(index, outputs_of[node]);
    return row_ptr[node].get<int>() + index;
  };
  std::vector<int> def(num_entries, -1);
  std::vector<int> last(num_entries, -1);
  for (size_t i = 0; i < num_nodes; ++i) {
    const json& n = nodes[i];
    for (int e = row_ptr[i].get<int>(); e < row_ptr[i + 1].get<int>(); ++e) {
      def[e] = n["op"] == "null" ? -1 : static_cast<int>(i);
      last[e] = def[e];
    }
    if (n["op"] == "null") continue;
    const LoweredFunc& k = *kernels[n["attrs"]["func_name"].get<std::string>()];
    std::vector<int> args;
    for (const json& in : n["inputs"]) {
      ASSERT_LT(in[0].get<int>(), static_cast<int>(i)) << "not in execution order";
      const int e = entry(in);
      args.push_back(e);
      last[e] = std::max(last[e], static_cast<int>(i));
    }
    for (int e = row_ptr[i].get<int>(); e < row_ptr[i + 1].get<int>(); ++e) args.push_back(e);
    ASSERT_EQ(args.size(), k.func->params.size());
    for (size_t a = 0; a < args.size(); ++a) {
      const tir::BufferNode& b = *k.func->params[a];
      EXPECT_EQ(DLType(b.dtype), dltype[args[a]]) << n["name"] << " arg " << a;
      std::vector<int64_t> bshape;
      for (const tir::PrimExpr& d : b.shape) {
        ASSERT_TRUE(d->is_const_int()) << n["name"] << " arg " << a;
        bshape.push_back(d->int_value);
      }
      EXPECT_EQ(json(bshape), shape[args[a]]) << n["name"] << " arg " << a;
    }
  }

  // Inputs and heads against main's types.
  absl::StatusOr<Function> main = c.fused.Lookup("main");
  ASSERT_TRUE(main.ok());
  std::vector<Leaf> in_leaves;
  for (const Var& p : (*main)->params) Flatten(p->checked_type(), &in_leaves);
  std::set<std::string> param_names;
  for (const auto& [name, t] : c.plan.params) param_names.insert(name);
  std::vector<std::string> input_names;
  size_t next_input = 0;
  for (int id : arg_nodes) {
    const std::string name = nodes[id]["name"].get<std::string>();
    const int e = row_ptr[id].get<int>();
    if (param_names.count(name)) continue;
    input_names.push_back(name);
    ASSERT_LT(next_input, in_leaves.size());
    EXPECT_EQ(json(in_leaves[next_input].shape), shape[e]) << name;
    EXPECT_EQ(in_leaves[next_input].dltype, dltype[e]) << name;
    ++next_input;
  }
  EXPECT_EQ(next_input, in_leaves.size());
  EXPECT_EQ(input_names, c.plan.input_names);
  // Parameters: every one is a null node with its tensor's shape and dtype;
  // each tensor is stored once.
  std::set<const HostTensor*> tensors;
  for (const auto& [name, t] : c.plan.params) {
    EXPECT_TRUE(tensors.insert(t.get()).second) << name << " stored twice";
    bool found = false;
    for (int id : arg_nodes) {
      if (nodes[id]["name"] != name) continue;
      found = true;
      const int e = row_ptr[id].get<int>();
      EXPECT_EQ(json(t->shape()), shape[e]) << name;
      EXPECT_EQ(DLType(t->dtype()), dltype[e]) << name;
    }
    EXPECT_TRUE(found) << name;
  }
  EXPECT_EQ(arg_nodes.size(), input_names.size() + c.plan.params.size());

  std::vector<Leaf> out_leaves;
  Flatten((*main)->body->checked_type(), &out_leaves);
  const json& heads = g["heads"];
  ASSERT_EQ(heads.size(), out_leaves.size());
  ASSERT_EQ(c.plan.output_names.size(), heads.size());
  std::vector<int> head_entries;
  for (size_t h = 0; h < heads.size(); ++h) {
    const int e = entry(heads[h]);
    head_entries.push_back(e);
    EXPECT_EQ(json(out_leaves[h].shape), shape[e]) << "head " << h;
    EXPECT_EQ(out_leaves[h].dltype, dltype[e]) << "head " << h;
    EXPECT_EQ(c.plan.output_names[h], absl::StrCat("output", h));
  }

  // Storage: inputs, parameters and heads own theirs; entries whose
  // lifetimes [def, last use] overlap never share one.
  std::set<int> exclusive_entries(head_entries.begin(), head_entries.end());
  for (int id : arg_nodes) exclusive_entries.insert(row_ptr[id].get<int>());
  for (int e : exclusive_entries) {
    for (int f = 0; f < num_entries; ++f) {
      if (f != e) {
        EXPECT_NE(sid[e], sid[f]) << "exclusive entry " << e << " shares with " << f;
      }
    }
  }
  for (int e = 0; e < num_entries; ++e) {
    for (int f = e + 1; f < num_entries; ++f) {
      if (sid[e] != sid[f]) continue;
      EXPECT_TRUE(last[e] < def[f] || last[f] < def[e])
          << "entries " << e << " [" << def[e] << ", " << last[e] << "] and " << f << " [" << def[f]
          << ", " << last[f] << "] share storage " << sid[e];
    }
  }
  // Storage sizes as the memory plan reports them fit every entry.
  ASSERT_EQ(c.plan.memory.storage_of, sid);
  int64_t naive = 0;
  for (int e = 0; e < num_entries; ++e) {
    const int64_t b = Bytes(shape[e], dltype[e].get<std::string>());
    ASSERT_LT(static_cast<size_t>(sid[e]), c.plan.memory.storage_bytes.size());
    EXPECT_GE(c.plan.memory.storage_bytes[sid[e]], b) << "entry " << e;
    if (!exclusive_entries.count(e)) naive += (b + 63) / 64 * 64;
  }
  EXPECT_EQ(c.plan.memory.naive_bytes, naive);
  EXPECT_LE(c.plan.memory.shared_bytes, c.plan.memory.naive_bytes);
}

std::vector<int> Ints(const json& j) { return j.get<std::vector<int>>(); }

TEST(GraphPlanTest, ConvAddReluIsOneKernelCall) {
  Compiled c;
  ASSERT_NO_FATAL_FAILURE(Compile(R"(#[version = "0.1"]
def @main(%x: Tensor[(1, 3, 16, 16), float32], %w: Tensor[(8, 3, 3, 3), float32],
          %b: Tensor[(8, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1], channels=8, kernel_size=[3, 3]);
  %1 = add(%0, %b);
  nn.relu(%1)
})",
                                  &c));
  ASSERT_NO_FATAL_FAILURE(CheckGraph(c));
  const json& g = c.graph;
  ASSERT_EQ(g["nodes"].size(), 4u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(g["nodes"][i]["op"], "null");
  EXPECT_EQ(g["nodes"][0]["name"], "x");
  EXPECT_EQ(g["nodes"][1]["name"], "w");
  EXPECT_EQ(g["nodes"][2]["name"], "b");
  const json& op = g["nodes"][3];
  EXPECT_EQ(op["op"], "tvm_op");
  EXPECT_EQ(op["name"], "fused_nn_conv2d_add_nn_relu");
  EXPECT_EQ(op["attrs"]["func_name"], "fused_nn_conv2d_add_nn_relu");
  EXPECT_EQ(op["attrs"]["num_inputs"], "3");
  EXPECT_EQ(op["attrs"]["num_outputs"], "1");
  EXPECT_EQ(op["attrs"]["flatten_data"], "0");
  EXPECT_EQ(op["attrs"]["op_names"], "nn.conv2d,add,nn.relu");
  EXPECT_EQ(op["inputs"], json::parse("[[0, 0, 0], [1, 0, 0], [2, 0, 0]]"));
  EXPECT_EQ(Ints(g["arg_nodes"]), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(Ints(g["node_row_ptr"]), (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(g["heads"], json::parse("[[3, 0, 0]]"));
  EXPECT_EQ(g["attrs"]["dltype"],
            json::parse(R"(["list_str", ["float32", "float32", "float32", "float32"]])"));
  EXPECT_EQ(
      g["attrs"]["shape"],
      json::parse(R"(["list_shape", [[1, 3, 16, 16], [8, 3, 3, 3], [8, 1, 1], [1, 8, 16, 16]]])"));
  EXPECT_EQ(g["attrs"]["device_index"], json::parse(R"(["list_int", [1, 1, 1, 1]])"));
  const std::vector<int> sid = Ints(g["attrs"]["storage_id"][1]);
  EXPECT_EQ(std::set<int>(sid.begin(), sid.end()).size(), 4u);
  EXPECT_EQ(c.plan.input_names, (std::vector<std::string>{"x", "w", "b"}));
  EXPECT_EQ(c.plan.output_names, (std::vector<std::string>{"output0"}));
  EXPECT_TRUE(c.plan.params.empty());
  EXPECT_EQ(c.plan.num_nodes, 4);
  EXPECT_EQ(c.plan.num_op_nodes, 1);
  EXPECT_EQ(c.plan.memory.shared_bytes, 0);  // nothing but inputs and the head
}

// add and softmax alternate twice: the two adds are one kernel with one
// constant, stored once; the second calls get "_1" names.
TEST(GraphPlanTest, RepeatedKernelsShareConstantsAndGetSuffixes) {
  Compiled c;
  ASSERT_NO_FATAL_FAILURE(Compile(R"(#[version = "0.1"]
def @main(%x: Tensor[(2, 3), float32]) {
  %0 = add(%x, meta[Constant][0]);
  %1 = nn.softmax(%0, axis=1);
  %2 = add(%1, meta[Constant][0]);
  nn.softmax(%2, axis=1)
}
#[metadata]
meta[Constant][0] = Tensor[(3,), float32] b64"AACAPwAAAEAAAEBA";
)",
                                  &c));
  ASSERT_NO_FATAL_FAILURE(CheckGraph(c));
  const json& nodes = c.graph["nodes"];
  ASSERT_EQ(nodes.size(), 6u);
  std::vector<std::string> names;
  for (const json& n : nodes) names.push_back(n["name"].get<std::string>());
  EXPECT_EQ(names, (std::vector<std::string>{"x", "p0", "fused_add", "fused_nn_softmax",
                                             "fused_add_1", "fused_nn_softmax_1"}));
  EXPECT_EQ(nodes[2]["attrs"]["func_name"], "fused_add");
  EXPECT_EQ(nodes[4]["attrs"]["func_name"], "fused_add");
  EXPECT_EQ(nodes[5]["attrs"]["func_name"], "fused_nn_softmax");
  EXPECT_EQ(nodes[2]["inputs"], json::parse("[[0, 0, 0], [1, 0, 0]]"));
  EXPECT_EQ(nodes[4]["inputs"], json::parse("[[3, 0, 0], [1, 0, 0]]"));
  EXPECT_EQ(nodes[4]["attrs"]["num_inputs"], "2");
  ASSERT_EQ(c.plan.params.size(), 1u);
  EXPECT_EQ(c.plan.params[0].first, "p0");
  EXPECT_EQ(c.plan.params[0].second->shape(), (std::vector<int64_t>{3}));
  EXPECT_EQ(Ints(c.graph["arg_nodes"]), (std::vector<int>{0, 1}));
  EXPECT_EQ(c.plan.input_names, (std::vector<std::string>{"x"}));
  // Four intermediate-or-head entries in a chain: the head is exclusive, the
  // three intermediates need two storages of 2x3 floats (24 -> 64 bytes).
  EXPECT_EQ(c.plan.memory.naive_bytes, 3 * 64);
  EXPECT_EQ(c.plan.memory.shared_bytes, 2 * 64);
}

// The two adds differ only in their constants' values: one kernel, each call
// passing its own constant.
TEST(GraphPlanTest, KernelsEqualUpToConstantsShareCodeNotConstants) {
  Compiled c;
  ASSERT_NO_FATAL_FAILURE(Compile(R"(#[version = "0.1"]
def @main(%x: Tensor[(2, 3), float32]) {
  %0 = add(%x, meta[Constant][0]);
  %1 = nn.softmax(%0, axis=1);
  %2 = add(%1, meta[Constant][1]);
  nn.softmax(%2, axis=1)
}
#[metadata]
meta[Constant][0] = Tensor[(3,), float32] b64"AACAPwAAAEAAAEBA";
meta[Constant][1] = Tensor[(3,), float32] b64"AACAQAAAoEAAAMBA";
)",
                                  &c));
  ASSERT_NO_FATAL_FAILURE(CheckGraph(c));
  EXPECT_EQ(c.lowered.kernels.size(), 2u);  // add, softmax
  const json& nodes = c.graph["nodes"];
  ASSERT_EQ(nodes.size(), 7u);
  std::vector<std::string> names;
  for (const json& n : nodes) names.push_back(n["name"].get<std::string>());
  // Parameter nodes come first (first-use order), then the kernel calls.
  ASSERT_EQ(names, (std::vector<std::string>{"x", "p0", "p1", "fused_add", "fused_nn_softmax",
                                             "fused_add_1", "fused_nn_softmax_1"}));
  EXPECT_EQ(nodes[3]["attrs"]["func_name"], "fused_add");
  EXPECT_EQ(nodes[5]["attrs"]["func_name"], "fused_add");
  EXPECT_EQ(nodes[3]["inputs"], json::parse("[[0, 0, 0], [1, 0, 0]]"));
  EXPECT_EQ(nodes[5]["inputs"], json::parse("[[4, 0, 0], [2, 0, 0]]"));
  ASSERT_EQ(c.plan.params.size(), 2u);
  // The values as written above: 1, 2, 3 then 4, 5, 6.
  EXPECT_EQ(c.plan.params[0].second->data<float>()[0], 1.0f);
  EXPECT_EQ(c.plan.params[1].second->data<float>()[0], 4.0f);
  EXPECT_EQ(c.plan.params[1].second->data<float>()[2], 6.0f);
}

TEST(GraphPlanTest, DistinctConstantsAreDistinctParameters) {
  Compiled c;
  ASSERT_NO_FATAL_FAILURE(Compile(R"(#[version = "0.1"]
def @main(%x: Tensor[(2, 3), float32]) {
  %0 = add(%x, meta[Constant][0]);
  %1 = nn.softmax(%0, axis=1);
  multiply(%1, meta[Constant][1])
}
#[metadata]
meta[Constant][0] = Tensor[(3,), float32] b64"AACAPwAAAEAAAEBA";
meta[Constant][1] = Tensor[(2, 1), float32] b64"AACAPwAAAEA=";
)",
                                  &c));
  ASSERT_NO_FATAL_FAILURE(CheckGraph(c));
  ASSERT_EQ(c.plan.params.size(), 2u);
  EXPECT_EQ(c.plan.params[0].first, "p0");
  EXPECT_EQ(c.plan.params[1].first, "p1");
  EXPECT_EQ(c.plan.params[0].second->shape(), (std::vector<int64_t>{3}));
  EXPECT_EQ(c.plan.params[1].second->shape(), (std::vector<int64_t>{2, 1}));
  const json& nodes = c.graph["nodes"];
  ASSERT_EQ(nodes.size(), 6u);
  EXPECT_EQ(nodes[1]["name"], "p0");
  EXPECT_EQ(nodes[2]["name"], "p1");
  EXPECT_EQ(Ints(c.graph["arg_nodes"]), (std::vector<int>{0, 1, 2}));
}

TEST(GraphPlanTest, TupleResultGivesSeveralHeadsIncludingInputsAndParameters) {
  Compiled c;
  ASSERT_NO_FATAL_FAILURE(Compile(R"(#[version = "0.1"]
def @main(%x: Tensor[(4, 5), float32], %y: Tensor[(5,), int32]) {
  %0 = nn.relu(%x);
  %1 = nn.softmax(%0, axis=1);
  (%1, %y, meta[Constant][0], %0)
}
#[metadata]
meta[Constant][0] = Tensor[(2,), float32] b64"AACAPwAAAMA=";
)",
                                  &c));
  ASSERT_NO_FATAL_FAILURE(CheckGraph(c));
  const json& g = c.graph;
  ASSERT_EQ(g["heads"].size(), 4u);
  EXPECT_EQ(c.plan.output_names,
            (std::vector<std::string>{"output0", "output1", "output2", "output3"}));
  // Nodes: x, y, p0, relu, softmax.
  ASSERT_EQ(g["nodes"].size(), 5u);
  EXPECT_EQ(g["nodes"][2]["name"], "p0");
  EXPECT_EQ(g["heads"], json::parse("[[4, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0]]"));
  EXPECT_EQ(g["attrs"]["dltype"][1][1], "int32");
  // Every entry is an input, a parameter or a head: nothing is shared.
  EXPECT_EQ(c.plan.memory.shared_bytes, 0);
}

TEST(GraphPlanTest, TupleParametersAreFlattened) {
  Compiled c;
  ASSERT_NO_FATAL_FAILURE(Compile(R"(#[version = "0.1"]
def @main(%t: (Tensor[(3,), float32], (Tensor[(2, 2), float16], Tensor[(4,), int8]))) {
  %0 = %t.1;
  %1 = nn.relu(%t.0);
  (%1, %0.1)
}
)",
                                  &c));
  ASSERT_NO_FATAL_FAILURE(CheckGraph(c));
  const json& g = c.graph;
  ASSERT_GE(g["nodes"].size(), 3u);
  EXPECT_EQ(g["nodes"][0]["name"], "t.0");
  EXPECT_EQ(g["nodes"][1]["name"], "t.1.0");
  EXPECT_EQ(g["nodes"][2]["name"], "t.1.1");
  EXPECT_EQ(c.plan.input_names, (std::vector<std::string>{"t.0", "t.1.0", "t.1.1"}));
  EXPECT_EQ(g["attrs"]["dltype"][1][1], "float16");
  EXPECT_EQ(g["attrs"]["dltype"][1][2], "int8");
  // The second head is the projection t.1.1, i.e. input node 2.
  ASSERT_EQ(g["heads"].size(), 2u);
  EXPECT_EQ(g["heads"][1], json::parse("[2, 0, 0]"));
}

TEST(GraphPlanTest, TupleOutputKernelHasTwoOutputs) {
  Compiled c;
  ASSERT_NO_FATAL_FAILURE(Compile(R"(#[version = "0.1"]
def @main(%x: Tensor[(2, 8), float32]) {
  %0 = fn (%p0: Tensor[(2, 8), float32], Primitive=1) -> (Tensor[(2, 8), float32], Tensor[(2, 8), float32]) {
    (exp(%p0), sqrt(%p0))
  };
  %1 = %0(%x);
  %2 = fn (%p0: Tensor[(2, 8), float32], %p1: Tensor[(2, 8), float32], Primitive=1) -> Tensor[(2, 8), float32] {
    add(%p0, %p1)
  };
  %2(%1.1, %1.0)
}
)",
                                  &c));
  ASSERT_NO_FATAL_FAILURE(CheckGraph(c));
  const json& nodes = c.graph["nodes"];
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes[1]["attrs"]["num_outputs"], "2");
  EXPECT_EQ(nodes[1]["attrs"]["num_inputs"], "1");
  EXPECT_EQ(nodes[1]["attrs"]["op_names"], "exp,sqrt");
  EXPECT_EQ(Ints(c.graph["node_row_ptr"]), (std::vector<int>{0, 1, 3, 4}));
  // The projections route the entries, swapped.
  EXPECT_EQ(nodes[2]["inputs"], json::parse("[[1, 1, 0], [1, 0, 0]]"));
  EXPECT_EQ(c.graph["heads"], json::parse("[[2, 0, 0]]"));
  // Both outputs are read while the head is written: every entry has its own storage.
  const std::vector<int> sid = Ints(c.graph["attrs"]["storage_id"][1]);
  EXPECT_EQ(std::set<int>(sid.begin(), sid.end()).size(), 4u);
}

TEST(GraphPlanTest, NaiveOptionGivesEveryEntryItsOwnStorage) {
  const std::string text = R"(#[version = "0.1"]
def @main(%x: Tensor[(16, 16), float32]) {
  %0 = nn.softmax(%x, axis=1);
  %1 = nn.softmax(%0, axis=1);
  %2 = nn.softmax(%1, axis=1);
  %3 = nn.softmax(%2, axis=1);
  nn.softmax(%3, axis=1)
})";
  Compiled shared;
  ASSERT_NO_FATAL_FAILURE(Compile(text, &shared));
  ASSERT_NO_FATAL_FAILURE(CheckGraph(shared));
  GraphPlanOptions o;
  o.share_storage = false;
  Compiled naive;
  ASSERT_NO_FATAL_FAILURE(Compile(text, &naive, 1, o));
  ASSERT_NO_FATAL_FAILURE(CheckGraph(naive));
  const std::vector<int> sid = Ints(naive.graph["attrs"]["storage_id"][1]);
  EXPECT_EQ(std::set<int>(sid.begin(), sid.end()).size(), sid.size());
  EXPECT_EQ(naive.plan.memory.shared_bytes, 4 * 1024);
  EXPECT_EQ(shared.plan.memory.shared_bytes, 2 * 1024);
  EXPECT_EQ(shared.plan.memory.naive_bytes, naive.plan.memory.shared_bytes);
}

TEST(GraphPlanTest, NamesAreEscapedAndUnique) {
  // A parameter named like the first constant: the constant gets another name.
  Compiled c;
  ASSERT_NO_FATAL_FAILURE(Compile(R"(#[version = "0.1"]
def @main(%p0: Tensor[(3,), float32]) {
  add(%p0, meta[Constant][0])
}
#[metadata]
meta[Constant][0] = Tensor[(3,), float32] b64"AACAPwAAAEAAAEBA";
)",
                                  &c));
  ASSERT_NO_FATAL_FAILURE(CheckGraph(c));
  ASSERT_EQ(c.plan.params.size(), 1u);
  EXPECT_NE(c.plan.params[0].first, "p0");
  EXPECT_EQ(c.plan.input_names, (std::vector<std::string>{"p0"}));

  // A name with quotes and backslashes still gives valid JSON.
  Type t = MakeTensorType({Dim(3)}, DataType::Float(32));
  Var x = MakeVar("a\"b\\c\n", t);
  absl::StatusOr<Op> relu = GetOp("nn.relu");
  ASSERT_TRUE(relu.ok());
  absl::StatusOr<Call> call = MakeCall(*relu, {x});
  ASSERT_TRUE(call.ok());
  absl::StatusOr<Function> f = MakeFunction({x}, *call);
  ASSERT_TRUE(f.ok());
  Module m;
  ASSERT_TRUE(m.AddFunction("main", *f).ok());
  Compiled d;
  ASSERT_NO_FATAL_FAILURE(CompileModule(m, &d));
  ASSERT_NO_FATAL_FAILURE(CheckGraph(d));
  EXPECT_EQ(d.graph["nodes"][0]["name"], "a\"b\\c\n");
}

// ---- Errors ----------------------------------------------------------------

absl::Status PlanError(const Module& m) {
  absl::StatusOr<LoweredModule> lm = LowerModule(m, {});
  LoweredModule empty;
  absl::StatusOr<GraphPlan> plan = PlanGraph(m, lm.ok() ? *lm : empty, {});
  EXPECT_FALSE(plan.ok());
  return plan.ok() ? absl::OkStatus() : plan.status();
}

Module Typed(const std::string& text) {
  absl::StatusOr<Module> m = ParseModule(text, "test");
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return Module();
  absl::StatusOr<Module> t = types::InferType(*m);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : Module();
}

TEST(GraphPlanTest, SymbolicShapesAreUnimplementedNamingTheNode) {
  absl::StatusOr<Module> fused = Fuse(Typed(R"(#[version = "0.1"]
def @main(%x: Tensor[(n, 4), float32]) {
  nn.relu(%x)
})"),
                                      1);
  ASSERT_TRUE(fused.ok()) << fused.status();
  absl::Status s = PlanError(*fused);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "input %x")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "symbolic shape")) << s;
}

// What the artifact loader would refuse is refused here, saying why: a rank
// above the format's 32, a name that is not UTF-8 text.
TEST(GraphPlanTest, RanksAboveTheArtifactLimitAreErrors) {
  std::string ones = "1";
  for (int i = 1; i < 33; ++i) ones += ", 1";
  absl::StatusOr<Module> fused =
      Fuse(Typed("#[version = \"0.1\"]\ndef @main(%x: Tensor[(" + ones +
                 "), float32]) {\n  nn.relu(%x)\n}"),
           1);
  ASSERT_TRUE(fused.ok()) << fused.status();
  absl::Status s = PlanError(*fused);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "input %x has rank 33")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "at most 32")) << s;
}

TEST(GraphPlanTest, InputNamesMustBeUtf8WithoutNul) {
  for (const std::string& name : {std::string("x\xFF"), std::string("x\0y", 3)}) {
    Var x = MakeVar(name, MakeTensorType({4}, DataType::Float(32)));
    absl::StatusOr<Op> op = GetOp("nn.relu");
    ASSERT_TRUE(op.ok()) << op.status();
    absl::StatusOr<Call> relu = MakeCall(*op, {x});
    ASSERT_TRUE(relu.ok()) << relu.status();
    absl::StatusOr<Function> fn = MakeFunction({x}, *relu);
    ASSERT_TRUE(fn.ok()) << fn.status();
    Module m;
    ASSERT_TRUE(m.AddFunction("main", *fn).ok());
    absl::StatusOr<Module> typed = types::InferType(m);
    ASSERT_TRUE(typed.ok()) << typed.status();
    absl::StatusOr<Module> fused = Fuse(*typed, 1);
    ASSERT_TRUE(fused.ok()) << fused.status();
    absl::Status s = PlanError(*fused);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "the name of input 0")) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), name.size() == 2 ? "not valid UTF-8 (byte 0xff at "
                                                                  "offset 1)"
                                                                : "NUL byte at offset 1"))
        << s;
  }
}

TEST(GraphPlanTest, UnfusedOperatorCallsAreErrors) {
  Module m = Typed(R"(#[version = "0.1"]
def @main(%x: Tensor[(4,), float32]) {
  nn.relu(%x)
})");
  absl::Status s = PlanError(m);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "operator nn.relu")) << s;
}

TEST(GraphPlanTest, NonPrimitiveCalleesAreErrors) {
  Module m = Typed(R"(#[version = "0.1"]
def @f(%y: Tensor[(4,), float32]) {
  nn.relu(%y)
}
def @main(%x: Tensor[(4,), float32]) {
  @f(%x)
})");
  absl::Status s = PlanError(m);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "@f")) << s;

  Module local = Typed(R"(#[version = "0.1"]
def @main(%x: Tensor[(4,), float32]) {
  %0 = fn (%y: Tensor[(4,), float32]) { nn.relu(%y) };
  %0(%x)
})");
  s = PlanError(local);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "not primitive")) << s;
}

TEST(GraphPlanTest, PrimitiveFunctionsThatWereNotLoweredAreErrors) {
  absl::StatusOr<Module> fused = Fuse(Typed(R"(#[version = "0.1"]
def @main(%x: Tensor[(4,), float32]) {
  nn.relu(%x)
})"),
                                      1);
  ASSERT_TRUE(fused.ok()) << fused.status();
  absl::StatusOr<GraphPlan> plan = PlanGraph(*fused, LoweredModule{}, {});
  ASSERT_FALSE(plan.ok());
  EXPECT_TRUE(absl::StrContains(plan.status().message(), "not lowered")) << plan.status();
}

TEST(GraphPlanTest, FreeVariablesAreErrors) {
  Type t = MakeTensorType({Dim(4)}, DataType::Float(32));
  Var x = MakeVar("x", t);
  Var y = MakeVar("y", t);
  absl::StatusOr<Op> add = GetOp("add");
  ASSERT_TRUE(add.ok());
  absl::StatusOr<Call> call = MakeCall(*add, {x, y});
  ASSERT_TRUE(call.ok());
  absl::StatusOr<Function> f = MakeFunction({x}, *call);
  ASSERT_TRUE(f.ok());
  Module m;
  ASSERT_TRUE(m.AddFunction("main", *f).ok());
  absl::Status s = PlanError(m);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "free variable %y")) << s;
}

TEST(GraphPlanTest, FunctionsAsValuesAndLetsAreErrors) {
  Module fn_result = Typed(R"(#[version = "0.1"]
def @main(%x: Tensor[(4,), float32]) {
  fn (%y: Tensor[(4,), float32]) { %y }
})");
  absl::Status s = PlanError(fn_result);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "function")) << s;

  Module fn_field = Typed(R"(#[version = "0.1"]
def @f(%y: Tensor[(4,), float32]) { %y }
def @main(%x: Tensor[(4,), float32]) {
  (%x, @f)
})");
  s = PlanError(fn_field);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "tuple field 1 is a function")) << s;

  Module with_let = Typed(R"(#[version = "0.1"]
def @main(%x: Tensor[(4,), float32]) {
  let %y = nn.relu(%x);
  %y
})");
  s = PlanError(with_let);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "Let")) << s;
}

TEST(GraphPlanTest, MissingMainIsAnError) {
  absl::StatusOr<GraphPlan> plan = PlanGraph(Module(), LoweredModule{}, {});
  EXPECT_FALSE(plan.ok());
}

// ---- A real model ------------------------------------------------------------

TEST(GraphPlanTest, ResNet50ArenaIsSmallerThanTheNaiveSum) {
  absl::StatusOr<Module> m = types::ResNet50(Dim(1), /*constant_weights=*/false);
  ASSERT_TRUE(m.ok()) << m.status();
  Compiled c;
  ASSERT_NO_FATAL_FAILURE(CompileModule(*m, &c, /*opt_level=*/3));
  ASSERT_NO_FATAL_FAILURE(CheckGraph(c));
  EXPECT_GT(c.plan.num_op_nodes, 50);
  // The 1000 class scores are the single head.
  ASSERT_EQ(c.graph["heads"].size(), 1u);
  const int64_t shared = c.plan.memory.shared_bytes;
  const int64_t naive = c.plan.memory.naive_bytes;
  std::cout << "ResNet-50 (batch 1): " << c.plan.num_nodes << " nodes, " << c.plan.num_op_nodes
            << " kernel calls, arena " << shared << " bytes (" << shared / (1024.0 * 1024.0)
            << " MiB) shared vs " << naive << " bytes (" << naive / (1024.0 * 1024.0)
            << " MiB) naive\n";
  EXPECT_GT(shared, 0);
  EXPECT_LT(shared, naive);
  // The largest activation (1x64x112x112 float32 = 3.06 MiB) needs a storage.
  EXPECT_GE(shared, 64 * 112 * 112 * 4);
}

}  // namespace
}  // namespace kiln::lowering
