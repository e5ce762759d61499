/* A plain C11 test: exits 0 on success. */
#include "third_party/smoke/c_smoke.h"

#include <stdio.h>

#if !defined(__STDC_VERSION__) || __STDC_VERSION__ != 201112L
#error "kiln C code is C11"
#endif

int main(void) {
  int64_t shape[3] = {2, 3, 4};
  DLTensor t = {0};
  t.ndim = 3;
  t.shape = shape;
  if (kiln_smoke_numel(&t) != 24) {
    fprintf(stderr, "numel\n");
    return 1;
  }
  if (kiln_smoke_parse_threads("{\"num_threads\": 8}") != 8) {
    fprintf(stderr, "parse\n");
    return 1;
  }
  if (kiln_smoke_parse_threads("{oops") != -1) {
    fprintf(stderr, "malformed\n");
    return 1;
  }
  return 0;
}
