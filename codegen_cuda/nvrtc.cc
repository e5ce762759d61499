// File: codegen_cuda/nvrtc.cc — NVRTC and ptxas.
#include "codegen_cuda/nvrtc.h"

#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

#ifdef KILN_HAVE_CUDA
#include <nvrtc.h>
#endif

extern char** environ;

namespace kiln::codegen_cuda {

lowering::GpuTarget CudaTarget::gpu() const {
  lowering::GpuTarget g = lowering::GpuTarget::Sm80();
  g.arch = arch;
  g.tf32 = tf32;
  g.wgmma = wgmma();
  g.wide_wgmma = wgmma() && wgmma_n == 256;
  return g;
}

std::string CudaTarget::ToString() const {
  return absl::StrCat("cuda -arch=", arch, tf32 ? " -tf32" : "",
                      wgmma_n != 256 ? absl::StrCat(" -wgmma-n=", wgmma_n) : "",
                      wgmma_swizzle != 0 ? absl::StrCat(" -wgmma-swizzle=", wgmma_swizzle) : "",
                      wgmma_tma && !wgmma_ws ? " -wgmma-tma" : "", wgmma_ws ? " -wgmma-ws" : "");
}

absl::StatusOr<CudaTarget> ParseCudaTarget(absl::string_view target) {
  std::vector<absl::string_view> words = absl::StrSplit(target, ' ', absl::SkipWhitespace());
  if (words.empty() || words[0] != "cuda") {
    return absl::InvalidArgumentError(
        absl::StrCat("CUDA target '", target, "' must start with 'cuda' (e.g. cuda -arch=sm_80)"));
  }
  CudaTarget t;
  for (size_t i = 1; i < words.size(); ++i) {
    absl::string_view w = words[i];
    if (w == "-tf32") {
      t.tf32 = true;
      continue;
    }
    if (w == "-wgmma-tma") {
      t.wgmma_tma = true;
      continue;
    }
    if (w == "-wgmma-ws") {
      t.wgmma_tma = t.wgmma_ws = true;
      continue;
    }
    if (absl::ConsumePrefix(&w, "-wgmma-n=")) {
      if (w != "128" && w != "256") {
        return absl::InvalidArgumentError(absl::StrCat(
            "CUDA target '", target, "': -wgmma-n must be 128 or 256, got '", w, "'"));
      }
      t.wgmma_n = w == "128" ? 128 : 256;
      continue;
    }
    if (absl::ConsumePrefix(&w, "-wgmma-swizzle=")) {
      if (w != "0" && w != "128") {
        return absl::InvalidArgumentError(absl::StrCat(
            "CUDA target '", target, "': -wgmma-swizzle must be 0 or 128, got '", w, "'"));
      }
      t.wgmma_swizzle = w == "128" ? 128 : 0;
      continue;
    }
    if (!absl::ConsumePrefix(&w, "-arch=")) {
      return absl::InvalidArgumentError(
          absl::StrCat("CUDA target '", target, "': unknown option '", words[i],
                       "' (options: -arch=sm_XY, -tf32, -wgmma-n=128|256, "
                       "-wgmma-swizzle=0|128, -wgmma-tma, -wgmma-ws)"));
    }
    static const char* const kArchs[] = {"sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_90a"};
    bool known = false;
    for (const char* a : kArchs) known |= w == a;
    if (!known) {
      return absl::InvalidArgumentError(absl::StrCat(
          "CUDA target '", target, "': unsupported architecture '", w,
          "' (supported: sm_80, sm_86, sm_87, sm_89, sm_90, sm_90a)"));
    }
    t.arch = std::string(w);
    t.arch_specific = absl::ConsumeSuffix(&w, "a");
    (void)absl::SimpleAtoi(w.substr(3), &t.sm);
  }
  if ((t.wgmma_n != 256 || t.wgmma_swizzle != 0 || t.wgmma_tma) && !t.wgmma()) {
    return absl::InvalidArgumentError(
        absl::StrCat("CUDA target '", target, "': ",
                     t.wgmma_n != 256 ? "-wgmma-n"
                     : t.wgmma_ws     ? "-wgmma-ws"
                     : t.wgmma_tma    ? "-wgmma-tma"
                                      : "-wgmma-swizzle",
                     " applies to -arch=sm_90a (Hopper's wgmma) only"));
  }
  if (t.wgmma_tma && t.wgmma_n != 256) {
    return absl::InvalidArgumentError(absl::StrCat(
        "CUDA target '", target, "': ", t.wgmma_ws ? "-wgmma-ws" : "-wgmma-tma",
        " fills the wide tile's stages, which -wgmma-n=128 turns off"));
  }
  return t;
}

bool NvrtcAvailable() {
#ifdef KILN_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

std::string NvrtcVersion() {
#ifdef KILN_HAVE_CUDA
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return "";
  return absl::StrCat(major, ".", minor);
#else
  return "";
#endif
}

absl::StatusOr<std::string> CompileToPtx(const std::string& source, absl::string_view name,
                                         const CudaTarget& target) {
#ifndef KILN_HAVE_CUDA
  (void)source;
  (void)name;
  (void)target;
  return absl::UnavailableError(
      "NVRTC is not available: kiln was built without the CUDA toolkit "
      "(/usr/local/cuda/include/nvrtc.h was not found at build time)");
#else
  nvrtcProgram prog = nullptr;
  const std::string prog_name(name);
  nvrtcResult rc = nvrtcCreateProgram(&prog, source.c_str(), prog_name.c_str(), 0, nullptr, nullptr);
  if (rc != NVRTC_SUCCESS) {
    return absl::InternalError(absl::StrCat("nvrtcCreateProgram: ", nvrtcGetErrorString(rc)));
  }
  const std::string arch =
      absl::StrCat("--gpu-architecture=compute_", target.sm, target.arch_specific ? "a" : "");
  const char* opts[] = {arch.c_str(), "--std=c++17", "--fmad=true"};
  rc = nvrtcCompileProgram(prog, 3, opts);
  size_t log_size = 0;
  std::string log;
  if (nvrtcGetProgramLogSize(prog, &log_size) == NVRTC_SUCCESS && log_size > 1) {
    log.resize(log_size);
    nvrtcGetProgramLog(prog, log.data());
    log.resize(log_size - 1);
  }
  if (rc != NVRTC_SUCCESS) {
    nvrtcDestroyProgram(&prog);
    return absl::InvalidArgumentError(absl::StrCat("NVRTC could not compile ", prog_name, " for ",
                                                   target.arch, ": ", nvrtcGetErrorString(rc),
                                                   "\n", log));
  }
  size_t ptx_size = 0;
  std::string ptx;
  rc = nvrtcGetPTXSize(prog, &ptx_size);
  if (rc == NVRTC_SUCCESS) {
    ptx.resize(ptx_size);
    rc = nvrtcGetPTX(prog, ptx.data());
  }
  nvrtcDestroyProgram(&prog);
  if (rc != NVRTC_SUCCESS) {
    return absl::InternalError(absl::StrCat("nvrtcGetPTX: ", nvrtcGetErrorString(rc)));
  }
  while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
  return ptx;
#endif
}

namespace {

bool Executable(const std::string& path) {
  struct stat st;
  return !path.empty() && stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         access(path.c_str(), X_OK) == 0;
}

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

// A fresh directory for ptxas's files (under $TEST_TMPDIR in tests).
absl::StatusOr<std::string> MakeTempDir() {
  const char* base = getenv("TEST_TMPDIR");
  if (base == nullptr || *base == '\0') base = getenv("TMPDIR");
  if (base == nullptr || *base == '\0') base = "/tmp";
  std::string tmpl = absl::StrCat(base, "/kiln_ptxas_XXXXXX");
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("cannot make a temporary directory in ", base, ": ",
                                            std::strerror(errno)));
  }
  return std::string(buf.data());
}

}  // namespace

std::string FindPtxas() {
  const char* env = getenv("KILN_PTXAS");
  if (env != nullptr && *env != '\0') return Executable(env) ? std::string(env) : std::string();
  if (Executable("/usr/local/cuda/bin/ptxas")) return "/usr/local/cuda/bin/ptxas";
  const char* path = getenv("PATH");
  if (path == nullptr) return "";
  for (absl::string_view dir : absl::StrSplit(path, ':', absl::SkipEmpty())) {
    std::string p = absl::StrCat(dir, "/ptxas");
    if (Executable(p)) return p;
  }
  return "";
}

absl::StatusOr<PtxasResult> AssemblePtx(const std::string& ptx, const CudaTarget& target) {
  const std::string ptxas = FindPtxas();
  if (ptxas.empty()) {
    return absl::UnavailableError(
        "ptxas not found (set KILN_PTXAS, install the CUDA toolkit at /usr/local/cuda, or put "
        "ptxas on PATH)");
  }
  absl::StatusOr<std::string> dir = MakeTempDir();
  if (!dir.ok()) return dir.status();
  const std::string in = *dir + "/kernels.ptx", out = *dir + "/kernels.cubin",
                    log_path = *dir + "/ptxas.log";
  auto cleanup = [&] {
    unlink(in.c_str());
    unlink(out.c_str());
    unlink(log_path.c_str());
    rmdir(dir->c_str());
  };
  {
    std::ofstream f(in, std::ios::binary);
    f << ptx;
    if (!f) {
      cleanup();
      return absl::InternalError(absl::StrCat("cannot write ", in));
    }
  }
  const std::string arch = absl::StrCat("-arch=", target.arch);
  std::vector<std::string> argv_s = {ptxas, arch, "-v", "-o", out, in};
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, ptxas.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    cleanup();
    return absl::InternalError(absl::StrCat("cannot run ", ptxas, ": ", std::strerror(rc)));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  PtxasResult r;
  ReadFile(log_path, &r.log);
  const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (ok && !ReadFile(out, &r.cubin)) {
    cleanup();
    return absl::InternalError(absl::StrCat("ptxas wrote no ", out));
  }
  cleanup();
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ptxas ", arch, " rejected the PTX (",
        WIFEXITED(status) ? absl::StrCat("exit ", WEXITSTATUS(status)) : std::string("killed"),
        "):\n", r.log));
  }
  return r;
}

}  // namespace kiln::codegen_cuda
