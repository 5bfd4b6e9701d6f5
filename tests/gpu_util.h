/* Helpers for the GPU tests: the skip rule and checked CUDA calls. */
#ifndef CUREDUCE_TEST_GPU_UTIL_H
#define CUREDUCE_TEST_GPU_UTIL_H

#include "test_util.h"

#include <cuda_runtime_api.h>

/* Exit with CTest's skip code and the reason when there is no CUDA device. */
static inline void gpu_require_device(void) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    printf("skipped: no CUDA device\n");
    exit(TEST_SKIP_CODE);
  }
}

#define CUDA_OK(call)                                                                                        \
  do {                                                                                                       \
    const cudaError_t e_ = (call);                                                                           \
    if (e_ != cudaSuccess)                                                                                   \
      fail_msg("%s failed: %s", #call, cudaGetErrorString(e_));                                              \
  } while (0)

#endif
