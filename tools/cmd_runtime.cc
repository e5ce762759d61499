// File: tools/cmd_runtime.cc
//
// The deployment subcommands of `kiln`: run, bench and debug. They use only
// the runtime's C API (kiln/kiln_runtime.h), exactly as a service would.
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
#include "kiln/kiln_runtime.h"
#include "tools/cli.h"

namespace kiln::cli {
namespace {

// DLPack's bool type code (6); Debian's dlpack.h predates kDLBool.
constexpr uint8_t kDLBoolCode = 6;

constexpr const char kRunHelp[] =
    "usage: kiln run MODEL.so [--input NAME=FILE.npy ...] [--random-inputs] [--output-dir DIR]\n"
    "                [--repeat N] [--threads T] [--quiet]\n"
    "\n"
    "Loads a compiled model, sets its inputs from NumPy .npy files, runs it, and\n"
    "prints every output (name, dtype, shape, values) and the time per run.\n"
    "  --input NAME=FILE.npy   the value of input NAME (repeatable)\n"
    "  --random-inputs         inputs not given get random values (seed 0)\n"
    "  --output-dir DIR        write each output as DIR/<output name>.npy\n"
    "  --repeat N              timed runs (default 1); the time printed is the mean\n"
    "  --threads T             worker threads (default: KILN_NUM_THREADS or all CPUs)\n"
    "  --quiet                 print only the time, not the values\n";

constexpr const char kBenchHelp[] =
    "usage: kiln bench MODEL.so [--repeat N] [--warmup N] [--threads T] [--input NAME=FILE.npy ...]\n"
    "\n"
    "Times the model (inputs random unless given) and prints one line of TVM's\n"
    "benchmark log format v0.1 (JSON: runtime_ms_mean, runtime_ms_std, runtime_raw,\n"
    "...) to stdout and a summary to stderr.\n"
    "  --repeat N              timed runs (default 10)\n"
    "  --warmup N              untimed runs first (default 1, at least 1)\n"
    "  --threads T             worker threads (default: KILN_NUM_THREADS or all CPUs)\n"
    "  --input NAME=FILE.npy   the value of input NAME (repeatable)\n";

constexpr const char kDebugHelp[] =
    "usage: kiln debug MODEL.so --dump-dir DIR [--input NAME=FILE.npy ...] [--threads T]\n"
    "                  [--warmup W] [--repeat N] [--no-tensors]\n"
    "\n"
    "Profiles the model with the debug executor: prints the per-node time table\n"
    "(each node's median over N timed runs, after W untimed ones) and writes\n"
    "DIR/graph.json, DIR/profile.txt, DIR/trace.json (Chrome trace, open in\n"
    "chrome://tracing or Perfetto) and, from one more run, DIR/tensors/<node>__<i>.npy\n"
    "for every node's outputs. Inputs are random unless given.\n"
    "  --dump-dir DIR          where to write (created if missing)\n"
    "  --input NAME=FILE.npy   the value of input NAME (repeatable)\n"
    "  --threads T             worker threads (default: KILN_NUM_THREADS or all CPUs)\n"
    "  --warmup W              untimed runs before the timed ones (default 0)\n"
    "  --repeat N              timed runs; each node's time is its median (default 1)\n"
    "  --no-tensors            write no tensors/ (and skip the run that dumps them)\n";

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
// files, else random when `random` is set; otherwise an error naming the
// missing input.
int Prepare(const char* command, const std::string& path,
            const std::vector<std::string>& input_specs, bool random, int threads, Runtime* rt) {
  KilnStatus* st = kiln_artifact_load(path.c_str(), &rt->artifact);
  if (st != nullptr) return StatusFail(command, st);
  KilnSessionOptions opts;
  std::memset(&opts, 0, sizeof opts);
  opts.struct_size = sizeof opts;
  opts.num_threads = threads;
  st = kiln_session_create(rt->artifact, &opts, &rt->session);
  if (st != nullptr) return StatusFail(command, st);
  std::map<std::string, std::string> files;
  for (const std::string& spec : input_specs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
      std::fprintf(stderr, "kiln %s: --input must be NAME=FILE.npy, got '%s'\n", command,
                   spec.c_str());
      return 2;
    }
    int32_t index = -1;
    st = kiln_artifact_input_index(rt->artifact, spec.substr(0, eq).c_str(), &index);
    if (st != nullptr) return StatusFail(command, st);
    files[spec.substr(0, eq)] = spec.substr(eq + 1);
  }
  std::mt19937 rng(0);
  for (int32_t i = 0; i < kiln_artifact_num_inputs(rt->artifact); ++i) {
    const char* name = nullptr;
    DLTensor info;
    st = kiln_artifact_input_info(rt->artifact, i, &name, &info);
    if (st != nullptr) return StatusFail(command, st);
    auto it = files.find(name);
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

}  // namespace

int Run(const std::vector<std::string>& args) {
  Args a("run", args, kRunHelp);
  std::vector<std::string> inputs = a.Values("--input");
  bool random = a.Flag("--random-inputs");
  std::string out_dir = a.Value("--output-dir");
  int repeat = a.Int("--repeat", nullptr, 1, 1, 1000000);
  int threads = a.Int("--threads", nullptr, 0, 0, 4096);
  bool quiet = a.Flag("--quiet");
  std::vector<std::string> files = a.Positional();
  if (!a.Finish()) return a.exit_code();
  if (files.size() != 1) return a.Usage("one MODEL.so expected");
  Runtime rt;
  if (int rc = Prepare("run", files[0], inputs, random, threads, &rt)) return rc;
  double total_ms = 0;
  for (int r = 0; r < repeat; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    KilnStatus* st = kiln_session_run(rt.session);
    total_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                    .count();
    if (st != nullptr) return StatusFail("run", st);
  }
  if (!out_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(out_dir, ec);
    if (ec) {
      std::fprintf(stderr, "kiln run: error: cannot create directory '%s': %s\n",
                   out_dir.c_str(), ec.message().c_str());
      return 1;
    }
  }
  for (int32_t i = 0; i < kiln_artifact_num_outputs(rt.artifact); ++i) {
    const char* name = nullptr;
    DLTensor info;
    KilnStatus* st = kiln_artifact_output_info(rt.artifact, i, &name, &info);
    if (st != nullptr) return StatusFail("run", st);
    const DLTensor* out = nullptr;
    st = kiln_session_get_output(rt.session, i, &out);
    if (st != nullptr) return StatusFail("run", st);
    if (!out_dir.empty()) {
      std::string path = absl::StrCat(out_dir, "/", FileSafe(name), ".npy");
      st = kiln_npy_write(path.c_str(), out);
      if (st != nullptr) return StatusFail("run", st);
    }
    if (quiet) continue;
    const int64_t n = NumElements(*out);
    std::printf("output %d '%s': %s\n", i, name, TensorText(*out).c_str());
    constexpr int64_t kShow = 16;
    std::printf("  [");
    for (int64_t e = 0; e < n && e < kShow; ++e) std::printf("%s%.6g", e ? ", " : "", Element(*out, e));
    std::printf("%s]\n", n > kShow ? absl::StrCat(", ... (", n, " values)").c_str() : "");
  }
  std::printf("time per run: %.3f ms (mean of %d run%s)\n", total_ms / repeat, repeat,
              repeat == 1 ? "" : "s");
  return 0;
}

int Bench(const std::vector<std::string>& args) {
  Args a("bench", args, kBenchHelp);
  std::vector<std::string> inputs = a.Values("--input");
  int repeat = a.Int("--repeat", nullptr, 10, 1, 1000000);
  int warmup = a.Int("--warmup", nullptr, 1, 1, 1000000);
  int threads = a.Int("--threads", nullptr, 0, 0, 4096);
  std::vector<std::string> files = a.Positional();
  if (!a.Finish()) return a.exit_code();
  if (files.size() != 1) return a.Usage("one MODEL.so expected");
  Runtime rt;
  if (int rc = Prepare("bench", files[0], inputs, /*random=*/true, threads, &rt)) return rc;
  KilnBenchmarkOptions bo;
  std::memset(&bo, 0, sizeof bo);
  bo.struct_size = sizeof bo;
  bo.repeat = repeat;
  bo.warmup = warmup;
  KilnBenchmarkResult result;
  char* line = nullptr;
  KilnStatus* st = kiln_session_benchmark(rt.session, &bo, &result, &line);
  if (st != nullptr) return StatusFail("bench", st);
  std::printf("%s\n", line);
  kiln_free(line);
  std::fprintf(stderr, "kiln bench: %d runs: mean %.4f ms, std %.4f ms, min %.4f ms, max %.4f ms\n",
               result.repeat, result.mean_ms, result.std_ms, result.min_ms, result.max_ms);
  return 0;
}

int Debug(const std::vector<std::string>& args) {
  Args a("debug", args, kDebugHelp);
  std::string dir = a.Value("--dump-dir");
  std::vector<std::string> inputs = a.Values("--input");
  int threads = a.Int("--threads", nullptr, 0, 0, 4096);
  int warmup = a.Int("--warmup", nullptr, 0, 0, KILN_PROFILE_MAX_RUNS);
  int repeat = a.Int("--repeat", nullptr, 1, 1, KILN_PROFILE_MAX_RUNS);
  bool no_tensors = a.Flag("--no-tensors");
  std::vector<std::string> files = a.Positional();
  if (!a.Finish()) return a.exit_code();
  if (files.size() != 1) return a.Usage("one MODEL.so expected");
  if (dir.empty()) return a.Usage("--dump-dir DIR is required");
  Runtime rt;
  if (int rc = Prepare("debug", files[0], inputs, /*random=*/true, threads, &rt)) return rc;
  KilnProfileOptions po;
  std::memset(&po, 0, sizeof po);
  po.struct_size = sizeof po;
  po.warmup = warmup;
  po.repeat = repeat;
  po.skip_tensors = no_tensors ? 1 : 0;
  KilnStatus* st = kiln_session_debug_dump_with(rt.session, dir.c_str(), &po);
  if (st != nullptr) return StatusFail("debug", st);
  std::string table_path = dir + "/profile.txt";
  if (std::FILE* f = std::fopen(table_path.c_str(), "rb")) {
    char buf[4096];
    size_t got = 0;
    while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) std::fwrite(buf, 1, got, stdout);
    std::fclose(f);
  }
  std::printf("wrote %s/graph.json, profile.txt, trace.json%s\n", dir.c_str(),
              no_tensors ? "" : " and tensors/");
  return 0;
}

}  // namespace kiln::cli
