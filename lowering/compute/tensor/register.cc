// File: lowering/compute/tensor/register.cc
#include "absl/base/call_once.h"
#include "lowering/compute/tensor/families.h"
#include "lowering/compute/tensor/tensor_compute.h"

namespace kiln::lowering {

void RegisterTensorComputes() {
  static absl::once_flag once;
  absl::call_once(once, [] {
    tensor::RegisterElemwiseComputes();
    tensor::RegisterBroadcastComputes();
    tensor::RegisterReduceComputes();
    tensor::RegisterTransformComputes();
    tensor::RegisterLayoutComputes();
    tensor::RegisterDynComputes();
  });
}

}  // namespace kiln::lowering
