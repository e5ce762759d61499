// File: codegen_llvm/export.cc
#include "codegen_llvm/export.h"

#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/status_macros.h"
#include "kiln/artifact_writer.h"
#include "kiln/kernel_abi.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"

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

using BuilderPtr = std::unique_ptr<KilnArtifactBuilder, void (*)(KilnArtifactBuilder*)>;

// Every CPU feature the code is compiled with, by LLVM's names, sorted: the
// target's explicit features plus those its CPU implies (-mcpu=skylake-avx512
// alone means avx512f, avx2, fma, ...). Tuning flags come along; the loader
// checks the names it can probe and ignores the rest (docs/artifact.md).
absl::StatusOr<std::vector<std::string>> CpuFeatures(const Target& target) {
  std::string error;
  const llvm::Target* t = llvm::TargetRegistry::lookupTarget(target.triple, error);
  if (t == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("export: unknown target triple '", target.triple, "': ", error));
  }
  std::unique_ptr<llvm::MCSubtargetInfo> sti(
      t->createMCSubtargetInfo(target.triple, target.cpu, target.features));
  if (sti == nullptr) {
    return absl::InternalError(
        absl::StrCat("export: no subtarget information for '", target.ToString(), "'"));
  }
  std::vector<std::string> features;
  for (const llvm::SubtargetFeatureKV& kv : sti->getAllProcessorFeatures()) {
    if (sti->getFeatureBits().test(kv.Value)) features.emplace_back(kv.Key);
  }
  std::sort(features.begin(), features.end());
  return features;
}

// The artifact's builder, holding references to the plan's parameters (no
// copy: they go from the plan's tensors to the linked file in one write,
// kiln_artifact_builder_write_into). `plan` must outlive it.
absl::StatusOr<BuilderPtr> BuildBlob(const lowering::GraphPlan& plan, const Target& target,
                                     const std::string& model, const ExportOptions& options) {
  nlohmann::json meta;
  meta["producer"] = kProducer;
  meta["target"] = options.device_code.empty() ? target.ToString() : options.device_target;
  meta["model"] = model;
  meta["kernel_abi_version"] = KILN_KERNEL_ABI_VERSION;
  // What the loader checks against the machine before mapping the code.
  meta["target_triple"] = target.triple;
  meta["target_cpu"] = target.cpu;
  KILN_ASSIGN_OR_RETURN(std::vector<std::string> cpu_features, CpuFeatures(target));
  meta["cpu_features"] = cpu_features;
  meta["input_names"] = plan.input_names;
  meta["output_names"] = plan.output_names;
  std::string meta_text = meta.dump();

  KilnArtifactBuilder* raw = nullptr;
  KILN_RETURN_IF_ERROR(FromKiln(kiln_artifact_builder_create(&raw), "artifact"));
  BuilderPtr b(raw, kiln_artifact_builder_release);
  KILN_RETURN_IF_ERROR(FromKiln(kiln_artifact_builder_set_section(b.get(), KILN_SECTION_META,
                                                                  meta_text.data(), meta_text.size()),
                                "artifact META"));
  if (!plan.vm_program.empty()) {
    // A VM artifact (format version 2): the program instead of a graph.
    KILN_RETURN_IF_ERROR(FromKiln(
        kiln_artifact_builder_set_section(b.get(), KILN_SECTION_VM, plan.vm_program.data(),
                                          plan.vm_program.size()),
        "artifact VM"));
  } else {
    KILN_RETURN_IF_ERROR(FromKiln(
        kiln_artifact_builder_set_section(b.get(), KILN_SECTION_GRAPH, plan.graph_json.data(),
                                          plan.graph_json.size()),
        "artifact GRAPH"));
  }
  if (!options.device_code.empty()) {
    // A GPU artifact (format version 3): the kernels are device code.
    KILN_RETURN_IF_ERROR(FromKiln(
        kiln_artifact_builder_set_section(b.get(), KILN_SECTION_DEVICE_CODE,
                                          options.device_code.data(), options.device_code.size()),
        "artifact DEVICE_CODE"));
  }
  for (const auto& [name, tensor] : plan.params) {
    DLTensor d = ToDL(*tensor);
    KILN_RETURN_IF_ERROR(FromKiln(kiln_artifact_builder_add_param_ref(b.get(), name.c_str(), &d),
                                  absl::StrCat("artifact parameter ", name)));
  }
  return b;
}

// Writes `size` bytes of `data` at `offset` of `fd`.
absl::Status WriteAt(int fd, const std::string& path, const char* data, uint64_t size,
                     uint64_t offset) {
  while (size > 0) {
    ssize_t n = pwrite(fd, data, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return absl::InternalError(
          absl::StrCat("cannot write ", path, ": ", n < 0 ? std::strerror(errno) : "no space"));
    }
    data += n;
    size -= static_cast<uint64_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return absl::OkStatus();
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

// The ELF machine of a little-endian 64-bit target kiln writes relocatable
// objects for itself (0: use the assembler).
uint16_t ElfMachine(const std::string& triple) {
  if (triple.rfind("x86_64", 0) == 0) return 62;  // EM_X86_64
  if (triple.rfind("aarch64", 0) == 0 && triple.rfind("aarch64_be", 0) != 0) return 183;
  return 0;
}

// Writes an ELF64 little-endian relocatable object holding `size` zero bytes
// in the read-only section .rodata.kiln_artifact as the exported, 64-byte
// aligned object `kiln_artifact`, plus an empty .note.GNU-stack: the
// placeholder the linker lays out and kiln_artifact_builder_write_into fills.
// The zeros are a hole of a sparse file: nothing of the blob's size is
// written here. Sections: null, .rodata.kiln_artifact, .note.GNU-stack,
// .symtab, .strtab, .shstrtab.
absl::Status WriteBlobObject(const std::string& path, uint64_t size, uint16_t machine) {
  auto put = [](std::string& b, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) b.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  };
  // String tables: a leading NUL, then NUL-terminated names.
  auto table = [](std::initializer_list<const char*> names) {
    std::string t(1, '\0');
    for (const char* n : names) {
      t += n;
      t.push_back('\0');
    }
    return t;
  };
  const std::string strtab = table({KILN_ARTIFACT_SYMBOL});
  const std::string shstrtab =
      table({".rodata.kiln_artifact", ".note.GNU-stack", ".symtab", ".strtab", ".shstrtab"});
  auto name_at = [&](const char* n) { return static_cast<uint64_t>(shstrtab.find(n)); };
  const uint64_t blob_off = 64;  // right after the 64-byte header: 64-aligned
  const uint64_t sym_off = (blob_off + size + 7) / 8 * 8;
  const uint64_t sym_size = 2 * 24;
  const uint64_t str_off = sym_off + sym_size;
  const uint64_t shstr_off = str_off + strtab.size();
  const uint64_t sh_off = (shstr_off + shstrtab.size() + 7) / 8 * 8;

  std::string head;
  head.append("\x7f" "ELF", 4);
  head.push_back(2);  // ELFCLASS64
  head.push_back(1);  // ELFDATA2LSB
  head.push_back(1);  // EV_CURRENT
  head.append(9, '\0');
  put(head, 1, 2);        // ET_REL
  put(head, machine, 2);  // e_machine
  put(head, 1, 4);        // e_version
  put(head, 0, 8);        // e_entry
  put(head, 0, 8);        // e_phoff
  put(head, sh_off, 8);   // e_shoff
  put(head, 0, 4);        // e_flags
  put(head, 64, 2);       // e_ehsize
  put(head, 0, 2);        // e_phentsize
  put(head, 0, 2);        // e_phnum
  put(head, 64, 2);       // e_shentsize
  put(head, 6, 2);        // e_shnum
  put(head, 5, 2);        // e_shstrndx

  std::string tail(sym_off - (blob_off + size), '\0');
  // .symtab: the null symbol, then kiln_artifact (GLOBAL OBJECT in section 1).
  tail.append(24, '\0');
  put(tail, 1, 4);                // st_name
  tail.push_back((1 << 4) | 1);   // STB_GLOBAL, STT_OBJECT
  tail.push_back(0);              // STV_DEFAULT
  put(tail, 1, 2);                // st_shndx
  put(tail, 0, 8);                // st_value
  put(tail, size, 8);             // st_size
  tail += strtab;
  tail += shstrtab;
  tail.append(sh_off - (shstr_off + shstrtab.size()), '\0');
  auto section = [&](uint64_t name, uint64_t type, uint64_t flags, uint64_t off, uint64_t sz,
                     uint64_t link, uint64_t info, uint64_t align, uint64_t entsize) {
    put(tail, name, 4);
    put(tail, type, 4);
    put(tail, flags, 8);
    put(tail, 0, 8);  // sh_addr
    put(tail, off, 8);
    put(tail, sz, 8);
    put(tail, link, 4);
    put(tail, info, 4);
    put(tail, align, 8);
    put(tail, entsize, 8);
  };
  section(0, 0, 0, 0, 0, 0, 0, 0, 0);
  section(name_at(".rodata.kiln_artifact"), 1, 2, blob_off, size, 0, 0, KILN_ARTIFACT_ALIGNMENT,
          0);                                                          // PROGBITS, SHF_ALLOC
  section(name_at(".note.GNU-stack"), 1, 0, sym_off, 0, 0, 0, 1, 0);   // PROGBITS
  section(name_at(".symtab"), 2, 0, sym_off, sym_size, 4, 1, 8, 24);  // SYMTAB, first global 1
  section(name_at(".strtab"), 3, 0, str_off, strtab.size(), 0, 0, 1, 0);
  section(name_at(".shstrtab"), 3, 0, shstr_off, shstrtab.size(), 0, 0, 1, 0);

  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return absl::InternalError(absl::StrCat("cannot write ", path, ": ", std::strerror(errno)));
  absl::Status st = WriteAt(fd, path, head.data(), head.size(), 0);
  if (st.ok()) st = WriteAt(fd, path, tail.data(), tail.size(), blob_off + size);
  if (close(fd) != 0 && st.ok()) {
    st = absl::InternalError(absl::StrCat("cannot write ", path, ": ", std::strerror(errno)));
  }
  return st;
}

// A sparse file of `size` zero bytes (the blob's placeholder, for .incbin).
absl::Status WriteZeros(const std::string& path, uint64_t size) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return absl::InternalError(absl::StrCat("cannot write ", path, ": ", std::strerror(errno)));
  absl::Status st;
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    st = absl::InternalError(absl::StrCat("cannot write ", path, ": ", std::strerror(errno)));
  }
  if (close(fd) != 0 && st.ok()) {
    st = absl::InternalError(absl::StrCat("cannot write ", path, ": ", std::strerror(errno)));
  }
  return st;
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

// An existing `path` must be a regular file or a symlink (which the rename
// replaces, not its target).
absl::Status CheckOutputPath(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return absl::OkStatus();
    return absl::InternalError(absl::StrCat("cannot write ", path, ": ", std::strerror(errno)));
  }
  if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "cannot write ", path, ": it exists and is not a regular file (",
      S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO" : "a device or socket",
      "); kiln only replaces regular files"));
}

// Moves the finished library `from` (in the private temporary directory) to
// `to` atomically: a rename when both are on one file system; otherwise a
// copy into a fresh file created exclusively beside `to` (mkstemp: no
// symlink or existing file at a guessable name is ever opened), then a
// rename of that onto `to`. Never a half-written file at `to`.
absl::Status MoveIntoPlace(const std::string& from, const std::string& to) {
  if (std::rename(from.c_str(), to.c_str()) == 0) return absl::OkStatus();
  if (errno != EXDEV) {
    return absl::InternalError(absl::StrCat("cannot write ", to, ": ", std::strerror(errno)));
  }
  std::vector<char> name(to.begin(), to.end());
  const std::string suffix = ".kiln_tmp.XXXXXX";
  name.insert(name.end(), suffix.begin(), suffix.end());
  name.push_back('\0');
  const int out = mkstemp(name.data());
  if (out < 0) {
    return absl::InternalError(absl::StrCat("cannot write ", to, ": cannot create a file beside it: ",
                                            std::strerror(errno)));
  }
  const std::string staged(name.data());
  auto fail = [&](const char* what) {
    const std::string msg = absl::StrCat("cannot write ", to, ": ", what, ": ", std::strerror(errno));
    close(out);
    unlink(staged.c_str());
    return absl::InternalError(msg);
  };
  const int in = open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return fail("cannot reopen the linked library");
  std::vector<char> buf(1 << 20);
  for (;;) {
    ssize_t n = read(in, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      close(in);
      return fail("read failed");
    }
    if (n == 0) break;
    for (ssize_t done = 0; done < n;) {
      ssize_t w = write(out, buf.data() + done, static_cast<size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) {
        close(in);
        return fail("write failed");
      }
      done += w;
    }
  }
  // mkstemp makes the file 0600: give it the linked file's mode (the linker
  // honoured the umask).
  struct stat st;
  const bool have_mode = fstat(in, &st) == 0;
  close(in);
  if (have_mode && fchmod(out, st.st_mode & 0777) != 0) return fail("chmod failed");
  if (close(out) != 0) {
    unlink(staged.c_str());
    return absl::InternalError(absl::StrCat("cannot write ", to, ": ", std::strerror(errno)));
  }
  if (std::rename(staged.c_str(), to.c_str()) != 0) {
    const std::string msg = absl::StrCat("cannot write ", to, ": ", std::strerror(errno));
    unlink(staged.c_str());
    return absl::InternalError(msg);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ExportLibrary(const std::vector<tir::PrimFunc>& kernels, const Target& target,
                           const lowering::GraphPlan& plan, const std::string& path,
                           const ExportOptions& options, ExportStats* stats) {
  if (path.empty()) return absl::InvalidArgumentError("export: empty output path");
  // The output may replace a regular file (or a symlink, itself), never a
  // device, directory or FIFO: renaming onto /dev/null as root would
  // replace the device. Checked first, before any code is generated (a
  // compile to `-o /tmp` is refused at once), and again before the move.
  KILN_RETURN_IF_ERROR(CheckOutputPath(path));
  auto t0 = std::chrono::steady_clock::now();
  const int total = static_cast<int>(kernels.size());
  std::function<void()> on_kernel;
  // A std::mutex (pthreads), which ThreadSanitizer sees: Debian's absl is not
  // built with TSan's annotations, so an absl::Mutex here was reported as a
  // data race on `done` under --config=tsan (kiln_api_test).
  std::mutex progress_mu;
  int done = 0;
  if (options.progress) {
    options.progress("codegen", 0, total);
    on_kernel = [&] {
      std::lock_guard<std::mutex> lock(progress_mu);
      if (done < total) options.progress("codegen", ++done, total);
    };
  }
  KILN_ASSIGN_OR_RETURN(std::vector<std::string> objects,
                        EmitObjects(kernels, target, options.num_threads, on_kernel));
  auto t1 = std::chrono::steady_clock::now();
  if (options.progress) options.progress("link", 0, 0);

  KILN_ASSIGN_OR_RETURN(std::unique_ptr<TempDir> tmp, TempDir::Create(options.keep_temps));
  const std::string dir = tmp->path();
  KILN_RETURN_IF_ERROR(CheckOutputPath(path));  // it may have changed meanwhile
  // Linked and sealed inside the private temporary directory (mode 0700:
  // nothing can be planted there), then moved into place.
  const std::string staged = dir + "/model.so";
  std::vector<std::string> link = {options.cc, "-shared", "-o", staged};
  for (size_t i = 0; i < objects.size(); ++i) {
    std::string obj = absl::StrCat(dir, "/kernels", i, ".o");
    KILN_RETURN_IF_ERROR(WriteFile(obj, objects[i].data(), objects[i].size()));
    link.push_back(obj);
  }
  const std::string model = options.model_name.empty() ? Stem(path) : options.model_name;
  // The linker lays out a zero placeholder of the blob's size; the blob is
  // then written into the linked file in place (weights copied once, from
  // the plan's tensors to the file).
  KILN_ASSIGN_OR_RETURN(BuilderPtr blob, BuildBlob(plan, target, model, options));
  uint64_t blob_size = 0;
  KILN_RETURN_IF_ERROR(FromKiln(kiln_artifact_builder_blob_size(blob.get(), &blob_size), "artifact"));
  if (uint16_t machine = ElfMachine(target.triple); machine != 0) {
    KILN_RETURN_IF_ERROR(WriteBlobObject(dir + "/blob.o", blob_size, machine));
  } else {
    KILN_RETURN_IF_ERROR(WriteZeros(dir + "/blob.bin", blob_size));
    std::string asm_text = BlobAssembly(dir + "/blob.bin");
    KILN_RETURN_IF_ERROR(WriteFile(dir + "/blob.S", asm_text.data(), asm_text.size()));
    KILN_RETURN_IF_ERROR(
        RunTool({options.cc, "-c", dir + "/blob.S", "-o", dir + "/blob.o"}, dir + "/as.log"));
  }
  link.push_back(dir + "/blob.o");
  if (options.prefer_lld && options.cc == "cc" && OnPath("ld.lld")) link.push_back("-fuse-ld=lld");
  // Kernels call libm; the kiln_* runtime functions stay undefined and
  // resolve against libkiln_runtime.so (or the loading program) at load time.
  // No start files (crti/crtbeginS/crtendS/crtn): the kernels are plain
  // C-ABI functions that need no _init, frame_dummy or destructors, and the
  // loader refuses a library that would run any code of its own at dlopen
  // (DT_INIT, .init_array, ...), so nothing of an artifact runs before it is
  // validated.
  link.insert(link.end(),
              {"-nostartfiles", "-lm", "-Wl,-z,noexecstack", "-Wl,--hash-style=gnu"});
  KILN_RETURN_IF_ERROR(RunTool(link, dir + "/link.log"));
  KILN_RETURN_IF_ERROR(FromKiln(kiln_artifact_builder_write_into(blob.get(), staged.c_str()),
                                "writing the artifact"));
  KILN_RETURN_IF_ERROR(MoveIntoPlace(staged, path));
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
