// File: codegen_llvm/export.cc
#include "codegen_llvm/export.h"

#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/status_macros.h"
#include "kiln/artifact_writer.h"
#include "kiln/kernel_abi.h"

extern char** environ;

namespace kiln::codegen {
namespace {

constexpr const char kProducer[] = "kiln 0.1.0";

// KilnStatus* -> absl::Status (frees it).
absl::Status FromKiln(KilnStatus* st, absl::string_view what) {
  if (st == nullptr) return absl::OkStatus();
  std::string msg = absl::StrCat(what, ": ", kiln_status_message(st));
  KilnStatusCode code = kiln_status_code(st);
  kiln_status_free(st);
  return absl::Status(static_cast<absl::StatusCode>(code), msg);
}

// A temporary directory removed on destruction (unless kept).
class TempDir {
 public:
  static absl::StatusOr<std::unique_ptr<TempDir>> Create(bool keep) {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = absl::StrCat(base != nullptr && base[0] != '\0' ? base : "/tmp",
                                    "/kiln_export_XXXXXX");
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (mkdtemp(buf.data()) == nullptr) {
      return absl::InternalError(
          absl::StrCat("cannot create a temporary directory ", tmpl, ": ", std::strerror(errno)));
    }
    return std::unique_ptr<TempDir>(new TempDir(buf.data(), keep));
  }
  ~TempDir() {
    if (keep_) return;
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  TempDir(std::string path, bool keep) : path_(std::move(path)), keep_(keep) {}
  std::string path_;
  bool keep_;
};

absl::Status WriteFile(const std::string& path, const void* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path, " (disk full?)"));
  return absl::OkStatus();
}

std::string ReadSmallFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (s.size() > 4000) s = s.substr(0, 4000) + "...";
  return s;
}

// Runs argv (argv[0] looked up in PATH); its output goes to `log`.
absl::Status RunTool(const std::vector<std::string>& argv, const std::string& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  std::string cmd = absl::StrJoin(argv, " ");
  if (rc != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot run '", argv[0], "' (", std::strerror(rc),
                     "): exporting a model needs a C compiler driver on PATH (apt-get install gcc)"));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return absl::InternalError(absl::StrCat("waitpid: ", std::strerror(errno)));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::InternalError(absl::StrCat("'", cmd, "' failed: ", ReadSmallFile(log)));
  }
  return absl::OkStatus();
}

DLTensor ToDL(const HostTensor& t) {
  DLTensor d{};
  d.data = const_cast<void*>(t.raw_data());
  d.device = DLDevice{kDLCPU, 0};
  d.ndim = t.ndim();
  d.dtype = DLDataType{static_cast<uint8_t>(t.dtype().code()), static_cast<uint8_t>(t.dtype().bits()),
                       static_cast<uint16_t>(t.dtype().lanes())};
  d.shape = const_cast<int64_t*>(t.shape().data());
  d.strides = nullptr;
  d.byte_offset = 0;
  return d;
}

std::string Stem(const std::string& path) {
  std::string s = std::filesystem::path(path).filename().string();
  for (const char* ext : {".so", ".dylib"}) {
    if (s.size() > std::strlen(ext) && s.ends_with(ext)) s.resize(s.size() - std::strlen(ext));
  }
  return s;
}

// The artifact blob, in the buffer kiln_artifact_builder_finish allocated
// (hundreds of MB for a model with its weights: not copied again).
struct Blob {
  std::unique_ptr<uint8_t, decltype(&std::free)> data{nullptr, &std::free};
  uint64_t size = 0;
};

absl::StatusOr<Blob> BuildBlob(const lowering::GraphPlan& plan, const Target& target,
                               const std::string& model) {
  nlohmann::json meta;
  meta["producer"] = kProducer;
  meta["target"] = target.ToString();
  meta["model"] = model;
  meta["kernel_abi_version"] = KILN_KERNEL_ABI_VERSION;
  meta["input_names"] = plan.input_names;
  meta["output_names"] = plan.output_names;
  std::string meta_text = meta.dump();

  KilnArtifactBuilder* raw = nullptr;
  KILN_RETURN_IF_ERROR(FromKiln(kiln_artifact_builder_create(&raw), "artifact"));
  std::unique_ptr<KilnArtifactBuilder, void (*)(KilnArtifactBuilder*)> b(
      raw, kiln_artifact_builder_release);
  KILN_RETURN_IF_ERROR(FromKiln(kiln_artifact_builder_set_section(b.get(), KILN_SECTION_META,
                                                                  meta_text.data(), meta_text.size()),
                                "artifact META"));
  KILN_RETURN_IF_ERROR(FromKiln(
      kiln_artifact_builder_set_section(b.get(), KILN_SECTION_GRAPH, plan.graph_json.data(),
                                        plan.graph_json.size()),
      "artifact GRAPH"));
  for (const auto& [name, tensor] : plan.params) {
    DLTensor d = ToDL(*tensor);
    KILN_RETURN_IF_ERROR(FromKiln(kiln_artifact_builder_add_param(b.get(), name.c_str(), &d),
                                  absl::StrCat("artifact parameter ", name)));
  }
  uint8_t* blob = nullptr;
  Blob out;
  KILN_RETURN_IF_ERROR(
      FromKiln(kiln_artifact_builder_finish(b.get(), &blob, &out.size), "artifact"));
  out.data.reset(blob);
  return out;
}

// Whether an executable `name` is in one of PATH's folders.
bool OnPath(const std::string& name) {
  const char* path = getenv("PATH");
  if (path == nullptr) return false;
  std::string dirs(path);
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const std::string dir = dirs.substr(start, end - start);
    if (!dir.empty() && access((dir + "/" + name).c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

// The assembly file that places the blob in a read-only section as the
// exported, 64-byte aligned object `kiln_artifact`. `%` types work for both
// x86 and AArch64 GNU assemblers.
std::string BlobAssembly(const std::string& blob_path) {
  std::string quoted;
  for (char c : blob_path) {
    if (c == '"' || c == '\\') quoted.push_back('\\');
    quoted.push_back(c);
  }
  return absl::StrCat(
      "  .section .rodata.kiln_artifact,\"a\",%progbits\n"
      "  .globl ", KILN_ARTIFACT_SYMBOL, "\n"
      "  .type ", KILN_ARTIFACT_SYMBOL, ", %object\n"
      "  .balign ", KILN_ARTIFACT_ALIGNMENT, "\n",
      KILN_ARTIFACT_SYMBOL, ":\n"
      "  .incbin \"", quoted, "\"\n"
      "  .size ", KILN_ARTIFACT_SYMBOL, ", . - ", KILN_ARTIFACT_SYMBOL, "\n"
      "  .section .note.GNU-stack,\"\",%progbits\n");
}

}  // namespace

absl::Status ExportLibrary(const std::vector<tir::PrimFunc>& kernels, const Target& target,
                           const lowering::GraphPlan& plan, const std::string& path,
                           const ExportOptions& options, ExportStats* stats) {
  if (path.empty()) return absl::InvalidArgumentError("export: empty output path");
  auto t0 = std::chrono::steady_clock::now();
  KILN_ASSIGN_OR_RETURN(std::vector<std::string> objects,
                        EmitObjects(kernels, target, options.num_threads));
  auto t1 = std::chrono::steady_clock::now();

  KILN_ASSIGN_OR_RETURN(std::unique_ptr<TempDir> tmp, TempDir::Create(options.keep_temps));
  const std::string dir = tmp->path();
  std::vector<std::string> link = {options.cc, "-shared", "-o", dir + "/model.so"};
  for (size_t i = 0; i < objects.size(); ++i) {
    std::string obj = absl::StrCat(dir, "/kernels", i, ".o");
    KILN_RETURN_IF_ERROR(WriteFile(obj, objects[i].data(), objects[i].size()));
    link.push_back(obj);
  }
  const std::string model = options.model_name.empty() ? Stem(path) : options.model_name;
  {
    KILN_ASSIGN_OR_RETURN(Blob blob, BuildBlob(plan, target, model));
    KILN_RETURN_IF_ERROR(WriteFile(dir + "/blob.bin", blob.data.get(), blob.size));
  }
  std::string asm_text = BlobAssembly(dir + "/blob.bin");
  KILN_RETURN_IF_ERROR(WriteFile(dir + "/blob.S", asm_text.data(), asm_text.size()));
  KILN_RETURN_IF_ERROR(
      RunTool({options.cc, "-c", dir + "/blob.S", "-o", dir + "/blob.o"}, dir + "/as.log"));
  link.push_back(dir + "/blob.o");
  if (options.prefer_lld && options.cc == "cc" && OnPath("ld.lld")) link.push_back("-fuse-ld=lld");
  // Kernels call libm; the kiln_* runtime functions stay undefined and
  // resolve against libkiln_runtime.so (or the loading program) at load time.
  link.insert(link.end(), {"-lm", "-Wl,-z,noexecstack", "-Wl,--hash-style=gnu"});
  KILN_RETURN_IF_ERROR(RunTool(link, dir + "/link.log"));
  KILN_RETURN_IF_ERROR(FromKiln(kiln_artifact_seal_file((dir + "/model.so").c_str()),
                                "sealing the artifact"));

  // Into place: never leave a half-written file at `path`.
  std::error_code ec;
  std::string staged = path + ".kiln_tmp";
  std::filesystem::copy_file(dir + "/model.so", staged,
                             std::filesystem::copy_options::overwrite_existing, ec);
  if (ec) {
    return absl::InternalError(absl::StrCat("cannot write ", path, ": ", ec.message()));
  }
  std::filesystem::rename(staged, path, ec);
  if (ec) {
    std::filesystem::remove(staged, ec);
    return absl::InternalError(absl::StrCat("cannot write ", path, ": ", ec.message()));
  }
  auto t2 = std::chrono::steady_clock::now();
  if (stats != nullptr) {
    stats->codegen_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    stats->link_ms = std::chrono::duration<double, std::milli>(t2 - t1).count();
    std::error_code size_ec;
    stats->file_bytes = std::filesystem::file_size(path, size_ec);
  }
  return absl::OkStatus();
}

}  // namespace kiln::codegen
