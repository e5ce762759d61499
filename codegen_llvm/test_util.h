// File: codegen_llvm/test_util.h
//
// Test helpers for codegen_llvm (testonly): host tensors behind a DLTensor,
// float16/bfloat16 bit conversions (round to nearest even), and JIT-compiling
// PrimFuncs for the host.
//
//   HostTensor a(DataType::Float(32), {16});
//   a.data<float>()[0] = 1.0f;
//   KILN_ASSIGN_OR_RETURN(auto jit, JitHost({f}));
//   int32_t rc = CallKernel(*jit->Lookup("f"), {a.dl(), b.dl()});
#ifndef KILN_CODEGEN_LLVM_TEST_UTIL_H_
#define KILN_CODEGEN_LLVM_TEST_UTIL_H_

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "codegen_llvm/codegen_llvm.h"
#include "dlpack/dlpack.h"
#include "ir/dtype.h"
#include "ir/tir.h"
#include "kiln/kernel_abi.h"

namespace kiln::codegen::testing {

DLDataType ToDL(DataType t);

// A compact host tensor: 64-byte aligned, zero-filled storage and a DLTensor
// (strides NULL, byte_offset 0) that points at it. Not copyable or movable
// (the DLTensor points into the object).
class HostTensor {
 public:
  HostTensor(DataType dtype, std::vector<int64_t> shape);
  ~HostTensor();
  HostTensor(const HostTensor&) = delete;
  HostTensor& operator=(const HostTensor&) = delete;

  DLTensor* dl() { return &tensor_; }
  int64_t numel() const;
  template <typename T>
  T* data() {
    return static_cast<T*>(storage_);
  }

 private:
  std::vector<int64_t> shape_;
  void* storage_ = nullptr;
  DLTensor tensor_{};
};

uint16_t FloatToHalf(float f);
float HalfToFloat(uint16_t h);
uint16_t FloatToBFloat16(float f);
float BFloat16ToFloat(uint16_t b);

// JIT-compiles `funcs` for `target` (the host by default).
absl::StatusOr<std::unique_ptr<JitModule>> JitHost(const std::vector<tir::PrimFunc>& funcs,
                                                   absl::string_view target = "llvm");

// fn(args, args.size(), ctx).
int32_t CallKernel(KilnKernelFn fn, std::initializer_list<DLTensor*> args,
                   KilnKernelContext* ctx = nullptr);

}  // namespace kiln::codegen::testing

#endif  // KILN_CODEGEN_LLVM_TEST_UTIL_H_
