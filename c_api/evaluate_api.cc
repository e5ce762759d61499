// File: c_api/evaluate_api.cc
//
// kiln_model_evaluate (kiln/kiln.h): main run by kiln's reference
// interpreter (interpreter/interpreter.h) on the caller's tensors, without
// compiling: every construct of the graph language, slowly. For checking a
// compiled model's answers and for programs a user wants to try before
// compiling.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "c_api/api_internal.h"
#include "interpreter/interpreter.h"
#include "ir/status_macros.h"
#include "kiln/kiln.h"

using kiln::capi::Guard;
using kiln::capi::RequireLiveModel;
using kiln::capi::RequireNonNull;

namespace {

// The managed copy of one output, in one allocation with its shape.
struct EvalTensor {
  DLManagedTensor managed;
  kiln::Ref<const kiln::HostTensor> keep;  // the interpreter's tensor (the data)
  std::vector<int64_t> shape;
};

void DeleteEvalTensor(DLManagedTensor* self) {
  if (self == nullptr) return;
  delete static_cast<EvalTensor*>(self->manager_ctx);
}

absl::StatusOr<kiln::DataType> DataTypeOf(const DLTensor& t, const std::string& what) {
  if (t.dtype.lanes != 1) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": vector dtypes (lanes ", t.dtype.lanes,
                                                   ") are not model inputs"));
  }
  switch (t.dtype.code) {
    case kDLInt:
    case kDLUInt:
      if (t.dtype.bits == 8 || t.dtype.bits == 16 || t.dtype.bits == 32 || t.dtype.bits == 64) {
        return kiln::DataType(t.dtype.code == kDLInt ? kiln::DTypeCode::kInt : kiln::DTypeCode::kUInt,
                              t.dtype.bits);
      }
      break;
    case kDLFloat:
      if (t.dtype.bits == 16 || t.dtype.bits == 32 || t.dtype.bits == 64) {
        return kiln::DataType::Float(t.dtype.bits);
      }
      break;
    case kDLBfloat:
      if (t.dtype.bits == 16) return kiln::DataType(kiln::DTypeCode::kBFloat, 16);
      break;
    case 6:  // bool
      if (t.dtype.bits == 8) return kiln::DataType::Bool();
      break;
    default:
      break;
  }
  return absl::InvalidArgumentError(absl::StrCat(what, ": unsupported dtype (code ", t.dtype.code,
                                                 ", bits ", t.dtype.bits, ")"));
}

// A host copy of input `i`, checked against main's parameter.
absl::StatusOr<kiln::Ref<kiln::HostTensor>> InputTensor(const KilnModel* model, int32_t i,
                                                        const DLTensor* t) {
  const KilnTensorSignature& sig = model->inputs[static_cast<size_t>(i)];
  const std::string what = absl::StrCat("input ", i, " ('", sig.name, "')");
  if (t == nullptr) return absl::InvalidArgumentError(absl::StrCat(what, " is NULL"));
  // Read as an int: a C caller may pass any value, which C++ may not hold
  // in the enum.
  int32_t device = 0;
  static_assert(sizeof(t->device.device_type) == sizeof(device), "DLDeviceType is an int");
  std::memcpy(&device, &t->device.device_type, sizeof device);
  if (device != kDLCPU) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": the tensor must be in CPU memory"));
  }
  if (t->ndim < 0 || t->ndim > 32 || (t->ndim > 0 && t->shape == nullptr)) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": ndim ", t->ndim, " or its shape is bad"));
  }
  KILN_ASSIGN_OR_RETURN(kiln::DataType dtype, DataTypeOf(*t, what));
  if (sig.is_tensor) {
    if (t->dtype.code != sig.dtype.code || t->dtype.bits != sig.dtype.bits ||
        static_cast<size_t>(t->ndim) != sig.shape.size()) {
      KILN_ASSIGN_OR_RETURN(kiln::DataType want, DataTypeOf(DLTensor{nullptr, {kDLCPU, 0}, 0,
                                                                      sig.dtype, nullptr, nullptr,
                                                                      0},
                                                             what));
      return absl::InvalidArgumentError(absl::StrCat(what, ": expected ", want.ToString(),
                                                     " of rank ", sig.shape.size(), ", got ",
                                                     dtype.ToString(), " of rank ", t->ndim));
    }
  } else {
    return absl::InvalidArgumentError(absl::StrCat(what, " is not a tensor parameter"));
  }
  std::vector<int64_t> shape(t->shape, t->shape + t->ndim);
  uint64_t bytes = static_cast<uint64_t>((dtype.bits() + 7) / 8);
  for (int d = 0; d < t->ndim; ++d) {
    if (shape[d] < 0) return absl::InvalidArgumentError(absl::StrCat(what, ": negative dim"));
    if (sig.is_tensor && sig.shape[d] >= 0 && sig.shape[d] != shape[d]) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": dim ", d, " is ", shape[d],
                                                     ", the model says ", sig.shape[d]));
    }
    if (shape[d] != 0 && bytes > (uint64_t{1} << 56) / static_cast<uint64_t>(shape[d])) {
      return absl::InvalidArgumentError(absl::StrCat(what, " exceeds 2^56 bytes"));
    }
    bytes *= static_cast<uint64_t>(shape[d]);
  }
  if (t->strides != nullptr && bytes > 0) {
    int64_t expect = 1;
    for (int d = t->ndim - 1; d >= 0; --d) {
      if (shape[d] != 1 && t->strides[d] != expect) {
        return absl::InvalidArgumentError(absl::StrCat(what, ": strides are not compact row-major"));
      }
      expect *= shape[d];
    }
  }
  if (t->data == nullptr && bytes > 0) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": data is NULL"));
  }
  // A byte_offset whose range cannot be an address (2^56 bytes and past: more
  // than any machine kiln runs on maps; or one that wraps) is refused, as the
  // runtime's set_input does, not handed to memcpy (the C API fuzz target
  // found a SIGSEGV here with byte_offset 2^56).
  constexpr uint64_t kMaxAddress = uint64_t{1} << 56;
  const uint64_t base = reinterpret_cast<uintptr_t>(t->data);
  if (bytes > 0 && (t->byte_offset >= kMaxAddress || base >= kMaxAddress ||
                    t->byte_offset > kMaxAddress - base ||
                    bytes > kMaxAddress - base - t->byte_offset)) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": byte_offset ", t->byte_offset, " does not fit: data ",
                     absl::Hex(base), " + byte_offset + the tensor's ", bytes,
                     " bytes is not an address range"));
  }
  const char* src = static_cast<const char*>(t->data) + t->byte_offset;
  return kiln::HostTensor::FromBytes(dtype, std::move(shape), bytes > 0 ? src : "",
                                     static_cast<size_t>(bytes));
}

void Flatten(const kiln::interp::Value& v, std::vector<kiln::Ref<const kiln::HostTensor>>* out,
             bool* ok) {
  if (v.is_tensor()) {
    out->push_back(v.tensor());
  } else if (v.is_tuple()) {
    for (const kiln::interp::Value& f : v.fields()) Flatten(f, out, ok);
  } else {
    *ok = false;
  }
}

}  // namespace

KilnStatus* kiln_model_evaluate(const KilnModel* model, const DLTensor* const* inputs,
                                int32_t num_inputs, DLManagedTensor*** out_outputs,
                                int32_t* out_num_outputs) {
  static const char kFn[] = "kiln_model_evaluate";
  if (out_outputs != nullptr) *out_outputs = nullptr;
  if (out_num_outputs != nullptr) *out_num_outputs = 0;
  if (KilnStatus* st = RequireNonNull(kFn, {{"model", model},
                                            {"out_outputs", out_outputs},
                                            {"out_num_outputs", out_num_outputs}})) {
    return st;
  }
  if (KilnStatus* st = RequireLiveModel(kFn, model)) return st;
  return Guard(kFn, [&]() -> absl::Status {
    if (!model->has_main) return absl::InvalidArgumentError("the model has no function 'main'");
    if (num_inputs != static_cast<int32_t>(model->inputs.size())) {
      return absl::InvalidArgumentError(absl::StrCat("main takes ", model->inputs.size(),
                                                     " inputs, got ", num_inputs));
    }
    if (num_inputs > 0 && inputs == nullptr) {
      return absl::InvalidArgumentError("inputs is NULL");
    }
    std::vector<kiln::interp::Value> args;
    for (int32_t i = 0; i < num_inputs; ++i) {
      KILN_ASSIGN_OR_RETURN(kiln::Ref<kiln::HostTensor> t, InputTensor(model, i, inputs[i]));
      args.push_back(kiln::interp::Value::Tensor(t));
    }
    KILN_ASSIGN_OR_RETURN(kiln::interp::Value result,
                          kiln::interp::RunFunction(model->module, "main", args));
    std::vector<kiln::Ref<const kiln::HostTensor>> tensors;
    bool ok = true;
    Flatten(result, &tensors, &ok);
    if (!ok) {
      return absl::UnimplementedError(
          "main returned a value that is not a tensor or a tuple of tensors (an ADT, a closure "
          "or a reference): there is no tensor to hand back");
    }
    auto** array = static_cast<DLManagedTensor**>(
        std::calloc(tensors.size() > 0 ? tensors.size() : 1, sizeof(DLManagedTensor*)));
    if (array == nullptr) return absl::ResourceExhaustedError("out of memory");
    for (size_t i = 0; i < tensors.size(); ++i) {
      auto* e = new (std::nothrow) EvalTensor;
      if (e == nullptr) {
        for (size_t j = 0; j < i; ++j) array[j]->deleter(array[j]);
        std::free(array);
        return absl::ResourceExhaustedError("out of memory");
      }
      const kiln::HostTensor& h = *tensors[i];
      e->keep = tensors[i];
      e->shape = h.shape();
      DLTensor& t = e->managed.dl_tensor;
      t.data = const_cast<void*>(h.raw_data());
      t.device = {kDLCPU, 0};
      t.ndim = h.ndim();
      t.dtype = {static_cast<uint8_t>(h.dtype().code()), static_cast<uint8_t>(h.dtype().bits()),
                 static_cast<uint16_t>(h.dtype().lanes())};
      t.shape = e->shape.data();
      t.strides = nullptr;
      t.byte_offset = 0;
      e->managed.manager_ctx = e;
      e->managed.deleter = DeleteEvalTensor;
      array[i] = &e->managed;
    }
    *out_outputs = array;
    *out_num_outputs = static_cast<int32_t>(tensors.size());
    return absl::OkStatus();
  });
}
