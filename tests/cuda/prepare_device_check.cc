// File: tests/cuda/prepare_device_check.cc
//
// Builds, on the development machine, everything tests/cuda/device_check.sh
// runs on a machine with a GPU (where there is no Bazel or LLVM of kiln's):
// for each case a directory OUT/<case>/ with model.so compiled for
// "cuda -arch=sm_90", its inputs (input_<i>.npy, random, seed 5) and, for
// the checked cases, the interpreter's outputs (expected_<i>.npy).
//
//   prepare_device_check OUT_DIR [--examples DIR] [--target T] [--only CASE,...]
//
// (--target llvm makes CPU artifacts of the same cases: device_run_test.)
//
// Cases: the bundled example models (examples/*.kir: ResNet, MobileNet and
// BERT-style blocks), a small dense in float32 and float16 (checked), and
// dense 4096^3 in float16 (timed only: the issue's GEMM target); the float16
// dense cases also compiled for "cuda -arch=sm_90a" (`_sm90a`: their GEMM
// tile on Hopper's wgmma instead of mma.sync), and dense in float32 for
// "cuda -arch=sm_90 -tf32" (`_tf32`: on tensor cores in TF32); float16
// convs on tensor cores (a small one checked, three of ResNet-50's timed)
// and float32 ones in TF32; ResNet-50 at batch 1 in float32, TF32 and
// float16 (timed).
// A timed case's FLOP count goes to OUT/<case>/flops.
#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "c_api/compiler.h"
#include "interpreter/interpreter.h"
#include "ir/parser.h"
#include "ir/status_macros.h"
#include "kiln/npy.h"
#include "tests/compiled/compare.h"
#include "types/infer_type.h"

namespace kiln {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

DLTensor ToDL(const HostTensor& t) {
  DLTensor d{};
  d.data = const_cast<void*>(t.raw_data());
  d.device = {kDLCPU, 0};
  d.ndim = t.ndim();
  d.dtype = {static_cast<uint8_t>(t.dtype().code()), static_cast<uint8_t>(t.dtype().bits()), 1};
  d.shape = const_cast<int64_t*>(t.shape().data());
  return d;
}

absl::Status WriteNpy(const std::string& path, const HostTensor& t) {
  DLTensor d = ToDL(t);
  KilnStatus* st = kiln_npy_write(path.c_str(), &d);
  if (st == nullptr) return absl::OkStatus();
  std::string m = kiln_status_message(st);
  kiln_status_free(st);
  return absl::InternalError(m);
}

// `concrete`, when not empty: the model with its symbolic dims fixed, for the
// inputs and the interpreter's outputs (the artifact is compiled from `text`).
absl::Status Prepare(const std::string& out, const std::string& name, const std::string& text,
                     bool check, const std::string& target, int64_t flops,
                     const std::string& concrete = "") {
  const std::string dir = absl::StrCat(out, "/", name);
  mkdir(dir.c_str(), 0755);
  if (flops > 0) {
    // device_check.sh passes it to `device_run bench` (TFLOP/s).
    std::ofstream(dir + "/flops") << flops << "\n";
  }
  // The text compiled, beside its artifact (what `kiln compile` would take).
  std::ofstream(dir + "/model.kir") << text;
  KILN_ASSIGN_OR_RETURN(Module parsed, ParseModule(text, name));
  KILN_ASSIGN_OR_RETURN(Module typed, types::InferType(parsed));
  compiler::CompileOptions o;
  o.target = target;
  KILN_ASSIGN_OR_RETURN(compiler::CompileReport r,
                        compiler::CompileToLibrary(typed, o, dir + "/model.so"));
  std::printf("%s: %d kernels, %llu bytes\n", name.c_str(), r.num_kernels,
              static_cast<unsigned long long>(r.file_bytes));
  if (!check) return absl::OkStatus();
  if (!concrete.empty()) {
    KILN_ASSIGN_OR_RETURN(Module fixed, ParseModule(concrete, name));
    KILN_ASSIGN_OR_RETURN(typed, types::InferType(fixed));
  }
  KILN_ASSIGN_OR_RETURN(std::vector<interp::Value> inputs,
                        testing::RandomInputs(typed, 5, -0.5, 0.5, 0, 3));
  // Batch-norm variances must be positive (as model_test does): |v| + 0.5.
  KILN_ASSIGN_OR_RETURN(Function main, typed.Lookup("main"));
  for (size_t i = 0; i < main->params.size(); ++i) {
    if (!main->params[i]->name_hint.ends_with("var")) continue;
    KILN_ASSIGN_OR_RETURN(Ref<HostTensor> t, HostTensor::Create(inputs[i].tensor()->dtype(),
                                                                inputs[i].tensor()->shape()));
    for (int64_t k = 0; k < t->num_elements(); ++k) {
      t->mutable_data<float>()[k] = std::abs(inputs[i].tensor()->data<float>()[k]) + 0.5f;
    }
    inputs[i] = interp::Value::Tensor(t);
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    KILN_RETURN_IF_ERROR(WriteNpy(absl::StrCat(dir, "/input_", i, ".npy"), *inputs[i].tensor()));
  }
  KILN_ASSIGN_OR_RETURN(interp::Value expected, interp::RunFunction(typed, "main", inputs));
  std::vector<interp::Value> outs;
  if (expected.is_tensor()) {
    outs.push_back(expected);
  } else {
    for (const interp::Value& f : expected.fields()) outs.push_back(f);
  }
  for (size_t i = 0; i < outs.size(); ++i) {
    KILN_RETURN_IF_ERROR(WriteNpy(absl::StrCat(dir, "/expected_", i, ".npy"), *outs[i].tensor()));
  }
  return absl::OkStatus();
}

std::string Dense(int m, int n, int k, const char* dtype) {
  return absl::StrCat("#[version = \"0.1\"]\ndef @main(%a: Tensor[(", m, ", ", k, "), ", dtype,
                      "], %b: Tensor[(", n, ", ", k, "), ", dtype, "]) {\n  nn.dense(%a, %b, units=", n,
                      ")\n}\n");
}

// An NCHW conv with OIHW weights, `pad` on every side, the bias and relu
// fused (ResNet's).
std::string Conv(int c, int hw, int oc, int k, int stride, int pad, const char* dtype) {
  return absl::StrCat("#[version = \"0.1\"]\ndef @main(%x: Tensor[(1, ", c, ", ", hw, ", ", hw,
                      "), ", dtype, "], %w: Tensor[(", oc, ", ", c, ", ", k, ", ", k, "), ", dtype,
                      "], %b: Tensor[(", oc, "), ", dtype, "]) {\n  nn.relu(nn.bias_add(nn.conv2d(%x, %w, ",
                      "strides=[", stride, ", ", stride, "], padding=[", pad, ", ", pad, "]), %b))\n}\n");
}

// Models that need the VM (GPU VM artifacts, docs/vm.md "On a GPU"): a loop
// by recursion and an `if` over static shapes, and a dense layer over
// [N, 128, 256] with a symbolic batch (split by batch: the GEMM tile per row,
// a block row per batch row); `n` fixes the batch for the inputs.
std::string VmControlFlow() {
  return R"(#[version = "0.1"]
def @loop(%i: Tensor[(), int32], %x: Tensor[(64, 256), float32]) -> Tensor[(64, 256), float32] {
  if (less(%i, 1)) {
    %x
  } else {
    @loop(subtract(%i, 1), add(multiply(%x, 0.5f), 1f))
  }
}

def @main(%n: Tensor[(), int32], %c: Tensor[(), bool], %x: Tensor[(64, 256), float32]) {
  %0 = @loop(%n, %x);
  if (%c) { negative(%0) } else { nn.softmax(exp(%0), axis=1) }
}
)";
}

std::string VmSymbolicBatch(const std::string& n) {
  return absl::StrCat("#[version = \"0.1\"]\ndef @main(%x: Tensor[(", n,
                      ", 128, 256), float32], %w: Tensor[(512, 256), float32], %b: Tensor[(512), float32]) {\n"
                      "  nn.softmax(nn.relu(nn.bias_add(nn.dense(%x, %w, units=512), %b, axis=-1)), axis=-1)\n}\n");
}

// ResNet-50 (torchvision's v1.5: the stride on the 3x3 conv of a stage's
// first bottleneck) at batch 1 on 224x224 NCHW, for its latency against
// PyTorch's on the same GPU. Inference form: each batch norm folded into its
// conv's bias (conv2d + bias_add [+ relu]), as a deployed model has it. The
// weights are inputs, not constants, so the artifact carries no 100 MB of
// them to the GPU machine (device_run bench sets them to zeros; the time of
// the kernels does not depend on the values).
std::string ResNet50(const char* dtype) {
  std::string params = absl::StrCat("%x: Tensor[(1, 3, 224, 224), ", dtype, "]");
  std::string body;
  int num_convs = 0, next = 0;
  // conv (+ bias, + relu when `relu`) of `in` (a value name); returns the new value.
  auto conv = [&](const std::string& in, int c, int oc, int k, int stride, bool relu) {
    const int i = num_convs++;
    absl::StrAppend(&params, ",\n          %w", i, ": Tensor[(", oc, ", ", c, ", ", k, ", ", k, "), ", dtype,
                    "], %b", i, ": Tensor[(", oc, "), ", dtype, "]");
    const int pad = k / 2;
    std::string v = absl::StrCat("%", next++);
    std::string e = absl::StrCat("nn.bias_add(nn.conv2d(", in, ", %w", i, ", strides=[", stride, ", ", stride,
                                 "], padding=[", pad, ", ", pad, "], channels=", oc, ", kernel_size=[", k, ", ", k,
                                 "]), %b", i, ")");
    absl::StrAppend(&body, "  ", v, " = ", relu ? absl::StrCat("nn.relu(", e, ")") : e, ";\n");
    return v;
  };
  std::string h = conv("%x", 3, 64, 7, 2, true);
  std::string pooled = absl::StrCat("%", next++);
  absl::StrAppend(&body, "  ", pooled, " = nn.max_pool2d(", h,
                  ", pool_size=[3, 3], strides=[2, 2], padding=[1, 1]);\n");
  h = pooled;
  int c = 64;
  const int blocks[4] = {3, 4, 6, 3};
  for (int stage = 0; stage < 4; ++stage) {
    const int width = 64 << stage, out = width * 4;
    for (int b = 0; b < blocks[stage]; ++b) {
      const int stride = stage > 0 && b == 0 ? 2 : 1;
      std::string a = conv(h, c, width, 1, 1, true);
      a = conv(a, width, width, 3, stride, true);
      a = conv(a, width, out, 1, 1, false);
      std::string shortcut = b == 0 ? conv(h, c, out, 1, stride, false) : h;
      std::string sum = absl::StrCat("%", next++);
      absl::StrAppend(&body, "  ", sum, " = nn.relu(add(", a, ", ", shortcut, "));\n");
      h = sum;
      c = out;
    }
  }
  absl::StrAppend(&params, ",\n          %fc_w: Tensor[(1000, 2048), ", dtype, "], %fc_b: Tensor[(1000), ", dtype,
                  "]");
  absl::StrAppend(&body, "  %", next, " = reshape(nn.global_avg_pool2d(", h, "), newshape=[1, 2048]);\n",
                  "  nn.bias_add(nn.dense(%", next, ", %fc_w, units=1000), %fc_b)\n");
  return absl::StrCat("#[version = \"0.1\"]\ndef @main(", params, ") {\n", body, "}\n");
}

// 2 * output elements * C * KH * KW.
int64_t ConvFlops(int c, int hw, int oc, int k, int stride, int pad) {
  const int64_t o = (hw + 2 * pad - k) / stride + 1;
  return 2 * o * o * oc * static_cast<int64_t>(c) * k * k;
}

int Main(int argc, char** argv) {
  if (argc < 2 || argc % 2 != 0) {
    std::fprintf(stderr,
                 "usage: prepare_device_check OUT_DIR [--examples DIR] [--target T] [--only A,B]\n");
    return 2;
  }
  std::string out = argv[1], examples = "examples", target = "cuda -arch=sm_90", only;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--examples") {
      examples = argv[i + 1];
    } else if (flag == "--target") {
      target = argv[i + 1];
    } else if (flag == "--only") {
      only = absl::StrCat(",", argv[i + 1], ",");
    } else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  mkdir(out.c_str(), 0755);
  struct Case {
    std::string name, text;
    bool check;
    const char* cuda_target = nullptr;  // for a cuda target: this one instead
    int64_t flops = 0;                   // for the timing's TFLOP/s
    std::string concrete;                // symbolic dims fixed, for the inputs
  };
  std::vector<Case> cases = {
      {"resnet_block", ReadFile(examples + "/resnet_block.kir"), true},
      {"mobilenet_block", ReadFile(examples + "/mobilenet_block.kir"), true},
      {"transformer_block", ReadFile(examples + "/transformer_block.kir"), true},
      {"dense_256_fp32", Dense(256, 256, 256, "float32"), true},
      {"dense_256_fp16", Dense(256, 256, 256, "float16"), true},
      {"dense_4096_fp16", Dense(4096, 4096, 4096, "float16"), false, nullptr,
       int64_t{2} * 4096 * 4096 * 4096},
      {"dense_256_fp16_sm90a", Dense(256, 256, 256, "float16"), true, "cuda -arch=sm_90a"},
      {"dense_4096_fp16_sm90a", Dense(4096, 4096, 4096, "float16"), false, "cuda -arch=sm_90a",
       int64_t{2} * 4096 * 4096 * 4096},
      // sm_90a's two wgmma tiles side by side: the wide 128 x 256 one (the
      // default above) and the 128 x 128 one (-wgmma-n=128).
      {"dense_256_fp16_sm90a_n128", Dense(256, 256, 256, "float16"), true,
       "cuda -arch=sm_90a -wgmma-n=128"},
      {"dense_4096_fp16_sm90a_n128", Dense(4096, 4096, 4096, "float16"), false,
       "cuda -arch=sm_90a -wgmma-n=128", int64_t{2} * 4096 * 4096 * 4096},
      // And the wide one with its stages in the 128-byte swizzled layout.
      {"dense_512_fp16_sm90a_sw128", Dense(512, 512, 512, "float16"), true,
       "cuda -arch=sm_90a -wgmma-swizzle=128"},
      {"dense_4096_fp16_sm90a_sw128", Dense(4096, 4096, 4096, "float16"), false,
       "cuda -arch=sm_90a -wgmma-swizzle=128", int64_t{2} * 4096 * 4096 * 4096},
      // And with its stages filled by TMA (tensor maps encoded at launch),
      // a ragged one checked (the maps' zero fill past k, rows past M).
      {"dense_300_fp16_sm90a_tma", Dense(300, 512, 200, "float16"), true,
       "cuda -arch=sm_90a -wgmma-tma"},
      {"dense_4096_fp16_sm90a_tma", Dense(4096, 4096, 4096, "float16"), false,
       "cuda -arch=sm_90a -wgmma-tma", int64_t{2} * 4096 * 4096 * 4096},
      // And warp-specialized: a producer warpgroup issues the TMA copies.
      {"dense_300_fp16_sm90a_ws", Dense(300, 512, 200, "float16"), true,
       "cuda -arch=sm_90a -wgmma-ws"},
      {"dense_4096_fp16_sm90a_ws", Dense(4096, 4096, 4096, "float16"), false,
       "cuda -arch=sm_90a -wgmma-ws", int64_t{2} * 4096 * 4096 * 4096},
      {"dense_256_fp32_tf32", Dense(256, 256, 256, "float32"), true, "cuda -arch=sm_90 -tf32"},
      {"dense_4096_fp32_tf32", Dense(4096, 4096, 4096, "float32"), false,
       "cuda -arch=sm_90 -tf32", int64_t{2} * 4096 * 4096 * 4096},
      // float16 convs on tensor cores (implicit GEMM): a small one checked,
      // ResNet-50's 3x3 convs of its 2nd and 4th stages and its 7x7 stem
      // timed (device_check.sh times cuDNN's through PyTorch beside them).
      {"conv_3x3_fp16", Conv(32, 20, 48, 3, 1, 1, "float16"), true, nullptr,
       ConvFlops(32, 20, 48, 3, 1, 1)},
      {"conv_r50_3x3_28_fp16", Conv(128, 28, 128, 3, 1, 1, "float16"), false, nullptr,
       ConvFlops(128, 28, 128, 3, 1, 1)},
      {"conv_r50_3x3_7_fp16", Conv(512, 7, 512, 3, 1, 1, "float16"), false, nullptr,
       ConvFlops(512, 7, 512, 3, 1, 1)},
      {"conv_r50_stem_fp16", Conv(3, 224, 64, 7, 2, 3, "float16"), false, nullptr,
       ConvFlops(3, 224, 64, 7, 2, 3)},
      // The same on Hopper's wgmma (sm_90a).
      {"conv_3x3_fp16_sm90a", Conv(32, 20, 48, 3, 1, 1, "float16"), true, "cuda -arch=sm_90a",
       ConvFlops(32, 20, 48, 3, 1, 1)},
      {"conv_r50_3x3_28_fp16_sm90a", Conv(128, 28, 128, 3, 1, 1, "float16"), false,
       "cuda -arch=sm_90a", ConvFlops(128, 28, 128, 3, 1, 1)},
      // float32 convs in TF32 (-tf32): one checked, one timed.
      {"conv_3x3_fp32_tf32", Conv(32, 20, 48, 3, 1, 1, "float32"), true, "cuda -arch=sm_90 -tf32",
       ConvFlops(32, 20, 48, 3, 1, 1)},
      {"conv_r50_3x3_28_fp32_tf32", Conv(128, 28, 128, 3, 1, 1, "float32"), false,
       "cuda -arch=sm_90 -tf32", ConvFlops(128, 28, 128, 3, 1, 1)},
      // ResNet-50 at batch 1, timed against PyTorch's (device_check.sh):
      // float32 (CUDA cores), float32 with TF32 convs (PyTorch's default
      // for cuDNN convs), float16 (tensor cores).
      {"resnet50_fp32", ResNet50("float32"), false},
      {"resnet50_fp32_tf32", ResNet50("float32"), false, "cuda -arch=sm_90 -tf32"},
      {"resnet50_fp16", ResNet50("float16"), false},
      // GPU VM artifacts, checked against the interpreter.
      {"vm_control_flow", VmControlFlow(), true},
      {"vm_symbolic_batch", VmSymbolicBatch("N"), true, nullptr, 0, VmSymbolicBatch("5")},
  };
  int failed = 0;
  for (const Case& c : cases) {
    if (!only.empty() && only.find(absl::StrCat(",", c.name, ",")) == std::string::npos) continue;
    const bool cuda = target.rfind("cuda", 0) == 0;
    absl::Status st = Prepare(out, c.name, c.text, c.check,
                              c.cuda_target != nullptr && cuda ? c.cuda_target : target, c.flops,
                              c.concrete);
    if (!st.ok()) {
      std::fprintf(stderr, "%s: %s\n", c.name.c_str(), std::string(st.message()).c_str());
      failed = 1;
    }
  }
  return failed;
}

}  // namespace
}  // namespace kiln

int main(int argc, char** argv) { return kiln::Main(argc, argv); }
