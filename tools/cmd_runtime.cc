// File: tools/cmd_runtime.cc
//
// The deployment subcommands of `kiln`: run, bench and debug. They use only
// the runtime's C API (kiln/kiln_runtime.h), exactly as a service would.
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "kiln/kiln_runtime.h"
#include "nlohmann/json.hpp"
#include "tools/json_text.h"
#include "tools/cli.h"
#include "tools/npz.h"
#include "tools/progress.h"

namespace kiln::cli {
namespace {

// DLPack's bool type code (6); Debian's dlpack.h predates kDLBool.
constexpr uint8_t kDLBoolCode = 6;

}  // namespace

const char kRunHelp[] =
    "usage: kiln run MODEL.so [--input NAME=FILE.npy | --input FILE.npz ...] [--random-inputs]\n"
    "                [--output-dir DIR] [--output-npz FILE.npz] [--top-k N] [--repeat N]\n"
    "                [--threads T] [--device D] [--quiet] [--json]\n"
    "\n"
    "Loads a compiled model, sets its inputs from NumPy .npy or .npz files, runs it,\n"
    "and prints every output (name, dtype, shape, values) and the time per run.\n"
    "  --input NAME=FILE.npy   the value of input NAME (repeatable)\n"
    "  --input FILE.npz        every array of FILE.npz (np.savez) sets the input of\n"
    "                          its name\n"
    "  --input NAME=A.npy,B.npy,...\n"
    "                          a sequence input (an ONNX sequence): its tensors, in\n"
    "                          order; NAME=[] is the empty sequence. A sequence output\n"
    "                          prints each tensor, and writes DIR/<name>_<k>.npy\n"
    "  --input NAME=none       an optional input (an ONNX optional) without a value;\n"
    "                          one with a value is given as a tensor or a sequence\n"
    "                          is. A none output prints 'none' and writes no file\n"
    "  --random-inputs         inputs not given get random values (seed 0)\n"
    "  --output-dir DIR        write each output as DIR/<output name>.npy\n"
    "  --output-npz FILE.npz   write every output into one .npz, by output name\n"
    "  --top-k N               print the indices and values of the N largest values of\n"
    "                          each output row (the last axis), as for a classifier\n"
    "  --repeat N              timed runs (default 1); the time printed is the mean\n"
    "  --threads T             worker threads (default: KILN_NUM_THREADS or all CPUs)\n"
    "  --device D              where it runs: cpu (default) or cuda[:N] (a model compiled\n"
    "                          with --target cuda; inputs and outputs are copied)\n"
    "  --quiet                 print only the time, not the values\n"
    "  --json                  one JSON document on stdout: outputs (all values unless\n"
    "                          --quiet; top_k with --top-k) and the time per run\n"
    "On a terminal, stderr shows the runs done when there are many.\n";

const char kBenchHelp[] =
    "usage: kiln bench MODEL.so [--repeat N] [--warmup N] [--threads T] [--device D]\n"
    "                  [--input NAME=FILE.npy ...]\n"
    "\n"
    "Times the model (inputs random unless given) and prints one line of TVM's\n"
    "benchmark log format v0.1 (JSON: runtime_ms_mean, runtime_ms_std, runtime_raw,\n"
    "...) to stdout and a summary to stderr.\n"
    "  --repeat N              timed runs (default 10)\n"
    "  --warmup N              untimed runs first (default 1, at least 1)\n"
    "  --threads T             worker threads (default: KILN_NUM_THREADS or all CPUs)\n"
    "  --device D              where it runs: cpu (default) or cuda[:N] (a model compiled\n"
    "                          with --target cuda; inputs and outputs are copied)\n"
    "  --input NAME=FILE.npy   the value of input NAME (repeatable; or --input FILE.npz)\n";

const char kDebugHelp[] =
    "usage: kiln debug MODEL.so --dump-dir DIR [--input NAME=FILE.npy ...] [--threads T]\n"
    "                  [--device D] [--warmup W] [--repeat N] [--no-tensors]\n"
    "\n"
    "Profiles the model with the debug executor: prints the per-node time table\n"
    "(each node's median over N timed runs, after W untimed ones) and writes\n"
    "DIR/graph.json, DIR/profile.txt, DIR/trace.json (Chrome trace, open in\n"
    "chrome://tracing or Perfetto) and, from one more run, DIR/tensors/<node>__<i>.npy\n"
    "for every node's outputs. Inputs are random unless given.\n"
    "  --dump-dir DIR          where to write (created if missing)\n"
    "  --input NAME=FILE.npy   the value of input NAME (repeatable; or --input FILE.npz)\n"
    "  --threads T             worker threads (default: KILN_NUM_THREADS or all CPUs)\n"
    "  --device D              where it runs: cpu (default) or cuda[:N] (a model compiled\n"
    "                          with --target cuda; inputs and outputs are copied)\n"
    "  --warmup W              untimed runs before the timed ones (default 0)\n"
    "  --repeat N              timed runs; each node's time is its median (default 1)\n"
    "  --no-tensors            write no tensors/ (and skip the run that dumps them)\n";

namespace {

// Owns the runtime objects of one command.
struct Runtime {
  KilnArtifact* artifact = nullptr;
  KilnSession* session = nullptr;
  std::vector<KilnNpyTensor*> npy;
  std::vector<std::unique_ptr<uint8_t[]>> buffers;
  std::vector<std::vector<int64_t>> shapes;
  ~Runtime() {
    kiln_session_release(session);
    kiln_artifact_release(artifact);
    for (KilnNpyTensor* t : npy) kiln_npy_release(t);
  }
};

// Prints a failed status as "kiln <command>: error: ..." and frees it; 1.
int StatusFail(const char* command, KilnStatus* st) {
  std::fprintf(stderr, "kiln %s: error: %s\n", command, kiln_status_message(st));
  kiln_status_free(st);
  return 1;
}



int64_t NumElements(const DLTensor& t) {
  int64_t n = 1;
  for (int32_t d = 0; d < t.ndim; ++d) n *= t.shape[d];
  return n;
}

// Element i of a CPU tensor as a double (every dtype the runtime handles).
double Element(const DLTensor& t, int64_t i) {
  const uint8_t* p = static_cast<const uint8_t*>(t.data) + t.byte_offset;
  switch (t.dtype.code) {
    case kDLFloat:
      if (t.dtype.bits == 32) return reinterpret_cast<const float*>(p)[i];
      if (t.dtype.bits == 64) return reinterpret_cast<const double*>(p)[i];
      if (t.dtype.bits == 16) {  // IEEE half
        uint16_t h = reinterpret_cast<const uint16_t*>(p)[i];
        int e = (h >> 10) & 31, m = h & 1023;
        double v = e == 0 ? std::ldexp(m, -24) : e == 31 ? INFINITY : std::ldexp(m + 1024, e - 25);
        return (h & 0x8000) ? -v : v;
      }
      break;
    case kDLBfloat: {
      uint32_t bits = static_cast<uint32_t>(reinterpret_cast<const uint16_t*>(p)[i]) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    case kDLInt:
      if (t.dtype.bits == 8) return reinterpret_cast<const int8_t*>(p)[i];
      if (t.dtype.bits == 16) return reinterpret_cast<const int16_t*>(p)[i];
      if (t.dtype.bits == 32) return reinterpret_cast<const int32_t*>(p)[i];
      if (t.dtype.bits == 64) return static_cast<double>(reinterpret_cast<const int64_t*>(p)[i]);
      break;
    case kDLUInt:
    case kDLBoolCode:
      if (t.dtype.bits == 8) return reinterpret_cast<const uint8_t*>(p)[i];
      if (t.dtype.bits == 16) return reinterpret_cast<const uint16_t*>(p)[i];
      if (t.dtype.bits == 32) return reinterpret_cast<const uint32_t*>(p)[i];
      if (t.dtype.bits == 64) return static_cast<double>(reinterpret_cast<const uint64_t*>(p)[i]);
      break;
    default:
      break;
  }
  return NAN;
}

// Random contents for a tensor of `info`'s dtype and shape: floats uniform
// in [-1, 1), integers in [0, 10), booleans 0/1.
void FillRandom(const DLTensor& info, uint8_t* data, std::mt19937* rng) {
  const int64_t n = NumElements(info);
  const int bytes = (info.dtype.bits * info.dtype.lanes + 7) / 8;
  std::uniform_real_distribution<float> uf(-1.0f, 1.0f);
  std::uniform_int_distribution<int> ui(0, 9);
  for (int64_t i = 0; i < n; ++i) {
    uint8_t* p = data + i * bytes;
    if (info.dtype.code == kDLFloat && info.dtype.bits == 32) {
      float v = uf(*rng);
      std::memcpy(p, &v, 4);
    } else if (info.dtype.code == kDLFloat && info.dtype.bits == 64) {
      double v = uf(*rng);
      std::memcpy(p, &v, 8);
    } else if (info.dtype.code == kDLFloat || info.dtype.code == kDLBfloat) {
      // float16 / bfloat16: a small value with an exact 16-bit pattern
      // (0.5, 0.25, ... both formats share the top bits of these).
      uint16_t h = info.dtype.code == kDLBfloat ? 0x3f00 : 0x3800;
      std::memcpy(p, &h, 2);
    } else if (info.dtype.code == kDLBoolCode) {
      *p = static_cast<uint8_t>(ui(*rng) & 1);
    } else {
      int64_t v = ui(*rng);
      std::memcpy(p, &v, static_cast<size_t>(bytes));  // little-endian
    }
  }
}

// Loads the artifact, makes a session and sets every input: from --input
// files (NAME=FILE.npy, or FILE.npz: each array by its name), else random
// when `random` is set; otherwise an error naming the missing input.
int Prepare(const char* command, const std::string& path,
            const std::vector<std::string>& input_specs, bool random, int threads,
            const std::string& device, Runtime* rt) {
  KilnSessionOptions opts;
  std::memset(&opts, 0, sizeof opts);
  opts.struct_size = sizeof opts;
  opts.num_threads = threads;
  // --device: cpu, cuda or cuda:N.
  if (device == "cuda" || device.rfind("cuda:", 0) == 0) {
    opts.device_type = kDLCUDA;
    const std::string n = device == "cuda" ? "0" : device.substr(5);
    if (n.empty() || n.size() > 4 || n.find_first_not_of("0123456789") != std::string::npos) {
      std::fprintf(stderr, "kiln %s: --device %s: expected cpu, cuda or cuda:N\n", command,
                   device.c_str());
      return 2;
    }
    opts.device_id = std::atoi(n.c_str());
  } else if (!device.empty() && device != "cpu") {
    std::fprintf(stderr, "kiln %s: --device %s: expected cpu, cuda or cuda:N\n", command,
                 device.c_str());
    return 2;
  }
  KilnStatus* st = kiln_artifact_load(path.c_str(), &rt->artifact);
  if (st != nullptr) return StatusFail(command, st);
  st = kiln_session_create(rt->artifact, &opts, &rt->session);
  if (st != nullptr) return StatusFail(command, st);
  std::map<std::string, std::string> files;
  std::map<std::string, KilnNpyTensor*> from_npz;  // owned by rt->npy
  TempDir tmp;
  for (const std::string& spec : input_specs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos && spec.ends_with(".npz")) {
      std::vector<NpzArray> arrays;
      std::string error;
      if (!ReadNpz(spec, &arrays, &error)) {
        std::fprintf(stderr, "kiln %s: error: %s\n", command, error.c_str());
        return 1;
      }
      for (const NpzArray& a : arrays) {
        int32_t index = -1;
        st = kiln_artifact_input_index(rt->artifact, a.name.c_str(), &index);
        if (st != nullptr) {
          std::fprintf(stderr, "kiln %s: error: %s holds array '%s': %s\n", command, spec.c_str(),
                       a.name.c_str(), kiln_status_message(st));
          kiln_status_free(st);
          return 1;
        }
        KilnNpyTensor* t =
            NpyToTensor(a.npy, absl::StrCat(spec, "['", a.name, "']"), tmp, &error);
        if (t == nullptr) {
          std::fprintf(stderr, "kiln %s: error: %s\n", command, error.c_str());
          return 1;
        }
        rt->npy.push_back(t);
        from_npz[a.name] = t;
        files.erase(a.name);
      }
      continue;
    }
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
      std::fprintf(stderr,
                   "kiln %s: --input must be NAME=FILE.npy or FILE.npz, got '%s'\n(kiln %s "
                   "--help for usage)\n",
                   command, spec.c_str(), command);
      return 2;
    }
    if (spec.ends_with(".npz")) {
      std::fprintf(stderr,
                   "kiln %s: --input %s: an .npz sets inputs by its arrays' names; give it "
                   "alone: --input %s\n(kiln %s --help for usage)\n",
                   command, spec.c_str(), spec.substr(eq + 1).c_str(), command);
      return 2;
    }
    int32_t index = -1;
    st = kiln_artifact_input_index(rt->artifact, spec.substr(0, eq).c_str(), &index);
    if (st != nullptr) return StatusFail(command, st);
    files[spec.substr(0, eq)] = spec.substr(eq + 1);
    from_npz.erase(spec.substr(0, eq));
  }
  std::mt19937 rng(0);
  for (int32_t i = 0; i < kiln_artifact_num_inputs(rt->artifact); ++i) {
    const char* name = nullptr;
    DLTensor info;
    st = kiln_artifact_input_info(rt->artifact, i, &name, &info);
    if (st != nullptr) return StatusFail(command, st);
    if (auto z = from_npz.find(name); z != from_npz.end()) {
      st = kiln_session_set_input(rt->session, name, &z->second->tensor);
      if (st != nullptr) return StatusFail(command, st);
      continue;
    }
    auto it = files.find(name);
    if (kiln_artifact_input_is_optional(rt->artifact, i)) {
      if (it != files.end() && it->second == "none") {
        st = kiln_session_set_input_none(rt->session, name);
        if (st != nullptr) return StatusFail(command, st);
        continue;
      }
      if (it == files.end()) {
        const bool seq = kiln_artifact_input_is_sequence(rt->artifact, i) != 0;
        std::fprintf(stderr,
                     "kiln %s: error: input '%s' is an optional of %s%s; give %s=none for none or its "
                     "value with --input %s=%s\n",
                     command, name, seq ? "a sequence of " : "", TensorText(info).c_str(), name, name,
                     seq ? "A.npy,B.npy,..." : "FILE.npy");
        return 1;
      }
    } else if (it != files.end() && it->second == "none") {
      std::fprintf(stderr, "kiln %s: error: input '%s' is not an optional; it cannot be none\n", command, name);
      return 1;
    }
    if (kiln_artifact_input_is_sequence(rt->artifact, i)) {
      if (it == files.end()) {
        std::fprintf(stderr,
                     "kiln %s: error: input '%s' is a sequence of %s tensors; give its tensors with "
                     "--input %s=A.npy,B.npy,... (or %s=[] for none)\n",
                     command, name, TensorText(info).c_str(), name, name);
        return 1;
      }
      std::vector<DLTensor> elems;
      if (it->second != "[]") {
        for (absl::string_view part : absl::StrSplit(it->second, ',')) {
          KilnNpyTensor* t = nullptr;
          st = kiln_npy_read(std::string(part).c_str(), &t);
          if (st != nullptr) return StatusFail(command, st);
          rt->npy.push_back(t);
          elems.push_back(t->tensor);
        }
      }
      st = kiln_session_set_input_sequence(rt->session, name, elems.data(), static_cast<int32_t>(elems.size()));
      if (st != nullptr) return StatusFail(command, st);
      continue;
    }
    if (it != files.end()) {
      KilnNpyTensor* t = nullptr;
      st = kiln_npy_read(it->second.c_str(), &t);
      if (st != nullptr) return StatusFail(command, st);
      rt->npy.push_back(t);
      st = kiln_session_set_input(rt->session, name, &t->tensor);
      if (st != nullptr) return StatusFail(command, st);
      continue;
    }
    if (!random) {
      std::fprintf(stderr,
                   "kiln %s: error: input '%s' (%s%s) is not given; use --input %s=FILE.npy or "
                   "--random-inputs\n",
                   command, name, TensorText(info).c_str(), "", name);
      return 1;
    }
    const int64_t bytes = NumElements(info) * ((info.dtype.bits * info.dtype.lanes + 7) / 8);
    rt->buffers.emplace_back(new uint8_t[static_cast<size_t>(bytes > 0 ? bytes : 1)]);
    FillRandom(info, rt->buffers.back().get(), &rng);
    DLTensor t = info;
    t.data = rt->buffers.back().get();
    st = kiln_session_set_input(rt->session, name, &t);
    if (st != nullptr) return StatusFail(command, st);
  }
  return 0;
}

// A file-safe version of an output name.
std::string FileSafe(const std::string& name) {
  std::string s = name.empty() ? "output" : name;
  for (char& c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.';
    if (!ok) c = '_';
  }
  if (s == "." || s == "..") s = "_";
  return s;
}

// The indices of the `k` largest values of each row (the last axis) of
// `t`, largest first; ties keep the lower index first, NaN counts as
// smallest. A scalar is one row of one value.
std::vector<std::vector<int64_t>> TopK(const DLTensor& t, int k) {
  const int64_t n = NumElements(t);
  const int64_t cols = t.ndim == 0 ? 1 : t.shape[t.ndim - 1];
  std::vector<std::vector<int64_t>> rows;
  if (cols <= 0 || n <= 0) return rows;
  const int64_t take = std::min<int64_t>(k, cols);
  for (int64_t r = 0; r < n / cols; ++r) {
    std::vector<int64_t> idx(static_cast<size_t>(cols));
    for (int64_t c = 0; c < cols; ++c) idx[static_cast<size_t>(c)] = c;
    const auto greater = [&](int64_t x, int64_t y) {
      double a = Element(t, r * cols + x), b = Element(t, r * cols + y);
      if (std::isnan(a) || std::isnan(b)) return !std::isnan(a) && std::isnan(b);
      return a > b;
    };
    std::stable_sort(idx.begin(), idx.end(), greater);
    idx.resize(static_cast<size_t>(take));
    rows.push_back(std::move(idx));
  }
  return rows;
}

// A value for JSON: NaN and infinities as strings (JSON has no such numbers).
nlohmann::json JsonValue(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

nlohmann::json ShapeJson(const DLTensor& t) {
  nlohmann::json s = nlohmann::json::array();
  for (int32_t d = 0; d < t.ndim; ++d) s.push_back(t.shape[d]);
  return s;
}

}  // namespace

int Run(const std::vector<std::string>& args) {
  Parser p("run", kRunHelp);
  std::vector<std::string> inputs, files;
  bool random = false, quiet = false, json = false;
  std::string out_dir, out_npz;
  int repeat = 1, threads = 0, top_k = 0;
  std::string device;
  p.Texts("--input", &inputs);
  p.Flag("--random-inputs", &random);
  p.Text("--output-dir", &out_dir);
  p.Text("--output-npz", &out_npz);
  p.Int("--top-k", &top_k, 1, 1000000);
  p.Int("--repeat", &repeat, 1, 1000000);
  p.Int("--threads", &threads, 0, 4096);
  p.Text("--device", &device);
  p.Flag("--quiet", &quiet);
  p.Flag("--json", &json);
  if (!p.Parse(args, &files)) return p.exit_code();
  if (files.size() != 1) return p.Usage("one MODEL.so expected");
  if (!out_npz.empty() && !out_npz.ends_with(".npz")) {
    return p.Usage(absl::StrCat("--output-npz must name a .npz file, got '", out_npz, "'"));
  }
  Runtime rt;
  if (int rc = Prepare("run", files[0], inputs, random, threads, device, &rt)) return rc;
  double total_ms = 0;
  Progress progress("run");
  for (int r = 0; r < repeat; ++r) {
    // Shown once the runs have taken a second: a single quick run stays quiet.
    if (total_ms > 1000) progress.Count("run", r, repeat);
    auto t0 = std::chrono::steady_clock::now();
    KilnStatus* st = kiln_session_run(rt.session);
    total_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                    .count();
    if (st != nullptr) {
      progress.Clear();
      return StatusFail("run", st);
    }
  }
  progress.Clear();
  if (!out_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(out_dir, ec);
    if (ec) {
      std::fprintf(stderr, "kiln run: error: cannot create directory '%s': %s\n",
                   out_dir.c_str(), ec.message().c_str());
      return 1;
    }
  }
  std::vector<NpzArray> npz;
  TempDir tmp;
  nlohmann::json doc = {{"model", files[0]}, {"outputs", nlohmann::json::array()}};
  for (int32_t i = 0; i < kiln_artifact_num_outputs(rt.artifact); ++i) {
    const char* name = nullptr;
    DLTensor info;
    KilnStatus* st = kiln_artifact_output_info(rt.artifact, i, &name, &info);
    if (st != nullptr) return StatusFail("run", st);
    if (kiln_artifact_output_is_optional(rt.artifact, i)) {
      // An optional: none prints as such; a value as a plain output.
      int32_t is_none = 0;
      st = kiln_session_get_output_is_none(rt.session, i, &is_none);
      if (st != nullptr) return StatusFail("run", st);
      if (is_none) {
        if (json) {
          doc["outputs"].push_back({{"index", i}, {"name", name}, {"none", true}});
        } else if (!quiet) {
          std::printf("output %d '%s': none\n", i, name);
        }
        continue;
      }
    }
    if (kiln_artifact_output_is_sequence(rt.artifact, i)) {
      // A sequence of tensors: each one as an output of its own (name_k).
      int32_t count = 0;
      st = kiln_session_get_output_sequence_length(rt.session, i, &count);
      if (st != nullptr) return StatusFail("run", st);
      nlohmann::json seq = nlohmann::json::array();
      if (!json && !quiet) std::printf("output %d '%s': a sequence of %d tensors\n", i, name, static_cast<int>(count));
      for (int32_t k = 0; k < count; ++k) {
        const DLTensor* e = nullptr;
        st = kiln_session_get_output_sequence_element(rt.session, i, k, &e);
        if (st != nullptr) return StatusFail("run", st);
        const std::string item = absl::StrCat(FileSafe(name), "_", k);
        if (!out_dir.empty()) {
          st = kiln_npy_write(absl::StrCat(out_dir, "/", item, ".npy").c_str(), e);
          if (st != nullptr) return StatusFail("run", st);
        }
        if (!out_npz.empty()) {
          NpzArray a;
          a.name = item;
          std::string error;
          if (!TensorToNpy(*e, tmp, &a.npy, &error)) {
            std::fprintf(stderr, "kiln run: error: output '%s' element %d: %s\n", name, static_cast<int>(k),
                         error.c_str());
            return 1;
          }
          npz.push_back(std::move(a));
        }
        const int64_t n = NumElements(*e);
        if (json) {
          nlohmann::json o = {{"dtype", DtypeText(e->dtype)}, {"shape", ShapeJson(*e)}};
          if (!quiet) {
            nlohmann::json values = nlohmann::json::array();
            for (int64_t v = 0; v < n; ++v) values.push_back(JsonValue(Element(*e, v)));
            o["values"] = std::move(values);
          }
          seq.push_back(std::move(o));
          continue;
        }
        if (quiet) continue;
        constexpr int64_t kShow = 16;
        std::printf("  [%d] %s: [", static_cast<int>(k), TensorText(*e).c_str());
        for (int64_t v = 0; v < n && v < kShow; ++v) std::printf("%s%.6g", v ? ", " : "", Element(*e, v));
        std::printf("%s]\n", n > kShow ? absl::StrCat(", ... (", n, " values)").c_str() : "");
      }
      if (json) doc["outputs"].push_back({{"index", i}, {"name", name}, {"sequence", std::move(seq)}});
      continue;
    }
    const DLTensor* out = nullptr;
    st = kiln_session_get_output(rt.session, i, &out);
    if (st != nullptr) return StatusFail("run", st);
    DLTensor host;
    if (out->device.device_type != kDLCPU) {
      // A session on a GPU: the output copied to the host.
      host = *out;
      host.device = {kDLCPU, 0};
      host.byte_offset = 0;
      host.strides = nullptr;
      const int64_t bytes = NumElements(host) * ((host.dtype.bits * host.dtype.lanes + 7) / 8);
      rt.buffers.emplace_back(new uint8_t[static_cast<size_t>(bytes > 0 ? bytes : 1)]);
      host.data = rt.buffers.back().get();
      st = kiln_session_copy_output(rt.session, i, &host);
      if (st != nullptr) return StatusFail("run", st);
      out = &host;
    }
    if (!out_dir.empty()) {
      std::string path = absl::StrCat(out_dir, "/", FileSafe(name), ".npy");
      st = kiln_npy_write(path.c_str(), out);
      if (st != nullptr) return StatusFail("run", st);
    }
    if (!out_npz.empty()) {
      NpzArray a;
      a.name = name;
      for (char& c : a.name) {
        if (c == '/' || c == '\\') c = '_';
      }
      std::string error;
      if (!TensorToNpy(*out, tmp, &a.npy, &error)) {
        std::fprintf(stderr, "kiln run: error: output '%s': %s\n", name, error.c_str());
        return 1;
      }
      npz.push_back(std::move(a));
    }
    const int64_t n = NumElements(*out);
    std::vector<std::vector<int64_t>> top;
    if (top_k > 0) top = TopK(*out, top_k);
    const int64_t cols = out->ndim == 0 ? 1 : out->shape[out->ndim - 1];
    if (json) {
      nlohmann::json o = {{"index", i},
                          {"name", name},
                          {"dtype", DtypeText(out->dtype)},
                          {"shape", ShapeJson(*out)}};
      if (!quiet) {
        nlohmann::json values = nlohmann::json::array();
        for (int64_t e = 0; e < n; ++e) values.push_back(JsonValue(Element(*out, e)));
        o["values"] = std::move(values);
      }
      if (top_k > 0) {
        nlohmann::json rows = nlohmann::json::array();
        for (size_t r = 0; r < top.size(); ++r) {
          nlohmann::json vals = nlohmann::json::array();
          for (int64_t c : top[r]) {
            vals.push_back(JsonValue(Element(*out, static_cast<int64_t>(r) * cols + c)));
          }
          rows.push_back({{"indices", top[r]}, {"values", vals}});
        }
        o["top_k"] = std::move(rows);
      }
      doc["outputs"].push_back(std::move(o));
      continue;
    }
    if (quiet) continue;
    std::printf("output %d '%s': %s\n", i, name, TensorText(*out).c_str());
    if (top_k > 0) {
      for (size_t r = 0; r < top.size(); ++r) {
        std::printf("  top %zu of row %zu:", top[r].size(), r);
        for (size_t j = 0; j < top[r].size(); ++j) {
          std::printf("%s %lld (%.6g)", j ? "," : "", static_cast<long long>(top[r][j]),
                      Element(*out, static_cast<int64_t>(r) * cols + top[r][j]));
        }
        std::printf("\n");
      }
      continue;
    }
    constexpr int64_t kShow = 16;
    std::printf("  [");
    for (int64_t e = 0; e < n && e < kShow; ++e) std::printf("%s%.6g", e ? ", " : "", Element(*out, e));
    std::printf("%s]\n", n > kShow ? absl::StrCat(", ... (", n, " values)").c_str() : "");
  }
  if (!out_npz.empty()) {
    std::string error;
    if (!WriteNpz(out_npz, npz, &error)) {
      std::fprintf(stderr, "kiln run: error: %s\n", error.c_str());
      return 1;
    }
  }
  if (json) {
    doc["time_ms_mean"] = total_ms / repeat;
    doc["repeat"] = repeat;
    std::printf("%s\n", JsonText(doc).c_str());
    return 0;
  }
  std::printf("time per run: %.3f ms (mean of %d run%s)\n", total_ms / repeat, repeat,
              repeat == 1 ? "" : "s");
  return 0;
}

int Bench(const std::vector<std::string>& args) {
  Parser p("bench", kBenchHelp);
  std::vector<std::string> inputs, files;
  int repeat = 10, warmup = 1, threads = 0;
  std::string device;
  p.Texts("--input", &inputs);
  p.Int("--repeat", &repeat, 1, 1000000);
  p.Int("--warmup", &warmup, 1, 1000000);
  p.Int("--threads", &threads, 0, 4096);
  p.Text("--device", &device);
  if (!p.Parse(args, &files)) return p.exit_code();
  if (files.size() != 1) return p.Usage("one MODEL.so expected");
  Runtime rt;
  if (int rc = Prepare("bench", files[0], inputs, /*random=*/true, threads, device, &rt)) return rc;
  KilnBenchmarkOptions bo;
  std::memset(&bo, 0, sizeof bo);
  bo.struct_size = sizeof bo;
  bo.repeat = repeat;
  bo.warmup = warmup;
  KilnBenchmarkResult result;
  char* line = nullptr;
  Progress progress("bench");
  progress.Phase(absl::StrCat(warmup, " warm-up and ", repeat, " timed runs"));
  KilnStatus* st = kiln_session_benchmark(rt.session, &bo, &result, &line);
  progress.Clear();
  if (st != nullptr) return StatusFail("bench", st);
  std::printf("%s\n", line);
  kiln_free(line);
  std::fprintf(stderr, "kiln bench: %d runs: mean %.4f ms, std %.4f ms, min %.4f ms, max %.4f ms\n",
               result.repeat, result.mean_ms, result.std_ms, result.min_ms, result.max_ms);
  return 0;
}

int Debug(const std::vector<std::string>& args) {
  Parser p("debug", kDebugHelp);
  std::string dir;
  std::vector<std::string> inputs, files;
  int threads = 0, warmup = 0, repeat = 1;
  std::string device;
  bool no_tensors = false;
  p.Text("--dump-dir", &dir);
  p.Texts("--input", &inputs);
  p.Int("--threads", &threads, 0, 4096);
  p.Text("--device", &device);
  p.Int("--warmup", &warmup, 0, KILN_PROFILE_MAX_RUNS);
  p.Int("--repeat", &repeat, 1, KILN_PROFILE_MAX_RUNS);
  p.Flag("--no-tensors", &no_tensors);
  if (!p.Parse(args, &files)) return p.exit_code();
  if (files.size() != 1) return p.Usage("one MODEL.so expected");
  if (dir.empty()) return p.Usage("--dump-dir DIR is required");
  Runtime rt;
  if (int rc = Prepare("debug", files[0], inputs, /*random=*/true, threads, device, &rt)) return rc;
  KilnProfileOptions po;
  std::memset(&po, 0, sizeof po);
  po.struct_size = sizeof po;
  po.warmup = warmup;
  po.repeat = repeat;
  po.skip_tensors = no_tensors ? 1 : 0;
  Progress progress("debug");
  progress.Phase(absl::StrCat("profiling (", warmup, " warm-up, ", repeat, " timed run",
                              repeat == 1 ? "" : "s", no_tensors ? ")" : ", then the tensor dump)"));
  KilnStatus* st = kiln_session_debug_dump_with(rt.session, dir.c_str(), &po);
  progress.Clear();
  if (st != nullptr) return StatusFail("debug", st);
  std::string table_path = dir + "/profile.txt";
  if (std::FILE* f = std::fopen(table_path.c_str(), "rb")) {
    char buf[4096];
    size_t got = 0;
    while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) std::fwrite(buf, 1, got, stdout);
    std::fclose(f);
  }
  if (kiln_artifact_graph_json(rt.artifact)[0] == '\0') {
    // A VM artifact: no graph, and its intermediates are not dumped.
    std::printf("wrote %s/profile.txt and trace.json (a VM artifact: kernel calls; no graph or "
                "tensor dumps)\n",
                dir.c_str());
  } else {
    std::printf("wrote %s/graph.json, profile.txt, trace.json%s\n", dir.c_str(),
                no_tensors ? "" : " and tensors/");
  }
  return 0;
}

}  // namespace kiln::cli
