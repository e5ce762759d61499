// File: c_api/kiln_api_test_util.h — what kiln_api_test.cc and
// kiln_api_run_test.cc share (test-only): a status taken as code + message,
// the EXPECT_KILN_* / ASSERT_KILN_* macros, the test's temporary folder, a
// garbage pointer for out-parameters, and the add/relu model they all parse.
#ifndef KILN_C_API_KILN_API_TEST_UTIL_H_
#define KILN_C_API_KILN_API_TEST_UTIL_H_

#include <cstdint>
#include <cstdlib>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kiln/kiln.h"

namespace kiln_api_test {

// A status: its code and message; frees it.
struct Result {
  KilnStatusCode code;
  std::string message;
};

inline Result Take(KilnStatus* st) {
  Result r{kiln_status_code(st), kiln_status_message(st)};
  kiln_status_free(st);
  return r;
}

#define EXPECT_KILN_OK(call)                                      \
  do {                                                            \
    ::kiln_api_test::Result r_ = ::kiln_api_test::Take(call);     \
    EXPECT_EQ(r_.code, KILN_OK) << r_.message;                    \
  } while (0)
#define ASSERT_KILN_OK(call)                                      \
  do {                                                            \
    ::kiln_api_test::Result r_ = ::kiln_api_test::Take(call);     \
    ASSERT_EQ(r_.code, KILN_OK) << r_.message;                    \
  } while (0)
// The call fails with `code` and a message containing `text`.
#define EXPECT_KILN_ERROR(call, want_code, text)                  \
  do {                                                            \
    ::kiln_api_test::Result r_ = ::kiln_api_test::Take(call);     \
    EXPECT_EQ(r_.code, want_code) << r_.message;                  \
    EXPECT_THAT(r_.message, ::testing::HasSubstr(text));          \
  } while (0)

inline std::string TmpDir() {
  const char* t = std::getenv("TEST_TMPDIR");
  return t != nullptr ? t : "/tmp";
}

// Not a valid pointer; out-parameters must be overwritten with NULL.
template <typename T>
T* Garbage() {
  return reinterpret_cast<T*>(static_cast<uintptr_t>(0x1));
}

inline constexpr const char kAddRelu[] = R"(#[version = "0.1"]
def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) {
  %0 = add(%x, %y);
  %1 = nn.relu(%0);
  (multiply(%1, %1), subtract(%0, %y))
}
)";

inline KilnModel* Parse(const char* text) {
  KilnModel* m = nullptr;
  Result r = Take(kiln_model_parse_text(text, "test.kir", &m));
  EXPECT_EQ(r.code, KILN_OK) << r.message;
  return m;
}

}  // namespace kiln_api_test

#endif  // KILN_C_API_KILN_API_TEST_UTIL_H_
