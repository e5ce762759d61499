// File: tests/onnx/conformance_export.h
//
// run_conformance --export_dir=DIR: each case that passes is written out as
// compiled artifacts plus its data sets as .npy files, so that a machine
// without kiln's compiler (the lent GPU machine: no Bazel, no LLVM) can run
// the same sessions through the runtime alone and judge them the same way
// (tests/cuda/conformance_replay.h, `device_run conformance`).
//
// A case is staged in DIR/.<suite>__<case>.partial and renamed to
// DIR/<suite>__<case> by Commit (a case that fails is dropped by Abort, so
// DIR holds only what passed where it was exported). Its files:
//
//   model_<n>.so             the artifacts the case compiled (one per set of
//                            bound shapes); model_<n>.host.so beside one when
//                            the host build of its CUDA C was asked for (the
//                            fake driver's kernels: tests only)
//   set_<k>.txt              data set k, one directive a line:
//       kiln-conformance-set 1
//       model model_0.so [model_0.host.so]
//       tolerance RTOL ATOL
//       input NAME tensor FILE | input NAME sequence COUNT FILE... | input NAME none
//       output INDEX tensor FILE | output INDEX sequence COUNT FILE... | output INDEX none
//   set_<k>_{in,out}_<i>[_<e>].npy   the values (kiln/npy.h: bfloat16 as
//                            '<u2' bit patterns, read back by the output's
//                            or the artifact input's dtype)
//
// NAME is the graph input's name with every byte outside [A-Za-z0-9_.:/-]
// written %XX (two hex digits). Inputs are set by name, outputs read by
// index; an optional output's "none" or value is checked first.
#ifndef KILN_TESTS_ONNX_CONFORMANCE_EXPORT_H_
#define KILN_TESTS_ONNX_CONFORMANCE_EXPORT_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/tensor.h"
#include "tests/onnx/conformance_lib.h"

namespace kiln::onnx_conformance {

// An input or expected output of a data set.
struct ExportValue {
  enum class Kind { kTensor, kSequence, kNone };
  Kind kind = Kind::kNone;
  std::vector<Ref<const HostTensor>> tensors;  // one for kTensor; the elements of kSequence

  static ExportValue Tensor(Ref<const HostTensor> t) {
    ExportValue v;
    v.kind = Kind::kTensor;
    v.tensors.push_back(std::move(t));
    return v;
  }
  static ExportValue Sequence(std::vector<Ref<const HostTensor>> elems) {
    ExportValue v;
    v.kind = Kind::kSequence;
    v.tensors = std::move(elems);
    return v;
  }
  static ExportValue None() { return ExportValue{}; }
};

// "a%20b" for "a b".
std::string EncodeExportName(absl::string_view name);

class CaseExport {
 public:
  // Starts case `name` ("node__test_relu") under `root` (created if need be);
  // a stale staging folder of the same name is removed.
  static absl::StatusOr<CaseExport> Begin(const std::string& root, const std::string& name);

  CaseExport(CaseExport&&) = default;
  CaseExport& operator=(CaseExport&&) = default;

  // Copies the artifact at `artifact_path` (and `host_kernels`, when not
  // empty) in once; returns the manifest's "model ..." operands.
  absl::StatusOr<std::string> Model(const std::string& artifact_path, const std::string& host_kernels);

  // Writes data set `index`: `model` from Model(), the inputs by name, the
  // expected outputs in order.
  absl::Status Set(int index, const std::string& model,
                   const std::vector<std::pair<std::string, ExportValue>>& inputs,
                   const std::vector<ExportValue>& outputs, const Tolerance& tolerance);

  // Moves the staged case into place (replacing an earlier export of it).
  absl::Status Commit();
  // Removes the staged case.
  void Abort();

 private:
  CaseExport(std::string staging, std::string final_dir)
      : staging_(std::move(staging)), final_(std::move(final_dir)) {}
  absl::StatusOr<std::string> WriteValue(const std::string& stem, const ExportValue& v);

  std::string staging_;
  std::string final_;
  std::map<std::string, std::string> models_;  // artifact path -> manifest operands
};

}  // namespace kiln::onnx_conformance

#endif  // KILN_TESTS_ONNX_CONFORMANCE_EXPORT_H_
