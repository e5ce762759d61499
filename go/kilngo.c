/* go/kilngo.c: see kilngo.h. */
#include "kilngo.h"

#include <stddef.h>

#include "_cgo_export.h"

static DLTensor describe(void* data, int32_t ndim, int64_t* shape, uint8_t code, uint8_t bits,
                         uint16_t lanes) {
  DLTensor t;
  t.data = data;
  t.device.device_type = kDLCPU;
  t.device.device_id = 0;
  t.ndim = ndim;
  t.dtype.code = code;
  t.dtype.bits = bits;
  t.dtype.lanes = lanes;
  t.shape = shape;
  t.strides = NULL;
  t.byte_offset = 0;
  return t;
}

KilnStatus* kilngo_set_input(KilnSession* session, const char* name, int32_t index, void* data,
                             int32_t ndim, int64_t* shape, uint8_t code, uint8_t bits,
                             uint16_t lanes) {
  DLTensor t = describe(data, ndim, shape, code, bits, lanes);
  if (index >= 0) return kiln_session_set_input_index(session, index, &t);
  return kiln_session_set_input(session, name, &t);
}

KilnStatus* kilngo_copy_output(KilnSession* session, int32_t index, void* data, int32_t ndim,
                               int64_t* shape, uint8_t code, uint8_t bits, uint16_t lanes) {
  DLTensor t = describe(data, ndim, shape, code, bits, lanes);
  return kiln_session_copy_output(session, index, &t);
}

void kilngo_delete(DLManagedTensor* tensor) {
  if (tensor != NULL && tensor->deleter != NULL) tensor->deleter(tensor);
}

static void after_pass(void* user_data, const char* pass_name, int32_t changed, double elapsed_ms,
                       const char* module_text) {
  kilngoAfterPass((uintptr_t)user_data, (char*)pass_name, changed, elapsed_ms,
                  (char*)module_text);
}

KilnStatus* kilngo_optimize(const KilnModel* model, KilnOptimizeOptions* options,
                            uintptr_t handle, KilnModel** out) {
  if (handle != 0) {
    options->after_pass = after_pass;
    options->after_pass_user_data = (void*)handle;
  }
  return kiln_model_optimize(model, options, out);
}

static void compile_progress(void* user_data, const char* phase, int32_t done, int32_t total) {
  kilngoCompileProgress((uintptr_t)user_data, (char*)phase, done, total);
}

KilnStatus* kilngo_compile(const KilnModel* model, KilnCompileOptions* options, uintptr_t handle,
                           const char* path, KilnCompileReport* report) {
  if (handle != 0) {
    options->progress = compile_progress;
    options->progress_user_data = (void*)handle;
  }
  return kiln_model_compile(model, options, path, report);
}
