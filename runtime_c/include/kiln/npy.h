/* File: runtime_c/include/kiln/npy.h
 *
 * NumPy .npy files (format 1.0/2.0/3.0, little-endian, C order) for tensor
 * dumps and test data. dtypes: float16/32/64, int8..64, uint8..64, bool
 * ('|b1'); bfloat16 is written as '<u2' with the 16-bit patterns (NumPy has no
 * bfloat16) and read back as uint16.
 */
#ifndef KILN_NPY_H_
#define KILN_NPY_H_

#include <stdint.h>

#include <dlpack/dlpack.h>

#include "kiln/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes a compact CPU tensor to `path`. */
KilnStatus* kiln_npy_write(const char* path, const DLTensor* tensor);

/* A tensor read from a file: tensor.data, tensor.shape are owned by it. */
typedef struct KilnNpyTensor {
  DLTensor tensor;
} KilnNpyTensor;

/* Reads `path`; a malformed header, unsupported dtype, Fortran order or
 * short data gives KILN_INVALID_ARGUMENT / KILN_DATA_LOSS naming the file. */
KilnStatus* kiln_npy_read(const char* path, KilnNpyTensor** out);
void kiln_npy_release(KilnNpyTensor* t);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* KILN_NPY_H_ */
