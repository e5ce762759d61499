// Tests of ExportLibrary's output path checks (issue 15): an output that
// exists and is not a regular file (a directory, a FIFO, a device) is
// refused before any code is generated, with a message that says why (it
// used to be "cannot write /tmp: Success", after the whole compile).
#include "codegen_llvm/export.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "codegen_llvm/codegen_llvm.h"
#include "gtest/gtest.h"
#include "ir/tir.h"
#include "lowering/graph_plan.h"

namespace kiln::codegen {
namespace {

std::string TempDir() {
  const char* t = std::getenv("TEST_TMPDIR");
  return t != nullptr ? t : "/tmp";
}

// The status of exporting an empty plan to `path`, and the progress phases
// reported on the way.
absl::Status ExportTo(const std::string& path, std::vector<std::string>* phases) {
  absl::StatusOr<Target> target = ParseTarget("llvm");
  if (!target.ok()) return target.status();
  ExportOptions o;
  o.progress = [phases](const char* phase, int, int) { phases->push_back(phase); };
  return ExportLibrary({}, *target, lowering::GraphPlan{}, path, o);
}

TEST(ExportTest, OutputsThatAreNotRegularFilesAreRefusedBeforeCodegen) {
  const std::string dir = TempDir() + "/export_test_dir.so";
  const std::string fifo = TempDir() + "/export_test_fifo.so";
  ::rmdir(dir.c_str());
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::pair<std::string, std::string> cases[] = {
      {dir, "(a directory)"}, {fifo, "(a FIFO)"}, {"/dev/null", "(a device or socket)"}};
  for (const auto& [path, kind] : cases) {
    std::vector<std::string> phases;
    absl::Status s = ExportTo(path, &phases);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << path << ": " << s;
    EXPECT_TRUE(absl::StrContains(
        s.message(), absl::StrCat("cannot write ", path, ": it exists and is not a regular file ",
                                  kind)))
        << s;
    EXPECT_FALSE(absl::StrContains(s.message(), "Success")) << s;
    // Refused before code generation started (it used to come after the
    // kernels' machine code, at the link).
    EXPECT_TRUE(phases.empty()) << path << ": progress reached '" << phases.front() << "'";
  }
  struct stat st;
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));  // left as it was
  ::rmdir(dir.c_str());
  ::unlink(fifo.c_str());
}

}  // namespace
}  // namespace kiln::codegen
