/* The CPU exact sum equals MPFR's correctly rounded mpfr_sum bit for bit, on adversarial data:
 * huge cancellations, every exponent, subnormals, ties, overflow, long arrays, every float
 * input dtype, and sums and means at the edges of every output format. CPU only; MPFR is a
 * test-only dependency. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "test_util.h"

#include <float.h>
#include <mpfr.h>

/* The float formats an exact sum rounds into: precision, smallest subnormal 2^min_exp, largest
   finite value, and whether an overflow gives an infinity (e4m3 has none: NaN). */
static const struct fmt {
  cureduce_dtype d;
  int prec, min_exp, has_inf;
  double max_finite;
} FMT[] = {{CUREDUCE_F64, 53, -1074, 1, DBL_MAX}, {CUREDUCE_F32, 24, -149, 1, FLT_MAX},
           {CUREDUCE_F16, 11, -24, 1, 65504.0},   {CUREDUCE_BF16, 8, -133, 1, 0x1.fep127},
           {CUREDUCE_F8_E4M3, 4, -9, 0, 448.0},   {CUREDUCE_F8_E5M2, 3, -16, 1, 57344.0}};
enum { NFMT = sizeof FMT / sizeof FMT[0] };

/* exact = the exact sum of count[i] copies of v[i], i < k (count NULL: one each); exact has
   2400 bits, wide enough for any such sum. */
static void mpfr_exact_sum(mpfr_ptr exact, const double *v, const uint64_t *count, size_t k) {
  mpfr_t *t = malloc((k ? k : 1) * sizeof *t);
  mpfr_ptr *p = malloc((k ? k : 1) * sizeof *p);
  for (size_t i = 0; i < k; ++i) {
    mpfr_init2(t[i], 53 + 64);
    mpfr_set_d(t[i], v[i], MPFR_RNDN);
    if (count)
      mpfr_mul_ui(t[i], t[i], (unsigned long)count[i], MPFR_RNDN); /* exact */
    p[i] = t[i];
  }
  mpfr_sum(exact, p, (unsigned long)k, MPFR_RNDN);
  for (size_t i = 0; i < k; ++i)
    mpfr_clear(t[i]);
  free(t);
  free(p);
}

/* exact (the exact sum of n elements), or it over n, rounded once as f rounds: to f's
   precision, no bit below 2^min_exp, and beyond max_finite an infinity (NaN where f has none).
   It is rounded to f's precision in MPFR's own exponent range, where exact lies; then
   mpfr_check_range and mpfr_subnormalize, given that rounding's ternary value, round it into
   f's range as one rounding would (to zero at half the smallest subnormal and below). */
static double mpfr_round_as(mpfr_srcptr exact, unsigned long n, int mean, const struct fmt *f) {
  mpfr_t r;
  mpfr_init2(r, f->prec);
  int t = mean ? mpfr_div_ui(r, exact, n, MPFR_RNDN) : mpfr_set(r, exact, MPFR_RNDN);
  const mpfr_exp_t old_min = mpfr_get_emin();
  mpfr_set_emin(f->min_exp + 1); /* MPFR's exponent of the smallest subnormal, 2^min_exp */
  t = mpfr_check_range(r, t, MPFR_RNDN);
  (void)mpfr_subnormalize(r, t, MPFR_RNDN);
  double d = mpfr_get_d(r, MPFR_RNDN);
  mpfr_set_emin(old_min);
  mpfr_clear(r);
  if (fabs(d) > f->max_finite)
    d = f->has_inf ? copysign(INFINITY, d) : NAN;
  return d;
}

/* MPFR's sum of x[0..n), rounded once as format f rounds. */
static double mpfr_reference(const double *x, size_t n, const struct fmt *f) {
  mpfr_t exact;
  mpfr_init2(exact, 2400);
  mpfr_exact_sum(exact, x, NULL, n);
  const double d = mpfr_round_as(exact, (unsigned long)n, 0, f);
  mpfr_clear(exact);
  return d;
}

/* Equal bits, or both NaN (NaN's sign and payload carry no meaning here). */
static int same_result(double a, double b) { return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0; }

static void expect_f64_matches(const double *x, size_t n, const char *what) {
  double ours;
  assert_int_equal(cureduce_cpu_sum_exact(CUREDUCE_F64, x, n, CUREDUCE_F64, &ours), 0);
  const double ref = mpfr_reference(x, n, &FMT[0]);
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
    const double ref64 = mpfr_reference(dec, n, &FMT[0]);
    if (!same_result(ours64, ref64))
      fail_msg("%s -> f64: ours %a, MPFR %a", cureduce_dtype_name(d), ours64, ref64);
    if (d == CUREDUCE_F64)
      continue;
    float ours32;
    assert_int_equal(cureduce_cpu_sum_exact(d, raw, n, CUREDUCE_F32, &ours32), 0);
    const float ref32 = (float)mpfr_reference(dec, n, &FMT[1]);
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
    const float ref = (float)mpfr_reference(dec, 3, &FMT[1]);
    if (!same_result(ours, ref))
      fail_msg("case %zu: ours %a, MPFR %a", k, (double)ours, (double)ref);
  }
}

/* Running states rounded into every float format, sums and means, against MPFR: random values
   with cancellations and tiny ones far below the rest (so results carry more bits than f64
   holds), scaled to ordinary magnitudes, to around one format's overflow threshold, or to its
   subnormal range. The exact edges themselves are edges_of_every_format_should_match_mpfr's. */
static void states_should_round_into_every_format_as_mpfr(void **state) {
  (void)state;
  uint64_t rng = tu_seed() + 5;
  double x[301];
  mpfr_t exact;
  mpfr_init2(exact, 2400);
  for (int trial = 0; trial < 600; ++trial) {
    const size_t n = 1 + tu_next(&rng) % 300;
    const struct fmt *f = &FMT[tu_next(&rng) % NFMT];
    int center; /* the values' scale: they are below 2^(center + 13), their sums below 2^(center + 22) */
    double sign = 0;
    switch (tu_next(&rng) % 3) {
    case 0: center = (int)(tu_next(&rng) % 60) - 30; break;
    case 1: /* values of one sign below 2^(top - 5 .. top): sums around the overflow threshold */
      center = ilogb(f->max_finite) - 13 - (int)(tu_next(&rng) % 6), sign = (tu_next(&rng) & 1) ? -1 : 1;
      break;
    default: center = f->min_exp + f->prec - 20 + (int)(tu_next(&rng) % 12); break; /* around subnormals */
    }
    for (size_t i = 0; i < n; ++i) {
      x[i] = ldexp(floor((2 * tu_uniform(&rng) - 1) * 64), center + (int)(tu_next(&rng) % 8));
      if (sign != 0)
        x[i] = sign * fabs(x[i]);
      if (i % 5 == 4)
        x[i] = -x[i - 1]; /* cancellation */
      else if (i % 7 == 3)
        x[i] = ldexp(x[i], -1 - (int)(tu_next(&rng) % 60)); /* far below the rest */
    }
    int64_t w[CUREDUCE_EXACT_STATE_WORDS] = {0};
    assert_int_equal(cureduce_cpu_exact_accumulate(CUREDUCE_F64, x, n, w), CUREDUCE_SUCCESS);
    mpfr_exact_sum(exact, x, NULL, n);
    for (size_t k = 0; k < NFMT; ++k)
      for (int mean = 0; mean < 2; ++mean) {
        unsigned char out[8] = {0};
        assert_int_equal(
            cureduce_cpu_exact_finish(mean ? CUREDUCE_MEAN_EXACT : CUREDUCE_SUM_EXACT, w, FMT[k].d, out), 0);
        double ours;
        assert_int_equal(cureduce_to_double(FMT[k].d, out, &ours), 0);
        const double ref = mpfr_round_as(exact, (unsigned long)n, mean, &FMT[k]);
        if (!same_result(ours, ref))
          fail_msg("trial %d n=%zu %s %s: ours %a, MPFR %a", trial, n, mean ? "mean" : "sum",
                   cureduce_dtype_name(FMT[k].d), ours, ref);
      }
  }
  mpfr_clear(exact);
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

/* An array as runs: count[i] copies of v[i], n elements in all. */
enum { MAX_RUNS = 64, MAX_ELEMENTS = 1 << 23, MAX_MEAN_J = 21 };
struct runs {
  double v[MAX_RUNS];
  uint64_t count[MAX_RUNS];
  size_t k;
  uint64_t n;
};

static int push_run(struct runs *rs, double v, uint64_t count) {
  if (rs->k == MAX_RUNS || count > MAX_ELEMENTS - rs->n)
    return 0;
  rs->v[rs->k] = v;
  rs->count[rs->k++] = count;
  rs->n += count;
  return 1;
}

/* Append elements of `in` whose exact sum is x: copies of in's largest finite value while |x|
   exceeds it, then x's top in->prec bits, one element at a time. 0 where that takes over
   MAX_ELEMENTS elements, or x is no multiple of in's smallest subnormal. */
static int push_as(const struct fmt *in, double x, struct runs *rs) {
  if (x == 0)
    return push_run(rs, x, 1); /* its sign kept */
  if (fabs(x) > in->max_finite) {
    const double rest = fmod(fabs(x), in->max_finite), copies = (fabs(x) - rest) / in->max_finite;
    if (copies > MAX_ELEMENTS || !push_run(rs, copysign(in->max_finite, x), (uint64_t)copies))
      return 0;
    x = copysign(rest, x);
  }
  while (x != 0) {
    const double unit = fmax(ldexp(1.0, ilogb(x) - in->prec + 1), ldexp(1.0, in->min_exp));
    const double top = trunc(x / unit) * unit;
    if (top == 0 || !push_run(rs, top, 1))
      return 0;
    x -= top; /* exact */
  }
  return 1;
}

/* A result before rounding, m[0] 2^e[0] + m[1] 2^e[1] (m[1] = +0.0: no second term), plus
   `nudge` of the input's smallest subnormal, and what it rounds to in the format aimed at. */
struct target {
  double m[2];
  int e[2], nudge;
  double want;
};

/* rs = elements of `in` whose sum is 2^j times t's terms plus t->nudge of in's smallest
   subnormal, `copies` times over, then -0.0 (which changes no sum) up to n elements (n = 0:
   none). Their sum with j = 0, and their mean with copies = 3 and n = 3 2^j, is t's result,
   the nudge then 2^j times smaller. 0 where in's values cannot: a term 2^j times is out of
   range or needs more than MAX_ELEMENTS of them, or is under two of their units when nudged
   (a nudge must not take the result past the neighbour that `want` names). */
static int build_target(const struct fmt *in, const struct target *t, int j, int copies, uint64_t n,
                        struct runs *rs) {
  const double unit = ldexp(1.0, in->min_exp);
  rs->k = 0, rs->n = 0;
  for (int i = 0; i < 2; ++i) {
    if (i == 1 && t->m[1] == 0 && !signbit(t->m[1]))
      break;
    const double x = ldexp(t->m[i], t->e[i] + j);
    if (!isfinite(x) || ldexp(x, -(t->e[i] + j)) != t->m[i] || (t->nudge && x != 0 && fabs(x) < 2 * unit) ||
        !push_as(in, x, rs))
      return 0;
  }
  if (t->nudge && !push_run(rs, t->nudge * unit, 1))
    return 0;
  const size_t k = rs->k;
  for (int c = 1; c < copies; ++c)
    for (size_t i = 0; i < k; ++i)
      if (!push_run(rs, rs->v[i], rs->count[i]))
        return 0;
  return n == 0 || (rs->n <= n && (rs->n == n || push_run(rs, -0.0, n - rs->n)));
}

/* The edges of format `out` as targets (at most 100), with the scales of `in`'s values. */
static size_t edge_targets(const struct fmt *in, const struct fmt *out, struct target *t) {
  const int p = out->prec, q = out->min_exp, emin = q + p - 1, top = ilogb(out->max_finite);
  const double S = ldexp(1.0, q), N = ldexp(1.0, emin), M = out->max_finite;
  const double big = out->has_inf ? INFINITY : NAN, odd = 1 + ldexp(1.0, 1 - p);
  size_t k = 0;
#define TARGET(m0, e0, m1, e1, nudge, want) (t[k++] = (struct target){{m0, m1}, {e0, e1}, nudge, want})
  /* Ties between 2^e (even) and the next value, and between that (odd) and the one after, at
     the lowest 2^e where half an ulp is two input units, the bottom of out's normal range, 1,
     the top of in's range and the top of out's. */
  const int es[] = {in->min_exp + 1 + p, emin, 0, ilogb(in->max_finite) - 1, top};
  int done[5];
  for (size_t i = 0; i < 5; ++i) {
    const int e = es[i] < emin ? emin : es[i] > top ? top : es[i];
    int seen = 0;
    for (size_t h = 0; h < i; ++h)
      seen |= done[h] == e;
    done[i] = e;
    if (seen)
      continue;
    const double A = ldexp(1.0, e), u = ldexp(1.0, e - p + 1);
    for (int nudge = -1; nudge <= 1; ++nudge) {
      TARGET(1, e, 1, e - p, nudge, nudge > 0 ? A + u : A);
      TARGET(odd, e, 1, e - p, nudge, nudge < 0 ? A + u : A + 2 * u);
    }
  }
  /* The largest finite value; the midpoint above it (ties to the next power, an infinity; in
     e4m3 to 448, the even one) and one unit either side; the next value up. */
  const double Msig = ldexp(M, -top);
  TARGET(Msig, top, 0.0, 0, 0, M);
  TARGET(Msig, top, 1, top - p, -1, M);
  TARGET(Msig, top, 1, top - p, 0, out->has_inf ? INFINITY : M);
  TARGET(Msig, top, 1, top - p, 1, big);
  TARGET(Msig, top, 1, top - p + 1, -1, big);
  TARGET(Msig, top, 1, top - p + 1, 0, big);
  /* The smallest subnormal; half of it (ties to zero) and one unit either side; 3/2 of it
     (ties up to 2); the tie between the largest subnormal and the smallest normal; a quarter. */
  TARGET(1, q, 0.0, 0, 0, S);
  for (int nudge = -1; nudge <= 1; ++nudge) {
    TARGET(1, q - 1, 0.0, 0, nudge, nudge > 0 ? S : 0.0);
    TARGET(1.5, q, 0.0, 0, nudge, nudge < 0 ? S : 2 * S);
    TARGET(1, emin, -1, q - 1, nudge, nudge < 0 ? N - S : N);
  }
  TARGET(1, q - 2, 0.0, 0, 0, 0.0);
  /* All of them negated: a negative result rounded to zero is -0.0. */
  for (size_t i = 0, count = k; i < count; ++i)
    t[k++] = (struct target){
        {-t[i].m[0], t[i].m[1] == 0 ? 0.0 : -t[i].m[1]}, {t[i].e[0], t[i].e[1]}, -t[i].nudge, -t[i].want};
  /* Exact zeros: -0.0 only when every element is -0.0. */
  TARGET(0.0, 0, -0.0, 0, 0, 0.0);
  TARGET(-0.0, 0, -0.0, 0, 0, -0.0);
  TARGET(1, 0, -1, 0, 0, 0.0);
#undef TARGET
  return k;
}

/* The runs of `in` summed (or averaged) into every float format, through a state and, where
   the one-call CPU sum or mean takes that output (F64, F32, in's own), through it too: each
   against MPFR. In format `aim`, MPFR must give *want (unless want is NULL): the case is the
   edge it is meant to be. Arrays over 2^16 elements (bulk to reach an edge) are checked in
   `aim` alone, one way (the two ways share the accumulation). Returns the comparisons made. */
static int check_runs(const struct fmt *in, const struct runs *rs, int mean, const struct fmt *aim,
                      const double *want, const char *what) {
  const size_t size = cureduce_dtype_size(in->d);
  char *raw = malloc(rs->n * size), *p = raw;
  for (size_t i = 0; i < rs->k; p += rs->count[i++] * size) {
    double back;
    assert_int_equal(cureduce_from_double(in->d, rs->v[i], p), 0);
    assert_int_equal(cureduce_to_double(in->d, p, &back), 0);
    if (!same_result(back, rs->v[i]))
      fail_msg("%s: %a is no %s value", what, rs->v[i], cureduce_dtype_name(in->d));
    for (uint64_t done = 1; done < rs->count[i]; done *= 2) /* the copies, doubling */
      memcpy(p + done * size, p, (rs->count[i] - done < done ? rs->count[i] - done : done) * size);
  }
  const int every = rs->n <= 1u << 16;
  const int one_call_aim = aim->d == CUREDUCE_F64 || aim->d == CUREDUCE_F32 || aim->d == in->d;
  const cureduce_op op = mean ? CUREDUCE_MEAN_EXACT : CUREDUCE_SUM_EXACT;
  int64_t w[CUREDUCE_EXACT_STATE_WORDS] = {0};
  if (every || !one_call_aim)
    assert_int_equal(cureduce_cpu_exact_accumulate(in->d, raw, rs->n, w), 0);
  mpfr_t exact;
  mpfr_init2(exact, 2400);
  mpfr_exact_sum(exact, rs->v, rs->count, rs->k);
  int comparisons = 0;
  for (size_t k = 0; k < NFMT; ++k) {
    const struct fmt *f = &FMT[k];
    if (!every && f != aim)
      continue;
    const double ref = mpfr_round_as(exact, (unsigned long)rs->n, mean, f);
    if (f == aim && want && !same_result(ref, *want))
      fail_msg("%s: MPFR gives %a, not the %a the case is built for", what, ref, *want);
    unsigned char out[8];
    double ours;
    const int one_call = f->d == CUREDUCE_F64 || f->d == CUREDUCE_F32 || f->d == in->d;
    if (every || !one_call) {
      assert_int_equal(cureduce_cpu_exact_finish(op, w, f->d, out), 0);
      assert_int_equal(cureduce_to_double(f->d, out, &ours), 0);
      if (!same_result(ours, ref))
        fail_msg("%s, state into %s: ours %a, MPFR %a", what, cureduce_dtype_name(f->d), ours, ref);
      ++comparisons;
    }
    if (one_call) {
      assert_int_equal(mean ? cureduce_cpu_reduce(op, in->d, raw, rs->n, f->d, out)
                            : cureduce_cpu_sum_exact(in->d, raw, rs->n, f->d, out),
                       0);
      assert_int_equal(cureduce_to_double(f->d, out, &ours), 0);
      if (!same_result(ours, ref))
        fail_msg("%s, into %s: ours %a, MPFR %a", what, cureduce_dtype_name(f->d), ours, ref);
      ++comparisons;
    }
  }
  mpfr_clear(exact);
  free(raw);
  return comparisons;
}

/* Sums and means exactly at the edges of every float format, from every input dtype: ties next
   to an even and an odd neighbour, and one input unit (its smallest subnormal) either side of
   them, at several scales; the largest finite value, the midpoint above it and one unit either
   side, the next value up; the smallest subnormal, half of it and one unit either side, 3/2 of
   it, the tie below the smallest normal, a quarter of it; all negated; exact zeros of both
   signs. Each case is checked in every output format (check_runs), and MPFR must round it in
   the format aimed at as the case says. A mean reaches the same result as 3 copies of a sum 2^j
   times larger over 3 2^j elements (the smallest j that works, up to MAX_MEAN_J: the division
   by 3 leaves no remainder), and with one copy it divides that by 3 (rounded, no longer an
   edge: against MPFR only). An input reaches what its values can within MAX_ELEMENTS, and
   skips the rest: no tie of f64 from e4m3 (53 bits of e4m3 units take 2^44 / 448 elements) or
   from e5m2 means (3 2^22); the overflow and subnormals of f64 from f64 alone, f32's overflow
   from f64, f32 and bf16 sums and f64 means, f32's subnormals from f64, f32 and bf16 means
   (and f64 sums); a format's own subnormal ties from means only (its sums are exact there), and
   its overflow from sums, or from means of wider values (a mean is at most the largest element). */
static void edges_of_every_format_should_match_mpfr(void **state) {
  (void)state;
  static struct target t[100];
  static const char *const kinds[] = {"sum", "mean", "mean / 3"};
  int cases = 0, comparisons = 0;
  for (size_t a = 0; a < NFMT; ++a)
    for (size_t b = 0; b < NFMT; ++b) {
      const struct fmt *in = &FMT[a], *out = &FMT[b];
      const size_t count = edge_targets(in, out, t);
      for (size_t i = 0; i < count; ++i)
        for (int kind = 0; kind < 3; ++kind)
          for (int j = kind ? 1 : 0; j <= (kind ? MAX_MEAN_J : 0); ++j) {
            struct runs rs;
            if (!build_target(in, &t[i], j, kind == 1 ? 3 : 1, kind ? 3ull << j : 0, &rs))
              continue;
            char what[200];
            snprintf(what, sizeof what, "%s %s aimed at %s, target %zu (%a 2^%d + %a 2^%d, nudge %d), n=%llu",
                     cureduce_dtype_name(in->d), kinds[kind], cureduce_dtype_name(out->d), i, t[i].m[0],
                     t[i].e[0], t[i].m[1], t[i].e[1], t[i].nudge, (unsigned long long)rs.n);
            comparisons += check_runs(in, &rs, kind > 0, out, kind < 2 ? &t[i].want : NULL, what);
            ++cases;
            break;
          }
    }
  printf("# edges: %d cases, %d comparisons\n", cases, comparisons);
  assert_int_equal(cases, 6600); /* what the inputs reach, as above: a change that loses cases shows */
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
      cmocka_unit_test(edges_of_every_format_should_match_mpfr),
      cmocka_unit_test(integer_inputs_should_be_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
