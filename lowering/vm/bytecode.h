// File: lowering/vm/bytecode.h
//
// A VM program as the compiler builds it, and its encoding as the artifact's
// VM section (runtime_c/include/kiln/vm_format.h, docs/vm.md). The runtime
// (runtime_c/vm_program.c) validates what Encode writes.
//
//   VmProgram p;
//   VmFunction& f = p.functions.emplace_back();
//   f.name = "main"; f.num_params = 1;
//   f.Emit(KILN_VM_RET, {0});
//   f.num_registers = 1;
//   KILN_ASSIGN_OR_RETURN(std::string section, Encode(p));
#ifndef KILN_LOWERING_VM_BYTECODE_H_
#define KILN_LOWERING_VM_BYTECODE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/dtype.h"
#include "ir/tensor.h"
#include "kiln/vm_format.h"

namespace kiln::lowering::vm {

// One instruction: the opcode, then its operand words (vm_format.h).
struct VmInstr {
  int32_t op = 0;
  std::vector<int32_t> operands;
};

struct VmFunction {
  std::string name;
  uint32_t num_params = 0;
  uint32_t num_registers = 0;
  std::vector<VmInstr> instrs;

  // Appends an instruction; returns its index.
  size_t Emit(int32_t op, std::vector<int32_t> operands);
};

// A tensor type of main's signature: dims >= 0 static, KILN_VM_DIM_ANY, or
// -1 - k for dim variable k.
struct VmTensorType {
  DataType dtype;
  std::vector<int64_t> dims;
  // A sequence of such tensors (KILN_VM_TYPE_SEQUENCE), not one.
  bool sequence = false;
  // An optional of such a tensor or sequence (KILN_VM_TYPE_OPTIONAL).
  bool optional = false;
};

struct VmProgram {
  std::vector<VmFunction> functions;
  uint32_t main = 0;
  std::vector<std::string> kernels;  // exported symbol names, by index
  std::vector<Ref<const HostTensor>> constants;  // PARAMS entries 0, 1, ... in order
  std::vector<std::string> dim_vars;
  std::vector<VmTensorType> inputs, outputs;
  // Fatal messages, concatenated: the start of the section's strings table.
  std::string messages;

  // The operands of a Fatal with message `text` (appended to `messages`).
  std::vector<int32_t> FatalOperands(const std::string& text);
};

// The dtype word of an instruction (code | bits << 8 | lanes << 16).
int32_t DTypeWord(DataType t);
// An int64 immediate as its two words (low first), appended to `out`.
void AppendI64(std::vector<int32_t>* out, int64_t v);

// The VM section's bytes. Errors: sizes past the format's limits.
absl::StatusOr<std::string> Encode(const VmProgram& program);

// A readable listing (one instruction per line), for tests and `--dump`.
std::string Disassemble(const VmProgram& program);

}  // namespace kiln::lowering::vm

#endif  // KILN_LOWERING_VM_BYTECODE_H_
