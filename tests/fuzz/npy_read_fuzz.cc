// File: tests/fuzz/npy_read_fuzz.cc
//
// Fuzz target: the .npy reader (runtime_c/npy.c kiln_npy_read), which reads a
// path: the bytes go to a memfd (or a private temporary file) first.
// Properties: nothing crashes or aborts; a failure is a status with a
// message; a success is a CPU tensor whose every byte can be read
// (ndim >= 0, dims >= 0, data present when it has elements). Seeds: the
// tree's .npy files.
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "kiln/npy.h"
#include "kiln/status.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_files.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string path = kiln_fuzz::MemFilePath(data, size);
  if (path.empty()) {
    static const std::string disk = kiln_fuzz::ScratchPath("input.npy");
    KILN_FUZZ_CHECK(kiln_fuzz::WriteFile(disk, data, size), "cannot write %s", disk.c_str());
    path = disk;
  }
  KilnNpyTensor* t = nullptr;
  KilnStatus* st = kiln_npy_read(path.c_str(), &t);
  if (st != nullptr) {
    KILN_FUZZ_CHECK(t == nullptr, "out-parameter set on failure");
    const char* msg = kiln_status_message(st);
    KILN_FUZZ_CHECK(msg != nullptr && msg[0] != '\0', "a status without a message");
    kiln_status_free(st);
    kiln_fuzz::Count("read_error");
    return 0;
  }
  KILN_FUZZ_CHECK(t != nullptr, "success without a tensor");
  const DLTensor& x = t->tensor;
  KILN_FUZZ_CHECK(x.ndim >= 0 && x.ndim <= 64, "ndim %d", x.ndim);
  KILN_FUZZ_CHECK(x.device.device_type == kDLCPU, "not a CPU tensor");
  uint64_t elems = 1;
  for (int i = 0; i < x.ndim; ++i) {
    KILN_FUZZ_CHECK(x.shape[i] >= 0, "dim %d is %lld", i, static_cast<long long>(x.shape[i]));
    elems *= static_cast<uint64_t>(x.shape[i]);
  }
  uint64_t bytes = elems * ((x.dtype.bits * x.dtype.lanes + 7u) / 8u);
  KILN_FUZZ_CHECK(bytes <= size, "%llu data bytes from a %zu-byte file",
                  static_cast<unsigned long long>(bytes), size);
  if (bytes > 0) {
    KILN_FUZZ_CHECK(x.data != nullptr, "no data");
    const volatile uint8_t* p = static_cast<const uint8_t*>(x.data) + x.byte_offset;
    uint8_t sum = 0;
    for (uint64_t i = 0; i < bytes; ++i) sum = static_cast<uint8_t>(sum + p[i]);
    (void)sum;
  }
  kiln_npy_release(t);
  kiln_fuzz::Count("read");
  return 0;
}
