// File: tests/fuzz/fuzz_check.h
//
// KILN_FUZZ_CHECK(cond, ...): a property a fuzz target asserts about the code
// under test (a round trip, a documented contract). On failure it prints the
// condition, file:line and a printf-style message, then aborts: the driver
// (tests/fuzz/fuzz_driver.cc) or libFuzzer saves the input as a finding.
#ifndef KILN_TESTS_FUZZ_FUZZ_CHECK_H_
#define KILN_TESTS_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>

#define KILN_FUZZ_CHECK(cond, ...)                                                  \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      std::fprintf(stderr, "\n==kiln-fuzz== check failed at %s:%d: %s\n  ", __FILE__, \
                   __LINE__, #cond);                                                \
      std::fprintf(stderr, "" __VA_ARGS__);                                         \
      std::fprintf(stderr, "\n");                                                   \
      std::abort();                                                                 \
    }                                                                               \
  } while (0)

#endif  // KILN_TESTS_FUZZ_FUZZ_CHECK_H_
