// File: tests/cuda/session_test_util.h
//
// Small helpers the CUDA artifact and session tests share (cuda_artifact_test,
// cuda_session_test, cuda_vm_test, cuda_dynamic_shared_test,
// cuda_tensor_map_test): a path in the test's temporary directory, a runtime
// status as "CODE: message" (freed), an artifact's bytes and its DEVICE_CODE
// section, a re-sealed copy,
// the fake driver's counters and the two-kernel model most of them compile.
#ifndef KILN_TESTS_CUDA_SESSION_TEST_UTIL_H_
#define KILN_TESTS_CUDA_SESSION_TEST_UTIL_H_

#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include <dlpack/dlpack.h>
#include "kiln/artifact_writer.h"
#include "kiln/device_code_format.h"
#include "kiln/runtime.h"
#include "tests/cuda/fake_driver_stats.h"

namespace kiln::testing {

// `name` under $TEST_TMPDIR (or /tmp).
inline std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return absl::StrCat(dir != nullptr ? dir : "/tmp", "/", name);
}

// "" for success, else "CODE_NAME: message"; frees `st`.
inline std::string TakeStatus(KilnStatus* st) {
  if (st == nullptr) return "";
  std::string m = absl::StrCat(kiln_status_code_name(kiln_status_code(st)), ": ",
                               kiln_status_message(st));
  kiln_status_free(st);
  return m;
}

// Little-endian words of an artifact's bytes (the tests corrupt fields).
inline uint32_t Rd32(const std::string& s, size_t at) {
  uint32_t v;
  std::memcpy(&v, s.data() + at, 4);
  return v;
}
inline uint64_t Rd64(const std::string& s, size_t at) {
  uint64_t v;
  std::memcpy(&v, s.data() + at, 8);
  return v;
}
inline void Wr32(std::string* s, size_t at, uint32_t v) { std::memcpy(s->data() + at, &v, 4); }
inline void Wr64(std::string* s, size_t at, uint64_t v) { std::memcpy(s->data() + at, &v, 8); }

// A file's bytes ("" when it cannot be read).
inline std::string ReadAll(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// The DEVICE_CODE section of an artifact's bytes: its offset (npos when
// none), and its bytes to the end of its last image.
inline size_t DeviceCodeAt(const std::string& bytes) {
  return bytes.find(std::string(KILN_DEVICE_CODE_MAGIC, KILN_DEVICE_CODE_MAGIC_SIZE));
}
inline std::string Section(const std::string& bytes) {
  const size_t dc = DeviceCodeAt(bytes);
  if (dc == std::string::npos) return "";
  size_t end = 0;
  for (uint32_t i = 0; i < Rd32(bytes, dc + 16); ++i) {
    const size_t e = dc + Rd64(bytes, dc + 32) + 32 * i;
    end = std::max<size_t>(end, Rd64(bytes, e + 8) + Rd64(bytes, e + 16));
  }
  return bytes.substr(dc, end);
}

// Writes `bytes` to `name` under TempPath and re-seals it (file size,
// checksum): "" or the status.
inline std::string WriteSealed(const std::string& bytes, const std::string& name) {
  std::ofstream(TempPath(name), std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return TakeStatus(kiln_artifact_seal_file(TempPath(name).c_str()));
}

// Loads `bytes` as an artifact (written to TempPath(name) and re-sealed, so
// that the checksum passes): "" when it loads, else the status ("seal: ..."
// when sealing failed).
inline std::string LoadMutant(const std::string& bytes, const std::string& name = "mutant.so") {
  std::string e = WriteSealed(bytes, name);
  if (!e.empty()) return "seal: " + e;
  KilnArtifact* a = nullptr;
  e = TakeStatus(kiln_artifact_load(TempPath(name).c_str(), &a));
  kiln_artifact_release(a);
  return e;
}

// Every byte of [begin, end) of an artifact's `bytes` flipped three ways
// (its low bit, its high bit, all its bits), each mutant loaded: how many
// the loader refused and how many loaded (none may crash it); `unsealed`
// counts mutants that could not even be sealed (a test bug).
struct FlipCounts {
  int refused = 0, loaded = 0, unsealed = 0;
};
inline FlipCounts FlipEachByte(const std::string& bytes, size_t begin, size_t end) {
  FlipCounts c;
  for (size_t at = begin; at < end; ++at) {
    for (unsigned char x : {0x01, 0x80, 0xff}) {
      std::string m = bytes;
      m[at] = static_cast<char>(m[at] ^ static_cast<char>(x));
      const std::string e = LoadMutant(m);
      if (e.rfind("seal: ", 0) == 0) {
        ++c.unsealed;
      } else {
        (e.empty() ? c.loaded : c.refused) += 1;
      }
    }
  }
  return c;
}

// The driver library $KILN_CUDA_DRIVER names, opened again (the fake's
// knobs and counters), or null.
inline void* FakeDriver() {
  const char* path = std::getenv("KILN_CUDA_DRIVER");
  return path == nullptr ? nullptr : dlopen(path, RTLD_NOW | RTLD_LOCAL);
}

// A 2-D float32 DLTensor over `data` on `device` (shape not copied).
inline DLTensor Tensor(float* data, int64_t* shape, DLDeviceType device = kDLCPU, int id = 0) {
  DLTensor t{};
  t.data = data;
  t.device = {device, id};
  t.ndim = 2;
  t.dtype = {kDLFloat, 32, 1};
  t.shape = shape;
  return t;
}

// The counters of the fake driver $KILN_CUDA_DRIVER names
// (tests/cuda/fake_driver.c); null when it is not loaded or not the fake.
inline KilnFakeCudaStats* FakeDriverStats() {
  const char* path = std::getenv("KILN_CUDA_DRIVER");
  if (path == nullptr) return nullptr;
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) return nullptr;
  auto f = reinterpret_cast<KilnFakeCudaStats* (*)()>(dlsym(h, "kiln_fake_cuda_stats"));
  return f != nullptr ? f() : nullptr;
}

// dense(x, W) + y -> relu -> softmax (two kernels); W [8, 6] a constant (a
// PARAMS entry); x [4, 6], y [4, 8] float32.
inline std::string DenseAddReluSoftmaxText() {
  std::vector<float> w(8 * 6);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.05f * static_cast<float>(i % 7) - 0.1f;
  std::string b64 = absl::Base64Escape(
      absl::string_view(reinterpret_cast<const char*>(w.data()), w.size() * sizeof(float)));
  return absl::StrCat(R"(#[version = "0.1"]
def @main(%x: Tensor[(4, 6), float32], %y: Tensor[(4, 8), float32]) {
  %0 = nn.dense(%x, meta[Constant][0], units=8);
  %1 = add(%0, %y);
  %2 = nn.relu(%1);
  nn.softmax(%2, axis=1)
}

#[metadata]
meta[Constant][0] = Tensor[(8, 6), float32] b64")",
                      b64, "\";\n");
}

}  // namespace kiln::testing

#endif  // KILN_TESTS_CUDA_SESSION_TEST_UTIL_H_
