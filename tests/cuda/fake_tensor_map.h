/* File: tests/cuda/fake_tensor_map.h
 *
 * The 128-byte CUtensorMap as kiln's host emulation writes and reads it: the
 * fake driver's cuTensorMapEncodeTiled (tests/cuda/fake_driver.c), the
 * emulator's launches (tests/cuda/emulate.cc) and the emulated
 * cp.async.bulk.tensor of the host shim (tests/cuda/emulate_host.cc, which
 * reads the same words) agree on this layout. A real driver's map is opaque;
 * only these tests look inside one. Sixteen little-endian 64-bit words:
 *
 *   w[0]        KILN_FAKE_TENSOR_MAP_MAGIC
 *   w[1]        the global address (the buffer's first element)
 *   w[2]        CUtensorMapDataType (6 float16, 7 float32, 9 bfloat16, ...)
 *   w[3]        rank, 1 .. 5
 *   w[4 + d]    dims[d] in elements, innermost first (d < rank; 0 past it)
 *   w[9 + d]    strides of dims 1 .. rank-1 in bytes (w[9] dim 1's; 0 past it)
 *   w[14]       box dims, 12 bits each: box[d] at bit 12 * d (d < 5)
 *   w[15]       CUtensorMapSwizzle (0 none, 1 32B, 2 64B, 3 128B) | element bytes << 8
 *
 * C and C++. */
#ifndef KILN_TESTS_CUDA_FAKE_TENSOR_MAP_H_
#define KILN_TESTS_CUDA_FAKE_TENSOR_MAP_H_

#include <stdint.h>
#include <string.h>

#define KILN_FAKE_TENSOR_MAP_MAGIC 0x50414d544e4c494bull /* "KILNTMAP" */

/* Bytes of an element of CUtensorMapDataType `dtype` (0 for one kiln does not use). */
static inline unsigned kiln_fake_tensor_map_elem_bytes(unsigned dtype) {
  switch (dtype) {
    case 0: return 1;                             /* UINT8 */
    case 1: case 6: case 9: return 2;             /* UINT16, FLOAT16, BFLOAT16 */
    case 2: case 3: case 7: case 10: case 11: case 12: return 4;
    case 4: case 5: case 8: return 8;
    default: return 0;
  }
}

/* Fills the 16 words at `out` (a 64-byte-aligned CUtensorMap); returns 0, or
 * 1 (CUDA_ERROR_INVALID_VALUE) when an argument breaks the driver's rules:
 * rank 1 .. 5, the address 16-byte aligned, dims 1 .. 2^32, strides multiples
 * of 16 below 2^40, box dims 1 .. 256 with the innermost box row a multiple
 * of 16 bytes and, when swizzled, no longer than the swizzle span, element
 * strides 1, interleave none. */
static inline int kiln_fake_tensor_map_encode(void* out, unsigned dtype, unsigned rank,
                                              const void* address, const uint64_t* dims,
                                              const uint64_t* strides, const uint32_t* box,
                                              const uint32_t* element_strides,
                                              unsigned interleave, unsigned swizzle) {
  uint64_t w[16];
  unsigned d;
  const unsigned elem = kiln_fake_tensor_map_elem_bytes(dtype);
  static const unsigned kSpan[4] = {0, 32, 64, 128};
  if (out == NULL || ((uintptr_t)out & 63u) != 0 || elem == 0 || rank < 1 || rank > 5 ||
      ((uintptr_t)address & 15u) != 0 || dims == NULL || box == NULL || interleave != 0 ||
      swizzle > 3 || (rank > 1 && strides == NULL)) {
    return 1;
  }
  memset(w, 0, sizeof(w));
  w[0] = KILN_FAKE_TENSOR_MAP_MAGIC;
  w[1] = (uint64_t)(uintptr_t)address;
  w[2] = dtype;
  w[3] = rank;
  for (d = 0; d < rank; ++d) {
    if (dims[d] < 1 || dims[d] > (1ull << 32) || box[d] < 1 || box[d] > 256 ||
        (element_strides != NULL && element_strides[d] != 1)) {
      return 1;
    }
    w[4 + d] = dims[d];
    w[14] |= (uint64_t)box[d] << (12 * d);
    if (d > 0) {
      if (strides[d - 1] % 16 != 0 || strides[d - 1] >= (1ull << 40)) return 1;
      w[9 + d - 1] = strides[d - 1];
    }
  }
  if ((box[0] * elem) % 16 != 0 || (swizzle != 0 && box[0] * elem > kSpan[swizzle])) return 1;
  w[15] = swizzle | ((uint64_t)elem << 8);
  memcpy(out, w, sizeof(w));
  return 0;
}

#endif /* KILN_TESTS_CUDA_FAKE_TENSOR_MAP_H_ */
