// File: tests/onnx/conformance_case.h
//
// One conformance case, run in its own process (run_conformance forks it):
// read the model, import it (binding symbolic dims; with --freeze_inputs,
// or for the separate frozen column, freezing inputs the importer needs as values), compile it, load it with the C runtime, run every
// data set and compare with ONNX's expected outputs, then write one result
// line (conformance_lib.h EncodeResult) to a pipe and exit. The parent side
// (scheduling, timeouts, the table, the ratchet) is conformance.cc.
#ifndef KILN_TESTS_ONNX_CONFORMANCE_CASE_H_
#define KILN_TESTS_ONNX_CONFORMANCE_CASE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tests/onnx/conformance_lib.h"

namespace kiln::onnx_conformance {

// run_conformance's flags (conformance.cc parses them).

struct Options {
  std::string data_dir;
  std::vector<std::string> suites;
  std::string filter;
  int jobs = 2;
  int timeout_s = 60;
  int64_t memory_limit_mb = 8192;  // RLIMIT_AS of a case's process; 0 = none
  std::string tolerances;
  std::string table;
  std::string counts;
  std::string ratchet;
  std::string temp_dir;  // "" = $TEST_TMPDIR, $TMPDIR or /tmp
  int opt_level = 3;
  std::string target = "llvm";
  // The sessions' device: "cpu" or "cuda:N" (a target "cuda ..." then).
  std::string device = "cpu";
  // With device cuda:N and KILN_CUDA_DRIVER naming tests/cuda's fake driver:
  // each artifact's CUDA C built for the host (tests/cuda/emulate.h), which
  // the fake driver runs for its launches. The cases then run through the
  // CUDA path without a GPU.
  bool emulate_cuda = false;
  // Where each case that passes is written out (conformance_export.h) for
  // `device_run conformance` on a machine with only the runtime; "" = none.
  std::string export_dir;
  // With export_dir and emulate_cuda: the host build of each artifact's
  // kernels goes with it (so the fake driver can replay the export here).
  bool export_host_kernels = false;
  bool quiet = false;
  bool keep_temps = false;
  bool bind_shapes = true;
  // Whether a case whose import needs the value of a graph input (a Reshape's
  // shape given as an input, ...) may have that input frozen to the data set's
  // value. Off by default: no user can do that through the CLI or the C API,
  // so such a case does not pass; it is then run again with freezing to fill
  // the separate "passes with frozen inputs" column (CaseResult::passes_frozen).
  bool freeze_inputs = false;
  std::string argv0;
};


struct Case {
  std::string suite;
  std::string name;
  std::string dir;
};

bool FileExists(const std::string& path);
absl::StatusOr<std::string> ReadFile(const std::string& path);
absl::Status WriteFile(const std::string& path, absl::string_view content);

// The child process: runs case `c` with the files under `temp_dir`, writes
// "@phase NAME" lines and finally the result line to `fd`, and exits.
[[noreturn]] void ChildMain(const Case& c, const Options& options, const Tolerance& tolerance,
                            const std::string& temp_dir, int fd);

}  // namespace kiln::onnx_conformance

#endif  // KILN_TESTS_ONNX_CONFORMANCE_CASE_H_
