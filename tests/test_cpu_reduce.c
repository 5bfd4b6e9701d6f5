/* The CPU reductions keep the API's semantics: empty input, NaN, signed zeros, infinities,
 * subnormals, integer wrapping, and rounding in the chosen accumulator. CPU only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "test_util.h"

static float sum_f32(const float *x, uint64_t n) {
  float r = 12345.0f;
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_SUM, CUREDUCE_F32, x, n, CUREDUCE_F32, &r), 0);
  return r;
}

static void empty_sum_should_be_positive_zero(void **state) {
  (void)state;
  const float r = sum_f32(NULL, 0);
  assert_true(r == 0.0f && !signbit(r));
  int64_t i = 99;
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_SUM, CUREDUCE_I8, NULL, 0, CUREDUCE_ACC_DEFAULT, &i), 0);
  assert_int_equal(i, 0);
}

static void empty_min_and_max_should_report_empty_and_leave_output(void **state) {
  (void)state;
  float x = 1.0f, r = 7.0f;
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_MIN, CUREDUCE_F32, &x, 0, CUREDUCE_F32, &r), CUREDUCE_EMPTY);
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_MAX, CUREDUCE_F32, &x, 0, CUREDUCE_F32, &r), CUREDUCE_EMPTY);
  assert_true(r == 7.0f);
}

static void sum_of_negative_zeros_should_be_negative_zero(void **state) {
  (void)state;
  const float x[5] = {-0.0f, -0.0f, -0.0f, -0.0f, -0.0f};
  const float r = sum_f32(x, 5);
  assert_true(r == 0.0f && signbit(r));
  const float y[2] = {-0.0f, 0.0f};
  assert_false(signbit(sum_f32(y, 2)));
}

static void min_and_max_should_order_negative_zero_below_positive_zero(void **state) {
  (void)state;
  const float x[2] = {0.0f, -0.0f}, y[2] = {-0.0f, 0.0f};
  float r;
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_MIN, CUREDUCE_F32, x, 2, CUREDUCE_F32, &r), 0);
  assert_true(signbit(r));
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_MAX, CUREDUCE_F32, y, 2, CUREDUCE_F32, &r), 0);
  assert_false(signbit(r));
}

static void min_and_max_should_propagate_nan(void **state) {
  (void)state;
  const float x[4] = {1.0f, NAN, -5.0f, 3.0f};
  float r;
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_MIN, CUREDUCE_F32, x, 4, CUREDUCE_F32, &r), 0);
  assert_true(isnan(r));
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_MAX, CUREDUCE_F32, x, 4, CUREDUCE_F32, &r), 0);
  assert_true(isnan(r));
}

static void sum_should_follow_ieee_for_infinities_and_nan(void **state) {
  (void)state;
  const float a[3] = {1.0f, INFINITY, 2.0f}, b[3] = {INFINITY, 1.0f, -INFINITY}, c[2] = {NAN, 1.0f};
  assert_true(isinf(sum_f32(a, 3)) && sum_f32(a, 3) > 0);
  assert_true(isnan(sum_f32(b, 3)));
  assert_true(isnan(sum_f32(c, 2)));
  const float big[2] = {3e38f, 3e38f};
  assert_true(isinf(sum_f32(big, 2)));
}

static void subnormals_should_not_be_flushed(void **state) {
  (void)state;
  const float tiny = 1e-45f; /* the smallest subnormal */
  const float x[3] = {tiny, tiny, tiny};
  assert_true(sum_f32(x, 3) == 3 * tiny);
  float r;
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_MIN, CUREDUCE_F32, x, 3, CUREDUCE_F32, &r), 0);
  assert_true(r == tiny);
}

static void integer_sums_should_wrap_in_the_accumulator(void **state) {
  (void)state;
  const int64_t x[2] = {INT64_MAX, INT64_MAX};
  int64_t r;
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_SUM, CUREDUCE_I64, x, 2, CUREDUCE_I64, &r), 0);
  assert_int_equal(r, -2);
  const uint64_t n = (uint64_t)1 << 25;
  int8_t *y = malloc(n);
  memset(y, 127, n);
  int32_t r32;
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_SUM, CUREDUCE_I8, y, n, CUREDUCE_I32, &r32), 0);
  assert_int_equal(r32, (int32_t)(uint32_t)(127ull * n)); /* 127 * 2^25 mod 2^32 */
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_SUM, CUREDUCE_I8, y, n, CUREDUCE_I64, &r), 0);
  assert_int_equal(r, 127ll * (int64_t)n);
  free(y);
}

static void narrow_accumulators_should_round_every_addition(void **state) {
  (void)state;
  uint16_t h[3], out16;
  float f;
  const double v[3] = {2048, 1, 1}; /* in f16, 2048 + 1 rounds back to 2048 (ties to even) */
  for (int i = 0; i < 3; ++i)
    (void)cureduce_from_double(CUREDUCE_F16, v[i], &h[i]);
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_SUM, CUREDUCE_F16, h, 3, CUREDUCE_F16, &out16), 0);
  double r;
  (void)cureduce_to_double(CUREDUCE_F16, &out16, &r);
  assert_true(r == 2048.0);
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_SUM, CUREDUCE_F16, h, 3, CUREDUCE_F32, &f), 0);
  assert_true(f == 2050.0f);
  const double w[3] = {256, 1, 1}; /* bf16 has 8 significant bits: 257 rounds to 256 */
  for (int i = 0; i < 3; ++i)
    (void)cureduce_from_double(CUREDUCE_BF16, w[i], &h[i]);
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_SUM, CUREDUCE_BF16, h, 3, CUREDUCE_BF16, &out16), 0);
  (void)cureduce_to_double(CUREDUCE_BF16, &out16, &r);
  assert_true(r == 256.0);
}

static void fp8_inputs_should_decode_before_reducing(void **state) {
  (void)state;
  const uint8_t e4m3[3] = {0x7e /* 448 */, 0xfe /* -448 */, 0x01 /* 2^-9 */};
  float r;
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_MAX, CUREDUCE_F8_E4M3, e4m3, 3, CUREDUCE_F32, &r), 0);
  assert_true(r == 448.0f);
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_SUM, CUREDUCE_F8_E4M3, e4m3, 3, CUREDUCE_F32, &r), 0);
  assert_true(r == 0x1.0p-9f);
  const uint8_t e5m2[2] = {0x7c /* inf */, 0x3c /* 1 */};
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_SUM, CUREDUCE_F8_E5M2, e5m2, 2, CUREDUCE_F32, &r), 0);
  assert_true(isinf(r));
}

static void bad_arguments_should_return_a_status_and_write_nothing(void **state) {
  (void)state;
  float x[2] = {1, 2}, r = 9.0f;
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_SUM, CUREDUCE_F32, x, 2, CUREDUCE_I32, &r),
                   CUREDUCE_ERROR_UNSUPPORTED);
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_OP_COUNT, CUREDUCE_F32, x, 2, CUREDUCE_F32, &r),
                   CUREDUCE_ERROR_INVALID_OP);
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_SUM, (cureduce_dtype)77, x, 2, CUREDUCE_F32, &r),
                   CUREDUCE_ERROR_INVALID_DTYPE);
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_SUM, CUREDUCE_F32, NULL, 2, CUREDUCE_F32, &r),
                   CUREDUCE_ERROR_NULL_POINTER);
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_SUM, CUREDUCE_F32, x, 2, CUREDUCE_F32, NULL),
                   CUREDUCE_ERROR_NULL_POINTER);
  /* n elements spanning 2^63 bytes or more (2^62 + 1 f32 values): no memory holds them */
  assert_int_equal(
      cureduce_cpu_reduce(CUREDUCE_SUM, CUREDUCE_F32, x, ((uint64_t)1 << 61) + 2, CUREDUCE_F32, &r),
      CUREDUCE_ERROR_INVALID_VALUE);
  assert_int_equal(cureduce_cpu_sum_exact(CUREDUCE_F32, x, ((uint64_t)1 << 62) + 1, CUREDUCE_F32, &r),
                   CUREDUCE_ERROR_INVALID_VALUE);
  assert_true(r == 9.0f);
}

static void pairwise_sum_should_stay_close_to_the_exact_sum(void **state) {
  (void)state;
  uint64_t rng = tu_seed();
  const uint64_t n = 1000003;
  float *x = malloc(n * sizeof *x);
  tu_fill(CUREDUCE_F32, x, n, TU_RANDOM, 0, &rng);
  double exact, abs_sum = 0;
  assert_int_equal(cureduce_cpu_sum_exact(CUREDUCE_F32, x, n, CUREDUCE_F64, &exact), 0);
  for (uint64_t i = 0; i < n; ++i)
    abs_sum += fabs(x[i]);
  /* pairwise error bound: about log2(n) roundings of relative size 2^-24 each */
  const double bound = 21 * 0x1.0p-24 * abs_sum;
  const double got = sum_f32(x, n);
  if (fabs(got - exact) > bound)
    fail_msg("pairwise f32 sum %.9g, exact %.17g, bound %.3g", got, exact, bound);
  free(x);
}

/* f16, e5m2 and e4m3 values are multiples of 2^-24, 2^-16 and 2^-9: their f64 sums are exact
   while the magnitudes add up to at most 2^53 of those units (what the GPU tests' bitwise
   comparison of these sums relies on). Data over each type's whole exponent range. */
static void f16_and_fp8_sums_into_f64_should_be_exact(void **state) {
  (void)state;
  uint64_t rng = tu_seed();
  const struct {
    cureduce_dtype in;
    uint64_t n; /* n 2^(largest exponent + 1) <= 2^53 q */
  } cases[] = {{CUREDUCE_F16, 16384}, {CUREDUCE_F8_E5M2, 1000003}, {CUREDUCE_F8_E4M3, 1000003}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    const uint64_t n = cases[k].n;
    void *x = malloc(n * cureduce_dtype_size(cases[k].in));
    tu_fill(cases[k].in, x, n, TU_SPREAD, 0, &rng);
    double exact, exact_mean, sum = 0, mean = 0;
    assert_int_equal(cureduce_cpu_sum_exact(cases[k].in, x, n, CUREDUCE_F64, &exact), 0);
    assert_int_equal(cureduce_cpu_reduce(CUREDUCE_SUM, cases[k].in, x, n, CUREDUCE_F64, &sum), 0);
    assert_int_equal(cureduce_cpu_reduce(CUREDUCE_MEAN, cases[k].in, x, n, CUREDUCE_F64, &mean), 0);
    exact_mean = exact / (double)n;
    if (sum != exact || mean != exact_mean)
      fail_msg("%s: f64 sum %.17g, mean %.17g; exact %.17g, %.17g", cureduce_dtype_name(cases[k].in), sum,
               mean, exact, exact_mean);
    free(x);
  }
}

static void argmax_and_argmin_should_return_the_first_occurrence(void **state) {
  (void)state;
  const float x[6] = {1, 7, -3, 7, -3, 0};
  int64_t i = -1;
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_ARGMAX, CUREDUCE_F32, x, 6, CUREDUCE_F32, &i), 0);
  assert_int_equal(i, 1);
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_ARGMIN, CUREDUCE_F32, x, 6, CUREDUCE_F32, &i), 0);
  assert_int_equal(i, 2);
  const int8_t y[4] = {-128, 5, -128, 5};
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_ARGMAX, CUREDUCE_I8, y, 4, CUREDUCE_ACC_DEFAULT, &i), 0);
  assert_int_equal(i, 1);
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_ARGMIN, CUREDUCE_I8, y, 4, CUREDUCE_ACC_DEFAULT, &i), 0);
  assert_int_equal(i, 0);
}

static void arg_ops_should_return_the_first_nan(void **state) {
  (void)state;
  const float x[5] = {1, 9, NAN, 2, NAN};
  int64_t i = -1;
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_ARGMAX, CUREDUCE_F32, x, 5, CUREDUCE_F32, &i), 0);
  assert_int_equal(i, 2);
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_ARGMIN, CUREDUCE_F32, x, 5, CUREDUCE_F32, &i), 0);
  assert_int_equal(i, 2);
  const float z[2] = {-0.0f, 0.0f}; /* equal values: the first index */
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_ARGMAX, CUREDUCE_F32, z, 2, CUREDUCE_F32, &i), 0);
  assert_int_equal(i, 0);
}

static void absmax_sumsq_and_mean_should_follow_their_definitions(void **state) {
  (void)state;
  const float x[4] = {1, -6, 3, -2};
  float r;
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_ABSMAX, CUREDUCE_F32, x, 4, CUREDUCE_F32, &r), 0);
  assert_true(r == 6.0f);
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_SUMSQ, CUREDUCE_F32, x, 4, CUREDUCE_F32, &r), 0);
  assert_true(r == 50.0f);
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_MEAN, CUREDUCE_F32, x, 4, CUREDUCE_F32, &r), 0);
  assert_true(r == -1.0f);
  const int32_t y[3] = {1, 2, 2};
  double m;
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_MEAN, CUREDUCE_I32, y, 3, CUREDUCE_ACC_DEFAULT, &m), 0);
  assert_true(m == 5.0 / 3.0);
  const int64_t big[1] = {INT64_MIN};
  int64_t a;
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_ABSMAX, CUREDUCE_I64, big, 1, CUREDUCE_I64, &a), 0);
  assert_true(a == INT64_MIN); /* |INT64_MIN| wraps, as documented */
}

/* The mean's quotient rounded once into f16 and bf16: through f32 rounded to nearest it was
   rounded twice (f16: 0x07ea, bf16: 0x3a16), as the exact mean and the GPU do not. */
static void narrow_means_should_round_the_quotient_once(void **state) {
  (void)state;
  enum { N16 = 8283, N_BF16 = 67931 };
  static uint16_t x[N_BF16];
  uint16_t r = 0, exact = 0;
  memset(x, 0, sizeof x);
  x[0] =
      0x3c00; /* f16 1.0, then 8282 zeros: 1 / 8283 lies just below a tie of f16's, within f32's rounding */
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_MEAN, CUREDUCE_F16, x, N16, CUREDUCE_F16, &r), 0);
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_MEAN_EXACT, CUREDUCE_F16, x, N16, CUREDUCE_F16, &exact), 0);
  assert_int_equal(r, 0x07e9);
  assert_int_equal(r, exact);
  x[0] = 0x421c; /* bf16 39, then 67930 zeros */
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_MEAN, CUREDUCE_BF16, x, N_BF16, CUREDUCE_BF16, &r), 0);
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_MEAN_EXACT, CUREDUCE_BF16, x, N_BF16, CUREDUCE_BF16, &exact),
                   0);
  assert_int_equal(r, 0x3a17);
  assert_int_equal(r, exact);
}

static void empty_input_should_be_zero_for_sums_and_empty_for_the_rest(void **state) {
  (void)state;
  float r = 4.0f;
  int64_t i = 4;
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_SUMSQ, CUREDUCE_F32, NULL, 0, CUREDUCE_F32, &r), 0);
  assert_true(r == 0.0f && !signbit(r));
  r = 4.0f;
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_MEAN, CUREDUCE_F32, NULL, 0, CUREDUCE_F32, &r),
                   CUREDUCE_EMPTY);
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_ABSMAX, CUREDUCE_F32, NULL, 0, CUREDUCE_F32, &r),
                   CUREDUCE_EMPTY);
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_ARGMAX, CUREDUCE_F32, NULL, 0, CUREDUCE_F32, &i),
                   CUREDUCE_EMPTY);
  assert_true(r == 4.0f && i == 4);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(empty_sum_should_be_positive_zero),
      cmocka_unit_test(empty_min_and_max_should_report_empty_and_leave_output),
      cmocka_unit_test(sum_of_negative_zeros_should_be_negative_zero),
      cmocka_unit_test(min_and_max_should_order_negative_zero_below_positive_zero),
      cmocka_unit_test(min_and_max_should_propagate_nan),
      cmocka_unit_test(sum_should_follow_ieee_for_infinities_and_nan),
      cmocka_unit_test(subnormals_should_not_be_flushed),
      cmocka_unit_test(integer_sums_should_wrap_in_the_accumulator),
      cmocka_unit_test(narrow_accumulators_should_round_every_addition),
      cmocka_unit_test(fp8_inputs_should_decode_before_reducing),
      cmocka_unit_test(bad_arguments_should_return_a_status_and_write_nothing),
      cmocka_unit_test(pairwise_sum_should_stay_close_to_the_exact_sum),
      cmocka_unit_test(f16_and_fp8_sums_into_f64_should_be_exact),
      cmocka_unit_test(argmax_and_argmin_should_return_the_first_occurrence),
      cmocka_unit_test(arg_ops_should_return_the_first_nan),
      cmocka_unit_test(absmax_sumsq_and_mean_should_follow_their_definitions),
      cmocka_unit_test(narrow_means_should_round_the_quotient_once),
      cmocka_unit_test(empty_input_should_be_zero_for_sums_and_empty_for_the_rest),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
