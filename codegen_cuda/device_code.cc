// File: codegen_cuda/device_code.cc
#include "codegen_cuda/device_code.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "absl/strings/str_cat.h"
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

}  // namespace

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
  std::vector<KilnDeviceKernel> kernels;
  std::vector<KilnDeviceParam> params;
  std::set<std::string> names;
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    const CudaKernel& k = m.kernels[i];
    const tir::PrimFunc& f = m.lowered.kernels[i].func;
    if (!names.insert(k.name).second) {
      return absl::InternalError(absl::StrCat("device code: two kernels named ", k.name));
    }
    if (!k.shape_vars.empty() || k.grid_blocks <= 0 || k.block_threads <= 0) {
      return absl::UnimplementedError(absl::StrCat(
          "device code: kernel ", k.name,
          " has launch dims or parameters that depend on symbolic shapes; GPU artifacts need "
          "static shapes (give the inputs' shapes)"));
    }
    if (k.num_buffers != f->params.size()) {
      return absl::InternalError(absl::StrCat("device code: kernel ", k.name, " parameters"));
    }
    KilnDeviceKernel e;
    std::memset(&e, 0, sizeof e);
    e.name_offset = static_cast<uint32_t>(strings.size());
    e.name_size = static_cast<uint32_t>(k.name.size());
    strings += k.name;
    for (int d = 0; d < 3; ++d) {
      int64_t g = 0, b = 0;
      if (!tir::IsConstInt(k.grid[d], &g) || !tir::IsConstInt(k.block[d], &b) || g < 1 || b < 1 ||
          g > KILN_DEVICE_MAX_GRID_X || b > KILN_DEVICE_MAX_BLOCK_THREADS) {
        return absl::UnimplementedError(
            absl::StrCat("device code: kernel ", k.name, " has launch dims CUDA cannot run"));
      }
      e.grid[d] = static_cast<uint32_t>(g);
      e.block[d] = static_cast<uint32_t>(b);
    }
    e.shared_bytes = static_cast<uint32_t>(k.shared_bytes);
    e.first_param = static_cast<uint32_t>(params.size());
    e.num_params = static_cast<uint32_t>(k.num_buffers);
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
    kernels.push_back(e);
  }

  // Layout: header, images, kernels, params, strings, image bytes.
  const size_t images_off = KILN_DEVICE_CODE_HEADER_SIZE;
  const size_t kernels_off = Align8(images_off + images.size() * sizeof(KilnDeviceImage));
  const size_t params_off = Align8(kernels_off + kernels.size() * sizeof(KilnDeviceKernel));
  const size_t strings_off = Align8(params_off + params.size() * sizeof(KilnDeviceParam));
  size_t end = Align8(strings_off + strings.size());
  std::vector<size_t> image_off;
  for (const Image& im : images) {
    image_off.push_back(end);
    end = Align8(end + im.bytes->size() + (im.text ? 1 : 0));
  }
  std::string s(end, '\0');
  std::memcpy(s.data(), KILN_DEVICE_CODE_MAGIC, KILN_DEVICE_CODE_MAGIC_SIZE);
  Put32(&s, 8, KILN_DEVICE_CODE_VERSION);
  Put32(&s, 12, 2);  // kDLCUDA
  Put32(&s, 16, static_cast<uint32_t>(images.size()));
  Put32(&s, 20, static_cast<uint32_t>(kernels.size()));
  Put32(&s, 24, static_cast<uint32_t>(params.size()));
  Put64(&s, 32, images_off);
  Put64(&s, 40, kernels_off);
  Put64(&s, 48, params_off);
  Put64(&s, 56, strings_off);
  Put64(&s, 64, strings.size());
  for (size_t i = 0; i < images.size(); ++i) {
    const size_t at = images_off + i * sizeof(KilnDeviceImage);
    Put32(&s, at, images[i].kind);
    Put32(&s, at + 4, images[i].arch);
    Put64(&s, at + 8, image_off[i]);
    Put64(&s, at + 16, images[i].bytes->size() + (images[i].text ? 1 : 0));
    std::memcpy(s.data() + image_off[i], images[i].bytes->data(), images[i].bytes->size());
  }
  for (size_t i = 0; i < kernels.size(); ++i) {
    const KilnDeviceKernel& e = kernels[i];
    const size_t at = kernels_off + i * sizeof(KilnDeviceKernel);
    Put32(&s, at, e.name_offset);
    Put32(&s, at + 4, e.name_size);
    for (int d = 0; d < 3; ++d) {
      Put32(&s, at + 8 + 4 * d, e.grid[d]);
      Put32(&s, at + 20 + 4 * d, e.block[d]);
    }
    Put32(&s, at + 32, e.shared_bytes);
    Put32(&s, at + 36, e.first_param);
    Put32(&s, at + 40, e.num_params);
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const size_t at = params_off + i * sizeof(KilnDeviceParam);
    s[at] = static_cast<char>(params[i].kind);
    s[at + 1] = static_cast<char>(params[i].dtype_code);
    s[at + 2] = static_cast<char>(params[i].dtype_bits);
    s[at + 3] = static_cast<char>(params[i].flags);
  }
  std::memcpy(s.data() + strings_off, strings.data(), strings.size());
  return s;
}

}  // namespace kiln::codegen_cuda
