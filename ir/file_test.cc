// ReadRegularFile and ParseModuleFile on what a user may name instead of a
// file (issue 15): a FIFO must not block, /dev/zero must not be read without
// end, a directory or a file over the limit is refused with a message that
// says what it is.
#include "ir/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/text_file.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;

std::string TempDir() {
  const char* d = std::getenv("TEST_TMPDIR");
  return d != nullptr ? d : "/tmp";
}

void WriteFile(const std::string& path, const std::string& bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr) << path;
  ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
  std::fclose(f);
}

// A fresh FIFO with no writer.
std::string MakeFifo(const std::string& name) {
  const std::string path = TempDir() + "/" + name;
  ::unlink(path.c_str());
  EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0) << path;
  return path;
}

// Runs `read` on another thread. If it is still running after 20 s it is
// blocked opening `fifo`: the test fails, and a writer opened and closed
// releases it so that the test can end.
template <typename F>
auto Unblocked(const std::string& fifo, F read) {
  auto result = std::async(std::launch::async, read);
  if (result.wait_for(std::chrono::seconds(20)) == std::future_status::timeout) {
    ADD_FAILURE() << "reading " << fifo << " blocked (waiting for a writer)";
    const int w = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (w >= 0) ::close(w);
  }
  return result.get();
}

TEST(ReadRegularFileTest, ReadsARegularFile) {
  const std::string path = TempDir() + "/plain.txt";
  WriteFile(path, "hello\n");
  absl::StatusOr<std::string> got = ReadRegularFile(path, "test file", 100);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, "hello\n");
}

TEST(ReadRegularFileTest, MissingFileIsNotFound) {
  absl::Status s = ReadRegularFile(TempDir() + "/no/such.txt", "test file", 100).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("no/such.txt"));
}

TEST(ReadRegularFileTest, FifoIsRefusedWithoutBlocking) {
  const std::string fifo = MakeFifo("model_fifo");
  absl::Status s =
      Unblocked(fifo, [&] { return ReadRegularFile(fifo, "test file", 100).status(); });
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("is not a regular file (a FIFO)"));
}

TEST(ReadRegularFileTest, DevicesAndDirectoriesAreRefused) {
  absl::Status zero = ReadRegularFile("/dev/zero", "test file", 100).status();
  EXPECT_EQ(zero.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(zero.message(), HasSubstr("'/dev/zero' is not a regular file (a character device)"));
  absl::Status dir = ReadRegularFile(TempDir(), "test file", 100).status();
  EXPECT_THAT(dir.message(), HasSubstr("is not a regular file (a directory)"));
}

TEST(ReadRegularFileTest, OverTheLimitIsRefused) {
  const std::string path = TempDir() + "/big.txt";
  WriteFile(path, std::string(101, 'x'));
  absl::Status s = ReadRegularFile(path, "test file", 100, "split it").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("is 101 bytes; the limit is 100 bytes (split it)"));
}

TEST(ReadRegularFileTest, SymlinkToARegularFileIsFollowed) {
  const std::string path = TempDir() + "/target.txt", link = TempDir() + "/link.txt";
  WriteFile(path, "x");
  ::unlink(link.c_str());
  ASSERT_EQ(::symlink(path.c_str(), link.c_str()), 0);
  absl::StatusOr<std::string> got = ReadRegularFile(link, "test file", 100);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, "x");
}

TEST(ParseModuleFileTest, ParsesAFile) {
  const std::string path = TempDir() + "/m.kir";
  WriteFile(path,
            "#[version = \"0.1\"]\ndef @main(%x: Tensor[(2,), float32]) {\n  add(%x, %x)\n}\n");
  absl::StatusOr<Module> m = ParseModuleFile(path);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_TRUE(m->Lookup("main").ok());
}

TEST(ParseModuleFileTest, FifoDeviceAndBinaryAreRefused) {
  const std::string fifo = MakeFifo("model_fifo.kir");
  absl::Status s = Unblocked(fifo, [&] { return ParseModuleFile(fifo).status(); });
  EXPECT_THAT(s.message(), HasSubstr("text-IR file '" + fifo + "' is not a regular file (a FIFO)"));
  EXPECT_THAT(ParseModuleFile("/dev/zero").status().message(),
              HasSubstr("is not a regular file (a character device)"));
  const std::string bin = TempDir() + "/binary.kir";
  WriteFile(bin, std::string("ab\0cd", 5));
  EXPECT_THAT(ParseModuleFile(bin).status().message(), HasSubstr("is not a text-IR file"));
  EXPECT_EQ(ParseModuleFile(TempDir() + "/missing.kir").status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace kiln
