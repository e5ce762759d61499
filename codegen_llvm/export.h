// File: codegen_llvm/export.h
//
// Writes a compiled model as one shared library (docs/artifact.md): the
// kernels as machine code plus the artifact blob (META, GRAPH, PARAMS) as the
// exported symbol `kiln_artifact`, linked by the system toolchain and sealed
// with the whole-file checksum. runtime_c's kiln_artifact_load reads it.
//
//   KILN_ASSIGN_OR_RETURN(GraphPlan plan, lowering::PlanGraph(fused, lm));
//   KILN_RETURN_IF_ERROR(ExportLibrary(kernels, target, plan, "model.so", {}));
//
// Steps: object code for the kernels (EmitObject, on parallel threads for
// large modules), the blob (kiln/artifact_writer.h), a .S that .incbin's the
// blob, `cc -c` and `cc -shared`, then kiln_artifact_seal_file. The
// temporaries live in a fresh directory under $TMPDIR (or /tmp), removed
// afterwards unless keep_temps. Host-linkable targets only: a cross target
// needs `cc` set to a cross compiler driver.
#ifndef KILN_CODEGEN_LLVM_EXPORT_H_
#define KILN_CODEGEN_LLVM_EXPORT_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "codegen_llvm/codegen_llvm.h"
#include "ir/tir.h"
#include "lowering/graph_plan.h"

namespace kiln::codegen {

struct ExportOptions {
  std::string cc = "cc";       // compiler driver used to assemble and link
  std::string model_name;      // META "model" (default: the output file's stem)
  bool keep_temps = false;
  int num_threads = 0;         // object code shards; 0 = hardware concurrency (max 8)
  // Link with lld (`-fuse-ld=lld`) when `cc` is the host's "cc" and ld.lld is
  // on PATH: it links a ResNet-50 artifact (100 MB of weights) in half of
  // GNU ld's time.
  bool prefer_lld = true;
  // Progress, or empty: ("codegen", 0, kernels) when code generation starts,
  // ("codegen", k, kernels) after the k-th kernel's machine code (from the
  // code-generation threads, serialized: never two calls at once), then
  // ("link", 0, 0) on the calling thread.
  std::function<void(const char* phase, int done, int total)> progress;
  // A GPU artifact (format version 3; c_api/compiler.cc for "cuda ..."
  // targets): the DEVICE_CODE section (codegen_cuda/device_code.h) and the
  // META "target" it was compiled for. The kernels are then in the device
  // code and `kernels` is empty; the library holds only the blob.
  std::string device_code;
  std::string device_target;
};

// Timing of the export steps (for `kiln compile --timing`).
struct ExportStats {
  double codegen_ms = 0;  // LLVM: IR, optimization, object code
  double link_ms = 0;     // blob, assemble, link, seal
  uint64_t file_bytes = 0;
};

absl::Status ExportLibrary(const std::vector<tir::PrimFunc>& kernels, const Target& target,
                           const lowering::GraphPlan& plan, const std::string& path,
                           const ExportOptions& options = {}, ExportStats* stats = nullptr);

}  // namespace kiln::codegen

#endif  // KILN_CODEGEN_LLVM_EXPORT_H_
