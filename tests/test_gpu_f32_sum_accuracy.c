/* Float sums into f32 land within one unit in the last place of the exact sum: the full-array
 * kernel carries each partial's rounding error (src/device/compensated_sum.cuh) and rounds once
 * at the end. Plain f32 summation in the same order was 1 to 4 ulps off at these sizes (the
 * bench's f32 relative error, 1.2e-7 to 4e-7, on the H100), so this bound fails without compensation.
 * Positive data, so that the exact sum is not a small difference of large ones (then no f32
 * method is within an ulp). f32, f16 and bf16 inputs, sum and mean, aligned and misaligned.
 *
 * CUREDUCE_TEST_MAX_N caps the sizes (the sanitizer runs use it to stay within time). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "gpu_util.h"

#include <math.h>
#include <string.h>

static const uint64_t SIZES[] = {4097, 1000003, 4194305, 16777223};

/* Units in the last place between two finite positive floats. */
static long ulps_apart(float a, float b) {
  int32_t x, y;
  memcpy(&x, &a, 4);
  memcpy(&y, &b, 4);
  return labs((long)x - (long)y);
}

static void f32_sums_should_be_within_one_ulp_of_exact(void **state) {
  (void)state;
  uint64_t max_n = gpu_test_max_n(SIZES[3]);
  if (max_n > SIZES[3])
    max_n = SIZES[3];
  const cureduce_dtype dts[] = {CUREDUCE_F32, CUREDUCE_F16, CUREDUCE_BF16};
  const cureduce_op ops[] = {CUREDUCE_SUM, CUREDUCE_MEAN};
  cureduce_handle h;
  assert_int_equal(cureduce_create(&h), CUREDUCE_SUCCESS);
  void *d_in = NULL, *h_in = malloc((max_n + 1) * 4);
  assert_non_null(h_in);
  CUDA_OK(cudaMalloc(&d_in, (max_n + 1) * 4));
  uint64_t rng = tu_seed();
  int checked = 0;
  for (size_t k = 0; k < sizeof dts / sizeof dts[0]; ++k) {
    const size_t size = cureduce_dtype_size(dts[k]);
    for (size_t s = 0; s < sizeof SIZES / sizeof SIZES[0]; ++s) {
      const uint64_t n = SIZES[s];
      if (n > max_n)
        continue;
      for (unsigned offset = 0; offset < 2; ++offset) {
        for (uint64_t i = 0; i < n; ++i)
          (void)cureduce_from_double(dts[k], tu_uniform(&rng), (char *)h_in + i * size);
        char *d = (char *)d_in + offset * size;
        CUDA_OK(cudaMemcpy(d, h_in, n * size, cudaMemcpyHostToDevice));
        double exact;
        assert_int_equal(cureduce_cpu_sum_exact(dts[k], h_in, n, CUREDUCE_F64, &exact), CUREDUCE_SUCCESS);
        for (size_t o = 0; o < sizeof ops / sizeof ops[0]; ++o) {
          float got;
          assert_int_equal(cureduce_reduce_to_host(h, ops[o], dts[k], d, n, CUREDUCE_F32, &got, NULL),
                           CUREDUCE_SUCCESS);
          /* exact is the exact sum rounded to double: rounding it to float is the correctly
             rounded result, or one ulp from it in a double-rounding tie (within the bound). */
          const float want = (float)(ops[o] == CUREDUCE_MEAN ? exact / (double)n : exact);
          if (!(got > 0) || ulps_apart(got, want) > 1)
            fail_msg("%s %s->f32 n=%llu offset %u: GPU %.9g, exact %.9g (%ld ulps)", cureduce_op_name(ops[o]),
                     cureduce_dtype_name(dts[k]), (unsigned long long)n, offset, got, want,
                     got > 0 ? ulps_apart(got, want) : -1L);
          ++checked;
        }
      }
    }
  }
  assert_true(checked > 0);
  CUDA_OK(cudaFree(d_in));
  free(h_in);
  assert_int_equal(cureduce_destroy(h), CUREDUCE_SUCCESS);
}

int main(void) {
  gpu_require_device();
  const struct CMUnitTest tests[] = {cmocka_unit_test(f32_sums_should_be_within_one_ulp_of_exact)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
