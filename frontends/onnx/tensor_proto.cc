// onnx.TensorProto -> HostTensor (tensor_proto.h).
#include "frontends/onnx/tensor_proto.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "frontends/onnx/converter.h"
#include "ir/status_macros.h"
#include "onnx/onnx_pb.h"

namespace kiln::onnx_frontend::internal {
namespace {

static_assert(std::endian::native == std::endian::little,
              "ONNX raw_data is little-endian; a big-endian host needs byte swapping here");

using onnx::TensorProto;

// Tensors beyond this many bytes are refused before anything is allocated
// (a corrupt dims field must not ask for exabytes).
constexpr int64_t kMaxTensorBytes = int64_t{1} << 40;

std::string TensorName(const TensorProto& t) {
  return t.name().empty() ? std::string("tensor (unnamed)")
                          : absl::StrCat("tensor '", t.name(), "'");
}

std::string DimsText(const TensorProto& t) {
  return absl::StrCat("[", absl::StrJoin(t.dims(), ", "), "]");
}

// Validates the dims; returns the element count.
absl::StatusOr<int64_t> ElementCount(const TensorProto& t, DataType dtype) {
  int64_t n = 1;
  for (int64_t d : t.dims()) {
    if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(TensorName(t), " has a negative dim in ", DimsText(t)));
    }
    int64_t next = 0;
    if (__builtin_mul_overflow(n, d, &next) || next > kMaxTensorBytes / dtype.bytes()) {
      return absl::InvalidArgumentError(
          absl::StrCat(TensorName(t), " dims ", DimsText(t), " are too large (over 1 TiB)"));
    }
    n = next;
  }
  return n;
}

// Copies `values` into a fresh tensor, converting each element with `store`.
template <typename Src, typename Fields, typename Store>
absl::StatusOr<Ref<const HostTensor>> FromField(DataType dtype, std::vector<int64_t> shape,
                                                const Fields& values, Store store) {
  KILN_ASSIGN_OR_RETURN(Ref<HostTensor> out,
                        HostTensor::CreateUninitialized(dtype, std::move(shape)));
  char* dst = static_cast<char*>(out->mutable_raw_data());
  const int64_t bytes = dtype.bytes();
  for (int i = 0; i < values.size(); ++i) {
    store(static_cast<Src>(values.Get(i)), dst + static_cast<int64_t>(i) * bytes);
  }
  return Ref<const HostTensor>(out);
}

template <typename T>
void StoreAs(int64_t v, char* dst) {
  const T x = static_cast<T>(v);
  std::memcpy(dst, &x, sizeof(T));
}

absl::StatusOr<Ref<const HostTensor>> FromTypedFields(const TensorProto& t, DataType dtype,
                                                      std::vector<int64_t> shape, int64_t n) {
  // Which field holds this data type, and how many values it has.
  int count = 0;
  const char* field = "";
  switch (t.data_type()) {
    case TensorProto::FLOAT:
      count = t.float_data_size();
      field = "float_data";
      break;
    case TensorProto::DOUBLE:
      count = t.double_data_size();
      field = "double_data";
      break;
    case TensorProto::INT64:
      count = t.int64_data_size();
      field = "int64_data";
      break;
    case TensorProto::UINT32:
    case TensorProto::UINT64:
      count = t.uint64_data_size();
      field = "uint64_data";
      break;
    default:
      count = t.int32_data_size();
      field = "int32_data";
      break;
  }
  if (count != n) {
    if (count == 0 && n > 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          TensorName(t), " (", OnnxDataTypeName(t.data_type()), ", dims ", DimsText(t), ") needs ",
          n, " elements but has no data (neither raw_data nor ", field, ")"));
    }
    return absl::InvalidArgumentError(absl::StrCat(TensorName(t), " has ", count, " elements in ",
                                                   field, ", but its dims ", DimsText(t), " need ",
                                                   n));
  }
  switch (t.data_type()) {
    case TensorProto::FLOAT:
      return FromField<float>(dtype, std::move(shape), t.float_data(),
                              [](float v, char* d) { std::memcpy(d, &v, sizeof v); });
    case TensorProto::DOUBLE:
      return FromField<double>(dtype, std::move(shape), t.double_data(),
                               [](double v, char* d) { std::memcpy(d, &v, sizeof v); });
    case TensorProto::INT64:
      return FromField<int64_t>(dtype, std::move(shape), t.int64_data(), StoreAs<int64_t>);
    case TensorProto::UINT32:
      return FromField<uint64_t>(dtype, std::move(shape), t.uint64_data(), [](uint64_t v, char* d) {
        StoreAs<uint32_t>(static_cast<int64_t>(v), d);
      });
    case TensorProto::UINT64:
      return FromField<uint64_t>(dtype, std::move(shape), t.uint64_data(),
                                 [](uint64_t v, char* d) { std::memcpy(d, &v, sizeof v); });
    case TensorProto::BOOL:
      return FromField<int32_t>(dtype, std::move(shape), t.int32_data(),
                                [](int32_t v, char* d) { StoreAs<uint8_t>(v != 0, d); });
    case TensorProto::INT8:
      return FromField<int32_t>(dtype, std::move(shape), t.int32_data(), StoreAs<int8_t>);
    case TensorProto::UINT8:
      return FromField<int32_t>(dtype, std::move(shape), t.int32_data(), StoreAs<uint8_t>);
    case TensorProto::INT16:
      return FromField<int32_t>(dtype, std::move(shape), t.int32_data(), StoreAs<int16_t>);
    case TensorProto::UINT16:
    case TensorProto::FLOAT16:  // the 16-bit pattern, as ONNX stores it
    case TensorProto::BFLOAT16:
      return FromField<int32_t>(dtype, std::move(shape), t.int32_data(), StoreAs<uint16_t>);
    case TensorProto::INT32:
      return FromField<int32_t>(dtype, std::move(shape), t.int32_data(), StoreAs<int32_t>);
    default:
      break;
  }
  return absl::InternalError(absl::StrCat("no typed field for ", OnnxDataTypeName(t.data_type())));
}

// A relative path with no "..", so that it stays inside the model's folder.
absl::Status CheckLocation(const TensorProto& t, const std::string& location) {
  const auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat(TensorName(t), ": external data location '", location, "' ", why));
  };
  if (location.empty()) return bad("is empty");
  if (location.find('\0') != std::string::npos) return bad("contains a NUL character");
  if (location[0] == '/' || location[0] == '\\' || (location.size() > 1 && location[1] == ':')) {
    return bad("is an absolute path; it must be relative to the model's folder");
  }
  for (absl::string_view part : absl::StrSplit(location, absl::ByAnyChar("/\\"))) {
    if (part == "..") return bad("leaves the model's folder (\"..\"); it must stay inside it");
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> ParseNonNegative(const TensorProto& t, const std::string& key,
                                         const std::string& value) {
  int64_t v = 0;
  if (!absl::SimpleAtoi(value, &v) || v < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        TensorName(t), ": external data '", key, "' is '", value, "', not a non-negative integer"));
  }
  return v;
}

// Closes a file descriptor on scope exit.
struct FdCloser {
  int fd = -1;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

absl::StatusOr<Ref<const HostTensor>> FromExternal(const TensorProto& t, DataType dtype,
                                                   std::vector<int64_t> shape, int64_t n,
                                                   const TensorReadOptions& options) {
  if (!options.allow_external) {
    return absl::InvalidArgumentError(absl::StrCat(
        TensorName(t), " keeps its data in an external file, which is not allowed here"));
  }
  if (!t.raw_data().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(TensorName(t), " has both external data and raw_data"));
  }
  std::optional<std::string> location;
  int64_t offset = 0;
  std::optional<int64_t> length;
  for (const auto& kv : t.external_data()) {
    if (kv.key() == "location") {
      location = kv.value();
    } else if (kv.key() == "offset") {
      KILN_ASSIGN_OR_RETURN(offset, ParseNonNegative(t, kv.key(), kv.value()));
    } else if (kv.key() == "length") {
      KILN_ASSIGN_OR_RETURN(length, ParseNonNegative(t, kv.key(), kv.value()));
    }  // "checksum" and unknown keys are ignored
  }
  if (!location) {
    return absl::InvalidArgumentError(
        absl::StrCat(TensorName(t), " has external data without a 'location'"));
  }
  KILN_RETURN_IF_ERROR(CheckLocation(t, *location));
  const std::string path =
      absl::StrCat(options.base_dir.empty() ? "." : options.base_dir, "/", *location);
  FdCloser file;
  file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (file.fd < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        TensorName(t), ": cannot open external data file '", path, "': ", std::strerror(errno)));
  }
  struct stat st {};
  if (::fstat(file.fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat(TensorName(t), ": external data '", path, "' is not a regular file"));
  }
  const int64_t file_size = static_cast<int64_t>(st.st_size);
  const int64_t nbytes = n * dtype.bytes();
  const int64_t want = length.value_or(nbytes);
  if (offset > file_size || want > file_size - offset) {
    return absl::InvalidArgumentError(absl::StrCat(TensorName(t), ": external data offset ", offset,
                                                   " + length ", want, " is past the end of '",
                                                   path, "' (", file_size, " bytes)"));
  }
  if (want != nbytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(TensorName(t), ": external data length ", want, " does not match its dims ",
                     DimsText(t), " (", OnnxDataTypeName(t.data_type()), ": ", nbytes, " bytes)"));
  }
  KILN_ASSIGN_OR_RETURN(Ref<HostTensor> out,
                        HostTensor::CreateUninitialized(dtype, std::move(shape)));
  char* dst = static_cast<char*>(out->mutable_raw_data());
  int64_t done = 0;
  while (done < nbytes) {
    const ssize_t got = ::pread(file.fd, dst + done, static_cast<size_t>(nbytes - done),
                                static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(TensorName(t), ": reading '", path,
                       "' failed: ", got < 0 ? std::strerror(errno) : "unexpected end of file"));
    }
    done += got;
  }
  return Ref<const HostTensor>(out);
}

}  // namespace

std::string OnnxDataTypeName(int32_t onnx_type) {
  if (TensorProto::DataType_IsValid(onnx_type)) {
    return TensorProto::DataType_Name(static_cast<TensorProto::DataType>(onnx_type));
  }
  return absl::StrCat("data type ", onnx_type);
}

absl::StatusOr<Ref<const HostTensor>> TensorFromProto(const TensorProto& t,
                                                      const TensorReadOptions& options) {
  absl::StatusOr<DataType> dtype = FromOnnxDataType(t.data_type());
  if (!dtype.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(TensorName(t), ": ", dtype.status().message()));
  }
  if (t.has_segment()) {
    return absl::UnimplementedError(absl::StrCat(
        TensorName(t), " is segmented (TensorProto.segment); segmented tensors are not supported"));
  }
  KILN_ASSIGN_OR_RETURN(int64_t n, ElementCount(t, *dtype));
  std::vector<int64_t> shape(t.dims().begin(), t.dims().end());
  if (t.data_location() == TensorProto::EXTERNAL) {
    return FromExternal(t, *dtype, std::move(shape), n, options);
  }
  if (t.external_data_size() > 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(TensorName(t), " lists external_data but its data_location is not EXTERNAL"));
  }
  if (t.has_raw_data()) {
    const std::string& raw = t.raw_data();
    const int64_t nbytes = n * dtype->bytes();
    if (static_cast<int64_t>(raw.size()) != nbytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          TensorName(t), " has ", raw.size(), " bytes of raw_data, but its dims ", DimsText(t),
          " and type ", OnnxDataTypeName(t.data_type()), " need ", nbytes));
    }
    KILN_ASSIGN_OR_RETURN(Ref<HostTensor> out,
                          HostTensor::CreateUninitialized(*dtype, std::move(shape)));
    if (nbytes > 0) std::memcpy(out->mutable_raw_data(), raw.data(), raw.size());
    if (dtype->is_bool()) {  // any nonzero byte is true; kiln's bools are 0 or 1
      uint8_t* b = out->mutable_data<uint8_t>();
      for (int64_t i = 0; i < n; ++i) b[i] = b[i] != 0;
    }
    return Ref<const HostTensor>(out);
  }
  return FromTypedFields(t, *dtype, std::move(shape), n);
}

}  // namespace kiln::onnx_frontend::internal
