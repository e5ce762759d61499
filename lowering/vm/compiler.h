// File: lowering/vm/compiler.h
//
// The VM compiler: a fused, type-checked module (the graph pipeline through
// FuseOps) becomes a VM program (bytecode.h) plus the kernels it calls.
//
//   KILN_ASSIGN_OR_RETURN(VmCompiled c, CompileForVm(fused, lower_options));
//   c.kernels   -> the tir::PrimFuncs to generate (fused operators and their
//                  shape functions)
//   c.program   -> the VM program (Encode -> the artifact's VM section)
//
// What it compiles: every global function (main is the entry; the others are
// called with Invoke, recursion included), `let`, `if`, tuples and
// projections, calls of primitive functions (InvokePacked, each output
// allocated first: AllocStorage + AllocTensor for a static shape; for a
// symbolic one a shape function computes the shape at run time from the
// inputs' shapes, then AllocStorage + AllocTensorReg), local functions as
// closures (free variables captured, a let-bound function may call itself),
// global functions as values, calls of closures (InvokeClosure), ADT
// constructors (AllocADT) and `match` (GetTag / If / GetField, a Fatal when no
// clause matches), references (a one-field cell: AllocADT, GetField, and
// kiln's SetField).
//
// Errors (statuses naming the construct): operators left outside a primitive function, a main parameter or result
// that is not a tensor (or a tuple of tensors), an output shape that depends
// on values (`?`, or variables the inputs do not bind), free variables.
#ifndef KILN_LOWERING_VM_COMPILER_H_
#define KILN_LOWERING_VM_COMPILER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/module.h"
#include "ir/tir.h"
#include "lowering/lower.h"
#include "lowering/vm/bytecode.h"

namespace kiln::lowering::vm {

struct VmCompiled {
  VmProgram program;
  std::vector<tir::PrimFunc> kernels;  // program.kernels[i] is kernels[i]->name
  std::vector<std::string> input_names;   // main's parameters
  std::vector<std::string> output_names;  // main's results
  int num_fused_kernels = 0;  // kernels that are fused operators (the rest: shape functions)
  // Per kernel: the primitive function it was lowered from and the constants
  // the program passes after its arguments (null / empty for a shape
  // function). A GPU compile lowers the static ones again for the device.
  struct Source {
    Function fn;
    std::vector<Ref<const HostTensor>> constants;
  };
  std::vector<Source> sources;
};

absl::StatusOr<VmCompiled> CompileForVm(const Module& fused, const LowerOptions& options = {});

// `module` with every `?` dim of main's parameter types named (x_0 for axis
// 0 of %x, unless the name is taken), so that type inference carries it
// through the program and each output shape is a function of the input
// shapes. Run before the graph passes; a module without `?` is returned as is.
absl::StatusOr<Module> NameAnyInputDims(const Module& module);

// True when `fused` needs the VM: main is not a static dataflow graph of
// primitive calls (a symbolic dim, control flow, closures, ADTs, other
// global functions, ...). The graph executor takes the rest.
bool NeedsVm(const Module& fused);

// The element type when `t` is a sequence of tensors in `m` (an ONNX
// sequence: a list ADT, tag 0 (Tensor, itself), tag 1 ()), else null. The
// VM takes and returns those (KILN_VM_TYPE_SEQUENCE).
const TensorTypeNode* SequenceElementType(const Module& m, const Type& t);

// True when `t` is an optional in `m` (an ONNX optional: an ADT with tag 0
// (a tensor or a sequence of tensors) and tag 1 ()). The VM takes and
// returns those (KILN_VM_TYPE_OPTIONAL).
bool IsOptionalType(const Module& m, const Type& t);

}  // namespace kiln::lowering::vm

#endif  // KILN_LOWERING_VM_COMPILER_H_
