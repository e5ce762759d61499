// File: lowering/strategy/target.cc
#include "lowering/strategy/target.h"

#include "absl/strings/str_cat.h"

namespace kiln::lowering {

std::string CpuTarget::ToString() const {
  return absl::StrCat(arch, ", ", vector_bits, "-bit vectors, ", vector_registers, " registers",
                      fma ? ", fma" : "");
}

std::string GpuTarget::ToString() const {
  return absl::StrCat(arch, ", ", threads_per_block, " threads per block", tf32 ? ", tf32" : "",
                      wgmma ? ", wgmma" : "",
                      wgmma && !wide_wgmma ? " (128 wide)" : "");
}

CpuTarget CpuTarget::FromVectorLanes(int float_lanes) {
  if (float_lanes >= 16) return Avx512();
  if (float_lanes == 8) return Avx2();
  CpuTarget t;
  t.vector_bits = (float_lanes > 0 ? float_lanes : 4) * 32;
  t.vector_registers = 16;
  return t;
}

}  // namespace kiln::lowering
