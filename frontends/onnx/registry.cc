// The converter registry (converter.h): converters by (domain, op type),
// each list sorted by since_version; ONNX data types -> kiln data types.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "frontends/onnx/converter.h"
#include "onnx/onnx_pb.h"

namespace kiln::onnx_frontend {
namespace {

// "ai.onnx" is another spelling of the default domain "".
absl::string_view NormalizeDomain(absl::string_view domain) {
  return domain == "ai.onnx" ? absl::string_view() : domain;
}

std::string Key(absl::string_view domain, absl::string_view op_type) {
  return absl::StrCat(NormalizeDomain(domain), "::", op_type);
}

}  // namespace

absl::StatusOr<std::vector<Expr>> ConvertContext::ImportSubgraph(
    const onnx::GraphProto& /*graph*/, const std::vector<Expr>& /*inputs*/,
    std::vector<Capture>* /*captures*/) {
  return Unsupported("subgraphs (If, Loop, Scan bodies) cannot be imported in this context");
}

absl::StatusOr<SequenceAdt> ConvertContext::Sequence(DataType /*dtype*/, int64_t /*rank*/) {
  return Unsupported("sequences cannot be built in this context");
}

std::optional<SequenceAdt> ConvertContext::AsSequence(const Type& /*t*/) { return std::nullopt; }

absl::StatusOr<OptionalAdt> ConvertContext::OptionalOf(DataType /*dtype*/, int64_t /*rank*/,
                                                       bool /*of_sequence*/) {
  return Unsupported("optionals cannot be built in this context");
}

std::optional<OptionalAdt> ConvertContext::AsOptional(const Type& /*t*/) { return std::nullopt; }

ConverterRegistry& ConverterRegistry::Global() {
  static ConverterRegistry* const registry = new ConverterRegistry();
  return *registry;
}

// Registration happens before imports read the registry (RegisterAllConverters
// runs under std::call_once first thing in every import), so Find needs no lock.
void ConverterRegistry::Add(absl::string_view op_type, int since_version, Converter fn,
                            absl::string_view domain) {
  std::vector<Entry>& entries = table_[Key(domain, op_type)];
  auto it = std::lower_bound(entries.begin(), entries.end(), since_version,
                             [](const Entry& e, int version) { return e.since_version < version; });
  if (it != entries.end() && it->since_version == since_version) {
    it->fn = std::move(fn);  // a second registration for the same version replaces the first
    return;
  }
  entries.insert(it, Entry{since_version, std::move(fn)});
}

const Converter* ConverterRegistry::Find(absl::string_view domain, absl::string_view op_type,
                                         int64_t opset) const {
  auto it = table_.find(Key(domain, op_type));
  if (it == table_.end()) return nullptr;
  const std::vector<Entry>& entries = it->second;
  for (auto e = entries.rbegin(); e != entries.rend(); ++e) {
    if (e->since_version <= opset) return &e->fn;
  }
  return nullptr;
}

std::vector<std::string> ConverterRegistry::OpTypes(absl::string_view domain) const {
  const std::string prefix = absl::StrCat(NormalizeDomain(domain), "::");
  std::vector<std::string> out;
  for (const auto& [key, entries] : table_) {
    if (entries.empty() || key.compare(0, prefix.size(), prefix) != 0) continue;
    out.push_back(key.substr(prefix.size()));
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> ConverterRegistry::Keys() const {
  std::vector<std::string> out;
  for (const auto& [key, entries] : table_)
    if (!entries.empty()) out.push_back(key);
  return out;  // std::map: sorted
}

void ConverterRegistry::AddAbsentFamily(absl::string_view family,
                                        const std::vector<std::string>& keys) {
  for (const std::string& k : keys) absent_.emplace(k, std::string(family));
}

std::string ConverterRegistry::AbsentFamily(absl::string_view domain,
                                            absl::string_view op_type) const {
  const std::string key = Key(domain, op_type);
  if (table_.count(key) != 0) return "";
  auto it = absent_.find(key);
  return it == absent_.end() ? "" : it->second;
}

absl::StatusOr<DataType> FromOnnxDataType(int32_t onnx_type) {
  using onnx::TensorProto;
  switch (onnx_type) {
    case TensorProto::FLOAT:
      return DataType::Float(32);
    case TensorProto::DOUBLE:
      return DataType::Float(64);
    case TensorProto::FLOAT16:
      return DataType::Float(16);
    case TensorProto::BFLOAT16:
      return DataType::BFloat16();
    case TensorProto::INT8:
      return DataType::Int(8);
    case TensorProto::INT16:
      return DataType::Int(16);
    case TensorProto::INT32:
      return DataType::Int(32);
    case TensorProto::INT64:
      return DataType::Int(64);
    case TensorProto::UINT8:
      return DataType::UInt(8);
    case TensorProto::UINT16:
      return DataType::UInt(16);
    case TensorProto::UINT32:
      return DataType::UInt(32);
    case TensorProto::UINT64:
      return DataType::UInt(64);
    case TensorProto::BOOL:
      return DataType::Bool();
    case TensorProto::STRING:
      return absl::InvalidArgumentError(
          "ONNX data type STRING is not supported: kiln tensors hold numbers only");
    case TensorProto::COMPLEX64:
    case TensorProto::COMPLEX128:
      return absl::InvalidArgumentError(
          absl::StrCat("ONNX data type ",
                       TensorProto::DataType_Name(static_cast<TensorProto::DataType>(onnx_type)),
                       " is not supported: kiln has no complex numbers"));
    case TensorProto::UNDEFINED:
      return absl::InvalidArgumentError(
          "ONNX data type is UNDEFINED (0): the tensor has no elem_type");
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("unknown ONNX data type ", onnx_type,
                       " (this importer knows ONNX 1.12's types, 1 to 16)"));
  }
}

}  // namespace kiln::onnx_frontend
