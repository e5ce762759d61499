/* go/kilngo.h: C glue for the Go package (cgo cannot do these in Go).
 *
 * A DLTensor describing Go memory must live in C memory (Go memory handed to
 * C may not hold Go pointers), so these build it on the C stack from
 * separate arguments and make the one kiln call. Nothing here keeps a Go
 * pointer after it returns; nothing calls anything but the C API.
 */
#ifndef KILN_GO_KILNGO_H_
#define KILN_GO_KILNGO_H_

#include <stdint.h>

#include <kiln/kiln.h>

/* kiln_session_set_input (index < 0) or kiln_session_set_input_index. */
KilnStatus* kilngo_set_input(KilnSession* session, const char* name, int32_t index, void* data,
                             int32_t ndim, int64_t* shape, uint8_t code, uint8_t bits,
                             uint16_t lanes);
/* kiln_session_copy_output into `data` (dtype and shape as given). */
KilnStatus* kilngo_copy_output(KilnSession* session, int32_t index, void* data, int32_t ndim,
                               int64_t* shape, uint8_t code, uint8_t bits, uint16_t lanes);
/* Calls a DLManagedTensor's deleter (cgo cannot call C function pointers). */
void kilngo_delete(DLManagedTensor* tensor);
/* kiln_model_optimize with after_pass calling the Go callback registered
 * under cgo.Handle `handle` (0: no callback). */
KilnStatus* kilngo_optimize(const KilnModel* model, KilnOptimizeOptions* options,
                            uintptr_t handle, KilnModel** out);
/* kiln_model_compile with progress calling the Go callback registered under
 * cgo.Handle `handle` (0: no callback). */
KilnStatus* kilngo_compile(const KilnModel* model, KilnCompileOptions* options, uintptr_t handle,
                           const char* path, KilnCompileReport* report);

#endif /* KILN_GO_KILNGO_H_ */
