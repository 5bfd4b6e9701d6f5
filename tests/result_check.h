/* Comparing one GPU result with the CPU reference's, shared by the GPU tests of the full,
 * row, column and segment reductions. Min, max, absmax, the arg indices and integer results
 * must be identical; float sums (sum, sumsq, mean) of integer-valued data, and f64 sums and
 * means of f16 and fp8 inputs, must be exact; float sums of other data must be within a
 * rounding bound of the exact sum. */
#ifndef CUREDUCE_TEST_RESULT_CHECK_H
#define CUREDUCE_TEST_RESULT_CHECK_H

#include "test_util.h"

#include <math.h>

typedef struct combo {
  cureduce_op op;
  cureduce_dtype in, acc;
} combo;

/* Unit roundoff of a float accumulator. */
static double unit_roundoff(cureduce_dtype acc) {
  switch (acc) {
  case CUREDUCE_F64: return 0x1p-53;
  case CUREDUCE_F32: return 0x1p-24;
  case CUREDUCE_F16: return 0x1p-11;
  default: return 0x1p-8; /* bf16 */
  }
}

/* The smallest subnormal of a float accumulator. */
static double smallest(cureduce_dtype acc) {
  switch (acc) {
  case CUREDUCE_F64: return 0x1p-1074;
  case CUREDUCE_F32: return 0x1p-149;
  case CUREDUCE_F16: return 0x1p-24;
  default: return 0x1p-133; /* bf16 */
  }
}

static double max_finite(cureduce_dtype acc) {
  switch (acc) {
  case CUREDUCE_F64: return 1.7976931348623157e308;
  case CUREDUCE_F16: return 65504.0;
  default: return 3.3895313892515355e38; /* bf16; f32's is a little larger */
  }
}

static int sum_like(cureduce_op op) {
  return op == CUREDUCE_SUM || op == CUREDUCE_SUMSQ || op == CUREDUCE_MEAN;
}

/* The exact sum of the op's terms (x, or x * x rounded to double) and the sum of their finite
   magnitudes, for the rounding bound of float sums and where they may overflow. */
static void exact_terms(const combo *c, const void *elems, uint64_t n, double *exact, double *abs_sum) {
  const size_t size = cureduce_dtype_size(c->in);
  double *terms = malloc((n ? n : 1) * sizeof *terms);
  *abs_sum = 0;
  for (uint64_t i = 0; i < n; ++i) {
    double x;
    (void)cureduce_to_double(c->in, (const char *)elems + i * size, &x);
    terms[i] = c->op == CUREDUCE_SUMSQ ? x * x : x;
    if (isfinite(terms[i]))
      *abs_sum += fabs(terms[i]);
  }
  (void)cureduce_cpu_sum_exact(CUREDUCE_F64, terms, n, CUREDUCE_F64, exact);
  free(terms);
}

/* Whether a float sum-like result must equal the CPU's bit for bit: integer-valued terms whose
   partial sums stay exact in the accumulator, the all -0.0 pattern, and f64 sums and means of
   f16 and fp8 inputs. Those inputs are multiples of q = 2^-24 (f16), 2^-16 (e5m2) or 2^-9
   (e4m3), so every partial sum in f64 is exact, in any order, while the magnitudes add up to
   at most 2^53 q (NaN and infinities give the same IEEE result in any order). */
static int float_sum_is_exact(const combo *c, uint64_t n, tu_pattern pat) {
  if (pat == TU_NEG_ZEROS)
    return 1;
  const double q = c->in == CUREDUCE_F16       ? 0x1p-24
                   : c->in == CUREDUCE_F8_E5M2 ? 0x1p-16
                   : c->in == CUREDUCE_F8_E4M3 ? 0x1p-9
                                               : 0;
  if (q > 0 && c->acc == CUREDUCE_F64 && c->op != CUREDUCE_SUMSQ && pat != TU_CONSTANT) {
    int lo, hi;
    tu_spread_exponents(c->in, &lo, &hi);
    /* the largest finite magnitude each pattern draws (tu_fill; integers up to 8) */
    const double largest = pat == TU_SPREAD ? ldexp(1, hi + 1) : pat == TU_INTEGERS ? 8 : 1;
    return (double)n * largest <= 0x1p53 * q;
  }
  if (pat != TU_INTEGERS)
    return 0;
  const uint64_t term = c->op == CUREDUCE_SUMSQ ? 64 : 8; /* |x| <= 8 */
  switch (c->acc) {
  case CUREDUCE_F16: return n * term <= 2048;
  case CUREDUCE_BF16: return n * term <= 256;
  /* f32 sums of +-8: exact up to 2^21 terms for sure; beyond, random partial sums stay far
     below 2^24 (a partial of k terms spreads about 5 sqrt(k): 29000 at k = 2^25). Squares are
     all positive, so their partial sums grow with n: exact only while 64 n <= 2^24. */
  case CUREDUCE_F32: return c->op == CUREDUCE_SUMSQ ? n * term <= (1u << 24) : 1;
  default: return 1;
  }
}

/* How far a float sum (or mean) of n terms into acc may lie from the exact value: each term
   passes through at most a few hundred roundings in the per-thread chains and the trees; the
   bound also covers rounding each term (square) and the result to acc, plus n half-units of
   the smallest subnormal (a tiny square may round to zero). */
static double sum_rounding_bound(cureduce_dtype acc, uint64_t n, double exact, double abs_sum) {
  const double u = unit_roundoff(acc);
  return (log2((double)n + 1) + 64) * u * abs_sum + fabs(exact) * u + (double)n * smallest(acc);
}

/* got and want are one result each (cureduce_result_size bytes) of the n elements at elems
   (host), filled with pattern pat; `where` names the case in a failure message. */
static void rc_check(const combo *c, const void *elems, uint64_t n, tu_pattern pat, const unsigned char *got,
                     const unsigned char *want, const char *where) {
  const size_t out_size = cureduce_result_size(c->op, c->acc);
  const char *what = cureduce_op_name(c->op), *in = cureduce_dtype_name(c->in),
             *acc = cureduce_dtype_name(c->acc);
  const cureduce_dtype out_dtype =
      out_size == 8 && (c->op == CUREDUCE_ARGMIN || c->op == CUREDUCE_ARGMAX) ? CUREDUCE_I64 : c->acc;
  const int float_sum = sum_like(c->op) && tu_is_float(c->acc);
  if (!float_sum || float_sum_is_exact(c, n, pat)) {
    if (!tu_same_value(out_dtype, got, want)) {
      double g, w;
      (void)cureduce_to_double(out_dtype, got, &g);
      (void)cureduce_to_double(out_dtype, want, &w);
      fail_msg("%s %s->%s n=%llu %s pattern=%d: GPU %.17g, CPU %.17g", what, in, acc, (unsigned long long)n,
               where, pat, g, w);
    }
    return;
  }
  /* Float sum of non-exact data: against the exact sum, within a tree-rounding bound. */
  double exact, abs_sum, g;
  exact_terms(c, elems, n, &exact, &abs_sum);
  (void)cureduce_to_double(c->acc, got, &g);
  /* A narrow accumulator may overflow on the way when the magnitudes, rounded up, add up past
     its range (fp8 "specials" saturate to 57344 and 448, f16 ends at 65504, and spread e4m3
     squares reach 2^16): inf or NaN is then a correct IEEE outcome of the order the kernel
     uses (for mean, of the sum before dividing). Where it cannot, a NaN or infinite exact sum
     must come out as it is. */
  if (!isfinite(g) &&
      abs_sum + sum_rounding_bound(c->acc, n, isfinite(exact) ? exact : 0, abs_sum) >= max_finite(c->acc))
    return;
  if (c->op == CUREDUCE_MEAN)
    exact /= (double)n, abs_sum /= (double)n;
  const double bound = sum_rounding_bound(c->acc, n, exact, abs_sum);
  if (isnan(exact) || isinf(exact)) {
    if (!tu_same_value(CUREDUCE_F64, &g, &exact))
      fail_msg("%s %s->%s n=%llu %s: GPU %g, exact %g", what, in, acc, (unsigned long long)n, where, g,
               exact);
    return;
  }
  if (!(fabs(g - exact) <= bound))
    fail_msg("%s %s->%s n=%llu %s: GPU %.17g, exact %.17g, bound %.3g", what, in, acc, (unsigned long long)n,
             where, g, exact, bound);
}

#endif
