// File: tests/cuda/emulate.cc
#include "tests/cuda/emulate.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/status_macros.h"
#include "ir/traversal.h"
#include "ir/type.h"
#include "kiln/device_code_format.h"
#include "tests/cuda/emulate_host.h"
#include "tests/cuda/fake_tensor_map.h"

extern char** environ;

namespace kiln::testing {
namespace {

using LaunchFn = const char* (*)(void** args);

absl::Status RunCompiler(const std::string& src, const std::string& so, const std::string& log,
                         const char* opt = "-O0") {
  std::vector<std::string> argv_s = {"g++", "-std=c++17", opt, "-w", "-shared", "-fPIC",
                                     "-o", so, src};
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, "g++", &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return absl::UnavailableError(absl::StrCat("cannot run g++: ", std::strerror(rc)));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::ifstream in(log);
    std::stringstream ss;
    ss << in.rdbuf();
    return absl::InvalidArgumentError(absl::StrCat("g++ rejected the CUDA C:\n", ss.str()));
  }
  return absl::OkStatus();
}

absl::Status FlattenType(const Type& t, std::vector<const TensorTypeNode*>* out) {
  if (const auto* tt = t.as<TensorTypeNode>()) {
    out->push_back(tt);
    return absl::OkStatus();
  }
  if (const auto* tup = t.as<TupleTypeNode>()) {
    for (const Type& f : tup->fields) KILN_RETURN_IF_ERROR(FlattenType(f, out));
    return absl::OkStatus();
  }
  return absl::UnimplementedError("emulator: only tensors and tuples of tensors");
}

void FlattenValue(const interp::Value& v, std::vector<Ref<const HostTensor>>* out) {
  if (v.is_tuple()) {
    for (const interp::Value& f : v.fields()) FlattenValue(f, out);
    return;
  }
  out->push_back(v.tensor());
}

absl::StatusOr<interp::Value> Unflatten(const Type& t, const std::vector<Ref<const HostTensor>>& flat,
                                        size_t* pos) {
  if (const auto* tup = t.as<TupleTypeNode>()) {
    std::vector<interp::Value> fields;
    for (const Type& f : tup->fields) {
      KILN_ASSIGN_OR_RETURN(interp::Value v, Unflatten(f, flat, pos));
      fields.push_back(v);
    }
    return interp::Value::Tuple(std::move(fields));
  }
  if (*pos >= flat.size()) return absl::InternalError("emulator: too few results");
  return interp::Value::Tensor(flat[(*pos)++]);
}

// CUtensorMapDataType of `t` (runtime_c/device_code.c's table), or -1.
int TensorMapDataType(DataType t) {
  const int bits = t.bits();
  if (t.lanes() != 1) return -1;
  if (t.code() == DTypeCode::kBFloat) return bits == 16 ? 9 : -1;
  if (t.is_float()) return bits == 16 ? 6 : bits == 32 ? 7 : bits == 64 ? 8 : -1;
  if (t.is_int() || t.is_uint() || t.is_bool()) {
    return bits == 8 || t.is_bool() ? 0 : bits == 16 ? 1 : bits == 32 ? (t.is_int() ? 3 : 2)
           : bits == 64 ? (t.is_int() ? 5 : 4) : -1;
  }
  return -1;
}

// The 128-byte tensor map of `t` over host address `address` in the fake
// layout, as the fake driver's cuTensorMapEncodeTiled writes it for the
// runtime (tests/cuda/fake_tensor_map.h), into `out` (64-byte aligned).
absl::Status EncodeTensorMap(const codegen_cuda::CudaKernel& k, const codegen_cuda::CudaTensorMap& t,
                             DataType dtype, const void* address, void* out) {
  const int data_type = TensorMapDataType(dtype);
  const size_t rank = t.dims.size();
  if (data_type < 0 || rank < 1 || rank > 5 || t.strides.size() != rank - 1 || t.box.size() != rank) {
    return absl::InvalidArgumentError(absl::StrCat("emulator: kernel ", k.name, " tensor map of parameter ",
                                                   t.param, ": its dtype or rank"));
  }
  std::vector<uint64_t> dims(t.dims.begin(), t.dims.end()), strides(t.strides.begin(), t.strides.end());
  std::vector<uint32_t> box(t.box.begin(), t.box.end()), ones(rank, 1);
  const unsigned swizzle = t.swizzle == 0 ? 0 : t.swizzle == 32 ? 1 : t.swizzle == 64 ? 2 : t.swizzle == 128 ? 3 : 4;
  if (kiln_fake_tensor_map_encode(out, static_cast<unsigned>(data_type), static_cast<unsigned>(rank),
                                  address, dims.data(), strides.data(), box.data(), ones.data(),
                                  /*interleave=*/0, swizzle) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "emulator: kernel ", k.name, " tensor map of parameter ", t.param,
        ": cuTensorMapEncodeTiled's rules refuse it (an address not 16-byte aligned, a stride not a "
        "multiple of 16, a box row not whole 16 bytes, ...)"));
  }
  return absl::OkStatus();
}

}  // namespace

struct HostKernels::Impl {
  std::vector<HostKernel> kernels;
  void* lib = nullptr;
  std::vector<LaunchFn> launch;  // per kernel
  std::string dir;
  ~Impl() {
    if (lib != nullptr) dlclose(lib);
  }
};

HostKernels::~HostKernels() = default;

absl::StatusOr<std::unique_ptr<HostKernels>> HostKernels::Build(
    const std::string& cuda_source, std::vector<HostKernel> kernels) {
  std::unique_ptr<HostKernels> h(new HostKernels());
  h->impl_ = std::make_unique<Impl>();
  Impl& im = *h->impl_;
  std::string src = absl::StrCat(EmulatorHostShim(), cuda_source, "\n");
  for (const HostKernel& k : kernels) {
    std::vector<std::string> call;
    for (size_t i = 0; i < k.param_types.size(); ++i) {
      const std::string& t = k.param_types[i];
      call.push_back(!t.empty() && t.back() == '*' ? absl::StrCat("(", t, ")a[", i, "]")
                                                   : absl::StrCat("*(", t, "*)a[", i, "]"));
    }
    absl::StrAppend(&src, "static void kiln_emu_body_", k.name, "(void** a) { ", k.name, "(",
                    absl::StrJoin(call, ", "), "); }\n", "extern \"C\" const char* kiln_emu_",
                    k.name, "(void** a) {\n  static const unsigned g[3] = {", k.grid[0], ", ",
                    k.grid[1], ", ", k.grid[2], "}, b[3] = {", k.block[0], ", ", k.block[1], ", ",
                    k.block[2], "};\n  return kiln_emu_launch(kiln_emu_body_", k.name,
                    ", a, g, b);\n}\n");
  }
  const char* base = getenv("TEST_TMPDIR");
  std::string tmpl = absl::StrCat(base ? base : "/tmp", "/kiln_emu_XXXXXX");
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) return absl::InternalError("emulator: mkdtemp failed");
  im.dir = buf.data();
  const std::string path = im.dir + "/module.cc", so = im.dir + "/module.so";
  std::ofstream(path) << src;
  KILN_RETURN_IF_ERROR(RunCompiler(path, so, im.dir + "/g++.log"));
  im.lib = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (im.lib == nullptr) return absl::InternalError(absl::StrCat("emulator: dlopen: ", dlerror()));
  for (const HostKernel& k : kernels) {
    void* f = dlsym(im.lib, absl::StrCat("kiln_emu_", k.name).c_str());
    if (f == nullptr) return absl::InternalError(absl::StrCat("emulator: no entry for ", k.name));
    im.launch.push_back(reinterpret_cast<LaunchFn>(f));
  }
  im.kernels = std::move(kernels);
  return h;
}

absl::Status HostKernels::Launch(size_t i, void** args) const {
  const Impl& im = *impl_;
  if (i >= im.launch.size()) return absl::InvalidArgumentError("emulator: no such kernel");
  if (const char* err = im.launch[i](args)) {
    return absl::FailedPreconditionError(
        absl::StrCat("emulator: kernel ", im.kernels[i].name, ": ", err));
  }
  return absl::OkStatus();
}

struct CudaEmulator::Impl {
  codegen_cuda::CudaModule m;
  Function main;
  std::unique_ptr<HostKernels> host;
};

CudaEmulator::~CudaEmulator() = default;

absl::StatusOr<std::unique_ptr<CudaEmulator>> CudaEmulator::Build(const Module& fused,
                                                                  codegen_cuda::CudaModule m) {
  std::unique_ptr<CudaEmulator> e(new CudaEmulator());
  e->impl_ = std::make_unique<Impl>();
  Impl& im = *e->impl_;
  KILN_ASSIGN_OR_RETURN(im.main, fused.Lookup("main"));
  std::vector<HostKernel> kernels;
  for (const codegen_cuda::CudaKernel& k : m.kernels) {
    if (k.grid_blocks <= 0 || k.block_threads <= 0) {
      return absl::UnimplementedError(absl::StrCat("emulator: kernel ", k.name,
                                                   " has symbolic launch dims"));
    }
    HostKernel hk;
    hk.name = k.name;
    hk.param_types = k.param_types;
    for (int d = 0; d < 3; ++d) {
      int64_t g = 0, b = 0;
      if (!tir::IsConstInt(k.grid[d], &g) || !tir::IsConstInt(k.block[d], &b)) {
        return absl::InternalError("emulator: launch dims");
      }
      hk.grid[d] = static_cast<unsigned>(g);
      hk.block[d] = static_cast<unsigned>(b);
    }
    kernels.push_back(std::move(hk));
  }
  KILN_ASSIGN_OR_RETURN(im.host, HostKernels::Build(m.source, std::move(kernels)));
  im.m = std::move(m);
  return e;
}

absl::StatusOr<interp::Value> CudaEmulator::Run(const std::vector<interp::Value>& args) const {
  const Impl& im = *impl_;
  const Function& main = im.main;
  if (args.size() != main->params.size()) return absl::InvalidArgumentError("emulator: arity");
  std::unordered_map<const ExprNode*, std::vector<Ref<const HostTensor>>> values;
  for (size_t i = 0; i < args.size(); ++i) FlattenValue(args[i], &values[main->params[i].get()]);
  for (const Expr& n : PostOrder(main->body, /*enter_functions=*/false)) {
    if (values.count(n.get())) continue;
    std::vector<Ref<const HostTensor>> out;
    if (const auto* c = n.as<ConstantNode>()) {
      out.push_back(c->data);
    } else if (const auto* tup = n.as<TupleNode>()) {
      for (const Expr& f : tup->fields) {
        const auto& v = values[f.get()];
        out.insert(out.end(), v.begin(), v.end());
      }
    } else if (const auto* get = n.as<TupleGetItemNode>()) {
      const auto* tt = get->tuple->checked_type().as<TupleTypeNode>();
      if (tt == nullptr) return absl::InternalError("emulator: untyped tuple projection");
      size_t begin = 0;
      for (int i = 0; i < get->index; ++i) {
        std::vector<const TensorTypeNode*> flat;
        KILN_RETURN_IF_ERROR(FlattenType(tt->fields[i], &flat));
        begin += flat.size();
      }
      std::vector<const TensorTypeNode*> flat;
      KILN_RETURN_IF_ERROR(FlattenType(tt->fields[get->index], &flat));
      const auto& v = values[get->tuple.get()];
      out.assign(v.begin() + begin, v.begin() + begin + flat.size());
    } else if (const auto* call = n.as<CallNode>()) {
      auto it = im.m.lowered.kernel_of.find(call->op.get());
      if (it == im.m.lowered.kernel_of.end()) {
        return absl::UnimplementedError("emulator: main calls something that is not a kernel");
      }
      std::vector<Ref<const HostTensor>> inputs;
      for (const Expr& a : call->args) {
        const auto& v = values[a.get()];
        inputs.insert(inputs.end(), v.begin(), v.end());
      }
      for (const auto& c : im.m.lowered.ConstantsOf(call->op.get())) inputs.push_back(c);
      std::vector<const TensorTypeNode*> out_types;
      KILN_RETURN_IF_ERROR(FlattenType(call->checked_type(), &out_types));
      std::vector<Ref<HostTensor>> outputs;
      for (const TensorTypeNode* tt : out_types) {
        std::vector<int64_t> shape;
        for (const Dim& d : tt->shape) {
          if (!d.is_static()) return absl::UnimplementedError("emulator: symbolic output shape");
          shape.push_back(d.value());
        }
        KILN_ASSIGN_OR_RETURN(Ref<HostTensor> t, HostTensor::Create(tt->dtype, shape));
        outputs.push_back(t);
      }
      const codegen_cuda::CudaKernel& k = im.m.kernels[it->second];
      std::vector<void*> a;
      for (const auto& t : inputs) a.push_back(const_cast<void*>(t->raw_data()));
      for (const auto& t : outputs) a.push_back(t->mutable_raw_data());
      if (a.size() != k.num_buffers || k.shape_vars.size() != 0) {
        return absl::InternalError(absl::StrCat("emulator: kernel ", k.name, " takes ", k.num_buffers,
                                                " buffers and ", k.shape_vars.size(),
                                                " shapes; the call passes ", a.size()));
      }
      // Its tensor maps (passed by value: args[i] points at the 128 bytes),
      // encoded as the runtime has the driver encode them, for the buffers'
      // host addresses.
      struct alignas(64) Map {
        unsigned char bytes[128];
      };
      std::vector<Map> maps(k.tensor_maps.size());
      for (size_t j = 0; j < k.tensor_maps.size(); ++j) {
        const codegen_cuda::CudaTensorMap& t = k.tensor_maps[j];
        if (t.buffer >= k.num_buffers || t.param != a.size()) {
          return absl::InternalError(absl::StrCat("emulator: kernel ", k.name, " tensor map ", j,
                                                  " is parameter ", t.param, " of buffer ", t.buffer));
        }
        const DataType dtype = t.buffer < inputs.size() ? inputs[t.buffer]->dtype()
                                                        : outputs[t.buffer - inputs.size()]->dtype();
        KILN_RETURN_IF_ERROR(EncodeTensorMap(k, t, dtype, a[t.buffer], maps[j].bytes));
        a.push_back(maps[j].bytes);
      }
      KILN_RETURN_IF_ERROR(im.host->Launch(it->second, a.data()));
      for (auto& t : outputs) out.push_back(t);
    } else if (n.as<FunctionNode>() != nullptr || n.as<OpNode>() != nullptr) {
      continue;
    } else {
      return absl::UnimplementedError("emulator: main must be a dataflow graph of kernel calls");
    }
    values[n.get()] = std::move(out);
  }
  const auto& result = values[main->body.get()];
  size_t pos = 0;
  return Unflatten(main->body->checked_type(), result, &pos);
}

namespace {

std::string ReadBytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// A little-endian field of the artifact's bytes, or 0 past their end.
template <typename T>
T Field(const std::string& s, size_t at) {
  T v{};
  if (at + sizeof v <= s.size()) std::memcpy(&v, s.data() + at, sizeof v);
  return v;
}

}  // namespace

absl::Status BuildFakeDriverKernels(const std::string& artifact_path, const std::string& so_path) {
  const std::string bytes = ReadBytes(artifact_path);
  const size_t dc = bytes.find(std::string(KILN_DEVICE_CODE_MAGIC, KILN_DEVICE_CODE_MAGIC_SIZE));
  if (dc == std::string::npos) {
    return absl::NotFoundError(absl::StrCat(artifact_path, ": no DEVICE_CODE section"));
  }
  std::string source;
  const uint32_t num_images = Field<uint32_t>(bytes, dc + 16);
  const uint64_t images = Field<uint64_t>(bytes, dc + 32);
  for (uint32_t i = 0; i < num_images; ++i) {
    const size_t e = dc + images + 32 * i;
    if (Field<uint32_t>(bytes, e) != KILN_DEVICE_IMAGE_SOURCE) continue;
    const size_t at = dc + Field<uint64_t>(bytes, e + 8);
    if (at < bytes.size()) source = std::string(bytes.c_str() + at);  // NUL-terminated
  }
  if (source.empty()) return absl::NotFoundError(absl::StrCat(artifact_path, ": no CUDA C image"));
  // The shim's launcher runs a block's threads as fibers (barriers, shuffles).
  std::string unit = EmulatorHostShim();
  unit += source;
  unit += R"(
#include <stdio.h>
#include <stdlib.h>
#include <utility>
template <typename... P, size_t... I>
static void kiln_call(void (*f)(P...), void** a, std::index_sequence<I...>) {
  f(*static_cast<P*>(a[I])...);  // a device pointer's bits, or a shape variable's long long
}
template <typename... P> static void kiln_invoke(void (*f)(P...), void** a) {
  kiln_call(f, a, std::index_sequence_for<P...>{});
}
template <auto F> static void kiln_body(void** a) { kiln_invoke(F, a); }
)";
  const uint32_t num_kernels = Field<uint32_t>(bytes, dc + 20);
  const uint64_t kernels = Field<uint64_t>(bytes, dc + 40);
  const uint64_t strings = Field<uint64_t>(bytes, dc + 56);
  // Kernel records of 48 bytes, 56 from version 3 (dynamic shared memory).
  const size_t record = Field<uint32_t>(bytes, dc + 8) >= 3 ? 56 : 48;
  for (uint32_t k = 0; k < num_kernels; ++k) {
    const size_t e = dc + kernels + record * k;
    const size_t at = dc + strings + Field<uint32_t>(bytes, e);
    const size_t len = Field<uint32_t>(bytes, e + 4);
    if (at + len > bytes.size()) return absl::DataLossError("a kernel name past the artifact's end");
    const std::string name = bytes.substr(at, len);
    absl::StrAppend(&unit, "extern \"C\" void kiln_fake_", name,
                    "(const unsigned* g, const unsigned* b, void** a) {\n  const char* e = "
                    "kiln_emu_launch(&kiln_body<&", name, ">, a, g, b);\n  if (e) { "
                    "fprintf(stderr, \"%s\\n\", e); abort(); }\n}\n");
  }
  const std::string cc = so_path + ".cc";
  std::ofstream(cc) << unit;
  return RunCompiler(cc, so_path, so_path + ".log", "-O1");
}

}  // namespace kiln::testing
