// File: frontends/onnx/importer.h
//
// ONNX -> kiln graph IR (DESIGN.md §2). Reads a ModelProto (a file, or bytes)
// with Debian's ONNX protobuf library and builds a Module whose `main` takes
// the graph inputs that are not initializers (plus the initializers that are
// also listed as graph inputs, which stay overridable) and returns the graph
// outputs (one output: a tensor; several: a tuple).
//
//   ImportOptions o;
//   o.input_shapes["input"] = {1, 3, 224, 224};       // bind symbolic dims
//   KILN_ASSIGN_OR_RETURN(Module m, ImportOnnxFile("resnet50.onnx", o));
//
// - Initializers become Constants; external-data tensors (weights in side
//   files, `location`/`offset`/`length`) are read relative to the model's
//   directory (or options.external_data_dir), bounds-checked, and must really
//   lie inside it (symbolic links resolved).
// - Model and tensor files are read only when they are regular files (a
//   FIFO or a device is refused before anything is read).
// - Dynamic dims (`dim_param` "N", or no value) become symbolic dims
//   (Dim::Var(name), or a fresh name), unless options.input_shapes binds them.
// - Opset versions are honoured: each node's converter is chosen by the
//   model's opset for the node's domain (the newest converter whose
//   since_version <= that opset); attributes that became inputs in later
//   opsets (Reshape shape, Slice starts/ends, Pad pads, Clip min/max, Squeeze
//   axes, ReduceSum axes, ...) are read from wherever that opset puts them.
// - Every unsupported operator is listed in one Unimplemented error (op type,
//   domain, opset, node name), not one at a time.
// - A malformed model (protobuf that does not parse, a dangling edge, a value
//   defined twice, a cycle, a wrong attribute type, a tensor whose data does
//   not match its dims) gives an InvalidArgument status naming the node. So
//   does a header that is corrupt or ambiguous: ir_version 0, an opset
//   version above kMaxOpsetVersion, a domain imported twice at different
//   versions, a declared output dtype the graph does not compute (ONNX
//   Runtime refuses that too); messages nested deeper than protobuf's limit
//   (subgraphs inside subgraphs) are named as such, not as a corrupt file.
// - Warnings (options.warnings), for what ONNX Runtime accepts with a
//   warning or ignores: a declared output shape that differs from the
//   inferred one (the inferred shape is used), an ai.onnx opset newer than
//   kNewestKnownOpset (the newest converters are used), a tensor with both
//   raw_data and a typed field (raw_data is used), and a domain imported
//   twice at the same version (redundant).
// Nothing here aborts, whatever the bytes.
#ifndef KILN_FRONTENDS_ONNX_IMPORTER_H_
#define KILN_FRONTENDS_ONNX_IMPORTER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/module.h"
#include "ir/tensor.h"

namespace kiln::onnx_frontend {

struct ImportOptions {
  // Static shapes for graph inputs, by name: every dim is bound (the rank
  // must match the model's).
  std::map<std::string, std::vector<int64_t>> input_shapes;
  // Graph inputs to freeze: the input becomes a Constant with this value (its
  // dtype and shape must match the model's). Tools use this for inputs that
  // feed shapes (a Reshape's `shape`), which the graph executor needs static.
  std::map<std::string, Ref<const HostTensor>> frozen_inputs;
  // Where external-data files live; "" = the model file's directory (for
  // ImportOnnxBytes: the current directory).
  std::string external_data_dir;
  // Initializers that are also graph inputs: false (default, as ONNX Runtime)
  // keeps them as `main` parameters (overridable); true makes them Constants.
  bool freeze_overridable_initializers = false;
  // Run InferType on the result (the converters need types as they go, so
  // the graph is always typed; this only controls the final check).
  bool type_check = true;
  // Where warnings are appended (one sentence each, see above); null drops
  // them.
  std::vector<std::string>* warnings = nullptr;
};

// The newest ai.onnx opset kiln's converters are written against. A newer
// one imports with a warning; a version over kMaxOpsetVersion is an error.
inline constexpr int64_t kNewestKnownOpset = 18;
inline constexpr int64_t kMaxOpsetVersion = 1000;

absl::StatusOr<Module> ImportOnnxFile(const std::string& path, const ImportOptions& options = {});
absl::StatusOr<Module> ImportOnnxBytes(absl::string_view bytes, const ImportOptions& options = {});

// Error payload: when a converter needs an input's *value* at import time (a
// Reshape's shape, a Slice's starts, ...) and that input is a graph input,
// the status is InvalidArgument with payload kNeedsConstantPayload whose value
// is the comma-separated list of those graph input names. A caller that knows
// the values (the conformance runner knows the test data) may retry with
// ImportOptions::frozen_inputs.
inline constexpr char kNeedsConstantPayload[] = "kiln.onnx.needs_constant";

// A serialized onnx.TensorProto file (the backend test data's input_0.pb) as a
// host tensor. Strings, complex and external data give errors.
absl::StatusOr<Ref<const HostTensor>> ReadTensorProtoFile(const std::string& path);
// A serialized onnx.SequenceProto file of tensors (the test data of a
// sequence input or output) as its tensors, in order.
absl::StatusOr<std::vector<Ref<const HostTensor>>> ReadSequenceProtoFile(const std::string& path);
// A serialized onnx.OptionalProto file (the test data of an optional input
// or output): none, a tensor, or a sequence of tensors.
struct OptionalFileValue {
  bool has_value = false;
  bool is_sequence = false;
  Ref<const HostTensor> tensor;                 // when a tensor
  std::vector<Ref<const HostTensor>> sequence;  // when a sequence
};
absl::StatusOr<OptionalFileValue> ReadOptionalProtoFile(const std::string& path);

// Names of ONNX op types (default domain) that have a converter, sorted.
std::vector<std::string> SupportedOps();

}  // namespace kiln::onnx_frontend

#endif  // KILN_FRONTENDS_ONNX_IMPORTER_H_
