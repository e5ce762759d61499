// The C library used from C++ (how the compiler shares runtime_c's headers).
#include "gtest/gtest.h"
#include "third_party/smoke/c_smoke.h"

namespace {

TEST(CFromCc, Numel) {
  int64_t shape[2] = {5, 7};
  DLTensor t{};
  t.ndim = 2;
  t.shape = shape;
  EXPECT_EQ(kiln_smoke_numel(&t), 35);
  EXPECT_EQ(kiln_smoke_parse_threads(R"({"num_threads": 2})"), 2);
}

}  // namespace
