// File: tests/fuzz/fuzz_driver.cc
//
// A small in-process mutation fuzzer that gives a libFuzzer target
// (`extern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t)`) a main()
// under g++, with no new dependency: the default Bazel build runs every
// tests/fuzz target through it, and the same target sources build unchanged
// with clang's -fsanitize=fuzzer (tests/fuzz/build_libfuzzer.sh).
//
//   onnx_import_fuzz [--runs N] [--seconds S] [--seed X] [--max_len L]
//                    [--timeout T] [--artifact_dir D] [--ext .onnx] CORPUS...
//
// CORPUS entries are files or directories (read recursively; --ext keeps only
// names ending so). Every seed runs once as it is, then the driver runs
// mutants (bit and byte flips, interesting integers, inserts, deletes,
// repeated chunks, truncation, splices of two seeds, several stacked) until N
// executions or S seconds, whichever comes first (default: 10,000 runs).
// Deterministic for a given --seed and seed set when --seconds is not given.
// It prints executions and executions per second. There is no coverage
// feedback: the corpus stays the seeds (use the libFuzzer build for that).
//
// A finding is a crash, an abort (a failed KILN_FUZZ_CHECK aborts), a
// sanitizer report (when built with one) or an input running longer than
// --timeout seconds: the input is written to D/crash-<hash> (D: --artifact_dir,
// else $TEST_UNDECLARED_OUTPUTS_DIR, else the current directory) from the
// signal handler, its path printed, and the process dies (exit code nonzero),
// so the Bazel test fails. Reproduce with `fuzz_target --runs 0 D/crash-...`.
// Flags the driver does not know (`--name=value`) are left to the target
// (LLVMFuzzerInitialize sees the whole argv, as under libFuzzer).
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);
// When linked with a sanitizer runtime, it calls this before exiting on a report.
extern "C" __attribute__((weak)) void __sanitizer_set_death_callback(void (*)(void));

namespace {

// ------------------------------------------------------------ crash capture
// The input being run, for the signal handler (which may only use
// async-signal-safe calls: write, open, close, _exit, raise).
const uint8_t* g_current_data = nullptr;
size_t g_current_size = 0;
char g_crash_path[4096];
volatile sig_atomic_t g_dumped = 0;

uint64_t Fnv1a(const uint8_t* data, size_t size) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 1099511628211ull;
  return h;
}

// Writes `text` to stderr (async-signal-safe).
void SafeWrite(const char* text) {
  size_t n = strlen(text);
  while (n > 0) {
    ssize_t w = write(2, text, n);
    if (w <= 0) return;
    text += w;
    n -= static_cast<size_t>(w);
  }
}

// Sets g_crash_path to <dir>/crash-<hash of the current input> before the input runs.
std::string g_artifact_dir = ".";

void PrepareCrashPath(const uint8_t* data, size_t size) {
  snprintf(g_crash_path, sizeof(g_crash_path), "%s/crash-%016" PRIx64, g_artifact_dir.c_str(),
           Fnv1a(data, size));
}

void DumpCurrentInput(const char* why) {
  if (g_dumped) return;
  g_dumped = 1;
  SafeWrite("\n==kiln-fuzz== finding: ");
  SafeWrite(why);
  SafeWrite("; input written to ");
  SafeWrite(g_crash_path);
  SafeWrite("\n");
  int fd = open(g_crash_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    const uint8_t* p = g_current_data;
    size_t n = g_current_size;
    while (p != nullptr && n > 0) {
      ssize_t w = write(fd, p, n);
      if (w <= 0) break;
      p += w;
      n -= static_cast<size_t>(w);
    }
    close(fd);
  }
}

void OnFatalSignal(int sig) {
  const char* why = sig == SIGSEGV   ? "SIGSEGV"
                    : sig == SIGABRT ? "SIGABRT (abort or failed check)"
                    : sig == SIGBUS  ? "SIGBUS"
                    : sig == SIGFPE  ? "SIGFPE"
                    : sig == SIGILL  ? "SIGILL"
                    : sig == SIGALRM ? "timeout (SIGALRM)"
                                     : "signal";
  DumpCurrentInput(why);
  signal(sig == SIGALRM ? SIGABRT : sig, SIG_DFL);
  raise(sig == SIGALRM ? SIGABRT : sig);
  _exit(128 + sig);
}

void OnSanitizerDeath() { DumpCurrentInput("sanitizer report"); }

void InstallHandlers() {
  // An alternate stack, so a stack overflow is reported too.
  static std::vector<char> alt_stack(1 << 16);
  stack_t ss{};
  ss.ss_sp = alt_stack.data();
  ss.ss_size = alt_stack.size();
  sigaltstack(&ss, nullptr);
  for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGALRM}) {
    struct sigaction sa {};
    sa.sa_handler = OnFatalSignal;
    sa.sa_flags = SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, nullptr);
  }
  if (__sanitizer_set_death_callback != nullptr) __sanitizer_set_death_callback(OnSanitizerDeath);
}

// ------------------------------------------------------------------ corpus
bool ReadFile(const std::string& path, std::vector<uint8_t>* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void CollectSeeds(const std::string& path, const std::vector<std::string>& exts, size_t max_len,
                  std::vector<std::vector<uint8_t>>* seeds, std::vector<std::string>* names) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    fprintf(stderr, "kiln-fuzz: cannot read corpus entry %s\n", path.c_str());
    return;
  }
  if (S_ISDIR(st.st_mode)) {
    DIR* dir = opendir(path.c_str());
    if (dir == nullptr) return;
    std::vector<std::string> entries;
    while (dirent* e = readdir(dir)) {
      if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) entries.push_back(e->d_name);
    }
    closedir(dir);
    std::sort(entries.begin(), entries.end());  // deterministic order
    for (const std::string& e : entries) CollectSeeds(path + "/" + e, exts, max_len, seeds, names);
    return;
  }
  if (!S_ISREG(st.st_mode)) return;
  if (!exts.empty() &&
      std::none_of(exts.begin(), exts.end(), [&](const std::string& x) { return EndsWith(path, x); })) {
    return;
  }
  std::vector<uint8_t> bytes;
  if (!ReadFile(path, &bytes)) return;
  if (bytes.size() > max_len) bytes.resize(max_len);
  seeds->push_back(std::move(bytes));
  names->push_back(path);
}

// ----------------------------------------------------------------- mutator
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull) {}
  uint64_t Next() {  // splitmix64
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  size_t Below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(Next() % n); }

 private:
  uint64_t s_;
};

const int64_t kInteresting[] = {0,          1,          -1,         2,         3,
                                4,          7,          8,          15,        16,
                                31,         32,         33,         63,        64,
                                127,        128,        255,        256,       1000,
                                1024,       4096,       32767,      32768,     65535,
                                65536,      INT32_MAX,  INT32_MIN,  UINT32_MAX, INT64_MAX,
                                INT64_MIN,  INT64_MAX / 2 + 1,     -2,        -128};

const char* const kTokens[] = {"(", ")", "[", "]", "{", "}", ",", ";", ":", "=", "%", "@",
                               "?", "-", "0", "1", "-1", "9223372036854775807", "99999999999999999999",
                               "1e308", "nan", "\"", "\\", "\n", "#", "//", "float32", "int64",
                               "Tensor[", "fn (", "let ", "if (", "meta[", "#[metadata]", "\xff"};

void Mutate(std::vector<uint8_t>* d, const std::vector<std::vector<uint8_t>>& seeds, Rng& rng,
            size_t max_len) {
  // Mostly one or two mutations (structured formats break quickly), now and
  // then many.
  int rounds = rng.Below(2) ? 1 : 2 + static_cast<int>(rng.Below(3));
  if (rng.Below(16) == 0) rounds += static_cast<int>(rng.Below(12));
  for (int r = 0; r < rounds; ++r) {
    size_t n = d->size();
    switch (rng.Below(12)) {
      case 0:  // bit flip
        if (n) (*d)[rng.Below(n)] ^= static_cast<uint8_t>(1u << rng.Below(8));
        break;
      case 1:  // random byte
        if (n) (*d)[rng.Below(n)] = static_cast<uint8_t>(rng.Next());
        break;
      case 2: {  // interesting integer, 1/2/4/8 bytes, either endianness
        if (!n) break;
        int64_t v = kInteresting[rng.Below(sizeof(kInteresting) / sizeof(kInteresting[0]))];
        size_t w = size_t{1} << rng.Below(4);
        size_t at = rng.Below(n);
        bool big = rng.Below(2);
        for (size_t i = 0; i < w && at + i < n; ++i) {
          size_t shift = 8 * (big ? w - 1 - i : i);
          (*d)[at + i] = static_cast<uint8_t>(static_cast<uint64_t>(v) >> shift);
        }
        break;
      }
      case 3: {  // insert random bytes
        size_t k = 1 + rng.Below(8);
        size_t at = rng.Below(n + 1);
        std::vector<uint8_t> ins(k);
        for (auto& b : ins) b = static_cast<uint8_t>(rng.Next());
        d->insert(d->begin() + static_cast<long>(at), ins.begin(), ins.end());
        break;
      }
      case 4: {  // delete a range
        if (!n) break;
        size_t at = rng.Below(n);
        size_t k = 1 + rng.Below(std::min<size_t>(n - at, rng.Below(4) ? 8 : 256));
        d->erase(d->begin() + static_cast<long>(at), d->begin() + static_cast<long>(at + k));
        break;
      }
      case 5: {  // repeat a chunk
        if (!n) break;
        size_t at = rng.Below(n);
        size_t k = 1 + rng.Below(std::min<size_t>(n - at, 64));
        size_t times = 1 + rng.Below(rng.Below(4) ? 4 : 200);
        std::vector<uint8_t> chunk(d->begin() + static_cast<long>(at),
                                   d->begin() + static_cast<long>(at + k));
        for (size_t t = 0; t < times && d->size() < max_len; ++t) {
          d->insert(d->begin() + static_cast<long>(at), chunk.begin(), chunk.end());
        }
        break;
      }
      case 6:  // truncate
        if (n) d->resize(rng.Below(n));
        break;
      case 7: {  // splice with another seed
        const std::vector<uint8_t>& o = seeds[rng.Below(seeds.size())];
        if (o.empty()) break;
        size_t cut = rng.Below(n + 1);
        size_t from = rng.Below(o.size());
        d->resize(cut);
        d->insert(d->end(), o.begin() + static_cast<long>(from), o.end());
        break;
      }
      case 8: {  // copy a chunk of another seed over this one
        const std::vector<uint8_t>& o = seeds[rng.Below(seeds.size())];
        if (o.empty() || !n) break;
        size_t from = rng.Below(o.size());
        size_t k = 1 + rng.Below(std::min<size_t>(o.size() - from, 64));
        size_t at = rng.Below(n);
        for (size_t i = 0; i < k && at + i < n; ++i) (*d)[at + i] = o[from + i];
        break;
      }
      case 9: {  // insert a token (text formats)
        const char* t = kTokens[rng.Below(sizeof(kTokens) / sizeof(kTokens[0]))];
        size_t at = rng.Below(n + 1);
        d->insert(d->begin() + static_cast<long>(at), t, t + strlen(t));
        break;
      }
      case 10: {  // add/subtract a small number from a byte (varints, digits)
        if (!n) break;
        size_t at = rng.Below(n);
        (*d)[at] = static_cast<uint8_t>((*d)[at] + static_cast<int>(rng.Below(33)) - 16);
        break;
      }
      case 11: {  // swap two chunks' first bytes / duplicate a line
        if (n < 2) break;
        size_t a = rng.Below(n), b = rng.Below(n);
        std::swap((*d)[a], (*d)[b]);
        break;
      }
    }
    if (d->size() > max_len) d->resize(max_len);
  }
}

void RunOne(const std::vector<uint8_t>& input, unsigned timeout_s) {
  // The target gets a copy of exactly `size` bytes (heap), so a read past the
  // end is a heap overflow a sanitizer sees.
  uint8_t* copy = static_cast<uint8_t*>(malloc(input.empty() ? 1 : input.size()));
  if (!input.empty()) memcpy(copy, input.data(), input.size());
  PrepareCrashPath(copy, input.size());
  g_current_data = copy;
  g_current_size = input.size();
  if (timeout_s) alarm(timeout_s);
  LLVMFuzzerTestOneInput(copy, input.size());
  if (timeout_s) alarm(0);
  g_current_data = nullptr;
  g_current_size = 0;
  free(copy);
}

void Usage() {
  fprintf(stderr,
          "usage: FUZZER [--runs N] [--seconds S] [--seed X] [--max_len L] [--timeout T]\n"
          "              [--artifact_dir D] [--ext .suffix]... [--target_flag=value]... CORPUS...\n");
}

}  // namespace

int main(int argc, char** argv) {
  long long runs = -1;
  double seconds = -1;
  uint64_t seed = 1;
  size_t max_len = 1 << 20;
  unsigned timeout_s = 20;
  std::vector<std::string> exts, corpus;
  if (const char* d = getenv("TEST_UNDECLARED_OUTPUTS_DIR")) g_artifact_dir = d;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* flag) -> const char* {
      std::string f = flag;
      if (a == f && i + 1 < argc) return argv[++i];
      if (a.rfind(f + "=", 0) == 0) return argv[i] + f.size() + 1;
      return nullptr;
    };
    if (const char* v = value("--runs")) {
      runs = atoll(v);
    } else if (const char* v = value("--seconds")) {
      seconds = atof(v);
    } else if (const char* v = value("--seed")) {
      seed = strtoull(v, nullptr, 0);
    } else if (const char* v = value("--max_len")) {
      max_len = static_cast<size_t>(atoll(v));
    } else if (const char* v = value("--timeout")) {
      timeout_s = static_cast<unsigned>(atoi(v));
    } else if (const char* v = value("--artifact_dir")) {
      g_artifact_dir = v;
    } else if (const char* v = value("--ext")) {
      exts.push_back(v);
    } else if (a == "--help" || a == "-h") {
      Usage();
      return 0;
    } else if (a.rfind("--", 0) == 0) {
      // The target's flag (LLVMFuzzerInitialize reads it).
    } else {
      corpus.push_back(a);
    }
  }
  if (runs < 0 && seconds < 0) runs = 10000;
  InstallHandlers();
  if (LLVMFuzzerInitialize != nullptr) LLVMFuzzerInitialize(&argc, &argv);

  std::vector<std::vector<uint8_t>> seeds;
  std::vector<std::string> names;
  for (const std::string& c : corpus) CollectSeeds(c, exts, max_len, &seeds, &names);
  if (seeds.empty()) seeds.push_back({});
  fprintf(stderr, "kiln-fuzz: %zu seeds, seed %" PRIu64 ", %s %s\n", seeds.size(), seed,
          runs >= 0 ? "runs" : "seconds",
          runs >= 0 ? std::to_string(runs).c_str() : std::to_string(seconds).c_str());

  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  long long execs = 0;
  for (const auto& s : seeds) {
    RunOne(s, timeout_s);
    ++execs;
  }
  Rng rng(seed);
  double next_report = 10;
  std::vector<uint8_t> input;
  while (true) {
    if (runs >= 0 && execs >= runs) break;
    if (seconds >= 0 && elapsed() >= seconds) break;
    input = seeds[rng.Below(seeds.size())];
    Mutate(&input, seeds, rng, max_len);
    RunOne(input, timeout_s);
    ++execs;
    if (elapsed() >= next_report) {
      fprintf(stderr, "kiln-fuzz: #%lld  %.0f s  %.0f exec/s\n", execs, elapsed(),
              execs / elapsed());
      next_report *= 2;
    }
  }
  double t = elapsed();
  fprintf(stderr, "kiln-fuzz: done: %lld executions in %.1f s (%.0f exec/s), no finding\n", execs,
          t, t > 0 ? execs / t : 0.0);
  printf("executions=%lld seconds=%.1f exec_per_second=%.0f findings=0\n", execs, t,
         t > 0 ? execs / t : 0.0);
  return 0;
}
