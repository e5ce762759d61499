// File: lowering/vm/bytecode.cc
#include "lowering/vm/bytecode.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace kiln::lowering::vm {
namespace {

void Put32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void Put64(std::string* out, uint64_t v) {
  Put32(out, static_cast<uint32_t>(v));
  Put32(out, static_cast<uint32_t>(v >> 32));
}

void Align8(std::string* out) {
  while (out->size() % 8 != 0) out->push_back('\0');
}

void Set64(std::string* out, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) (*out)[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

}  // namespace

size_t VmFunction::Emit(int32_t op, std::vector<int32_t> operands) {
  instrs.push_back(VmInstr{op, std::move(operands)});
  return instrs.size() - 1;
}

std::vector<int32_t> VmProgram::FatalOperands(const std::string& text) {
  std::vector<int32_t> ops = {static_cast<int32_t>(messages.size()),
                              static_cast<int32_t>(text.size())};
  messages += text;
  return ops;
}

int32_t DTypeWord(DataType t) {
  uint32_t w = static_cast<uint32_t>(static_cast<uint8_t>(t.code())) |
               static_cast<uint32_t>(t.bits() & 0xff) << 8 |
               static_cast<uint32_t>(t.lanes() & 0xffff) << 16;
  return static_cast<int32_t>(w);
}

void AppendI64(std::vector<int32_t>* out, int64_t v) {
  uint64_t u = static_cast<uint64_t>(v);
  out->push_back(static_cast<int32_t>(static_cast<uint32_t>(u)));
  out->push_back(static_cast<int32_t>(static_cast<uint32_t>(u >> 32)));
}

absl::StatusOr<std::string> Encode(const VmProgram& p) {
  if (p.functions.empty()) return absl::InvalidArgumentError("VM program: no functions");
  if (p.functions.size() > KILN_VM_MAX_FUNCTIONS || p.kernels.size() > KILN_VM_MAX_KERNELS ||
      p.inputs.size() > KILN_VM_MAX_IO || p.outputs.size() > KILN_VM_MAX_IO ||
      p.dim_vars.size() > KILN_VM_MAX_IO) {
    return absl::InvalidArgumentError(absl::StrCat(
        "VM program: ", p.functions.size(), " functions, ", p.kernels.size(), " kernels, ",
        p.inputs.size(), " inputs, ", p.outputs.size(), " outputs exceed the VM format's limits"));
  }
  // Strings: the Fatal messages first (their operands point there), then
  // every name.
  std::string strings = p.messages;
  auto add_name = [&](const std::string& s) {
    uint32_t off = static_cast<uint32_t>(strings.size());
    strings += s;
    return std::pair<uint32_t, uint32_t>(off, static_cast<uint32_t>(s.size()));
  };
  std::vector<std::pair<uint32_t, uint32_t>> fn_names, kernel_names, var_names;
  for (const VmFunction& f : p.functions) {
    if (f.name.size() > 4095) return absl::InvalidArgumentError("VM program: a function name is too long");
    fn_names.push_back(add_name(f.name));
  }
  for (const std::string& k : p.kernels) kernel_names.push_back(add_name(k));
  for (const std::string& v : p.dim_vars) var_names.push_back(add_name(v));

  std::vector<int32_t> code;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const VmFunction& f : p.functions) {
    uint64_t begin = code.size();
    for (const VmInstr& in : f.instrs) {
      code.push_back(in.op);
      code.insert(code.end(), in.operands.begin(), in.operands.end());
    }
    ranges.push_back({begin, code.size() - begin});
  }
  if (code.size() > KILN_VM_MAX_CODE_WORDS) {
    return absl::InvalidArgumentError(
        absl::StrCat("VM program: ", code.size(), " code words exceed the format's limit"));
  }

  std::string out;
  out.append(KILN_VM_MAGIC, 6);
  out.append(2, '\0');
  Put32(&out, KILN_VM_FORMAT_VERSION);
  Put32(&out, p.main);
  Put32(&out, static_cast<uint32_t>(p.functions.size()));
  Put32(&out, static_cast<uint32_t>(p.kernels.size()));
  Put32(&out, static_cast<uint32_t>(p.constants.size()));
  Put32(&out, static_cast<uint32_t>(p.dim_vars.size()));
  Put32(&out, static_cast<uint32_t>(p.inputs.size()));
  Put32(&out, static_cast<uint32_t>(p.outputs.size()));
  const size_t offsets_at = out.size();
  for (int i = 0; i < 9; ++i) Put64(&out, 0);  // filled below
  static_assert(sizeof(KilnVmHeader) == 112, "KilnVmHeader layout");

  Set64(&out, offsets_at + 0, out.size());  // functions
  for (size_t f = 0; f < p.functions.size(); ++f) {
    Put32(&out, fn_names[f].first);
    Put32(&out, fn_names[f].second);
    Put32(&out, p.functions[f].num_params);
    Put32(&out, p.functions[f].num_registers);
    Put64(&out, ranges[f].first);
    Put64(&out, ranges[f].second);
  }
  Set64(&out, offsets_at + 8, out.size());  // kernels
  for (const auto& [off, size] : kernel_names) {
    Put32(&out, off);
    Put32(&out, size);
  }
  Set64(&out, offsets_at + 16, out.size());  // constants
  for (size_t c = 0; c < p.constants.size(); ++c) Put32(&out, static_cast<uint32_t>(c));
  Align8(&out);
  Set64(&out, offsets_at + 24, out.size());  // dim variables
  for (const auto& [off, size] : var_names) {
    Put32(&out, off);
    Put32(&out, size);
  }
  Set64(&out, offsets_at + 32, out.size());  // types
  for (const std::vector<VmTensorType>* list : {&p.inputs, &p.outputs}) {
    for (const VmTensorType& t : *list) {
      out.push_back(static_cast<char>(static_cast<uint8_t>(t.dtype.code())));
      out.push_back(static_cast<char>(t.dtype.bits()));
      out.push_back(static_cast<char>(t.dtype.lanes() & 0xff));
      out.push_back(static_cast<char>((t.dtype.lanes() >> 8) & 0xff));
      Put32(&out, static_cast<uint32_t>(t.dims.size()) | (t.sequence ? KILN_VM_TYPE_SEQUENCE : 0u) |
                      (t.optional ? KILN_VM_TYPE_OPTIONAL : 0u));
      for (int64_t d : t.dims) Put64(&out, static_cast<uint64_t>(d));
    }
  }
  Set64(&out, offsets_at + 40, out.size());  // strings
  Set64(&out, offsets_at + 48, strings.size());
  out += strings;
  Align8(&out);
  Set64(&out, offsets_at + 56, out.size());  // code
  Set64(&out, offsets_at + 64, code.size());
  for (int32_t w : code) Put32(&out, static_cast<uint32_t>(w));
  return out;
}

std::string Disassemble(const VmProgram& p) {
  static const char* const kNames[KILN_VM_NUM_OPCODES] = {
      "Move",        "Ret",            "Invoke",   "InvokeClosure", "InvokePacked",
      "AllocTensor", "AllocTensorReg", "AllocADT", "AllocClosure",  "GetField",
      "If",          "LoadConst",      "Goto",     "GetTag",        "LoadConsti",
      "Fatal",       "AllocStorage",   "ShapeOf",  "ReshapeTensor", "DeviceCopy",
      "KillRegister", "SetField"};
  std::string out;
  for (size_t f = 0; f < p.functions.size(); ++f) {
    const VmFunction& fn = p.functions[f];
    absl::StrAppend(&out, "func ", f, " ", fn.name, " params=", fn.num_params,
                    " registers=", fn.num_registers, f == p.main ? " (main)" : "", "\n");
    for (size_t i = 0; i < fn.instrs.size(); ++i) {
      const VmInstr& in = fn.instrs[i];
      const char* name = in.op >= 0 && in.op < KILN_VM_NUM_OPCODES ? kNames[in.op] : "?";
      absl::StrAppend(&out, "  ", i, ": ", name, " ", absl::StrJoin(in.operands, " "));
      if (in.op == KILN_VM_INVOKE_PACKED && !in.operands.empty() && in.operands[0] >= 0 &&
          static_cast<size_t>(in.operands[0]) < p.kernels.size()) {
        absl::StrAppend(&out, "  ; ", p.kernels[in.operands[0]]);
      }
      out += "\n";
    }
  }
  return out;
}

}  // namespace kiln::lowering::vm
