// File: tools/cmd_eval.cc
//
// `kiln eval`: a model's main run by kiln's reference interpreter
// (kiln_model_evaluate), without compiling: every construct of the graph
// language, for checking answers and trying programs. Through the C API
// (kiln/kiln.h) alone.
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kiln/kiln.h"
#include "kiln/npy.h"
#include "tools/cli.h"
#include "tools/npz.h"

namespace kiln::cli {

const char kEvalHelp[] =
    "usage: kiln eval MODEL [--input NAME=FILE.npy | --input FILE.npz ...] [--random-inputs]\n"
    "                 [--input-shape NAME=D,D | DIM=SIZE ...] [--output-npz FILE.npz]\n"
    "\n"
    "Runs MODEL's main (.kir text IR or .onnx) in kiln's reference interpreter, without\n"
    "compiling it: every construct of the language (if, recursion, closures, ADTs,\n"
    "references, symbolic shapes), slowly. Prints every output as kiln run does; the\n"
    "values are the reference the compiled model is checked against.\n"
    "  --input NAME=FILE.npy   the value of input NAME (repeatable)\n"
    "  --input FILE.npz        every array of FILE.npz sets the input of its name\n"
    "  --random-inputs         inputs not given get random values (seed 0); needs\n"
    "                          static shapes (or --input-shape)\n"
    "  --input-shape N=D,D     static shape for ONNX input N, or DIM=SIZE (repeatable)\n"
    "  --output-npz FILE.npz   write every output into one .npz (output0, output1, ...)\n";

namespace {

using NpyPtr = std::unique_ptr<KilnNpyTensor, void (*)(KilnNpyTensor*)>;

double Element(const DLTensor& t, int64_t i) {
  const char* p = static_cast<const char*>(t.data) + t.byte_offset;
  switch (t.dtype.code) {
    case kDLFloat:
      if (t.dtype.bits == 32) return reinterpret_cast<const float*>(p)[i];
      if (t.dtype.bits == 64) return reinterpret_cast<const double*>(p)[i];
      return 0;
    case kDLInt:
      switch (t.dtype.bits) {
        case 8: return reinterpret_cast<const int8_t*>(p)[i];
        case 16: return reinterpret_cast<const int16_t*>(p)[i];
        case 32: return reinterpret_cast<const int32_t*>(p)[i];
        default: return static_cast<double>(reinterpret_cast<const int64_t*>(p)[i]);
      }
    default:
      switch (t.dtype.bits) {
        case 8: return reinterpret_cast<const uint8_t*>(p)[i];
        case 16: return reinterpret_cast<const uint16_t*>(p)[i];
        case 32: return reinterpret_cast<const uint32_t*>(p)[i];
        default: return static_cast<double>(reinterpret_cast<const uint64_t*>(p)[i]);
      }
  }
}

}  // namespace

int Eval(const std::vector<std::string>& args) {
  Parser p("eval", kEvalHelp);
  std::vector<std::string> inputs, specs, files;
  bool random = false;
  std::string out_npz;
  p.Texts("--input", &inputs);
  p.Flag("--random-inputs", &random);
  p.Texts("--input-shape", &specs);
  p.Text("--output-npz", &out_npz);
  if (!p.Parse(args, &files)) return p.exit_code();
  if (files.size() != 1) return p.Usage("one MODEL expected");
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const std::string& s : specs) {
    std::string error;
    if (!ParseInputShape(s, &shapes, &error)) return p.Usage(error);
  }
  KilnStatus* load_status = nullptr;
  ModelPtr m = LoadModel(files[0], shapes, &load_status);
  if (!m) return Fail("eval", load_status);
  int32_t n = 0;
  if (KilnStatus* st = kiln_model_num_inputs(m.get(), &n)) return Fail("eval", st);
  std::map<std::string, std::string> from_files;
  std::map<std::string, std::string> npz_arrays;  // name -> .npy bytes
  for (const std::string& spec : inputs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos && spec.ends_with(".npz")) {
      std::vector<NpzArray> arrays;
      std::string error;
      if (!ReadNpz(spec, &arrays, &error)) return Fail("eval", error);
      for (NpzArray& a : arrays) npz_arrays[a.name] = std::move(a.npy);
      continue;
    }
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
      return p.Usage(absl::StrCat("--input must be NAME=FILE.npy or FILE.npz, got '", spec, "'"));
    }
    from_files[spec.substr(0, eq)] = spec.substr(eq + 1);
  }
  std::vector<NpyPtr> owned;
  std::vector<std::unique_ptr<uint8_t[]>> buffers;
  std::vector<DLTensor> tensors(static_cast<size_t>(n));
  std::vector<std::vector<int64_t>> shape_store(static_cast<size_t>(n));
  TempDir tmp;
  std::mt19937 rng(0);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (int32_t i = 0; i < n; ++i) {
    const char* name = nullptr;
    DLTensor info;
    if (KilnStatus* st = kiln_model_input_info(m.get(), i, &name, &info)) return Fail("eval", st);
    KilnNpyTensor* t = nullptr;
    if (auto it = from_files.find(name); it != from_files.end()) {
      if (KilnStatus* st = kiln_npy_read(it->second.c_str(), &t)) return Fail("eval", st);
      from_files.erase(it);
    } else if (auto z = npz_arrays.find(name); z != npz_arrays.end()) {
      std::string error;
      t = NpyToTensor(z->second, absl::StrCat("array '", name, "'"), tmp, &error);
      if (t == nullptr) return Fail("eval", error);
    }
    if (t != nullptr) {
      owned.emplace_back(t, kiln_npy_release);
      tensors[static_cast<size_t>(i)] = t->tensor;
      continue;
    }
    int64_t count = 1;
    for (int32_t d = 0; d < info.ndim; ++d) {
      if (info.shape[d] < 0 || !random) {
        return Fail("eval", absl::StrCat("input '", name, "' (", TensorText(info),
                                         ") is not given; use --input ", name, "=FILE.npy",
                                         info.shape[d] < 0 ? "" : " or --random-inputs"));
      }
      count *= info.shape[d];
    }
    if (!random) {
      return Fail("eval", absl::StrCat("input '", name, "' is not given; use --input ", name,
                                       "=FILE.npy or --random-inputs"));
    }
    const int64_t elem = (info.dtype.bits + 7) / 8;
    buffers.emplace_back(new uint8_t[static_cast<size_t>(count * elem + 1)]());
    if (info.dtype.code == kDLFloat && info.dtype.bits == 32) {
      float* f = reinterpret_cast<float*>(buffers.back().get());
      for (int64_t e = 0; e < count; ++e) f[e] = dist(rng);
    }
    shape_store[static_cast<size_t>(i)].assign(info.shape, info.shape + info.ndim);
    DLTensor t2 = info;
    t2.data = buffers.back().get();
    t2.shape = shape_store[static_cast<size_t>(i)].data();
    tensors[static_cast<size_t>(i)] = t2;
  }
  if (!from_files.empty()) {
    return Fail("eval", absl::StrCat("--input names '", from_files.begin()->first,
                                     "', which is not an input of ", files[0]));
  }
  std::vector<const DLTensor*> ptrs;
  for (const DLTensor& t : tensors) ptrs.push_back(&t);
  DLManagedTensor** outs = nullptr;
  int32_t num_outs = 0;
  if (KilnStatus* st = kiln_model_evaluate(m.get(), ptrs.data(), n, &outs, &num_outs)) {
    return Fail("eval", st);
  }
  std::vector<NpzArray> npz;
  std::string error;
  for (int32_t i = 0; i < num_outs; ++i) {
    const DLTensor& t = outs[i]->dl_tensor;
    int64_t count = 1;
    for (int32_t d = 0; d < t.ndim; ++d) count *= t.shape[d];
    std::printf("output %d: %s\n  [", i, TensorText(t).c_str());
    for (int64_t e = 0; e < count && e < 16; ++e) std::printf("%s%.6g", e ? ", " : "", Element(t, e));
    std::printf("%s]\n", count > 16 ? absl::StrCat(", ... (", count, " values)").c_str() : "");
    if (!out_npz.empty() && error.empty()) {
      NpzArray a;
      a.name = absl::StrCat("output", i);
      if (!TensorToNpy(t, tmp, &a.npy, &error)) error = absl::StrCat("output ", i, ": ", error);
      npz.push_back(std::move(a));
    }
  }
  for (int32_t i = 0; i < num_outs; ++i) outs[i]->deleter(outs[i]);
  kiln_free(outs);
  if (!error.empty()) return Fail("eval", error);
  if (!out_npz.empty() && !WriteNpz(out_npz, npz, &error)) return Fail("eval", error);
  return 0;
}

}  // namespace kiln::cli
