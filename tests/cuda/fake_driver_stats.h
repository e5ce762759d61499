/* File: tests/cuda/fake_driver_stats.h
 *
 * What tests/cuda/fake_driver.c (libkiln_fake_cuda.so) counts, read by the
 * tests through its kiln_fake_cuda_stats() (C and C++). */
#ifndef KILN_TESTS_CUDA_FAKE_DRIVER_STATS_H_
#define KILN_TESTS_CUDA_FAKE_DRIVER_STATS_H_

typedef struct {
  int last_image_is_cubin; /* 1 cubin, 0 PTX, -1 none yet */
  int modules_loaded;
  long long launches;
  long long live_allocations;
  unsigned last_grid[3], last_block[3];
  unsigned last_shared_bytes;   /* the last launch's dynamic shared memory */
  int max_dynamic_shared_set;   /* the last MAX_DYNAMIC_SHARED_SIZE_BYTES set */
  long long attributes_set;     /* cuFuncSetAttribute calls that succeeded */
  long long launches_refused;   /* launches asking more shared memory than allowed */
  long long tensor_maps_encoded;  /* cuTensorMapEncodeTiled calls that succeeded */
  long long tensor_maps_refused;  /* ... that returned CUDA_ERROR_INVALID_VALUE */
  unsigned long long last_tensor_map_address; /* the last encoded map's global address */
  int last_tensor_map_data_type;  /* its CUtensorMapDataType */
} KilnFakeCudaStats;

#endif /* KILN_TESTS_CUDA_FAKE_DRIVER_STATS_H_ */
