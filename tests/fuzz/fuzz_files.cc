// File: tests/fuzz/fuzz_files.cc
#include "tests/fuzz/fuzz_files.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

namespace kiln_fuzz {
namespace {

struct Scratch {
  std::string dir;
  Scratch() {
    const char* base = getenv("TEST_TMPDIR");
    std::string tmpl = std::string(base != nullptr ? base : "/tmp") + "/kiln_fuzz_XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (mkdtemp(buf.data()) == nullptr) {
      perror("kiln-fuzz: mkdtemp");
      abort();
    }
    dir = buf.data();
  }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

Scratch& TheScratch() {
  static Scratch* s = new Scratch();
  static bool registered = [] {
    atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(TheScratch().dir, ec);
    });
    return true;
  }();
  (void)registered;
  return *s;
}

std::map<std::string, long long>& Counts() {
  static auto* counts = new std::map<std::string, long long>();
  return *counts;
}

void PrintCounts() {
  std::string line = "kiln-fuzz: outcomes";
  for (const auto& [what, n] : Counts()) line += " " + what + "=" + std::to_string(n);
  fprintf(stderr, "%s\n", line.c_str());
}

}  // namespace

void Count(const char* what) {
  static bool registered = [] {
    atexit(PrintCounts);
    return true;
  }();
  (void)registered;
  ++Counts()[what];
}

std::string ScratchDir() { return TheScratch().dir; }

std::string ScratchPath(const std::string& name) { return ScratchDir() + "/" + name; }

std::string MemFilePath(const uint8_t* data, size_t size) {
  static int fd = memfd_create("kiln_fuzz", MFD_CLOEXEC);
  if (fd < 0) return "";
  if (ftruncate(fd, 0) != 0) return "";
  size_t done = 0;
  while (done < size) {
    ssize_t w = pwrite(fd, data + done, size - done, static_cast<off_t>(done));
    if (w <= 0) return "";
    done += static_cast<size_t>(w);
  }
  return "/proc/self/fd/" + std::to_string(fd);
}

bool WriteFile(const std::string& path, const uint8_t* data, size_t size) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  while (size > 0) {
    ssize_t w = write(fd, data, size);
    if (w <= 0) {
      close(fd);
      return false;
    }
    data += w;
    size -= static_cast<size_t>(w);
  }
  return close(fd) == 0;
}

bool ReadFile(const std::string& path, std::vector<uint8_t>* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}

std::string FlagOrEnv(int argc, char** argv, const std::string& name, const char* env) {
  std::string prefix = "--" + name + "=";
  for (int i = 1; i < argc; ++i) {
    if (strncmp(argv[i], prefix.c_str(), prefix.size()) == 0) return argv[i] + prefix.size();
  }
  const char* v = env != nullptr ? getenv(env) : nullptr;
  return v != nullptr ? v : "";
}

}  // namespace kiln_fuzz
