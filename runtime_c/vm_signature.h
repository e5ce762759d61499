/* File: runtime_c/vm_signature.h  (internal to runtime_c)
 *
 * Checks against main's signature in a VM program (vm_signature.c).
 */
#ifndef KILN_RUNTIME_C_VM_SIGNATURE_H_
#define KILN_RUNTIME_C_VM_SIGNATURE_H_

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#include "kiln/status.h"
#include "runtime_c/vm_program.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Input `index` against its type: dtype, ndim, static dims ("input 'x':
 * expected float32[N,4], got float32[2,5]"). */
KILN_VM_HIDDEN KilnStatus* kiln_vm_signature_check_input(const KilnVmProgram* program,
                                                         uint32_t index, const DLTensor* tensor,
                                                         const char* name);
/* Element k of sequence input `index` against the element type. */
KILN_VM_HIDDEN KilnStatus* kiln_vm_signature_check_element(const KilnVmProgram* program,
                                                           uint32_t index, uint32_t k,
                                                           const DLTensor* tensor, const char* name);
/* Every input's symbolic dims agree (inputs already checked one by one);
 * `what` names the artifact in the message. */
KILN_VM_HIDDEN KilnStatus* kiln_vm_signature_check_dims(const KilnVmProgram* program,
                                                        const DLTensor* const* inputs,
                                                        const char* what);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_RUNTIME_C_VM_SIGNATURE_H_ */
