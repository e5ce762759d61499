// File: tests/onnx/conformance.cc
//
// run_conformance: ONNX's backend test data (Debian's libonnx-testdata) as the
// judge of kiln's ONNX frontend, compiler and runtime (issue 6, DESIGN.md §10).
//
//   run_conformance [--suites=node,simple] [--filter=REGEX] [--jobs=2]
//                   [--data_dir=DIR] [--tolerances=FILE] [--timeout=60]
//                   [--table=docs/onnx_conformance.md] [--counts=FILE]
//                   [--ratchet=tests/onnx/passing.txt] [--quiet] [--keep_temps]
//
// For each case (<data_dir>/<suite>/<case>/model.onnx with
// test_data_set_N/input_K.pb, output_K.pb) a forked child process imports the
// model (ImportOnnxFile; inputs the importer needs as constants are frozen to
// the data set's values, inputs with symbolic dims bound to the data set's
// shapes), compiles it with CompileToLibrary into a temporary directory, loads
// it with kiln_artifact_load, runs every data set and compares the outputs
// (tests/onnx/conformance_lib.h). The child writes one result line to a pipe;
// a child that crashes or runs past --timeout is a `fail` of that case only.
// The parent never starts a thread (it forks).
//
// Exit status: 0, also when cases fail; 1 when --ratchet finds a suite whose
// pass count dropped below the recorded one; 2 on a usage or I/O error.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "c_api/compiler.h"
#include "frontends/onnx/importer.h"
#include "ir/module.h"
#include "ir/tensor.h"
#include "kiln/runtime.h"
#include "onnx/onnx_pb.h"
#include "tests/onnx/conformance_case.h"
#include "tests/onnx/conformance_lib.h"

namespace kiln::onnx_conformance {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

const char* const kAllSuites[] = {"node", "pytorch-converted", "pytorch-operator", "simple"};
constexpr char kSystemDataDir[] = "/usr/share/libonnx-testdata/data";

constexpr char kUsage[] =
    "usage: run_conformance [options]\n"
    "  --suites=A,B        suites to run (default: node,pytorch-converted,pytorch-operator,simple)\n"
    "  --filter=REGEX      only cases whose name (or suite/name) matches (std::regex search)\n"
    "  --jobs=N            cases at a time, each in its own process (default 2)\n"
    "  --timeout=S         seconds per case before it is killed and counted as a failure "
    "(default 60)\n"
    "  --data_dir=DIR      the test data (default: the runfiles' onnx_testdata, else\n"
    "                      /usr/share/libonnx-testdata/data)\n"
    "  --tolerances=FILE   per-case tolerances, `case rtol atol  # reason` (default:\n"
    "                      tests/onnx/tolerances.txt from the runfiles or the workspace)\n"
    "  --table=PATH        write the markdown table (docs/onnx_conformance.md)\n"
    "  --counts=PATH       write the pass counts per suite (`suite count` lines)\n"
    "  --ratchet=PATH      exit 1 if a suite passes fewer cases than PATH records\n"
    "  --memory_limit_mb=N address-space limit of a case's process (default 8192; 0 = none)\n"
    "  --opt_level=N       graph pass level (default 3)\n"
    "  --target=T          compile target (default llvm)\n"
    "  --device=D          the sessions' device: cpu (default) or cuda:N (with a cuda target)\n"
    "  --emulate_cuda      with cuda:N: run each artifact's CUDA C on the host through the fake\n"
    "                      driver that $KILN_CUDA_DRIVER names (tests/cuda: libkiln_fake_cuda.so)\n"
    "  --export_dir=DIR    write each case that passes (its artifacts, its data sets as .npy)\n"
    "                      to DIR/<suite>__<case> for `device_run conformance` on a machine\n"
    "                      with only kiln's runtime (tests/onnx/conformance_export.h)\n"
    "  --export_host_kernels  with --export_dir and --emulate_cuda: the host build of each\n"
    "                      artifact's kernels too (replays through the fake driver)\n"
    "  --no_bind_shapes    do not bind symbolic input dims to the data set's shapes\n"
    "  --freeze_inputs     freeze graph inputs the importer needs as values to the data set's\n"
    "                      (counts those cases as passes: not a user's path; off by default)\n"
    "  --temp_dir=DIR      where the per-case directories go (default $TEST_TMPDIR, $TMPDIR, "
    "/tmp)\n"
    "  --keep_temps        keep the per-case directories (compiled .so, the case's log)\n"
    "  --quiet             no line per case (only the summary)\n";

bool FlagValue(absl::string_view arg, absl::string_view name, std::string* value) {
  std::string prefix = absl::StrCat("--", name, "=");
  if (!absl::StartsWith(arg, prefix)) return false;
  *value = std::string(arg.substr(prefix.size()));
  return true;
}

// Runfiles roots to look in: $RUNFILES_DIR, $TEST_SRCDIR, argv[0].runfiles.
std::vector<std::string> RunfilesRoots(const std::string& argv0) {
  std::vector<std::string> roots;
  for (const char* var : {"RUNFILES_DIR", "TEST_SRCDIR"}) {
    const char* v = std::getenv(var);
    if (v != nullptr && *v != '\0') roots.emplace_back(v);
  }
  if (!argv0.empty()) roots.push_back(argv0 + ".runfiles");
  return roots;
}

std::string DefaultDataDir(const std::string& argv0) {
  for (const std::string& root : RunfilesRoots(argv0)) {
    for (const char* sub : {"/onnx_testdata", "/kiln/external/onnx_testdata"}) {
      std::string dir = root + sub;
      if (FileExists(dir + "/node") || FileExists(dir + "/simple")) return dir;
    }
  }
  return kSystemDataDir;
}

std::string DefaultTolerances(const std::string& argv0) {
  for (const std::string& root : RunfilesRoots(argv0)) {
    std::string path = root + "/kiln/tests/onnx/tolerances.txt";
    if (FileExists(path)) return path;
  }
  const char* ws = std::getenv("BUILD_WORKSPACE_DIRECTORY");
  if (ws != nullptr && FileExists(absl::StrCat(ws, "/tests/onnx/tolerances.txt"))) {
    return absl::StrCat(ws, "/tests/onnx/tolerances.txt");
  }
  if (FileExists("tests/onnx/tolerances.txt")) return "tests/onnx/tolerances.txt";
  return "";
}

absl::StatusOr<Options> ParseFlags(int argc, char** argv) {
  Options o;
  o.argv0 = argc > 0 ? argv[0] : "";
  std::string suites;
  std::string value;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") return absl::CancelledError(kUsage);
    if (arg == "--quiet") {
      o.quiet = true;
    } else if (arg == "--keep_temps") {
      o.keep_temps = true;
    } else if (arg == "--freeze_inputs") {
      o.freeze_inputs = true;
    } else if (arg == "--no_bind_shapes") {
      o.bind_shapes = false;
    } else if (arg == "--emulate_cuda") {
      o.emulate_cuda = true;
    } else if (arg == "--export_host_kernels") {
      o.export_host_kernels = true;
    } else if (FlagValue(arg, "data_dir", &o.data_dir) || FlagValue(arg, "filter", &o.filter) ||
               FlagValue(arg, "tolerances", &o.tolerances) || FlagValue(arg, "table", &o.table) ||
               FlagValue(arg, "counts", &o.counts) || FlagValue(arg, "ratchet", &o.ratchet) ||
               FlagValue(arg, "temp_dir", &o.temp_dir) || FlagValue(arg, "target", &o.target) ||
               FlagValue(arg, "device", &o.device) || FlagValue(arg, "suites", &suites) ||
               FlagValue(arg, "export_dir", &o.export_dir)) {
      // Stored.
    } else if (FlagValue(arg, "jobs", &value)) {
      if (!absl::SimpleAtoi(value, &o.jobs) || o.jobs < 1 || o.jobs > 64) {
        return absl::InvalidArgumentError(absl::StrCat("--jobs: expected 1..64, got '", value, "'"));
      }
    } else if (FlagValue(arg, "timeout", &value)) {
      if (!absl::SimpleAtoi(value, &o.timeout_s) || o.timeout_s < 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("--timeout: expected seconds >= 1, got '", value, "'"));
      }
    } else if (FlagValue(arg, "memory_limit_mb", &value)) {
      if (!absl::SimpleAtoi(value, &o.memory_limit_mb) || o.memory_limit_mb < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("--memory_limit_mb: expected MB >= 0, got '", value, "'"));
      }
    } else if (FlagValue(arg, "opt_level", &value)) {
      if (!absl::SimpleAtoi(value, &o.opt_level) || o.opt_level < 0 || o.opt_level > 3) {
        return absl::InvalidArgumentError(
            absl::StrCat("--opt_level: expected 0..3, got '", value, "'"));
      }
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown argument '", arg, "'\n", kUsage));
    }
  }
  if (suites.empty()) {
    o.suites.assign(std::begin(kAllSuites), std::end(kAllSuites));
  } else {
    for (absl::string_view s : absl::StrSplit(suites, ',', absl::SkipEmpty())) {
      if (std::find(std::begin(kAllSuites), std::end(kAllSuites), s) == std::end(kAllSuites)) {
        return absl::InvalidArgumentError(
            absl::StrCat("--suites: unknown suite '", s, "' (known: ",
                         absl::StrJoin(std::begin(kAllSuites), std::end(kAllSuites), ","), ")"));
      }
      if (std::find(o.suites.begin(), o.suites.end(), s) == o.suites.end()) {
        o.suites.emplace_back(s);
      }
    }
  }
  int device_id = 0;
  if (o.device != "cpu" &&
      !(absl::StartsWith(o.device, "cuda:") && absl::SimpleAtoi(o.device.substr(5), &device_id) &&
        device_id >= 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--device: expected cpu or cuda:N, got '", o.device, "'"));
  }
  if (o.emulate_cuda && o.device == "cpu") {
    return absl::InvalidArgumentError("--emulate_cuda needs --device=cuda:N");
  }
  if (o.emulate_cuda && std::getenv("KILN_CUDA_DRIVER") == nullptr) {
    return absl::InvalidArgumentError(
        "--emulate_cuda: set KILN_CUDA_DRIVER to tests/cuda's libkiln_fake_cuda.so");
  }
  if (o.export_host_kernels && (o.export_dir.empty() || !o.emulate_cuda)) {
    return absl::InvalidArgumentError("--export_host_kernels needs --export_dir and --emulate_cuda");
  }
  if (!o.export_dir.empty()) {
    // The children write there; a relative path would follow each one's
    // working folder.
    std::error_code ec;
    fs::path abs = fs::absolute(o.export_dir, ec);
    if (ec) return absl::InvalidArgumentError(absl::StrCat("--export_dir: ", ec.message()));
    o.export_dir = abs.string();
  }
  if (o.data_dir.empty()) o.data_dir = DefaultDataDir(o.argv0);
  if (o.tolerances.empty()) o.tolerances = DefaultTolerances(o.argv0);
  if (!o.ratchet.empty() && !o.filter.empty()) {
    return absl::InvalidArgumentError(
        "--ratchet compares whole suites; it cannot be combined with --filter");
  }
  return o;
}

// ------------------------------------------------------------------ parent

// Children running now, for the SIGINT/SIGTERM handler (async-signal-safe:
// plain pids in a fixed array).
constexpr int kMaxJobs = 64;
volatile sig_atomic_t g_children[kMaxJobs] = {};

void KillChildrenAndExit(int sig) {
  for (int i = 0; i < kMaxJobs; ++i) {
    pid_t pid = static_cast<pid_t>(g_children[i]);
    if (pid > 0) {
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
    }
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

struct Running {
  size_t index = 0;
  int slot = 0;
  pid_t pid = -1;
  int fd = -1;
  bool eof = false;
  bool timed_out = false;
  std::string buffer;
  std::string phase = "start";
  Clock::time_point start;
  std::string temp_dir;
};

std::string SignalName(int sig) {
  const char* desc = strsignal(sig);
  return absl::StrCat("signal ", sig, desc != nullptr ? absl::StrCat(" (", desc, ")") : "");
}

// The last non-empty line of the case's log (what it printed before dying).
std::string LastLogLine(const std::string& temp_dir) {
  absl::StatusOr<std::string> log = ReadFile(temp_dir + "/log.txt");
  if (!log.ok()) return "";
  std::string last;
  for (absl::string_view line : absl::StrSplit(*log, '\n')) {
    absl::string_view s = absl::StripAsciiWhitespace(line);
    if (!s.empty()) last = std::string(s);
  }
  return ShortenReason(last, 200);
}

void DrainPipe(Running& r) {
  char buf[4096];
  while (!r.eof) {
    ssize_t n = ::read(r.fd, buf, sizeof(buf));
    if (n > 0) {
      r.buffer.append(buf, static_cast<size_t>(n));
    } else if (n == 0) {
      r.eof = true;
    } else if (errno == EINTR) {
      continue;
    } else {
      break;  // EAGAIN: nothing more now
    }
  }
  // Track the phase from complete "@phase" lines.
  size_t pos = 0;
  while (true) {
    size_t at = r.buffer.find("@phase ", pos);
    if (at == std::string::npos) break;
    size_t nl = r.buffer.find('\n', at);
    if (nl == std::string::npos) break;
    r.phase = r.buffer.substr(at + 7, nl - at - 7);
    pos = nl + 1;
  }
}

CaseResult Finish(const Case& c, Running& r, int wait_status, const Options& options) {
  CaseResult result;
  result.suite = c.suite;
  result.name = c.name;
  result.seconds = std::chrono::duration<double>(Clock::now() - r.start).count();
  // The last line that decodes as a result.
  std::optional<CaseResult> decoded;
  for (absl::string_view line : absl::StrSplit(r.buffer, '\n', absl::SkipEmpty())) {
    if (absl::StartsWith(line, "@")) continue;
    absl::StatusOr<CaseResult> d = DecodeResult(line);
    if (d.ok()) decoded = *std::move(d);
  }
  if (r.timed_out) {
    result.outcome = Outcome::kFail;
    result.reason = absl::StrCat("timeout after ", options.timeout_s, " s (in ", r.phase, ")");
  } else if (decoded.has_value() && WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0) {
    result.outcome = decoded->outcome;
    result.reason = decoded->reason;
    result.seconds = decoded->seconds;
    result.passes_frozen = decoded->passes_frozen;
  } else {
    result.outcome = Outcome::kFail;
    std::string how = WIFSIGNALED(wait_status)
                          ? SignalName(WTERMSIG(wait_status))
                          : absl::StrCat("exit code ", WEXITSTATUS(wait_status));
    std::string last = LastLogLine(r.temp_dir);
    result.reason = absl::StrCat("crashed: ", how, " (in ", r.phase, ")",
                                 last.empty() ? "" : absl::StrCat("; last output: ", last));
  }
  return result;
}

std::vector<Case> ListCases(const Options& options, std::string* error) {
  std::vector<Case> cases;
  std::optional<std::regex> filter;
  if (!options.filter.empty()) {
    try {
      filter.emplace(options.filter, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      *error = absl::StrCat("--filter: bad regular expression '", options.filter, "': ", e.what());
      return {};
    }
  }
  for (const std::string& suite : options.suites) {
    std::string dir = absl::StrCat(options.data_dir, "/", suite);
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
      *error = absl::StrCat("no suite folder '", dir, "' (see --data_dir)");
      return {};
    }
    std::vector<Case> in_suite;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      std::string name = entry.path().filename().string();
      if (!FileExists(entry.path().string() + "/model.onnx")) continue;
      if (filter.has_value() && !std::regex_search(name, *filter) &&
          !std::regex_search(absl::StrCat(suite, "/", name), *filter)) {
        continue;
      }
      in_suite.push_back(Case{suite, name, entry.path().string()});
    }
    if (ec) {
      *error = absl::StrCat("cannot list '", dir, "': ", ec.message());
      return {};
    }
    std::sort(in_suite.begin(), in_suite.end(),
              [](const Case& a, const Case& b) { return a.name < b.name; });
    cases.insert(cases.end(), in_suite.begin(), in_suite.end());
  }
  return cases;
}

std::string MakeTempBase(const Options& options) {
  std::string base = options.temp_dir;
  if (base.empty()) {
    for (const char* var : {"TEST_TMPDIR", "TMPDIR"}) {
      const char* v = std::getenv(var);
      if (v != nullptr && *v != '\0') {
        base = v;
        break;
      }
    }
  }
  if (base.empty()) base = "/tmp";
  std::string tmpl = base + "/kiln_conformance_XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) return "";
  return tmpl;
}

int ThreadCount() {
  absl::StatusOr<std::string> status = ReadFile("/proc/self/status");
  if (!status.ok()) return 1;
  for (absl::string_view line : absl::StrSplit(*status, '\n')) {
    if (absl::ConsumePrefix(&line, "Threads:")) {
      int n = 1;
      if (absl::SimpleAtoi(absl::StripAsciiWhitespace(line), &n)) return n;
    }
  }
  return 1;
}

int Main(int argc, char** argv) {
  absl::StatusOr<Options> parsed = ParseFlags(argc, argv);
  if (!parsed.ok()) {
    if (parsed.status().code() == absl::StatusCode::kCancelled) {
      std::fputs(kUsage, stdout);
      return 0;
    }
    std::fprintf(stderr, "run_conformance: %s\n", std::string(parsed.status().message()).c_str());
    return 2;
  }
  const Options& options = *parsed;

  ToleranceMap tolerances;
  if (!options.tolerances.empty()) {
    absl::StatusOr<std::string> text = ReadFile(options.tolerances);
    if (!text.ok()) {
      std::fprintf(stderr, "run_conformance: --tolerances: %s\n",
                   std::string(text.status().message()).c_str());
      return 2;
    }
    absl::StatusOr<ToleranceMap> t = ParseTolerances(*text);
    if (!t.ok()) {
      std::fprintf(stderr, "run_conformance: %s: %s\n", options.tolerances.c_str(),
                   std::string(t.status().message()).c_str());
      return 2;
    }
    tolerances = *std::move(t);
  } else {
    std::fprintf(stderr, "run_conformance: no tolerances file found; default tolerances only\n");
  }

  SuiteCounts recorded;
  if (!options.ratchet.empty()) {
    absl::StatusOr<std::string> text = ReadFile(options.ratchet);
    if (!text.ok()) {
      std::fprintf(stderr, "run_conformance: --ratchet: %s\n",
                   std::string(text.status().message()).c_str());
      return 2;
    }
    absl::StatusOr<SuiteCounts> counts = ParseCounts(*text);
    if (!counts.ok()) {
      std::fprintf(stderr, "run_conformance: %s: %s\n", options.ratchet.c_str(),
                   std::string(counts.status().message()).c_str());
      return 2;
    }
    recorded = *std::move(counts);
  }

  std::string error;
  std::vector<Case> cases = ListCases(options, &error);
  if (!error.empty()) {
    std::fprintf(stderr, "run_conformance: %s\n", error.c_str());
    return 2;
  }
  if (cases.empty()) {
    std::fprintf(stderr, "run_conformance: no cases (suites %s, filter '%s')\n",
                 absl::StrJoin(options.suites, ",").c_str(), options.filter.c_str());
    return 2;
  }
  std::string temp_base = MakeTempBase(options);
  if (temp_base.empty()) {
    std::fprintf(stderr, "run_conformance: cannot create a temporary directory\n");
    return 2;
  }
  if (ThreadCount() > 1) {
    std::fprintf(stderr, "run_conformance: warning: %d threads before fork\n", ThreadCount());
  }
  std::fprintf(stderr, "run_conformance: %zu cases from %s, %d at a time, %d s timeout each\n",
               cases.size(), options.data_dir.c_str(), options.jobs, options.timeout_s);

  signal(SIGINT, KillChildrenAndExit);
  signal(SIGTERM, KillChildrenAndExit);
  signal(SIGPIPE, SIG_IGN);

  Clock::time_point run_start = Clock::now();
  std::vector<CaseResult> results;
  results.reserve(cases.size());
  std::vector<Running> running;
  size_t next = 0;
  size_t done = 0;
  bool slot_used[kMaxJobs] = {};
  auto start_case = [&](size_t index) -> bool {
    const Case& c = cases[index];
    Running r;
    r.index = index;
    r.start = Clock::now();
    r.temp_dir = absl::StrCat(temp_base, "/", c.suite, "__", c.name);
    std::error_code ec;
    fs::create_directories(r.temp_dir, ec);
    int fds[2] = {-1, -1};
    if (pipe2(fds, O_CLOEXEC) != 0) return false;
    std::fflush(stdout);
    std::fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
      ::close(fds[0]);
      ::close(fds[1]);
      return false;
    }
    if (pid == 0) {
      ::close(fds[0]);
      ChildMain(c, options, ToleranceFor(tolerances, c.suite, c.name), r.temp_dir, fds[1]);
    }
    setpgid(pid, pid);  // also done by the child; whichever runs first
    ::close(fds[1]);
    fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
    r.pid = pid;
    r.fd = fds[0];
    for (int s = 0; s < kMaxJobs; ++s) {
      if (!slot_used[s]) {
        slot_used[s] = true;
        r.slot = s;
        g_children[s] = pid;
        break;
      }
    }
    running.push_back(std::move(r));
    return true;
  };

  while (next < cases.size() || !running.empty()) {
    while (running.size() < static_cast<size_t>(options.jobs) && next < cases.size()) {
      if (!start_case(next)) {
        CaseResult failed;
        failed.suite = cases[next].suite;
        failed.name = cases[next].name;
        failed.outcome = Outcome::kFail;
        failed.reason = absl::StrCat("runner: cannot start a process: ", std::strerror(errno));
        results.push_back(failed);
        ++done;
      }
      ++next;
    }
    if (running.empty()) continue;

    std::vector<pollfd> pfds;
    for (const Running& r : running) {
      if (!r.eof) pfds.push_back(pollfd{r.fd, POLLIN, 0});
    }
    if (!pfds.empty()) {
      poll(pfds.data(), pfds.size(), 100);
    } else {
      usleep(20 * 1000);
    }
    for (Running& r : running) DrainPipe(r);

    for (size_t i = 0; i < running.size();) {
      Running& r = running[i];
      int status = 0;
      pid_t got = waitpid(r.pid, &status, WNOHANG);
      double elapsed = std::chrono::duration<double>(Clock::now() - r.start).count();
      if (got == 0 && !r.timed_out && elapsed > options.timeout_s) {
        r.timed_out = true;
        kill(-r.pid, SIGKILL);
        kill(r.pid, SIGKILL);
      }
      if (got == 0 || (got < 0 && errno == EINTR)) {
        ++i;
        continue;
      }
      // Exited (or waitpid failed: treat as exited with what we have).
      if (got < 0) status = 0;
      kill(-r.pid, SIGKILL);  // stray compiler drivers of a crashed case
      DrainPipe(r);
      ::close(r.fd);
      const Case& c = cases[r.index];
      CaseResult result = Finish(c, r, status, options);
      if (!options.keep_temps) {
        std::error_code ec;
        fs::remove_all(r.temp_dir, ec);
      }
      g_children[r.slot] = 0;
      slot_used[r.slot] = false;
      ++done;
      if (!options.quiet) {
        std::fprintf(stderr, "[%4zu/%zu] %-11s %s/%s (%.1f s)%s%s\n", done, cases.size(),
                     OutcomeName(result.outcome), c.suite.c_str(), c.name.c_str(), result.seconds,
                     result.reason.empty() ? "" : ": ",
                     ShortenReason(result.reason, 300).c_str());
      }
      results.push_back(std::move(result));
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  double wall = std::chrono::duration<double>(Clock::now() - run_start).count();
  if (!options.keep_temps) {
    std::error_code ec;
    fs::remove_all(temp_base, ec);
  } else {
    std::fprintf(stderr, "run_conformance: temporaries kept in %s\n", temp_base.c_str());
  }

  std::sort(results.begin(), results.end(), [](const CaseResult& a, const CaseResult& b) {
    return std::tie(a.suite, a.name) < std::tie(b.suite, b.name);
  });

  // Summary.
  std::printf("%s", RenderSummary(results, options.suites).c_str());
  std::printf("wall time %.1f s (%d jobs)\n", wall, options.jobs);
  std::vector<const CaseResult*> slowest;
  for (const CaseResult& r : results) slowest.push_back(&r);
  std::sort(slowest.begin(), slowest.end(),
            [](const CaseResult* a, const CaseResult* b) { return a->seconds > b->seconds; });
  if (slowest.size() > 5) slowest.resize(5);
  std::printf("slowest:");
  for (const CaseResult* r : slowest) {
    std::printf(" %s/%s %.1fs;", r->suite.c_str(), r->name.c_str(), r->seconds);
  }
  std::printf("\n");
  std::vector<std::pair<std::string, int64_t>> top = TopReasons(results, 10);
  if (!top.empty()) {
    std::printf("most common reasons:\n");
    for (const auto& [key, count] : top) std::printf("  %5lld  %s\n", static_cast<long long>(count), key.c_str());
  }

  int exit_code = 0;
  if (!options.table.empty()) {
    TableOptions to;
    to.suites = options.suites;
    to.tolerances = tolerances;
    to.command = "tests/onnx/update_conformance.sh";
    to.jobs = options.jobs;
    to.wall_seconds = wall;
    if (absl::Status st = WriteFile(options.table, RenderTable(results, to)); !st.ok()) {
      std::fprintf(stderr, "run_conformance: --table: %s\n", std::string(st.message()).c_str());
      exit_code = 2;
    }
  }
  SuiteCounts measured = PassCounts(results, options.suites);
  if (!options.counts.empty()) {
    std::string header =
        "Passing ONNX conformance cases per suite: the ratchet of //tests/onnx:conformance_test\n"
        "(a count may only go up). Written by tests/onnx/update_conformance.sh.";
    if (absl::Status st = WriteFile(options.counts, FormatCounts(measured, header)); !st.ok()) {
      std::fprintf(stderr, "run_conformance: --counts: %s\n", std::string(st.message()).c_str());
      exit_code = 2;
    }
  }
  if (!options.ratchet.empty()) {
    RatchetReport report = CheckRatchet(recorded, measured);
    for (const std::string& line : report.dropped) {
      std::printf("RATCHET FAILED: %s (recorded in %s)\n", line.c_str(), options.ratchet.c_str());
    }
    for (const std::string& line : report.raised) std::printf("ratchet: %s\n", line.c_str());
    if (!report.raised.empty()) {
      std::printf(
          "ratchet: more cases pass than recorded: raise the counts with "
          "tests/onnx/update_conformance.sh (rewrites tests/onnx/passing.txt and "
          "docs/onnx_conformance.md)\n");
    }
    for (const std::string& line : report.not_run) {
      std::printf("ratchet: not run: %s\n", line.c_str());
    }
    if (!report.ok) exit_code = exit_code == 0 ? 1 : exit_code;
  }
  std::fflush(stdout);
  return exit_code;
}

}  // namespace
}  // namespace kiln::onnx_conformance

int main(int argc, char** argv) { return kiln::onnx_conformance::Main(argc, argv); }
