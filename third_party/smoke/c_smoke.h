/* A tiny C11 library: the shape of runtime_c code (DLPack + cJSON). */
#ifndef KILN_THIRD_PARTY_SMOKE_C_SMOKE_H_
#define KILN_THIRD_PARTY_SMOKE_C_SMOKE_H_

#include <stdint.h>

#include "dlpack/dlpack.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Number of elements of a tensor (product of its shape). */
int64_t kiln_smoke_numel(const DLTensor* t);

/* Reads {"num_threads": N} and returns N, or -1 on a malformed document. */
int kiln_smoke_parse_threads(const char* json);

#ifdef __cplusplus
}
#endif

#endif /* KILN_THIRD_PARTY_SMOKE_C_SMOKE_H_ */
