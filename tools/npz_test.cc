// File: tools/npz_test.cc — .npz archives: a round trip through the
// runtime's .npy code, and every truncation or flipped byte of an archive is
// an error, never a crash.
#include "tools/npz.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace kiln::cli {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void Spit(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
}

TEST(Npz, RoundTrip) {
  TempDir tmp;
  ASSERT_TRUE(tmp.ok());
  float values[6] = {1, 2, 3, 4, 5, 6};
  int64_t shape[2] = {2, 3};
  DLTensor t{};
  t.data = values;
  t.device = {kDLCPU, 0};
  t.ndim = 2;
  t.dtype = {kDLFloat, 32, 1};
  t.shape = shape;
  std::string npy, error;
  ASSERT_TRUE(TensorToNpy(t, tmp, &npy, &error)) << error;
  std::string path = tmp.path() + "/a.npz";
  ASSERT_TRUE(WriteNpz(path, {{"x", npy}, {"y:0", npy}}, &error)) << error;
  std::vector<NpzArray> arrays;
  ASSERT_TRUE(ReadNpz(path, &arrays, &error)) << error;
  ASSERT_EQ(arrays.size(), 2u);
  EXPECT_EQ(arrays[0].name, "x");
  EXPECT_EQ(arrays[1].name, "y:0");
  KilnNpyTensor* back = NpyToTensor(arrays[1].npy, "a.npz['y:0']", tmp, &error);
  ASSERT_NE(back, nullptr) << error;
  EXPECT_EQ(back->tensor.ndim, 2);
  EXPECT_EQ(back->tensor.shape[1], 3);
  EXPECT_EQ(static_cast<float*>(back->tensor.data)[5], 6.0f);
  kiln_npy_release(back);
  // Bytes that are no .npy: the error names the array, not the temporary file.
  EXPECT_EQ(NpyToTensor("garbage", "a.npz['x']", tmp, &error), nullptr);
  EXPECT_NE(error.find("a.npz['x']"), std::string::npos) << error;
}

TEST(Npz, DamagedArchivesAreErrors) {
  TempDir tmp;
  ASSERT_TRUE(tmp.ok());
  std::string path = tmp.path() + "/a.npz", bad = tmp.path() + "/bad.npz", error;
  ASSERT_TRUE(WriteNpz(path, {{"x", std::string(100, 'a')}, {"y", "bytes"}}, &error));
  const std::string good = Slurp(path);
  std::vector<NpzArray> arrays;
  for (size_t n = 0; n < good.size(); ++n) {
    Spit(bad, good.substr(0, n));
    EXPECT_FALSE(ReadNpz(bad, &arrays, &error)) << "truncated to " << n;
    EXPECT_NE(error.find("bad.npz"), std::string::npos) << error;
  }
  for (size_t i = 0; i < good.size(); ++i) {
    std::string flipped = good;
    flipped[i] = static_cast<char>(flipped[i] ^ 0x5a);
    Spit(bad, flipped);
    ReadNpz(bad, &arrays, &error);  // an error or other names/bytes, never a crash
  }
  EXPECT_FALSE(ReadNpz(tmp.path() + "/missing.npz", &arrays, &error));
  EXPECT_FALSE(ReadNpz(tmp.path(), &arrays, &error));
  EXPECT_NE(error.find("not a regular file"), std::string::npos) << error;
}

}  // namespace
}  // namespace kiln::cli
