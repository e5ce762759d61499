// onnx.TensorProto -> HostTensor (tensor_proto.h).
#include "frontends/onnx/tensor_proto.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
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
#include "ir/file.h"
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

// The canonical absolute path of `path` (every symbolic link, "." and ".."
// resolved), or errno.
std::optional<std::string> RealPath(const std::string& path, int* err) {
  char* real = ::realpath(path.c_str(), nullptr);
  if (real == nullptr) {
    *err = errno;
    return std::nullopt;
  }
  std::string out(real);
  std::free(real);
  return out;
}

// Whether the canonical path `real` names something strictly inside the
// canonical folder `dir`.
bool IsInside(const std::string& real, const std::string& dir) {
  if (dir == "/") return real.size() > 1 && real[0] == '/';
  return real.size() > dir.size() + 1 && real.compare(0, dir.size(), dir) == 0 &&
         real[dir.size()] == '/';
}

// Opens external data file `location` of folder `base_dir` for reading, as
// long as it really lies inside that folder: CheckLocation refused ".." and
// absolute names, and here the real path (symbolic links resolved) must still
// be inside the folder's real path, so that a link planted in a model's folder
// (weights.bin -> /etc/shadow) cannot pull an outside file into the weights.
// Only a regular file is opened (a FIFO or a device is refused first, and
// O_NONBLOCK keeps a swapped-in FIFO from blocking). `*path` is set to the
// name used in messages.
absl::Status OpenInside(const TensorProto& t, const std::string& base_dir,
                        const std::string& model_real_dir, const std::string& location, int* fd,
                        std::string* path) {
  *path = absl::StrCat(base_dir, "/", location);
  int err = 0;
  std::optional<std::string> real_dir = RealPath(base_dir, &err);
  if (!real_dir) {
    return absl::InvalidArgumentError(absl::StrCat(TensorName(t), ": the external data folder '",
                                                   base_dir, "' cannot be resolved: ",
                                                   std::strerror(err)));
  }
  std::optional<std::string> real = RealPath(*path, &err);
  if (!real) {
    return absl::InvalidArgumentError(absl::StrCat(
        TensorName(t), ": cannot open external data file '", *path, "': ", std::strerror(err)));
  }
  // Also inside the folder the model file really lives in (the model itself
  // a link into a tree that holds its data beside it).
  std::optional<std::string> real_model_dir;
  if (!model_real_dir.empty()) real_model_dir = RealPath(model_real_dir, &err);
  if (!IsInside(*real, *real_dir) && !(real_model_dir && IsInside(*real, *real_model_dir))) {
    return absl::InvalidArgumentError(absl::StrCat(
        TensorName(t), ": external data location '", location, "' resolves to '", *real,
        "', outside the model's folder '", *real_dir,
        "' (through a symbolic link); external data must stay inside that folder"));
  }
  struct stat st {};
  if (::stat(real->c_str(), &st) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        TensorName(t), ": cannot open external data file '", *path, "': ", std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(TensorName(t), ": external data '", *path,
                                                   "' is not a regular file (",
                                                   FileKindName(st.st_mode), ")"));
  }
  // The resolved path, opened without following a link at its end: what is
  // opened is what was checked (barring a folder on the way being replaced
  // at the same moment; then the fstat below still refuses a non-file).
  *fd = ::open(real->c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
  if (*fd < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        TensorName(t), ": cannot open external data file '", *path, "': ", std::strerror(errno)));
  }
  struct stat opened {};
  if (::fstat(*fd, &opened) != 0 || !S_ISREG(opened.st_mode) || opened.st_dev != st.st_dev ||
      opened.st_ino != st.st_ino) {
    return absl::InvalidArgumentError(absl::StrCat(
        TensorName(t), ": external data file '", *path, "' changed while it was being opened"));
  }
  const int flags = ::fcntl(*fd, F_GETFL);
  if (flags >= 0) (void)::fcntl(*fd, F_SETFL, flags & ~O_NONBLOCK);
  return absl::OkStatus();
}

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
  FdCloser file;
  std::string path;
  KILN_RETURN_IF_ERROR(OpenInside(t, options.base_dir.empty() ? "." : options.base_dir,
                                  options.model_real_dir, *location, &file.fd, &path));
  struct stat st {};
  if (::fstat(file.fd, &st) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        TensorName(t), ": cannot stat external data file '", path, "': ", std::strerror(errno)));
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

// The name of a typed value field that holds values, or null.
const char* TypedFieldInUse(const TensorProto& t) {
  if (t.float_data_size() > 0) return "float_data";
  if (t.int32_data_size() > 0) return "int32_data";
  if (t.int64_data_size() > 0) return "int64_data";
  if (t.double_data_size() > 0) return "double_data";
  if (t.uint64_data_size() > 0) return "uint64_data";
  if (t.string_data_size() > 0) return "string_data";
  return nullptr;
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
    if (const char* typed = TypedFieldInUse(t); typed != nullptr && options.warnings != nullptr) {
      options.warnings->push_back(absl::StrCat(
          TensorName(t), " has both raw_data and ", typed,
          "; raw_data is used and ", typed,
          " ignored, as ONNX Runtime does (the ONNX checker refuses such a tensor: a tensor "
          "has one value field)"));
    }
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
