// File: lowering/compute/register_all.cc
#include "absl/base/call_once.h"
#include "lowering/compute/nn/nn_compute.h"
#include "lowering/compute/op_compute.h"
#include "lowering/compute/tensor/tensor_compute.h"

namespace kiln::lowering {

void RegisterCoreComputes() {
  static absl::once_flag once;
  absl::call_once(once, [] {
    RegisterTensorComputes();
    RegisterNnComputes();
  });
}

}  // namespace kiln::lowering
