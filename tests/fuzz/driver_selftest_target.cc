// File: tests/fuzz/driver_selftest_target.cc
//
// A target with planted bugs, for driver_selftest.sh: an input starting with
// "ABORT" fails a KILN_FUZZ_CHECK, "SEGV" dereferences NULL, "HANG" loops
// forever; anything else is fine.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "tests/fuzz/fuzz_check.h"

namespace {
bool StartsWith(const uint8_t* data, size_t size, const char* p) {
  return size >= strlen(p) && memcmp(data, p, strlen(p)) == 0;
}
volatile int* volatile g_null = nullptr;
volatile bool g_forever = true;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  KILN_FUZZ_CHECK(!StartsWith(data, size, "ABORT"), "planted check failure");
  if (StartsWith(data, size, "SEGV")) return *g_null;
  while (StartsWith(data, size, "HANG") && g_forever) {
  }
  return 0;
}
