// File: tests/onnx/conformance_export.cc — conformance cases written out for
// a machine with only the runtime (conformance_export.h).
#include "tests/onnx/conformance_export.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "kiln/npy.h"

namespace kiln::onnx_conformance {
namespace {

namespace fs = std::filesystem;

absl::Status FsError(const std::string& what, const std::error_code& ec) {
  return absl::InternalError(absl::StrCat("export: ", what, ": ", ec.message()));
}

absl::Status Copy(const std::string& from, const std::string& to) {
  std::error_code ec;
  fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
  if (ec) return FsError(absl::StrCat("copying '", from, "' to '", to, "'"), ec);
  return absl::OkStatus();
}

absl::Status WriteNpy(const std::string& path, const HostTensor& t) {
  static char empty = 0;  // a tensor of no elements may have no data
  DLTensor d{};
  d.data = t.raw_data() != nullptr ? const_cast<void*>(t.raw_data()) : &empty;
  d.device.device_type = kDLCPU;
  d.ndim = t.ndim();
  d.dtype.code = static_cast<uint8_t>(t.dtype().code());
  d.dtype.bits = static_cast<uint8_t>(t.dtype().bits());
  d.dtype.lanes = static_cast<uint16_t>(t.dtype().lanes());
  d.shape = const_cast<int64_t*>(t.shape().data());
  if (KilnStatus* st = kiln_npy_write(path.c_str(), &d); st != nullptr) {
    std::string msg = kiln_status_message(st);
    kiln_status_free(st);
    return absl::InvalidArgumentError(absl::StrCat("export: ", msg));
  }
  return absl::OkStatus();
}

}  // namespace

std::string EncodeExportName(absl::string_view name) {
  std::string out;
  for (unsigned char c : name) {
    const bool plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                       c == '_' || c == '.' || c == ':' || c == '/' || c == '-';
    if (plain) {
      out.push_back(static_cast<char>(c));
    } else {
      absl::StrAppendFormat(&out, "%%%02X", c);
    }
  }
  return out;
}

absl::StatusOr<CaseExport> CaseExport::Begin(const std::string& root, const std::string& name) {
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) return FsError(absl::StrCat("creating '", root, "'"), ec);
  std::string staging = absl::StrCat(root, "/.", name, ".partial");
  fs::remove_all(staging, ec);
  if (ec) return FsError(absl::StrCat("removing '", staging, "'"), ec);
  fs::create_directory(staging, ec);
  if (ec) return FsError(absl::StrCat("creating '", staging, "'"), ec);
  return CaseExport(staging, absl::StrCat(root, "/", name));
}

absl::StatusOr<std::string> CaseExport::Model(const std::string& artifact_path,
                                              const std::string& host_kernels) {
  auto it = models_.find(artifact_path);
  if (it != models_.end()) return it->second;
  const std::string base = absl::StrCat("model_", models_.size());
  std::string operands = absl::StrCat(base, ".so");
  if (absl::Status st = Copy(artifact_path, absl::StrCat(staging_, "/", base, ".so")); !st.ok()) return st;
  if (!host_kernels.empty()) {
    absl::StrAppend(&operands, " ", base, ".host.so");
    if (absl::Status st = Copy(host_kernels, absl::StrCat(staging_, "/", base, ".host.so")); !st.ok()) {
      return st;
    }
  }
  models_.emplace(artifact_path, operands);
  return operands;
}

absl::StatusOr<std::string> CaseExport::WriteValue(const std::string& stem, const ExportValue& v) {
  switch (v.kind) {
    case ExportValue::Kind::kNone:
      return std::string("none");
    case ExportValue::Kind::kTensor: {
      if (v.tensors.size() != 1 || !v.tensors[0]) return absl::InternalError("export: a tensor value without its tensor");
      const std::string file = stem + ".npy";
      if (absl::Status st = WriteNpy(absl::StrCat(staging_, "/", file), *v.tensors[0]); !st.ok()) return st;
      return absl::StrCat("tensor ", file);
    }
    case ExportValue::Kind::kSequence: {
      std::vector<std::string> files;
      for (size_t e = 0; e < v.tensors.size(); ++e) {
        if (!v.tensors[e]) return absl::InternalError("export: a sequence element without its tensor");
        files.push_back(absl::StrCat(stem, "_", e, ".npy"));
        if (absl::Status st = WriteNpy(absl::StrCat(staging_, "/", files.back()), *v.tensors[e]); !st.ok()) {
          return st;
        }
      }
      return absl::StrCat("sequence ", files.size(), files.empty() ? "" : " ", absl::StrJoin(files, " "));
    }
  }
  return absl::InternalError("export: unknown value kind");
}

absl::Status CaseExport::Set(int index, const std::string& model,
                             const std::vector<std::pair<std::string, ExportValue>>& inputs,
                             const std::vector<ExportValue>& outputs, const Tolerance& tolerance) {
  std::string text = absl::StrCat("kiln-conformance-set 1\nmodel ", model, "\n",
                                  absl::StrFormat("tolerance %.17g %.17g\n", tolerance.rtol, tolerance.atol));
  for (size_t i = 0; i < inputs.size(); ++i) {
    absl::StatusOr<std::string> v = WriteValue(absl::StrCat("set_", index, "_in_", i), inputs[i].second);
    if (!v.ok()) return v.status();
    absl::StrAppend(&text, "input ", EncodeExportName(inputs[i].first), " ", *v, "\n");
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    absl::StatusOr<std::string> v = WriteValue(absl::StrCat("set_", index, "_out_", k), outputs[k]);
    if (!v.ok()) return v.status();
    absl::StrAppend(&text, "output ", k, " ", *v, "\n");
  }
  const std::string path = absl::StrCat(staging_, "/set_", index, ".txt");
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("export: cannot write '", path, "'"));
  return absl::OkStatus();
}

absl::Status CaseExport::Commit() {
  std::error_code ec;
  fs::remove_all(final_, ec);
  if (ec) return FsError(absl::StrCat("removing '", final_, "'"), ec);
  fs::rename(staging_, final_, ec);
  if (ec) return FsError(absl::StrCat("renaming '", staging_, "' to '", final_, "'"), ec);
  return absl::OkStatus();
}

void CaseExport::Abort() {
  std::error_code ec;
  fs::remove_all(staging_, ec);
}

}  // namespace kiln::onnx_conformance
