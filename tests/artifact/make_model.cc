// File: tests/artifact/make_model.cc
//
// Test-data generator for the artifact tests: compiles a text-IR model to a
// shared library with kiln's compiler (c_api/compiler.h), with the weights as
// random constants, and writes random inputs and the interpreter's outputs as
// .npy files beside it:
//
//   make_model --model resnet_block.kir --inputs x --out DIR [--seed N] [--target T] [-O N]
//              [--cc CC]   (the driver that links the .so: a cross compiler for another machine)
//     DIR/model.so              the artifact
//     DIR/input_<name>.npy      one per input (the parameters named by --inputs)
//     DIR/expected_<i>.npy      the interpreter's outputs (a tuple is flattened)
//     DIR/stats.txt             kernels, arena vs naive bytes, compile times
//
// Every parameter of `main` not named by --inputs becomes a constant (a weight)
// with values uniform in [-0.5, 0.5) (integers in [0, 4)), seeded; a parameter
// whose name ends in "var" or "variance" (batch-norm variances) is uniform in
// [0.5, 1.5) so that the model computes finite numbers.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "c_api/compiler.h"
#include "interpreter/interpreter.h"
#include "ir/parser.h"
#include "ir/status_macros.h"
#include "ir/traversal.h"
#include "kiln/npy.h"

namespace {

using kiln::DataType;
using kiln::HostTensor;
using kiln::Ref;

absl::StatusOr<Ref<HostTensor>> RandomTensor(const kiln::TensorTypeNode& tt, bool positive,
                                             std::mt19937_64& rng) {
  std::vector<int64_t> shape;
  for (const kiln::Dim& d : tt.shape) {
    if (!d.is_static()) return absl::InvalidArgumentError("make_model: symbolic shape");
    shape.push_back(d.value());
  }
  KILN_ASSIGN_OR_RETURN(Ref<HostTensor> t, HostTensor::Create(tt.dtype, shape));
  std::uniform_real_distribution<double> real(positive ? 0.5 : -0.5, positive ? 1.5 : 0.5);
  std::uniform_int_distribution<int> small(0, 3);
  const DataType dt = tt.dtype;
  const int64_t n = t->num_elements();
  for (int64_t i = 0; i < n; ++i) {
    double r = real(rng);
    int k = small(rng);
    if (dt == DataType::Float(32)) {
      t->mutable_data<float>()[i] = static_cast<float>(r);
    } else if (dt == DataType::Float(64)) {
      t->mutable_data<double>()[i] = r;
    } else if (dt == DataType::Float(16)) {
      t->mutable_data<uint16_t>()[i] = kiln::FloatToHalf(static_cast<float>(r));
    } else if (dt == DataType::BFloat16()) {
      t->mutable_data<uint16_t>()[i] = kiln::FloatToBFloat16(static_cast<float>(r));
    } else if (dt.is_bool()) {
      t->mutable_data<uint8_t>()[i] = static_cast<uint8_t>(k & 1);
    } else if (dt.bits() == 8) {
      t->mutable_data<uint8_t>()[i] = static_cast<uint8_t>(k);
    } else if (dt.bits() == 16) {
      t->mutable_data<uint16_t>()[i] = static_cast<uint16_t>(k);
    } else if (dt.bits() == 32) {
      t->mutable_data<uint32_t>()[i] = static_cast<uint32_t>(k);
    } else if (dt.bits() == 64) {
      t->mutable_data<uint64_t>()[i] = static_cast<uint64_t>(k);
    } else {
      return absl::UnimplementedError(absl::StrCat("make_model: dtype ", dt.ToString()));
    }
  }
  return t;
}

absl::Status WriteNpy(const std::string& path, const HostTensor& t) {
  DLTensor d{};
  d.data = const_cast<void*>(t.raw_data());
  d.device = DLDevice{kDLCPU, 0};
  d.ndim = t.ndim();
  d.dtype = DLDataType{static_cast<uint8_t>(t.dtype().code()), static_cast<uint8_t>(t.dtype().bits()),
                       static_cast<uint16_t>(t.dtype().lanes())};
  d.shape = const_cast<int64_t*>(t.shape().data());
  KilnStatus* st = kiln_npy_write(path.c_str(), &d);
  if (st == nullptr) return absl::OkStatus();
  std::string msg = kiln_status_message(st);
  kiln_status_free(st);
  return absl::InternalError(msg);
}

void Flatten(const kiln::interp::Value& v, std::vector<Ref<const HostTensor>>* out) {
  if (v.kind() == kiln::interp::ValueKind::kTensor) {
    out->push_back(v.tensor());
    return;
  }
  for (const kiln::interp::Value& f : v.fields()) Flatten(f, out);
}

absl::Status Run(const std::string& model_path, const std::string& inputs_arg,
                 const std::string& out_dir, uint64_t seed, const kiln::compiler::CompileOptions& opts) {
  std::ifstream in(model_path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", model_path));
  std::stringstream text;
  text << in.rdbuf();
  KILN_ASSIGN_OR_RETURN(kiln::Module m, kiln::ParseModule(text.str()));
  KILN_ASSIGN_OR_RETURN(kiln::Function main, m.Lookup("main"));
  absl::flat_hash_set<std::string> input_names;
  for (absl::string_view s : absl::StrSplit(inputs_arg, ',', absl::SkipEmpty())) {
    input_names.insert(std::string(s));
  }
  std::mt19937_64 rng(seed);
  absl::flat_hash_map<const kiln::VarNode*, kiln::Expr> subst;
  std::vector<kiln::Var> params;
  std::vector<kiln::interp::Value> args;
  for (const kiln::Var& p : main->params) {
    const auto* tt = p->type_annotation.as<kiln::TensorTypeNode>();
    if (tt == nullptr) return absl::InvalidArgumentError(absl::StrCat("%", p->name_hint, ": not a tensor"));
    const std::string& n = p->name_hint;
    const bool positive = n.ends_with("var") || n.ends_with("variance");
    KILN_ASSIGN_OR_RETURN(Ref<HostTensor> value, RandomTensor(*tt, positive, rng));
    if (input_names.erase(p->name_hint) > 0) {
      params.push_back(p);
      args.push_back(kiln::interp::Value::Tensor(value));
      KILN_RETURN_IF_ERROR(WriteNpy(absl::StrCat(out_dir, "/input_", p->name_hint, ".npy"), *value));
    } else {
      KILN_ASSIGN_OR_RETURN(kiln::Constant c, kiln::MakeConstant(value));
      subst[p.get()] = c;
    }
  }
  if (!input_names.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--inputs names a parameter main does not have: ", *input_names.begin()));
  }
  KILN_ASSIGN_OR_RETURN(kiln::Expr body, kiln::Substitute(main->body, subst));
  KILN_ASSIGN_OR_RETURN(kiln::Function bound, kiln::MakeFunction(params, body, main->ret_type));
  kiln::Module bm = m;
  KILN_RETURN_IF_ERROR(bm.AddFunction("main", bound, /*update=*/true).status());

  KILN_ASSIGN_OR_RETURN(kiln::interp::Value expected, kiln::interp::RunFunction(bm, "main", args));
  std::vector<Ref<const HostTensor>> outs;
  Flatten(expected, &outs);
  for (size_t i = 0; i < outs.size(); ++i) {
    KILN_RETURN_IF_ERROR(WriteNpy(absl::StrCat(out_dir, "/expected_", i, ".npy"), *outs[i]));
  }
  KILN_ASSIGN_OR_RETURN(kiln::compiler::CompileReport r,
                        kiln::compiler::CompileToLibrary(bm, opts, out_dir + "/model.so"));
  std::ofstream stats(out_dir + "/stats.txt");
  stats << "model " << model_path << "\nfused_calls " << r.num_fused_calls << "\nkernels "
        << r.num_kernels << "\narena_bytes " << r.arena_bytes << "\nnaive_bytes " << r.naive_bytes
        << "\nfile_bytes " << r.file_bytes << "\npasses_ms " << r.passes_ms << "\nlower_ms "
        << r.lower_ms << "\nplan_ms " << r.plan_ms << "\ncodegen_ms " << r.codegen_ms
        << "\nlink_ms " << r.link_ms << "\n";
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  std::string model, inputs, out;
  uint64_t seed = 1;
  kiln::compiler::CompileOptions opts;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--model") {
      model = value();
    } else if (a == "--inputs") {
      inputs = value();
    } else if (a == "--out") {
      out = value();
    } else if (a == "--seed") {
      if (!absl::SimpleAtoi(value(), &seed)) {
        std::fprintf(stderr, "make_model: bad --seed\n");
        return 2;
      }
    } else if (a == "--target") {
      opts.target = value();
    } else if (a == "--cc") {
      opts.export_options.cc = value();
    } else if (a == "-O") {
      if (!absl::SimpleAtoi(value(), &opts.opt_level)) {
        std::fprintf(stderr, "make_model: bad -O\n");
        return 2;
      }
    } else {
      std::fprintf(stderr, "make_model: unknown argument '%s'\n", a.c_str());
      return 2;
    }
  }
  if (model.empty() || out.empty()) {
    std::fprintf(stderr, "usage: make_model --model M.kir --inputs a,b --out DIR [--seed N]\n");
    return 2;
  }
  absl::Status st = Run(model, inputs, out, seed, opts);
  if (!st.ok()) {
    std::fprintf(stderr, "make_model: %s\n", st.ToString().c_str());
    return 1;
  }
  return 0;
}
