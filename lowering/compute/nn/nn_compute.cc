// File: lowering/compute/nn/nn_compute.cc
#include "lowering/compute/nn/nn_compute.h"

#include "absl/base/call_once.h"
#include "lowering/compute/nn/nn_util.h"

namespace kiln::lowering {

void RegisterNnComputes() {
  static absl::once_flag once;
  absl::call_once(once, [] {
    nn_internal::RegisterConvComputes();
    nn_internal::RegisterDenseComputes();
    nn_internal::RegisterPoolComputes();
    nn_internal::RegisterNormComputes();
    nn_internal::RegisterMiscComputes();
  });
}

}  // namespace kiln::lowering
