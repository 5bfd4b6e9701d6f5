/* 64-bit sizes: an i8 array of 2^32 + 4099 elements (4 GiB) reduces correctly, and argmin and
 * argmax return indices beyond 2^32. Skipped (with the reason) where the GPU lacks the memory
 * or CUREDUCE_TEST_MAX_N caps the sizes (the sanitizer runs). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "gpu_util.h"

#define N ((1ull << 32) + 4099)

static void reductions_over_more_than_2pow32_elements_should_be_exact(void **state) {
  (void)state;
  int8_t *d;
  CUDA_OK(cudaMalloc((void **)&d, N));
  CUDA_OK(cudaMemset(d, 1, N));                 /* every element 1 ... */
  const int8_t big = 100, small = -5, mid = 50; /* ... but three, placed across 2^32 */
  const uint64_t at_big = (1ull << 32) + 17, at_small = N - 1, at_mid = 3;
  CUDA_OK(cudaMemcpy(d + at_big, &big, 1, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(d + at_small, &small, 1, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(d + at_mid, &mid, 1, cudaMemcpyHostToDevice));
  cureduce_handle h;
  assert_int_equal(cureduce_create(&h), 0);
  int64_t v;
  assert_int_equal(cureduce_reduce_to_host(h, CUREDUCE_SUM, CUREDUCE_I8, d, N, CUREDUCE_I64, &v, NULL), 0);
  assert_true(v == (int64_t)(N - 3) + 100 - 5 + 50);
  assert_int_equal(cureduce_reduce_to_host(h, CUREDUCE_ARGMAX, CUREDUCE_I8, d, N, CUREDUCE_I64, &v, NULL), 0);
  assert_true(v == (int64_t)at_big);
  assert_int_equal(cureduce_reduce_to_host(h, CUREDUCE_ARGMIN, CUREDUCE_I8, d, N, CUREDUCE_I64, &v, NULL), 0);
  assert_true(v == (int64_t)at_small);
  /* misaligned start, one element shorter: the head/tail split must hold at 64-bit sizes too */
  assert_int_equal(
      cureduce_reduce_to_host(h, CUREDUCE_SUM, CUREDUCE_I8, d + 1, N - 1, CUREDUCE_I64, &v, NULL), 0);
  assert_true(v == (int64_t)(N - 3) + 100 - 5 + 50 - 1); /* element 0 (a 1) left out */
  int32_t w;
  assert_int_equal(cureduce_reduce_to_host(h, CUREDUCE_SUM, CUREDUCE_I8, d, N, CUREDUCE_I32, &w, NULL), 0);
  assert_true(w == (int32_t)(uint32_t)((N - 3) + 100 - 5 + 50)); /* wraps modulo 2^32 */
  assert_int_equal(cureduce_destroy(h), 0);
  CUDA_OK(cudaFree(d));
}

int main(void) {
  gpu_require_device();
  if (gpu_test_max_n(N) < N) {
    printf("skipped: CUREDUCE_TEST_MAX_N is below 2^32 + 4099\n");
    return TEST_SKIP_CODE;
  }
  size_t free_bytes = 0, total = 0;
  if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess || free_bytes < N + (256u << 20)) {
    printf("skipped: the GPU has %zu bytes free, the test needs 4.3 GB\n", free_bytes);
    return TEST_SKIP_CODE;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(reductions_over_more_than_2pow32_elements_should_be_exact),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
