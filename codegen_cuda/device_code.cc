// File: codegen_cuda/device_code.cc
#include "codegen_cuda/device_code.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "kiln/device_code_format.h"

namespace kiln::codegen_cuda {
namespace {

void Put32(std::string* s, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) (*s)[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
void Put64(std::string* s, size_t at, uint64_t v) {
  Put32(s, at, static_cast<uint32_t>(v));
  Put32(s, at + 4, static_cast<uint32_t>(v >> 32));
}
size_t Align8(size_t x) { return (x + 7) & ~size_t{7}; }

// Kernel k's tensor maps (DEVICE_CODE version 4) checked against the
// rules the runtime enforces (runtime_c/device_code.c): each its parameter
// after the buffers, in order, a buffer's view with whole 16-byte box rows.
// The spec words of map j are appended to *words.
absl::Status EncodeTensorMap(const CudaKernel& k, size_t j, const tir::PrimFunc& f,
                             std::vector<int64_t>* words) {
  const CudaTensorMap& t = k.tensor_maps[j];
  const std::string what = absl::StrCat("device code: kernel ", k.name, " tensor map ", j, " (parameter ",
                                        t.param, "): ");
  if (t.param != k.num_buffers + j || t.param >= k.param_types.size() ||
      k.param_types[t.param] != "kiln_tmap") {
    return absl::InternalError(absl::StrCat(what, "not parameter ", k.num_buffers + j,
                                            " of type kiln_tmap (the maps follow the buffers)"));
  }
  if (t.buffer >= k.num_buffers) {
    return absl::InternalError(absl::StrCat(what, "views parameter ", t.buffer, ", not one of the ",
                                            k.num_buffers, " buffers"));
  }
  const size_t rank = t.dims.size();
  if (rank < 1 || rank > KILN_DEVICE_MAX_TENSOR_MAP_RANK || t.strides.size() != rank - 1 ||
      t.box.size() != rank) {
    return absl::InternalError(absl::StrCat(what, "rank ", rank, " with ", t.strides.size(),
                                            " strides and ", t.box.size(), " box dims"));
  }
  const int64_t elem = (f->params[t.buffer]->dtype.bits() + 7) / 8;
  for (size_t d = 0; d < rank; ++d) {
    if (t.dims[d] < 1 || t.dims[d] > (int64_t{1} << 32) || t.box[d] < 1 ||
        t.box[d] > KILN_DEVICE_MAX_TENSOR_MAP_BOX) {
      return absl::InternalError(absl::StrCat(what, "dim ", d, " is ", t.dims[d], " with box ",
                                              t.box[d], " (1 .. 2^32, 1 .. 256)"));
    }
    if (d > 0 && (t.strides[d - 1] < 16 || t.strides[d - 1] >= (int64_t{1} << 40) ||
                  t.strides[d - 1] % 16 != 0)) {
      return absl::InternalError(absl::StrCat(what, "the stride of dim ", d, " is ",
                                              t.strides[d - 1], " bytes (a multiple of 16)"));
    }
  }
  if ((t.box[0] * elem) % 16 != 0 ||
      (t.swizzle != 0 && t.swizzle != 32 && t.swizzle != 64 && t.swizzle != 128) ||
      (t.swizzle != 0 && t.box[0] * elem > t.swizzle)) {
    return absl::InternalError(absl::StrCat(what, "a box row of ", t.box[0] * elem,
                                            " bytes with swizzle ", t.swizzle));
  }
  words->push_back(static_cast<int64_t>(t.buffer));
  words->push_back(static_cast<int64_t>(rank));
  words->insert(words->end(), t.dims.begin(), t.dims.end());
  words->insert(words->end(), t.strides.begin(), t.strides.end());
  words->insert(words->end(), t.box.begin(), t.box.end());
  words->push_back(t.swizzle);
  return absl::OkStatus();
}

int64_t Op(int opcode, int64_t operand = 0) {
  return static_cast<int64_t>(static_cast<uint64_t>(operand) << 4) | opcode;
}

// `e` (an integer expression of the shape variables) in postfix.
absl::Status Postfix(const tir::PrimExpr& e, const std::map<const tir::ExprNode*, int>& vars,
                     std::vector<int64_t>* out) {
  using tir::ExprKind;
  switch (e->kind) {
    case ExprKind::kIntImm:
      if (e->int_value < -(int64_t{1} << 58) || e->int_value >= (int64_t{1} << 58)) break;
      out->push_back(Op(KILN_DEVICE_OP_CONST, e->int_value));
      return absl::OkStatus();
    case ExprKind::kVar: {
      auto it = vars.find(e.get());
      if (it == vars.end()) break;
      out->push_back(Op(KILN_DEVICE_OP_VAR, it->second));
      return absl::OkStatus();
    }
    case ExprKind::kCast:
      if (!e->dtype.is_int() && !e->dtype.is_uint()) break;
      return Postfix(e->args[0], vars, out);
    case ExprKind::kAdd:
    case ExprKind::kSub:
    case ExprKind::kMul:
    case ExprKind::kFloorDiv:
    case ExprKind::kFloorMod:
    case ExprKind::kDiv:  // of extents (>= 0): floor division
    case ExprKind::kMod:
    case ExprKind::kMin:
    case ExprKind::kMax: {
      if (!e->dtype.is_int() && !e->dtype.is_uint()) break;
      KILN_RETURN_IF_ERROR(Postfix(e->args[0], vars, out));
      KILN_RETURN_IF_ERROR(Postfix(e->args[1], vars, out));
      const int op = e->kind == ExprKind::kAdd   ? KILN_DEVICE_OP_ADD
                     : e->kind == ExprKind::kSub ? KILN_DEVICE_OP_SUB
                     : e->kind == ExprKind::kMul ? KILN_DEVICE_OP_MUL
                     : e->kind == ExprKind::kFloorDiv || e->kind == ExprKind::kDiv
                         ? KILN_DEVICE_OP_FLOORDIV
                     : e->kind == ExprKind::kFloorMod || e->kind == ExprKind::kMod
                         ? KILN_DEVICE_OP_FLOORMOD
                     : e->kind == ExprKind::kMin ? KILN_DEVICE_OP_MIN
                                                 : KILN_DEVICE_OP_MAX;
      out->push_back(Op(op));
      return absl::OkStatus();
    }
    default:
      break;
  }
  return absl::UnimplementedError("a launch dim that is not an integer expression of the shapes");
}

}  // namespace

absl::StatusOr<std::vector<int64_t>> EncodeLaunch(const CudaKernel& k, const tir::PrimFunc& f) {
  std::vector<int64_t> w;
  if (k.block_threads <= 0) {
    return absl::UnimplementedError(absl::StrCat("kernel ", k.name, ": its block size is not static"));
  }
  if (k.shape_vars.empty()) {
    if (k.grid_blocks <= 0) return absl::InternalError(absl::StrCat("kernel ", k.name, ": grid"));
    return w;
  }
  if (k.shape_vars.size() > KILN_DEVICE_MAX_LAUNCH_VARS || k.num_buffers != f->params.size()) {
    return absl::UnimplementedError(absl::StrCat("kernel ", k.name, ": too many shape variables"));
  }
  std::map<const tir::ExprNode*, int> vars;
  for (size_t v = 0; v < k.shape_vars.size(); ++v) vars[k.shape_vars[v].get()] = static_cast<int>(v);
  w.push_back(static_cast<int64_t>(k.shape_vars.size()));
  for (const tir::Var& v : k.shape_vars) {
    bool found = false;
    for (size_t p = 0; p < f->params.size() && !found; ++p) {
      for (size_t d = 0; d < f->params[p]->shape.size() && !found; ++d) {
        if (f->params[p]->shape[d].get() == v.get()) {
          w.push_back(static_cast<int64_t>(p));
          w.push_back(static_cast<int64_t>(d));
          found = true;
        }
      }
    }
    if (!found) {
      return absl::UnimplementedError(absl::StrCat("kernel ", k.name, ": shape variable ", v->name,
                                                   " is no argument's extent"));
    }
  }
  for (const tir::Buffer& b : f->params) {
    if (!b->strides.empty() || (b->elem_offset && !tir::IsConstInt(b->elem_offset))) {
      return absl::UnimplementedError(absl::StrCat("kernel ", k.name, ": a strided argument"));
    }
    w.push_back(static_cast<int64_t>(b->shape.size()));
    for (const tir::PrimExpr& d : b->shape) {
      int64_t x = 0;
      auto it = vars.find(d.get());
      if (tir::IsConstInt(d, &x) && x >= 0) {
        w.push_back(x);
      } else if (it != vars.end()) {
        w.push_back(-1 - it->second);
      } else {
        // An extent computed from the variables (N * 12): its expression.
        std::vector<int64_t> ops;
        KILN_RETURN_IF_ERROR(Postfix(d, vars, &ops));
        if (ops.empty() || ops.size() > KILN_DEVICE_MAX_LAUNCH_OPS) {
          return absl::UnimplementedError(
              absl::StrCat("kernel ", k.name, ": an argument extent of ", ops.size(), " ops"));
        }
        w.push_back(KILN_DEVICE_DIM_EXPR);
        w.push_back(static_cast<int64_t>(ops.size()));
        w.insert(w.end(), ops.begin(), ops.end());
      }
    }
  }
  for (int g = 0; g < 3; ++g) {
    std::vector<int64_t> ops;
    KILN_RETURN_IF_ERROR(Postfix(k.grid[g], vars, &ops));
    if (ops.empty() || ops.size() > KILN_DEVICE_MAX_LAUNCH_OPS) {
      return absl::UnimplementedError(absl::StrCat("kernel ", k.name, ": a grid expression of ",
                                                   ops.size(), " ops"));
    }
    w.push_back(static_cast<int64_t>(ops.size()));
    w.insert(w.end(), ops.begin(), ops.end());
  }
  return w;
}

absl::StatusOr<std::string> EncodeDeviceCode(const CudaModule& m, const CudaTarget& target) {
  if (m.ptx.empty()) {
    return absl::FailedPreconditionError(
        "device code: the module has no PTX (NVRTC did not run: kiln was built without the CUDA "
        "toolkit?)");
  }
  if (m.kernels.size() != m.lowered.kernels.size()) {
    return absl::InternalError("device code: kernels and lowered functions disagree");
  }
  // A model without kernels (its outputs are inputs or constants: Identity,
  // Shape, ...) has an empty kernel table; its PTX has no entry.
  struct Image {
    uint32_t kind, arch;
    const std::string* bytes;
    bool text;
  };
  std::vector<Image> images = {{KILN_DEVICE_IMAGE_PTX, static_cast<uint32_t>(target.sm), &m.ptx, true}};
  if (!m.cubin.empty()) {
    images.push_back({KILN_DEVICE_IMAGE_CUBIN, static_cast<uint32_t>(target.sm), &m.cubin, false});
  }
  if (!m.source.empty()) images.push_back({KILN_DEVICE_IMAGE_SOURCE, 0, &m.source, true});
  for (const Image& im : images) {
    if (im.text && im.bytes->find('\0') != std::string::npos) {
      return absl::InternalError("device code: a text image holds a NUL byte");
    }
  }

  std::string strings;
  std::vector<KilnDeviceKernelV3> kernels;  // .dynamic_shared_bytes: version 3
  std::vector<KilnDeviceParam> params;
  std::vector<int64_t> words;  // symbolic launches (version 2), tensor-map specs (4)
  bool dynamic_shared = false;  // some kernel's (version 3)
  bool tensor_maps = false;     // some kernel's (version 4)
  std::set<std::string> names;
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    const CudaKernel& k = m.kernels[i];
    const tir::PrimFunc& f = m.lowered.kernels[i].func;
    if (!names.insert(k.name).second) {
      return absl::InternalError(absl::StrCat("device code: two kernels named ", k.name));
    }
    // A launch that depends on the shapes: a program of version 2.
    absl::StatusOr<std::vector<int64_t>> launch = EncodeLaunch(k, f);
    if (!launch.ok()) {
      return absl::UnimplementedError(absl::StrCat("device code: ", launch.status().message()));
    }
    if (k.num_buffers != f->params.size()) {
      return absl::InternalError(absl::StrCat("device code: kernel ", k.name, " parameters"));
    }
    KilnDeviceKernelV3 e3;
    std::memset(&e3, 0, sizeof e3);
    KilnDeviceKernel& e = e3.base;
    e.name_offset = static_cast<uint32_t>(strings.size());
    e.name_size = static_cast<uint32_t>(k.name.size());
    strings += k.name;
    if (!launch->empty()) {
      e.launch = static_cast<uint32_t>(words.size() + 1);
      words.insert(words.end(), launch->begin(), launch->end());
    }
    for (int d = 0; d < 3; ++d) {
      int64_t g = launch->empty() ? 0 : 1, b = 0;
      if ((launch->empty() && !tir::IsConstInt(k.grid[d], &g)) || !tir::IsConstInt(k.block[d], &b) || g < 1 || b < 1 ||
          g > KILN_DEVICE_MAX_GRID_X || b > KILN_DEVICE_MAX_BLOCK_THREADS) {
        return absl::UnimplementedError(
            absl::StrCat("device code: kernel ", k.name, " has launch dims CUDA cannot run"));
      }
      e.grid[d] = static_cast<uint32_t>(g);
      e.block[d] = static_cast<uint32_t>(b);
    }
    // Above 48 KiB a block's shared memory is dynamic (extern __shared__),
    // requested at every launch; the runtime opts the function in.
    if (k.shared_bytes < 0 || k.shared_bytes > KILN_DEVICE_MAX_STATIC_SHARED ||
        k.dynamic_shared_bytes < 0 || k.dynamic_shared_bytes > KILN_DEVICE_MAX_DYNAMIC_SHARED ||
        k.shared_bytes + k.dynamic_shared_bytes > KILN_DEVICE_MAX_DYNAMIC_SHARED) {
      return absl::UnimplementedError(absl::StrCat(
          "device code: kernel ", k.name, " takes ", k.shared_bytes, " bytes of static and ",
          k.dynamic_shared_bytes, " of dynamic shared memory per block; CUDA allows at most ",
          KILN_DEVICE_MAX_STATIC_SHARED, " static and ", KILN_DEVICE_MAX_DYNAMIC_SHARED,
          " in all (Hopper's opt-in maximum)"));
    }
    e.shared_bytes = static_cast<uint32_t>(k.shared_bytes);
    e3.dynamic_shared_bytes = static_cast<uint32_t>(k.dynamic_shared_bytes);
    dynamic_shared = dynamic_shared || k.dynamic_shared_bytes > 0;
    if (!k.tensor_maps.empty() && !launch->empty()) {
      return absl::UnimplementedError(absl::StrCat(
          "device code: kernel ", k.name, " has tensor maps and a symbolic launch (a tensor map "
          "needs static shapes)"));
    }
    e.first_param = static_cast<uint32_t>(params.size());
    e.num_params = static_cast<uint32_t>(k.num_buffers + k.tensor_maps.size());
    // The last num_outputs parameters are the kernel's outputs: never
    // read-only, even when the kernel stores nothing there (an output of
    // zero elements, which the code generator's signature makes const).
    const size_t first_output =
        k.num_buffers - std::min<size_t>(k.num_buffers, m.lowered.kernels[i].num_outputs);
    for (size_t p = 0; p < k.num_buffers; ++p) {
      KilnDeviceParam dp;
      std::memset(&dp, 0, sizeof dp);
      dp.kind = KILN_DEVICE_PARAM_BUFFER;
      dp.dtype_code = static_cast<uint8_t>(f->params[p]->dtype.code());
      dp.dtype_bits = static_cast<uint8_t>(f->params[p]->dtype.bits());
      dp.flags = p < first_output && k.param_types[p].rfind("const ", 0) == 0
                     ? KILN_DEVICE_PARAM_READ_ONLY
                     : 0;
      params.push_back(dp);
    }
    // Its tensor maps (version 4): each the element type of its buffer and
    // 1 + the index of its spec in the launch words.
    for (size_t j = 0; j < k.tensor_maps.size(); ++j) {
      const CudaTensorMap& t = k.tensor_maps[j];
      const size_t spec = words.size();
      KILN_RETURN_IF_ERROR(EncodeTensorMap(k, j, f, &words));
      KilnDeviceParam dp;
      std::memset(&dp, 0, sizeof dp);
      dp.kind = KILN_DEVICE_PARAM_TENSOR_MAP;
      dp.dtype_code = static_cast<uint8_t>(f->params[t.buffer]->dtype.code());
      dp.dtype_bits = static_cast<uint8_t>(f->params[t.buffer]->dtype.bits());
      dp.spec = static_cast<uint32_t>(spec + 1);
      params.push_back(dp);
      tensor_maps = true;
    }
    kernels.push_back(e3);
  }

  // Layout: header, images, kernels, params, strings, image bytes.
  const size_t images_off = KILN_DEVICE_CODE_HEADER_SIZE;
  const size_t kernels_off = Align8(images_off + images.size() * sizeof(KilnDeviceImage));
  // The lowest version that holds the kernels (older runtimes read it): 4
  // when one has tensor maps, else 3 when one has dynamic shared memory (its
  // records 56 bytes, version 4's too), else 2 when a launch is symbolic,
  // else 1.
  const uint32_t version = tensor_maps ? 4u : dynamic_shared ? 3u : !words.empty() ? 2u : 1u;
  static_assert(KILN_DEVICE_CODE_VERSION == 4, "the writer's versions");
  const size_t kernel_entry = version >= 3 ? sizeof(KilnDeviceKernelV3) : sizeof(KilnDeviceKernel);
  const size_t params_off = Align8(kernels_off + kernels.size() * kernel_entry);
  const size_t strings_off = Align8(params_off + params.size() * sizeof(KilnDeviceParam));
  const size_t words_off = Align8(strings_off + strings.size());
  size_t end = Align8(words_off + words.size() * sizeof(int64_t));
  if (words.size() > KILN_DEVICE_MAX_LAUNCH_WORDS) {
    return absl::UnimplementedError("device code: too many symbolic launches");
  }
  std::vector<size_t> image_off;
  for (const Image& im : images) {
    image_off.push_back(end);
    end = Align8(end + im.bytes->size() + (im.text ? 1 : 0));
  }
  std::string s(end, '\0');
  std::memcpy(s.data(), KILN_DEVICE_CODE_MAGIC, KILN_DEVICE_CODE_MAGIC_SIZE);
  Put32(&s, 8, version);
  Put32(&s, 12, 2);  // kDLCUDA
  Put32(&s, 16, static_cast<uint32_t>(images.size()));
  Put32(&s, 20, static_cast<uint32_t>(kernels.size()));
  Put32(&s, 24, static_cast<uint32_t>(params.size()));
  Put64(&s, 32, images_off);
  Put64(&s, 40, kernels_off);
  Put64(&s, 48, params_off);
  Put64(&s, 56, strings_off);
  Put64(&s, 64, strings.size());
  if (!words.empty()) {
    Put32(&s, 28, static_cast<uint32_t>(words.size()));
    Put64(&s, 72, words_off);
    for (size_t i = 0; i < words.size(); ++i) {
      Put64(&s, words_off + 8 * i, static_cast<uint64_t>(words[i]));
    }
  }
  for (size_t i = 0; i < images.size(); ++i) {
    const size_t at = images_off + i * sizeof(KilnDeviceImage);
    Put32(&s, at, images[i].kind);
    Put32(&s, at + 4, images[i].arch);
    Put64(&s, at + 8, image_off[i]);
    Put64(&s, at + 16, images[i].bytes->size() + (images[i].text ? 1 : 0));
    std::memcpy(s.data() + image_off[i], images[i].bytes->data(), images[i].bytes->size());
  }
  for (size_t i = 0; i < kernels.size(); ++i) {
    const KilnDeviceKernel& e = kernels[i].base;
    const size_t at = kernels_off + i * kernel_entry;
    Put32(&s, at, e.name_offset);
    Put32(&s, at + 4, e.name_size);
    for (int d = 0; d < 3; ++d) {
      Put32(&s, at + 8 + 4 * d, e.grid[d]);
      Put32(&s, at + 20 + 4 * d, e.block[d]);
    }
    Put32(&s, at + 32, e.shared_bytes);
    Put32(&s, at + 36, e.first_param);
    Put32(&s, at + 40, e.num_params);
    Put32(&s, at + 44, e.launch);
    if (version >= 3) Put32(&s, at + 48, kernels[i].dynamic_shared_bytes);  // reserved: 0
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const size_t at = params_off + i * sizeof(KilnDeviceParam);
    s[at] = static_cast<char>(params[i].kind);
    s[at + 1] = static_cast<char>(params[i].dtype_code);
    s[at + 2] = static_cast<char>(params[i].dtype_bits);
    s[at + 3] = static_cast<char>(params[i].flags);
    Put32(&s, at + 4, params[i].spec);  // version 4's tensor maps; 0 for a buffer
  }
  std::memcpy(s.data() + strings_off, strings.data(), strings.size());
  return s;
}

}  // namespace kiln::codegen_cuda
