/* The CPU exact sum equals MPFR's correctly rounded mpfr_sum bit for bit, on adversarial data:
 * huge cancellations, every exponent, subnormals, ties, overflow, long arrays, and every float
 * input dtype. CPU only; MPFR is a test-only dependency. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "test_util.h"

#include <float.h>
#include <mpfr.h>

/* MPFR's sum of x[0..n), rounded once to `prec` bits in the exponent range of the target
   format (mpfr_subnormalize emulates its subnormals). */
static double mpfr_reference(const double *x, size_t n, int prec, mpfr_exp_t emin, mpfr_exp_t emax) {
  const mpfr_exp_t old_min = mpfr_get_emin(), old_max = mpfr_get_emax();
  mpfr_set_emin(emin);
  mpfr_set_emax(emax);
  mpfr_t *v = malloc((n ? n : 1) * sizeof *v);
  mpfr_ptr *p = malloc((n ? n : 1) * sizeof *p);
  for (size_t i = 0; i < n; ++i) {
    mpfr_init2(v[i], 53);
    mpfr_set_d(v[i], x[i], MPFR_RNDN); /* exact */
    p[i] = v[i];
  }
  mpfr_t r;
  mpfr_init2(r, prec);
  int t = mpfr_sum(r, p, (unsigned long)n, MPFR_RNDN);
  t = mpfr_check_range(r, t, MPFR_RNDN);
  (void)mpfr_subnormalize(r, t, MPFR_RNDN);
  const double d = mpfr_get_d(r, MPFR_RNDN);
  mpfr_clear(r);
  for (size_t i = 0; i < n; ++i)
    mpfr_clear(v[i]);
  free(v);
  free(p);
  mpfr_set_emin(old_min);
  mpfr_set_emax(old_max);
  return d;
}

/* Equal bits, or both NaN (NaN's sign and payload carry no meaning here). */
static int same_result(double a, double b) { return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0; }

static void expect_f64_matches(const double *x, size_t n, const char *what) {
  double ours;
  assert_int_equal(cureduce_cpu_sum_exact(CUREDUCE_F64, x, n, CUREDUCE_F64, &ours), 0);
  const double ref = mpfr_reference(x, n, 53, -1073, 1024);
  if (!same_result(ours, ref))
    fail_msg("%s (n=%zu): ours %a, MPFR %a", what, n, ours, ref);
}

/* A random double with a uniformly random exponent over [lo, hi] and a random sign. */
static double random_double(uint64_t *rng, int lo, int hi) {
  const double m = 1.0 + tu_uniform(rng);
  const int e = lo + (int)(tu_next(rng) % (uint64_t)(hi - lo + 1));
  const double v = ldexp(m, e);
  return (tu_next(rng) & 1) ? -v : v;
}

static void huge_cancellations_should_match_mpfr(void **state) {
  (void)state;
  const double a[] = {1e308, 1.0, -1e308};
  expect_f64_matches(a, 3, "1e308 + 1 - 1e308");
  uint64_t rng = tu_seed();
  enum { N = 20000 };
  double *x = malloc(N * sizeof *x);
  for (int i = 0; i < N; i += 2) { /* pairs that cancel, with small noise between */
    x[i] = random_double(&rng, 900, 1000);
    x[i + 1] = (i % 10 == 0) ? random_double(&rng, -60, 0) : -x[i];
  }
  expect_f64_matches(x, N, "cancelling pairs");
  free(x);
}

static void every_exponent_should_match_mpfr(void **state) {
  (void)state;
  uint64_t rng = tu_seed() + 1;
  enum { N = 50000 };
  double *x = malloc(N * sizeof *x);
  for (int trial = 0; trial < 5; ++trial) {
    for (int i = 0; i < N; ++i)
      x[i] = random_double(&rng, -1074, 1022);
    expect_f64_matches(x, N, "mixed exponents");
  }
  free(x);
}

static void subnormals_should_match_mpfr(void **state) {
  (void)state;
  uint64_t rng = tu_seed() + 2;
  enum { N = 10000 };
  double *x = malloc(N * sizeof *x);
  for (int i = 0; i < N; ++i)
    x[i] = random_double(&rng, -1074, -1023);
  expect_f64_matches(x, N, "subnormals");
  const double smallest[] = {0x1p-1074, -0x1p-1074, 0x1p-1074};
  expect_f64_matches(smallest, 3, "smallest subnormals");
  free(x);
}

static void ties_should_round_to_even_as_mpfr_does(void **state) {
  (void)state;
  const double t1[] = {1.0, 0x1p-53};               /* tie: stays at 1 */
  const double t2[] = {1.0 + 0x1p-52, 0x1p-53};     /* tie: up to the even neighbour */
  const double t3[] = {1.0, 0x1p-53, 0x1p-1074};    /* just above the tie: up */
  const double t4[] = {1.0, 0x1p-53, -0x1p-1074};   /* just below the tie: down */
  const double t5[] = {-1.0, -0x1p-53, -0x1p-1074}; /* negative, just past the tie */
  expect_f64_matches(t1, 2, "tie to even (down)");
  expect_f64_matches(t2, 2, "tie to even (up)");
  expect_f64_matches(t3, 3, "above tie");
  expect_f64_matches(t4, 3, "below tie");
  expect_f64_matches(t5, 3, "negative above tie");
}

static void overflow_should_match_mpfr(void **state) {
  (void)state;
  const double o1[] = {DBL_MAX, DBL_MAX};
  const double o2[] = {DBL_MAX, DBL_MAX, -DBL_MAX};
  const double o3[] = {DBL_MAX, 0x1p970}; /* exactly half an ulp above DBL_MAX: ties to inf */
  const double o4[] = {-DBL_MAX, -0x1p969};
  expect_f64_matches(o1, 2, "overflow");
  expect_f64_matches(o2, 3, "intermediate overflow");
  expect_f64_matches(o3, 2, "overflow at the tie");
  expect_f64_matches(o4, 2, "below the overflow tie");
}

static void signed_zeros_should_follow_ieee(void **state) {
  (void)state;
  const double z1[] = {-0.0, -0.0};
  const double z2[] = {-0.0, 0.0};
  const double z3[] = {1.5, -1.5};
  double r;
  assert_int_equal(cureduce_cpu_sum_exact(CUREDUCE_F64, z1, 2, CUREDUCE_F64, &r), 0);
  assert_true(r == 0 && signbit(r));
  assert_int_equal(cureduce_cpu_sum_exact(CUREDUCE_F64, z2, 2, CUREDUCE_F64, &r), 0);
  assert_true(r == 0 && !signbit(r));
  assert_int_equal(cureduce_cpu_sum_exact(CUREDUCE_F64, z3, 2, CUREDUCE_F64, &r), 0);
  assert_true(r == 0 && !signbit(r));
  assert_int_equal(cureduce_cpu_sum_exact(CUREDUCE_F64, NULL, 0, CUREDUCE_F64, &r), 0);
  assert_true(r == 0 && !signbit(r));
}

static void nan_and_infinities_should_follow_ieee(void **state) {
  (void)state;
  const double a[] = {1.0, INFINITY}, b[] = {INFINITY, -INFINITY}, c[] = {NAN, 1.0};
  double r;
  assert_int_equal(cureduce_cpu_sum_exact(CUREDUCE_F64, a, 2, CUREDUCE_F64, &r), 0);
  assert_true(isinf(r) && r > 0);
  assert_int_equal(cureduce_cpu_sum_exact(CUREDUCE_F64, b, 2, CUREDUCE_F64, &r), 0);
  assert_true(isnan(r));
  assert_int_equal(cureduce_cpu_sum_exact(CUREDUCE_F64, c, 2, CUREDUCE_F64, &r), 0);
  assert_true(isnan(r));
}

static void long_arrays_should_match_mpfr(void **state) {
  (void)state;
  uint64_t rng = tu_seed() + 3;
  const size_t n = 1u << 21;
  double *x = malloc(n * sizeof *x);
  for (size_t i = 0; i < n; ++i)
    x[i] = (i % 3 == 0) ? random_double(&rng, -40, 40) : 2 * tu_uniform(&rng) - 1;
  expect_f64_matches(x, n, "long array");
  free(x);
}

/* Every float input dtype, summed exactly into f32 and f64, against MPFR on the decoded values. */
static void every_float_dtype_should_match_mpfr_in_f32_and_f64(void **state) {
  (void)state;
  const cureduce_dtype dts[] = {CUREDUCE_F32,     CUREDUCE_F16,     CUREDUCE_BF16,
                                CUREDUCE_F8_E4M3, CUREDUCE_F8_E5M2, CUREDUCE_F64};
  uint64_t rng = tu_seed() + 4;
  const size_t n = 100003;
  void *raw = malloc(n * 8);
  double *dec = malloc(n * sizeof *dec);
  for (size_t k = 0; k < sizeof dts / sizeof dts[0]; ++k) {
    const cureduce_dtype d = dts[k];
    const size_t size = cureduce_dtype_size(d);
    for (size_t i = 0; i < n; ++i) {
      /* values spread over the format's exponents: scale a random value by 2^e */
      const double x =
          (2 * tu_uniform(&rng) - 1) * ldexp(1.0, (int)(tu_next(&rng) % 32) - 20); /* finite in f16 */
      (void)cureduce_from_double(d, x, (char *)raw + i * size);
      (void)cureduce_to_double(d, (char *)raw + i * size, &dec[i]);
    }
    double ours64;
    assert_int_equal(cureduce_cpu_sum_exact(d, raw, n, CUREDUCE_F64, &ours64), 0);
    const double ref64 = mpfr_reference(dec, n, 53, -1073, 1024);
    if (!same_result(ours64, ref64))
      fail_msg("%s -> f64: ours %a, MPFR %a", cureduce_dtype_name(d), ours64, ref64);
    if (d == CUREDUCE_F64)
      continue;
    float ours32;
    assert_int_equal(cureduce_cpu_sum_exact(d, raw, n, CUREDUCE_F32, &ours32), 0);
    const float ref32 = (float)mpfr_reference(dec, n, 24, -148, 128);
    if (!same_result(ours32, ref32))
      fail_msg("%s -> f32: ours %a, MPFR %a", cureduce_dtype_name(d), (double)ours32, (double)ref32);
  }
  free(raw);
  free(dec);
}

static void f32_rounding_edges_should_match_mpfr(void **state) {
  (void)state;
  const float cases[][3] = {
      {1.0f, 0x1p-24f, 0.0f},      /* tie: stays at 1 */
      {1.0f, 0x1p-24f, 0x1p-149f}, /* above the tie */
      {0x1p-149f, 0x1p-149f, -0x1p-149f},
      {3.4028235e38f, 3.4028235e38f, -3.4028235e38f},
      {3.4028235e38f, 0x1p103f, 0.0f}, /* exactly at the overflow tie: inf */
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    float ours;
    double dec[3] = {cases[k][0], cases[k][1], cases[k][2]};
    assert_int_equal(cureduce_cpu_sum_exact(CUREDUCE_F32, cases[k], 3, CUREDUCE_F32, &ours), 0);
    const float ref = (float)mpfr_reference(dec, 3, 24, -148, 128);
    if (!same_result(ours, ref))
      fail_msg("case %zu: ours %a, MPFR %a", k, (double)ours, (double)ref);
  }
}

/* MPFR's exact sum of x[0..n) (or that sum over n) rounded once to `prec` bits, no bit below
   2^min_exp, and beyond max_finite an infinity (NaN where the format has none). */
static double mpfr_rounded(const double *x, size_t n, int mean, int prec, int min_exp, double max_finite,
                           int has_inf) {
  mpfr_t *v = malloc(n * sizeof *v);
  mpfr_ptr *p = malloc(n * sizeof *p);
  for (size_t i = 0; i < n; ++i) {
    mpfr_init2(v[i], 53);
    mpfr_set_d(v[i], x[i], MPFR_RNDN);
    p[i] = v[i];
  }
  mpfr_t exact, r;
  mpfr_init2(exact, 2400); /* wide enough for any sum of doubles: exact */
  mpfr_sum(exact, p, (unsigned long)n, MPFR_RNDN);
  const mpfr_exp_t old_min = mpfr_get_emin();
  mpfr_set_emin(min_exp + 1); /* MPFR's exponent of the smallest subnormal, 2^min_exp */
  mpfr_init2(r, prec);
  int t = mean ? mpfr_div_ui(r, exact, (unsigned long)n, MPFR_RNDN) : mpfr_set(r, exact, MPFR_RNDN);
  t = mpfr_check_range(r, t, MPFR_RNDN);
  (void)mpfr_subnormalize(r, t, MPFR_RNDN);
  double d = mpfr_get_d(r, MPFR_RNDN);
  mpfr_set_emin(old_min);
  if (fabs(d) > max_finite)
    d = has_inf ? copysign(INFINITY, d) : NAN;
  mpfr_clears(exact, r, (mpfr_ptr)0);
  for (size_t i = 0; i < n; ++i)
    mpfr_clear(v[i]);
  free(v);
  free(p);
  return d;
}

/* Running states rounded into every float format, sums and means, against MPFR: random
   exponents with cancellations, around each format's range (ties and overflow included). */
static void states_should_round_into_every_format_as_mpfr(void **state) {
  (void)state;
  static const struct {
    cureduce_dtype d;
    int prec, min_exp, has_inf;
    double max_finite;
  } F[] = {{CUREDUCE_F64, 53, -1074, 1, DBL_MAX}, {CUREDUCE_F32, 24, -149, 1, FLT_MAX},
           {CUREDUCE_F16, 11, -24, 1, 65504.0},   {CUREDUCE_BF16, 8, -133, 1, 0x1.fep127},
           {CUREDUCE_F8_E4M3, 4, -9, 0, 448.0},   {CUREDUCE_F8_E5M2, 3, -16, 1, 57344.0}};
  uint64_t rng = tu_seed() + 5;
  double x[301];
  for (int trial = 0; trial < 400; ++trial) {
    const size_t n = 1 + tu_next(&rng) % 300;
    const int center = (int)(tu_next(&rng) % 60) - 30; /* the values' scale: 2^-30 .. 2^29 */
    for (size_t i = 0; i < n; ++i) {
      x[i] = ldexp(floor((2 * tu_uniform(&rng) - 1) * 64), center + (int)(tu_next(&rng) % 8));
      if (i % 5 == 4)
        x[i] = -x[i - 1]; /* cancellation */
    }
    int64_t w[CUREDUCE_EXACT_STATE_WORDS] = {0};
    assert_int_equal(cureduce_cpu_exact_accumulate(CUREDUCE_F64, x, n, w), CUREDUCE_SUCCESS);
    for (size_t k = 0; k < sizeof F / sizeof F[0]; ++k)
      for (int mean = 0; mean < 2; ++mean) {
        unsigned char out[8] = {0};
        assert_int_equal(
            cureduce_cpu_exact_finish(mean ? CUREDUCE_MEAN_EXACT : CUREDUCE_SUM_EXACT, w, F[k].d, out), 0);
        double ours;
        assert_int_equal(cureduce_to_double(F[k].d, out, &ours), 0);
        const double ref = mpfr_rounded(x, n, mean, F[k].prec, F[k].min_exp, F[k].max_finite, F[k].has_inf);
        if (!same_result(ours, ref))
          fail_msg("trial %d n=%zu %s %s: ours %a, MPFR %a", trial, n, mean ? "mean" : "sum",
                   cureduce_dtype_name(F[k].d), ours, ref);
      }
  }
  int64_t empty[CUREDUCE_EXACT_STATE_WORDS] = {0};
  double r = 7;
  assert_int_equal(cureduce_cpu_exact_finish(CUREDUCE_MEAN_EXACT, empty, CUREDUCE_F64, &r), CUREDUCE_EMPTY);
  assert_int_equal(cureduce_cpu_exact_finish(CUREDUCE_SUM_EXACT, empty, CUREDUCE_F64, &r), 0);
  assert_true(r == 0 && !signbit(r));
  assert_int_equal(cureduce_cpu_exact_finish(CUREDUCE_SUM, empty, CUREDUCE_F64, &r),
                   CUREDUCE_ERROR_UNSUPPORTED);
  assert_int_equal(cureduce_cpu_exact_finish(CUREDUCE_SUM_EXACT, empty, CUREDUCE_I32, &r),
                   CUREDUCE_ERROR_UNSUPPORTED);
}

static void integer_inputs_should_be_refused(void **state) {
  (void)state;
  int32_t x = 1;
  double r = 5;
  assert_int_equal(cureduce_cpu_sum_exact(CUREDUCE_I32, &x, 1, CUREDUCE_F64, &r), CUREDUCE_ERROR_UNSUPPORTED);
  assert_int_equal(cureduce_cpu_sum_exact(CUREDUCE_F32, &x, 1, CUREDUCE_F16, &r), CUREDUCE_ERROR_UNSUPPORTED);
  assert_true(r == 5);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(huge_cancellations_should_match_mpfr),
      cmocka_unit_test(every_exponent_should_match_mpfr),
      cmocka_unit_test(subnormals_should_match_mpfr),
      cmocka_unit_test(ties_should_round_to_even_as_mpfr_does),
      cmocka_unit_test(overflow_should_match_mpfr),
      cmocka_unit_test(signed_zeros_should_follow_ieee),
      cmocka_unit_test(nan_and_infinities_should_follow_ieee),
      cmocka_unit_test(long_arrays_should_match_mpfr),
      cmocka_unit_test(every_float_dtype_should_match_mpfr_in_f32_and_f64),
      cmocka_unit_test(f32_rounding_edges_should_match_mpfr),
      cmocka_unit_test(states_should_round_into_every_format_as_mpfr),
      cmocka_unit_test(integer_inputs_should_be_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
