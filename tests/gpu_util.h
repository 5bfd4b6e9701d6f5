/* Helpers for the GPU tests: the skip rule and checked CUDA calls. */
#ifndef CUREDUCE_TEST_GPU_UTIL_H
#define CUREDUCE_TEST_GPU_UTIL_H

#include "test_util.h"

#include <cuda_runtime_api.h>
#include <limits.h>

/* Exit with CTest's skip code and the reason when there is no CUDA device (or no driver at
   all: cudaDriverGetVersion gives 0). Any other error (a driver too old for the runtime, say)
   fails the run: a broken GPU setup must not pass for a machine without one. */
static inline void gpu_require_device(void) {
  int count = 0, driver = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  const int no_driver = cudaDriverGetVersion(&driver) == cudaSuccess && driver == 0;
  if (e == cudaErrorNoDevice || (e == cudaSuccess && count == 0) || (e != cudaSuccess && no_driver)) {
    printf("skipped: no CUDA device\n");
    exit(TEST_SKIP_CODE);
  }
  if (e != cudaSuccess) {
    printf("cudaGetDeviceCount failed: %s\n", cudaGetErrorString(e));
    exit(1);
  }
}

/* CUREDUCE_TEST_MAX_N, the cap on a GPU test's sizes (the sanitizer runs set it), or `uncapped`
   where it is not set. A value that is not a positive decimal integer fails the run, and a cap
   is printed, so that a capped run is never taken for a full one. */
static inline uint64_t gpu_test_max_n(uint64_t uncapped) {
  const char *cap = getenv("CUREDUCE_TEST_MAX_N");
  if (!cap)
    return uncapped;
  char *end = NULL;
  const unsigned long long n = cap[0] >= '0' && cap[0] <= '9' ? strtoull(cap, &end, 10) : 0;
  if (n == 0 || n == ULLONG_MAX || *end != '\0') {
    printf("CUREDUCE_TEST_MAX_N=%s: not a positive decimal integer\n", cap);
    exit(1);
  }
  printf("# capped: CUREDUCE_TEST_MAX_N=%llu, larger sizes left out\n", n);
  return n;
}

#define CUDA_OK(call)                                                                                        \
  do {                                                                                                       \
    const cudaError_t e_ = (call);                                                                           \
    if (e_ != cudaSuccess)                                                                                   \
      fail_msg("%s failed: %s", #call, cudaGetErrorString(e_));                                              \
  } while (0)

#endif
