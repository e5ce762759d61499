// Importing a ResNet-50-sized ONNX model: ResNet-50's topology (conv / batch
// norm / relu / residual add / max pool / global average pool / flatten /
// gemm), opset 13, every weight in raw_data. Argument: a width divisor
// (1 = the real model, ~25.6M float weights, ~100 MB; 16 = a narrow variant
// for the smoke run). The model is built and serialized once per argument;
// the loop times ImportOnnxBytes alone (parse, weights -> constants, convert,
// type-check). The bar: under 2 s for the full model.
//
//   bazel run --config=opt //frontends/onnx:importer_bench
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "frontends/onnx/importer.h"
#include "frontends/onnx/onnx_test_util.h"

namespace kiln::onnx_frontend {
namespace {

using testing::AttrInt;
using testing::AttrInts;
using testing::MakeNode;
using testing::MakeValueInfo;

class ResNetBuilder {
 public:
  explicit ResNetBuilder(int divisor) : divisor_(divisor) {
    model_.set_ir_version(8);
    model_.set_producer_name("kiln-bench");
    testing::SetOpset(&model_, "", 13);
    graph_ = model_.mutable_graph();
    graph_->set_name("resnet50");
  }

  std::string Build() {
    *graph_->add_input() = MakeValueInfo("data", onnx::TensorProto::FLOAT, {1, 3, 224, 224});
    std::string x = Conv("data", 3, Width(64), 7, 2, 3);
    x = Relu(BatchNorm(x, Width(64)));
    x = Node("MaxPool", {x},
             {AttrInts("kernel_shape", {3, 3}), AttrInts("strides", {2, 2}),
              AttrInts("pads", {1, 1, 1, 1})});
    int64_t channels = Width(64);
    const int blocks[] = {3, 4, 6, 3};
    for (int stage = 0; stage < 4; ++stage) {
      const int64_t width = Width(64 << stage);
      for (int b = 0; b < blocks[stage]; ++b) {
        const int stride = (stage > 0 && b == 0) ? 2 : 1;
        x = Bottleneck(x, channels, width, stride);
        channels = width * 4;
      }
    }
    x = Node("GlobalAveragePool", {x}, {});
    x = Node("Flatten", {x}, {AttrInt("axis", 1)});
    const std::string w = Weight({1000, channels});
    const std::string bias = Weight({1000});
    x = Node("Gemm", {x, w, bias}, {AttrInt("transB", 1)});
    *graph_->add_output() = MakeValueInfo(x, onnx::TensorProto::FLOAT, {1, 1000});
    std::string bytes;
    model_.SerializeToString(&bytes);
    return bytes;
  }

  int64_t weights() const { return weights_; }

 private:
  int64_t Width(int64_t c) const { return std::max<int64_t>(1, c / divisor_); }

  std::string Node(const std::string& op, std::vector<std::string> inputs,
                   std::vector<onnx::AttributeProto> attrs) {
    const std::string out = absl::StrCat(op, "_", ++counter_);
    *graph_->add_node() = MakeNode(op, std::move(inputs), {out}, std::move(attrs), out);
    return out;
  }

  // A float initializer of small pseudo-random values (positive for `positive`).
  std::string Weight(std::vector<int64_t> dims, bool positive = false) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    onnx::TensorProto* t = graph_->add_initializer();
    t->set_name(absl::StrCat("w", ++counter_));
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    std::vector<float> v(static_cast<size_t>(n));
    for (float& f : v) {
      seed_ = seed_ * 6364136223846793005ULL + 1442695040888963407ULL;
      const float u = static_cast<float>(seed_ >> 40) / static_cast<float>(1 << 24);  // [0, 1)
      f = positive ? 0.5f + u : (u - 0.5f) * 0.1f;
    }
    t->mutable_raw_data()->assign(reinterpret_cast<const char*>(v.data()),
                                  v.size() * sizeof(float));
    weights_ += n;
    return t->name();
  }

  std::string Conv(const std::string& x, int64_t cin, int64_t cout, int64_t k, int64_t stride,
                   int64_t pad) {
    const std::string w = Weight({cout, cin, k, k});
    return Node("Conv", {x, w},
                {AttrInts("kernel_shape", {k, k}), AttrInts("strides", {stride, stride}),
                 AttrInts("pads", {pad, pad, pad, pad})});
  }

  std::string BatchNorm(const std::string& x, int64_t c) {
    const std::string scale = Weight({c}, true), bias = Weight({c}), mean = Weight({c});
    const std::string var = Weight({c}, true);
    onnx::AttributeProto eps;
    eps.set_name("epsilon");
    eps.set_type(onnx::AttributeProto::FLOAT);
    eps.set_f(1e-5f);
    return Node("BatchNormalization", {x, scale, bias, mean, var}, {eps});
  }

  std::string Relu(const std::string& x) { return Node("Relu", {x}, {}); }

  std::string Bottleneck(const std::string& x, int64_t cin, int64_t width, int stride) {
    std::string y = Relu(BatchNorm(Conv(x, cin, width, 1, 1, 0), width));
    y = Relu(BatchNorm(Conv(y, width, width, 3, stride, 1), width));
    y = BatchNorm(Conv(y, width, width * 4, 1, 1, 0), width * 4);
    std::string shortcut = x;
    if (stride != 1 || cin != width * 4) {
      shortcut = BatchNorm(Conv(x, cin, width * 4, 1, stride, 0), width * 4);
    }
    return Relu(Node("Add", {y, shortcut}, {}));
  }

  const int divisor_;
  onnx::ModelProto model_;
  onnx::GraphProto* graph_ = nullptr;
  int counter_ = 0;
  int64_t weights_ = 0;
  uint64_t seed_ = 42;
};

struct BuiltModel {
  std::string bytes;
  int64_t weights = 0;
};

const BuiltModel& ModelFor(int divisor) {
  static std::map<int, BuiltModel>* const cache = new std::map<int, BuiltModel>();
  auto it = cache->find(divisor);
  if (it != cache->end()) return it->second;
  ResNetBuilder b(divisor);
  BuiltModel m;
  m.bytes = b.Build();
  m.weights = b.weights();
  return cache->emplace(divisor, std::move(m)).first->second;
}

void BM_ImportResNet50(benchmark::State& state) {
  const BuiltModel& model = ModelFor(static_cast<int>(state.range(0)));
  // One import first: when the converters this model needs are missing the
  // benchmark is skipped with the importer's list of unsupported operators.
  absl::StatusOr<Module> probe = ImportOnnxBytes(model.bytes);
  if (!probe.ok()) {
    state.SkipWithError(absl::StrCat("import failed: ", probe.status().ToString()).c_str());
    return;
  }
  for (auto _ : state) {
    absl::StatusOr<Module> m = ImportOnnxBytes(model.bytes);
    benchmark::DoNotOptimize(m);
    if (!m.ok()) {
      state.SkipWithError(std::string(m.status().message()).c_str());
      break;
    }
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(model.bytes.size()));
  state.counters["weights"] = static_cast<double>(model.weights);
  state.counters["model_MB"] = static_cast<double>(model.bytes.size()) / 1e6;
}
BENCHMARK(BM_ImportResNet50)->Arg(1)->Arg(16)->Unit(benchmark::kMillisecond);

// A chain of N Relu nodes: the per-node cost of the walk (converter call,
// typing each new call, bookkeeping) without weights.
void BM_ImportReluChain(benchmark::State& state) {
  const int64_t n = state.range(0);
  onnx::ModelProto model;
  model.set_ir_version(8);
  testing::SetOpset(&model, "", 13);
  onnx::GraphProto* g = model.mutable_graph();
  *g->add_input() = MakeValueInfo("v0", onnx::TensorProto::FLOAT, {1, 64});
  for (int64_t i = 0; i < n; ++i) {
    *g->add_node() = MakeNode("Relu", {absl::StrCat("v", i)}, {absl::StrCat("v", i + 1)});
  }
  *g->add_output() = MakeValueInfo(absl::StrCat("v", n), onnx::TensorProto::FLOAT, {1, 64});
  std::string bytes;
  model.SerializeToString(&bytes);
  for (auto _ : state) {
    absl::StatusOr<Module> m = ImportOnnxBytes(bytes);
    benchmark::DoNotOptimize(m);
    if (!m.ok()) {
      state.SkipWithError(std::string(m.status().message()).c_str());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_ImportReluChain)->Arg(1000)->Arg(100000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace kiln::onnx_frontend
