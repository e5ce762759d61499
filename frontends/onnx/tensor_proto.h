// File: frontends/onnx/tensor_proto.h (internal to the importer)
//
// onnx.TensorProto -> HostTensor: raw_data (little-endian), the typed fields
// (float_data, int32_data, int64_data, double_data, uint64_data), or external
// data (a side file named by `location`, read at `offset` for `length` bytes).
// Every count, size and path is checked against the tensor's dims and the
// file, so a corrupt tensor is an InvalidArgument, never a crash.
//
//   TensorReadOptions o; o.base_dir = "/models/resnet";
//   KILN_ASSIGN_OR_RETURN(Ref<const HostTensor> w, TensorFromProto(proto, o));
#ifndef KILN_FRONTENDS_ONNX_TENSOR_PROTO_H_
#define KILN_FRONTENDS_ONNX_TENSOR_PROTO_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/tensor.h"

namespace onnx {
class TensorProto;
}  // namespace onnx

namespace kiln::onnx_frontend::internal {

struct TensorReadOptions {
  // The folder external-data locations are relative to.
  std::string base_dir = ".";
  // The folder of the model file's real path, when that differs from
  // base_dir's (the model is a symbolic link: a Bazel runfiles tree, a Nix
  // profile): a location that resolves inside it is accepted too. Empty: none.
  std::string model_real_dir;
  // False: external data is an error (a lone tensor file has no model folder).
  bool allow_external = true;
  // Where warnings go (a tensor with both raw_data and a typed field); null
  // drops them.
  std::vector<std::string>* warnings = nullptr;
};

// Messages name the tensor ("tensor 'conv1.weight'"); callers add where it
// came from (an initializer, a node attribute).
absl::StatusOr<Ref<const HostTensor>> TensorFromProto(const onnx::TensorProto& proto,
                                                      const TensorReadOptions& options);

// The ONNX data type's name ("FLOAT", "STRING", or the number when unknown).
std::string OnnxDataTypeName(int32_t onnx_type);

}  // namespace kiln::onnx_frontend::internal

#endif  // KILN_FRONTENDS_ONNX_TENSOR_PROTO_H_
