/* Running exact states on the CPU: split into chunks anywhere and combined in either order, they
 * round to the bits of one call; bad arguments get a status and leave the state alone. A sum
 * held as two doubles (cr_exact_pair_value) rounds to the bits of the exact state that holds it,
 * or is left to that state, and rarely so for a mean. Rows into states round each row alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "exact_patterns.h"

#include "../src/common/exact_state.h"

static void chunks_in_any_order_should_give_one_call_bits(void **state) {
  (void)state;
  static const cureduce_dtype INPUTS[] = {CUREDUCE_F32,  CUREDUCE_F64,     CUREDUCE_F16,
                                          CUREDUCE_BF16, CUREDUCE_F8_E4M3, CUREDUCE_F8_E5M2};
  uint64_t rng = tu_seed() + 11;
  const uint64_t n = 20011;
  void *x = malloc(n * 8);
  for (size_t d = 0; d < sizeof INPUTS / sizeof *INPUTS; ++d)
    for (int p = 0; p < EX_PATTERN_COUNT; ++p) {
      const cureduce_dtype in = INPUTS[d];
      const size_t size = cureduce_dtype_size(in);
      ex_fill(in, x, n, (ex_pattern)p, &rng);
      /* three chunks into three states, combined last-first, (c + b) + a, and first-last into a
         copy of a, (a + c) + b: other operands and another grouping */
      const uint64_t c1 = tu_next(&rng) % n, c2 = c1 + tu_next(&rng) % (n - c1 + 1);
      int64_t a[CUREDUCE_EXACT_STATE_WORDS] = {0}, b[CUREDUCE_EXACT_STATE_WORDS] = {0},
              c[CUREDUCE_EXACT_STATE_WORDS] = {0};
      assert_int_equal(cureduce_cpu_exact_accumulate(in, x, c1, a), CUREDUCE_SUCCESS);
      assert_int_equal(cureduce_cpu_exact_accumulate(in, (char *)x + c1 * size, c2 - c1, b), 0);
      assert_int_equal(cureduce_cpu_exact_accumulate(in, (char *)x + c2 * size, n - c2, c), 0);
      int64_t first[CUREDUCE_EXACT_STATE_WORDS];
      memcpy(first, a, sizeof a);
      assert_int_equal(cureduce_cpu_exact_combine(first, c), CUREDUCE_SUCCESS);
      assert_int_equal(cureduce_cpu_exact_combine(first, b), CUREDUCE_SUCCESS);
      assert_int_equal(cureduce_cpu_exact_combine(c, b), CUREDUCE_SUCCESS);
      assert_int_equal(cureduce_cpu_exact_combine(c, a), CUREDUCE_SUCCESS);
      const cureduce_dtype outs[] = {CUREDUCE_F64, CUREDUCE_F32, in};
      for (int o = 0; o < 3; ++o)
        for (int mean = 0; mean < 2; ++mean) {
          const cureduce_op op = mean ? CUREDUCE_MEAN_EXACT : CUREDUCE_SUM_EXACT;
          unsigned char one[8] = {0}, split[8] = {0}, other[8] = {0};
          assert_int_equal(cureduce_cpu_reduce(op, in, x, n, outs[o], one), CUREDUCE_SUCCESS);
          assert_int_equal(cureduce_cpu_exact_finish(op, c, outs[o], split), CUREDUCE_SUCCESS);
          assert_int_equal(cureduce_cpu_exact_finish(op, first, outs[o], other), CUREDUCE_SUCCESS);
          const size_t size_out = cureduce_dtype_size(outs[o]);
          if (memcmp(one, split, size_out) != 0 || memcmp(one, other, size_out) != 0)
            fail_msg("%s %s->%s %s: split at %llu, %llu differs from one call (last-first %d, first-last %d)",
                     cureduce_op_name(op), cureduce_dtype_name(in), cureduce_dtype_name(outs[o]),
                     EX_PATTERN_NAMES[p], (unsigned long long)c1, (unsigned long long)c2,
                     memcmp(one, split, size_out) != 0, memcmp(one, other, size_out) != 0);
        }
    }
  free(x);
}

/* Rows into states (two column chunks, rows ld apart) round each row to the bits of one call
   over it; an empty row's mean is NaN; bad arguments get a status. */
static void rows_should_give_each_rows_bits(void **state) {
  (void)state;
  enum { ROWS = 5, COLS = 301, LD = 307 };
  uint64_t rng = tu_seed() + 13;
  double x[ROWS * LD];
  int64_t w[ROWS * CUREDUCE_EXACT_STATE_WORDS];
  for (int p = 0; p < EX_PATTERN_COUNT; ++p) {
    ex_fill(CUREDUCE_F64, x, ROWS * LD, (ex_pattern)p, &rng);
    memset(w, 0, sizeof w);
    const uint64_t split = tu_next(&rng) % (COLS + 1);
    assert_int_equal(cureduce_cpu_exact_accumulate_rows(CUREDUCE_F64, x, ROWS, split, LD, w),
                     CUREDUCE_SUCCESS);
    assert_int_equal(cureduce_cpu_exact_accumulate_rows(CUREDUCE_F64, x + split, ROWS, COLS - split, LD, w),
                     CUREDUCE_SUCCESS);
    for (int mean = 0; mean < 2; ++mean) {
      const cureduce_op op = mean ? CUREDUCE_MEAN_EXACT : CUREDUCE_SUM_EXACT;
      float got[ROWS];
      memset(got, 0xab, sizeof got);
      assert_int_equal(cureduce_cpu_exact_finish_rows(op, w, ROWS, CUREDUCE_F32, got), CUREDUCE_SUCCESS);
      for (int r = 0; r < ROWS; ++r) {
        float want = 0.0f;
        assert_int_equal(cureduce_cpu_reduce(op, CUREDUCE_F64, x + r * LD, COLS, CUREDUCE_F32, &want),
                         CUREDUCE_SUCCESS);
        if (memcmp(&got[r], &want, sizeof want) != 0)
          fail_msg("%s %s row %d: %a, one call %a", cureduce_op_name(op), EX_PATTERN_NAMES[p], r, got[r],
                   want);
      }
    }
  }
  int64_t empty[CUREDUCE_EXACT_STATE_WORDS] = {0};
  double m = 0.0, s = 1.0;
  assert_int_equal(cureduce_cpu_exact_finish_rows(CUREDUCE_MEAN_EXACT, empty, 1, CUREDUCE_F64, &m),
                   CUREDUCE_SUCCESS);
  assert_true(isnan(m));
  assert_int_equal(cureduce_cpu_exact_finish_rows(CUREDUCE_SUM_EXACT, empty, 1, CUREDUCE_F64, &s), 0);
  assert_true(s == 0.0 && !signbit(s));
  const int32_t ints[2] = {1, 2};
  assert_int_equal(cureduce_cpu_exact_accumulate_rows(CUREDUCE_I32, ints, 1, 2, 2, w),
                   CUREDUCE_ERROR_UNSUPPORTED);
  assert_int_equal(cureduce_cpu_exact_accumulate_rows(CUREDUCE_F64, x, 2, 4, 3, w),
                   CUREDUCE_ERROR_INVALID_VALUE);
  assert_int_equal(cureduce_cpu_exact_accumulate_rows(CUREDUCE_F64, NULL, 1, 4, 4, w),
                   CUREDUCE_ERROR_NULL_POINTER);
  assert_int_equal(cureduce_cpu_exact_accumulate_rows(CUREDUCE_F64, x, 1, 4, 4, NULL),
                   CUREDUCE_ERROR_NULL_POINTER);
  assert_int_equal(cureduce_cpu_exact_accumulate_rows(CUREDUCE_F64, NULL, 0, 4, 4, NULL), CUREDUCE_SUCCESS);
  assert_int_equal(cureduce_cpu_exact_finish_rows(CUREDUCE_MAX, w, 1, CUREDUCE_F64, &m),
                   CUREDUCE_ERROR_UNSUPPORTED);
  assert_int_equal(cureduce_cpu_exact_finish_rows(CUREDUCE_SUM_EXACT, w, 1, CUREDUCE_F64, NULL),
                   CUREDUCE_ERROR_NULL_POINTER);
}

static void bad_arguments_should_leave_the_state_alone(void **state) {
  (void)state;
  int64_t w[CUREDUCE_EXACT_STATE_WORDS], before[CUREDUCE_EXACT_STATE_WORDS];
  const float x[2] = {1.0f, 2.0f};
  const int32_t i[2] = {1, 2};
  for (int k = 0; k < CUREDUCE_EXACT_STATE_WORDS; ++k)
    w[k] = k;
  memcpy(before, w, sizeof w);
  assert_int_equal(cureduce_cpu_exact_accumulate(CUREDUCE_I32, i, 2, w), CUREDUCE_ERROR_UNSUPPORTED);
  assert_int_equal(cureduce_cpu_exact_accumulate((cureduce_dtype)77, x, 2, w), CUREDUCE_ERROR_INVALID_DTYPE);
  assert_int_equal(cureduce_cpu_exact_accumulate(CUREDUCE_F32, NULL, 2, w), CUREDUCE_ERROR_NULL_POINTER);
  assert_int_equal(cureduce_cpu_exact_accumulate(CUREDUCE_F32, x, 2, NULL), CUREDUCE_ERROR_NULL_POINTER);
  /* 2^62 f32 elements, and 2 f32 rows 2^62 apart, span 2^64 bytes or more */
  assert_int_equal(cureduce_cpu_exact_accumulate(CUREDUCE_F32, x, (uint64_t)1 << 62, w),
                   CUREDUCE_ERROR_INVALID_VALUE);
  assert_int_equal(cureduce_cpu_exact_accumulate_rows(CUREDUCE_F32, x, 2, 2, (uint64_t)1 << 62, w),
                   CUREDUCE_ERROR_INVALID_VALUE);
  assert_int_equal(cureduce_cpu_exact_combine(w, NULL), CUREDUCE_ERROR_NULL_POINTER);
  assert_int_equal(cureduce_cpu_exact_combine(w, w), CUREDUCE_ERROR_INVALID_VALUE);
  int64_t two[CUREDUCE_EXACT_STATE_WORDS + 1] = {0};
  assert_int_equal(cureduce_cpu_exact_combine(two, two + 1), CUREDUCE_ERROR_INVALID_VALUE);
  assert_int_equal(cureduce_cpu_exact_combine(two + 1, two), CUREDUCE_ERROR_INVALID_VALUE);
  /* more states than memory can address: refused before any is read, as on the GPU */
  const uint64_t too_many = UINT64_MAX / 320;
  assert_int_equal(cureduce_cpu_exact_accumulate_rows(CUREDUCE_F32, x, too_many, 0, 0, w),
                   CUREDUCE_ERROR_INVALID_VALUE);
  const int64_t zeros[2] = {0, 0};
  assert_int_equal(cureduce_cpu_exact_accumulate_segments(CUREDUCE_F32, x, too_many, zeros, w),
                   CUREDUCE_ERROR_INVALID_VALUE);
  assert_memory_equal(w, before, sizeof w);
  double r = 5.0;
  assert_int_equal(cureduce_cpu_exact_finish(CUREDUCE_OP_COUNT, w, CUREDUCE_F64, &r),
                   CUREDUCE_ERROR_INVALID_OP);
  assert_int_equal(cureduce_cpu_exact_finish(CUREDUCE_MEAN, w, CUREDUCE_F64, &r), CUREDUCE_ERROR_UNSUPPORTED);
  assert_int_equal(cureduce_cpu_exact_finish(CUREDUCE_SUM_EXACT, w, CUREDUCE_I64, &r),
                   CUREDUCE_ERROR_UNSUPPORTED);
  assert_int_equal(cureduce_cpu_exact_finish(CUREDUCE_SUM_EXACT, NULL, CUREDUCE_F64, &r),
                   CUREDUCE_ERROR_NULL_POINTER);
  assert_int_equal(cureduce_cpu_exact_finish_rows(CUREDUCE_SUM_EXACT, w, UINT64_MAX / 320, CUREDUCE_F64, &r),
                   CUREDUCE_ERROR_INVALID_VALUE);
  assert_true(r == 5.0);
  /* the exact ops refuse integer inputs and other outputs everywhere */
  assert_int_equal(cureduce_supported(CUREDUCE_SUM_EXACT, CUREDUCE_I8, CUREDUCE_ACC_DEFAULT),
                   CUREDUCE_ERROR_UNSUPPORTED);
  assert_int_equal(cureduce_supported(CUREDUCE_SUM_EXACT, CUREDUCE_F32, CUREDUCE_F16),
                   CUREDUCE_ERROR_UNSUPPORTED);
  assert_int_equal(cureduce_supported(CUREDUCE_MEAN_EXACT, CUREDUCE_BF16, CUREDUCE_BF16), CUREDUCE_SUCCESS);
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_MEAN_EXACT, CUREDUCE_F32, x, 0, CUREDUCE_F32, &r),
                   CUREDUCE_EMPTY);
  float z = 7.0f;
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_SUM_EXACT, CUREDUCE_F32, x, 0, CUREDUCE_F32, &z),
                   CUREDUCE_SUCCESS);
  assert_true(z == 0.0f && !signbit(z));
}

/* States that overlap the input or the offsets, and outputs that overlap the states, are refused
   before anything changes (on the GPU the blocks would add into elements others still read). */
static void states_overlapping_what_is_read_should_be_invalid(void **state) {
  (void)state;
  enum { W = CUREDUCE_EXACT_STATE_WORDS };
  double buf[3 * W] = {0}; /* 8-byte words: states and f64 elements alike */
  for (int k = 0; k < 3 * W; ++k)
    buf[k] = 1.0;
  int64_t *const states = (int64_t *)(void *)buf;
  assert_int_equal(cureduce_cpu_exact_accumulate(CUREDUCE_F64, buf, 4, states + 3),
                   CUREDUCE_ERROR_INVALID_VALUE);
  assert_int_equal(cureduce_cpu_exact_accumulate_rows(CUREDUCE_F64, buf + W, 2, 4, W, states),
                   CUREDUCE_ERROR_INVALID_VALUE); /* rows 0..1 at W and 2W, states 0..1 at 0 and W */
  int64_t off[3] = {0, 2, 4};
  assert_int_equal(cureduce_cpu_exact_accumulate_segments(CUREDUCE_F64, buf, 2, off, states + 1),
                   CUREDUCE_ERROR_INVALID_VALUE);
  int64_t offs_and_states[3 + 2 * W];
  memset(offs_and_states, 0, sizeof offs_and_states);
  offs_and_states[1] = 2, offs_and_states[2] = 4;
  assert_int_equal(
      cureduce_cpu_exact_accumulate_segments(CUREDUCE_F64, buf, 2, offs_and_states, offs_and_states + 2),
      CUREDUCE_ERROR_INVALID_VALUE);
  for (int k = 0; k < 3 * W; ++k)
    assert_true(buf[k] == 1.0);
  assert_true(offs_and_states[2] == 4);
  /* the rounded rows would overwrite state 1 before it is read */
  int64_t two[2 * W];
  memset(two, 0, sizeof two);
  assert_int_equal(cureduce_cpu_exact_finish_rows(CUREDUCE_SUM_EXACT, two, 2, CUREDUCE_F64, two + W),
                   CUREDUCE_ERROR_INVALID_VALUE);
  /* the rounded value would land in its own state */
  assert_int_equal(cureduce_cpu_exact_finish(CUREDUCE_SUM_EXACT, two, CUREDUCE_F64, two + W - 1),
                   CUREDUCE_ERROR_INVALID_VALUE);
  /* right after the input, and the output right after the state: allowed */
  int64_t *const s = states + 4;
  memset(s, 0, W * sizeof *s);
  assert_int_equal(cureduce_cpu_exact_accumulate(CUREDUCE_F64, buf, 4, s), 0);
  assert_int_equal(cureduce_cpu_exact_finish(CUREDUCE_SUM_EXACT, s, CUREDUCE_F64, buf + 4 + W), 0);
  assert_true(buf[4 + W] == 4.0);
}

/* The pair rounding of common/exact_state.h (cr_two_sum, cr_exact_round_double and
   cr_exact_pair_value, which the axis kernels use for a sum held as two doubles), against the
   rounding of an exact state that holds the same values, to every output format. */
static const cureduce_dtype PAIR_OUTPUTS[] = {CUREDUCE_F64,  CUREDUCE_F32,     CUREDUCE_F16,
                                              CUREDUCE_BF16, CUREDUCE_F8_E4M3, CUREDUCE_F8_E5M2};
#define PAIR_OUTPUT_COUNT ((int)(sizeof PAIR_OUTPUTS / sizeof *PAIR_OUTPUTS))

/* What a run of checks did: pairs checked, sums compared with the state's, means (of one
   element or more) asked for, and those of them that cr_exact_pair_value left to the state
   (returned 0); the others were compared. */
typedef struct pair_tally {
  uint64_t pairs, sums, means, fallbacks;
} pair_tally;

/* The same result: the same bits (so the sign of a zero counts), or both NaN. */
static int pair_same(double a, double b) {
  return (isnan(a) && isnan(b)) || cr_exact_bits(a) == cr_exact_bits(b);
}

/* cr_exact_pair_value(a0, a1, count, ...), sum and mean, to every output, against a state holding
   a0 and a1 (finite, below 2^1000) and count: the state's not-(-0.0) flag is the one its adds set,
   or, where flag >= 0 (zeros only), flag, and the pair gets the same. A sum is never left to the
   state; a mean of no element is NaN. */
static void check_pair_flag(double a0, double a1, uint64_t count, int flag, pair_tally *t) {
  int64_t w[CUREDUCE_EXACT_STATE_WORDS] = {0};
  cr_exact_add(w, a0);
  cr_exact_add(w, a1);
  w[CR_EXACT_COUNT] = (int64_t)count;
  if (flag >= 0)
    w[CR_EXACT_NOT_NEG_ZERO] = flag;
  const int not_neg_zero = w[CR_EXACT_NOT_NEG_ZERO] != 0;
  ++t->pairs;
  for (int o = 0; o < PAIR_OUTPUT_COUNT; ++o)
    for (int mean = 0; mean < 2; ++mean) {
      const cr_exact_format f = cr_exact_format_of(PAIR_OUTPUTS[o]);
      double got = 12345.0;
      const int done = cr_exact_pair_value(a0, a1, count, not_neg_zero, mean, f, &got);
      if (mean && count == 0) {
        if (!done || !isnan(got))
          fail_msg("mean of no element (a0 %a, a1 %a) to %s: returned %d, %a, not NaN", a0, a1,
                   cureduce_dtype_name(PAIR_OUTPUTS[o]), done, got);
        continue;
      }
      t->means += (uint64_t)mean;
      if (!done) {
        if (!mean)
          fail_msg("sum a0 %a + a1 %a (count %llu, not_neg_zero %d) to %s: cr_exact_pair_value gave up", a0,
                   a1, (unsigned long long)count, not_neg_zero, cureduce_dtype_name(PAIR_OUTPUTS[o]));
        ++t->fallbacks;
        continue;
      }
      const double want = cr_exact_value(w, mean, f);
      if (!pair_same(got, want))
        fail_msg("%s of a0 %a + a1 %a (count %llu, not_neg_zero %d) to %s: pair gave %a, the state %a",
                 mean ? "mean" : "sum", a0, a1, (unsigned long long)count, not_neg_zero,
                 cureduce_dtype_name(PAIR_OUTPUTS[o]), got, want);
      t->sums += (uint64_t)!mean;
    }
}

static void check_pair(double a0, double a1, uint64_t count, pair_tally *t) {
  check_pair_flag(a0, a1, count, -1, t);
}

static void pair_report(const char *what, const pair_tally *t) {
  printf("# %s: %llu pairs; %llu sums and %llu means compared, %llu of %llu means left to the state "
         "(%.4f%%)\n",
         what, (unsigned long long)t->pairs, (unsigned long long)t->sums,
         (unsigned long long)(t->means - t->fallbacks), (unsigned long long)t->fallbacks,
         (unsigned long long)t->means, t->means ? 100.0 * (double)t->fallbacks / (double)t->means : 0.0);
}

/* Fails unless at most max_percent of t's means were left to the state. */
static void pair_fallbacks_at_most(const char *what, const pair_tally *t, double max_percent) {
  pair_report(what, t);
  if ((double)t->fallbacks * 100.0 > max_percent * (double)t->means)
    fail_msg("%s: %llu of %llu means left to the state, more than %g%%", what,
             (unsigned long long)t->fallbacks, (unsigned long long)t->means, max_percent);
}

/* Uniform in [-1, 1). */
static double pair_signed_unit(uint64_t *rng) { return 2.0 * tu_uniform(rng) - 1.0; }

/* A count: one of those that matter (1, small ones, a large prime, past 2^32), or any up to 2^40. */
static uint64_t pair_count(uint64_t *rng) {
  static const uint64_t COUNTS[] = {1, 2, 3, 7, 10, 1000003, (1ull << 32) + 1};
  const uint64_t r = tu_next(rng) % 9;
  return r < 7 ? COUNTS[r] : 1 + tu_next(rng) % (1ull << 40);
}

/* +-(1 + u) 2^e, u uniform in [0, 1). */
static double pair_at(int e, uint64_t *rng) {
  const double x = ldexp(1.0 + tu_uniform(rng), e);
  return tu_next(rng) & 1 ? -x : x;
}

/* Bits in n > 0. */
static int pair_bitlen(unsigned __int128 n) {
  int b = 0;
  for (; n != 0; n >>= 1)
    ++b;
  return b;
}

/* a0 + a1 = n 2^e exactly (|n| < 2^106, no bit of either below 2^-1074), a0 the double nearest n
   2^e. */
static void pair_split(__int128 n, int e, double *a0, double *a1) {
  const double hi = (double)n, lo = (double)(n - (__int128)hi);
  assert_true((__int128)lo == n - (__int128)hi);
  *a0 = ldexp(hi, e);
  *a1 = ldexp(lo, e);
  assert_true(ldexp(*a0, -e) == hi && ldexp(*a1, -e) == lo);
}

/* A rounding tie of format f: (2 j + 1) 2^(s - 1), halfway between j 2^s, a value of f, and the
   next one up, with s in [s_lo, s_hi] (clamped to f's range); a quarter of them at the ends:
   zero and the smallest subnormal, the top subnormals, the smallest normals, and the largest
   finite value (the overflow boundary) and the one below. */
static void pair_tie(cr_exact_format f, int s_lo, int s_hi, uint64_t *rng, uint64_t *j, int *s) {
  const int p = f.precision, s_max = ilogb(f.max_finite) - (p - 1);
  const uint64_t j_max = (uint64_t)ldexp(f.max_finite, -s_max), half = 1ull << (p - 1);
  s_lo = s_lo > f.min_exp ? s_lo : f.min_exp;
  s_hi = s_hi < s_max ? s_hi : s_max;
  *s = s_lo + (int)(tu_next(rng) % (uint64_t)(s_hi - s_lo + 1));
  *j = half + tu_next(rng) % half;
  if (tu_next(rng) % 4 == 0) {
    const uint64_t r = tu_next(rng) % 6;
    if (r < 4 && s_lo == f.min_exp) {
      const uint64_t low[4] = {0, 1, half - 1, half};
      *s = f.min_exp, *j = low[r];
    } else if (s_hi == s_max) {
      *s = s_max, *j = j_max - (r & 1);
    }
  }
  if (*s == f.min_exp && tu_next(rng) % 2 == 0)
    *j = tu_next(rng) % half; /* a subnormal */
  if (*s == s_max && *j > j_max)
    *j = j_max;
}

static void two_sum_and_round_double_should_be_exact(void **state) {
  (void)state;
  uint64_t rng = tu_seed() + 101;
  for (int i = 0; i < 100000; ++i) {
    /* any two finite doubles below 2^1000, subnormals too, and pairs that overlap or cancel */
    const double a = pair_at(-1080 + (int)(tu_next(&rng) % 2079), &rng);
    double b;
    switch (tu_next(&rng) % 3) {
    case 0: b = pair_at(-1080 + (int)(tu_next(&rng) % 2079), &rng); break;
    case 1: b = ldexp(a, -(int)(tu_next(&rng) % 120)) * pair_signed_unit(&rng); break;
    default: b = -a * (1.0 + ldexp(pair_signed_unit(&rng), -(int)(tu_next(&rng) % 60))); break;
    }
    double h;
    const double l = cr_two_sum(a, b, &h);
    if (cr_exact_bits(h) != cr_exact_bits(a + b))
      fail_msg("two_sum(%a, %a): %a is not the rounded sum %a", a, b, h, a + b);
    int64_t w[CUREDUCE_EXACT_STATE_WORDS] = {0};
    cr_exact_add(w, a);
    cr_exact_add(w, b);
    cr_exact_add(w, -h);
    cr_exact_add(w, -l);
    if (cr_exact_value(w, 0, cr_exact_format_of(CUREDUCE_F64)) != 0.0)
      fail_msg("two_sum(%a, %a) = %a + %a is not exact", a, b, h, l);
  }
  for (int i = 0; i < 60000; ++i) {
    /* any bits (NaN, infinities, zeros, subnormals), and the doubles at and around the ties of
       every format */
    double x;
    if (i % 2 == 0) {
      const uint64_t u = tu_next(&rng);
      memcpy(&x, &u, sizeof x);
    } else {
      const cr_exact_format f = cr_exact_format_of(PAIR_OUTPUTS[1 + tu_next(&rng) % 5]);
      uint64_t j;
      int s;
      pair_tie(f, -2000, 2000, &rng, &j, &s);
      x = ldexp((double)(2 * j + 1), s - 1);
      for (int k = (int)(tu_next(&rng) % 5) - 2; k != 0; k += k > 0 ? -1 : 1)
        x = nextafter(x, k > 0 ? INFINITY : 0.0);
      x = tu_next(&rng) & 1 ? -x : x;
    }
    for (int o = 0; o < PAIR_OUTPUT_COUNT; ++o) {
      const cr_exact_format f = cr_exact_format_of(PAIR_OUTPUTS[o]);
      int64_t w[CUREDUCE_EXACT_STATE_WORDS] = {0};
      cr_exact_add(w, x);
      w[CR_EXACT_COUNT] = 1;
      const double got = cr_exact_round_double(x, f), want = cr_exact_value(w, 0, f);
      if (!pair_same(got, want))
        fail_msg("round_double(%a) to %s: %a, the state %a", x, cureduce_dtype_name(PAIR_OUTPUTS[o]), got,
                 want);
    }
  }
}

static void pair_value_of_random_pairs_should_match_the_state(void **state) {
  (void)state;
  uint64_t rng = tu_seed() + 102;
  pair_tally t = {0, 0, 0, 0};
  const int n = 60000;
  for (int i = 0; i < n; ++i) {
    /* a0 near every format's range (or anywhere up to 2^940) times the count, so that the mean
       lands there too; a1 a random fraction of a0 2^-k: overlapping a0's bits (k < 53) or below
       them */
    const uint64_t count = pair_count(&rng);
    const int e = (tu_next(&rng) & 1 ? -40 + (int)(tu_next(&rng) % 81) : -880 + (int)(tu_next(&rng) % 1781)) +
                  63 - __builtin_clzll(count);
    const double a0 = pair_at(e, &rng);
    const double a1 = ldexp(a0, -40 - (int)(tu_next(&rng) % 81)) * pair_signed_unit(&rng);
    if (i % 2)
      check_pair(a0, a1, count, &t);
    else
      check_pair(a1, a0, count, &t);
  }
  /* about 0.1% left to the state (0.06% to 0.12% over 56 seeds): the pair, not the state, must
     round nearly every mean of data in range */
  pair_fallbacks_at_most("random pairs", &t, 1.0);
}

static void pair_value_at_rounding_ties_should_match_the_state(void **state) {
  (void)state;
  uint64_t rng = tu_seed() + 103;
  pair_tally t = {0, 0, 0, 0}, near = {0, 0, 0, 0}; /* near: a narrow format's ties as doubles */
  for (int o = 0; o < PAIR_OUTPUT_COUNT; ++o) {
    const cr_exact_format f = cr_exact_format_of(PAIR_OUTPUTS[o]);
    for (int i = 0; i < 400; ++i) {
      uint64_t j0;
      int s;
      /* f64's ties below 2^900 times any count, and above 2^-900 (a mean's pair holds more) */
      pair_tie(f, -900, 900, &rng, &j0, &s);
      for (int parity = 0; parity < 2; ++parity) {
        const uint64_t j = j0 ^ (uint64_t)parity; /* ties to even and to odd neighbours */
        const __int128 sign = tu_next(&rng) & 1 ? -1 : 1;
        /* A sum: the tie 2^K times as an integer, moved by a little (or a lot: to the values
           either side, or a quarter of the way), as a0 + a1. */
        const int k = (int)(tu_next(&rng) % 51);
        const __int128 base = (__int128)(2 * j + 1) << k, one = (__int128)1 << k;
        const __int128 moves[] = {
            0,   1,    -1,      2,        -2,
            one, -one, one / 2, -one / 2, (__int128)(tu_next(&rng) % (uint64_t)one) - one / 2};
        for (size_t m = 0; m < sizeof moves / sizeof *moves; ++m) {
          double a0, a1;
          pair_split(sign * (base + moves[m]), s - 1 - k, &a0, &a1);
          check_pair(a0, a1, pair_count(&rng), &t);
        }
        /* A mean: count times the tie, so that the quotient is the tie, or just off it, or a
           value of f, or a quarter of the way. */
        const uint64_t count = pair_count(&rng);
        const __int128 scaled = (__int128)count * (2 * j + 1);
        const int kq = (int)(tu_next(&rng) % (uint64_t)(105 - pair_bitlen((unsigned __int128)scaled)));
        const __int128 cq = (__int128)count << kq;
        const __int128 qmoves[] = {
            0,
            1,
            -1,
            2,
            -2,
            cq,
            -cq,
            cq / 2,
            -cq / 2,
            cq - 1,
            1 - cq,
            (__int128)((((unsigned __int128)tu_next(&rng) << 64 | tu_next(&rng)) % (unsigned __int128)cq)) -
                cq / 2};
        for (size_t m = 0; m < sizeof qmoves / sizeof *qmoves; ++m) {
          double a0, a1;
          pair_split(sign * ((scaled << kq) + qmoves[m]), s - 1 - kq, &a0, &a1);
          check_pair(a0, a1, count, &t);
        }
        if (o == 0)
          continue;
        /* A narrow format's tie is a double m: m, or a neighbour, plus a tiny a1 far below (the
           smallest subnormal, the smallest normal) or around m's last bit. */
        const double tie = (double)sign * ldexp((double)(2 * j + 1), s - 1);
        const double ulp = ldexp(1.0, ilogb(tie) - 52);
        const double tiny[] = {0.0,
                               0x1p-1074,
                               0x1p-1022,
                               ulp / 2,
                               ulp / 4,
                               ulp,
                               3 * ulp,
                               ldexp(ulp, -(int)(tu_next(&rng) % 60)),
                               ldexp(1.0, s - 2),
                               nextafter(ldexp(1.0, s - 1), 0.0)};
        for (size_t m = 0; m < sizeof tiny / sizeof *tiny; ++m)
          for (int side = -1; side <= 1; ++side) {
            const double a0 = side == 0 ? tie : nextafter(tie, side > 0 ? INFINITY : -INFINITY);
            check_pair(a0, tiny[m], pair_count(&rng), &near);
            check_pair(-tiny[m], a0, pair_count(&rng), &near);
          }
      }
    }
  }
  /* Bounds over ten times and 1.7 times the rates over 56 seeds (0.02% to 0.04%, 5.8% to 6.0%):
     the means at and next to ties must mostly be rounded from the pair, and so compared here, not
     left to the state wholesale (a wider give-up bound, or one format giving up at its ties). */
  pair_fallbacks_at_most("rounding ties", &t, 0.5);
  pair_fallbacks_at_most("ties as doubles", &near, 10.0);
}

/* Means whose quotient the pair holds exactly are rounded from the pair, never left to the
   state, even on a rounding boundary: a sum with a low part of half an ulp (or a quarter, or
   none) over a power-of-two count, which data on a grid (f64 multiples of 2^-52) often
   gives, and count times a double m (the pair a0 + a1 = count m exactly, by an fma) over odd
   counts, whose quotient m the division rounds. */
static void pair_value_of_exact_means_should_not_fall_back(void **state) {
  (void)state;
  uint64_t rng = tu_seed() + 105;
  pair_tally t = {0, 0, 0, 0};
  for (int i = 0; i < 20000; ++i) {
    const uint64_t count = 1ull << (tu_next(&rng) % 41);
    const double a0 = pair_at(-60 + (int)(tu_next(&rng) % 121), &rng);
    const double ulp = ldexp(1.0, ilogb(a0) - 52);
    const double lows[] = {ulp / 2, -ulp / 2, ulp / 4, 0.0};
    check_pair(a0, lows[i % 4], count, &t);
  }
  for (int i = 0; i < 20000; ++i) {
    const uint64_t count = 2 * (tu_next(&rng) % (1ull << 20)) + 3;
    const double m = pair_at(-60 + (int)(tu_next(&rng) % 121), &rng), c = (double)count;
    const double a0 = c * m, a1 = fma(c, m, -a0);
    check_pair(a0, a1, count, &t);
  }
  pair_fallbacks_at_most("exact means", &t, 0.0);
}

/* At the edges of the formats' ranges, each part counted apart: over (around f's overflow
   boundary), sub (f's subnormals), zero (exact zeros, and no element), and beyond (double
   subnormals and counts from 2^53, whose means the pair may leave to the state). */
static void pair_value_at_range_edges_should_match_the_state(void **state) {
  (void)state;
  uint64_t rng = tu_seed() + 104;
  pair_tally over = {0, 0, 0, 0}, sub = {0, 0, 0, 0}, zero = {0, 0, 0, 0}, beyond = {0, 0, 0, 0};
  for (int o = 1; o < PAIR_OUTPUT_COUNT; ++o) {
    const cr_exact_format f = cr_exact_format_of(PAIR_OUTPUTS[o]);
    /* around the largest finite value, its overflow boundary and beyond */
    const int s_max = ilogb(f.max_finite) - (f.precision - 1);
    const double top = f.max_finite, boundary = top + ldexp(1.0, s_max - 1);
    const double bigs[] = {top,
                           boundary,
                           nextafter(boundary, 0.0),
                           nextafter(boundary, INFINITY),
                           nextafter(top, 0.0),
                           ldexp(1.0, ilogb(top) + 1),
                           2 * top,
                           1e30 * top};
    const double smalls[] = {0.0,
                             0x1p-1074,
                             0x1p-1022,
                             ldexp(1.0, s_max - 1),
                             ldexp(1.0, s_max - 2),
                             ldexp(1.0, ilogb(top) - 53),
                             ldexp(1.0, ilogb(top) - 54)};
    for (size_t b = 0; b < sizeof bigs / sizeof *bigs; ++b)
      for (size_t m = 0; m < sizeof smalls / sizeof *smalls; ++m)
        for (int sign = -1; sign <= 1; sign += 2) {
          const uint64_t count = pair_count(&rng);
          check_pair(sign * bigs[b], smalls[m], 1, &over);
          check_pair(sign * bigs[b], -smalls[m], 1, &over);
          double a0, a1; /* the same as a mean: count times it */
          const double q = sign * (bigs[b] + smalls[m]);
          a0 = q * (double)count;
          a1 = fma(q, (double)count, -a0);
          check_pair(a0, a1, count, &over);
          check_pair(a0, -smalls[m], count, &over);
        }
    /* below the smallest normal of f (its subnormals), down to where it rounds to zero */
    const int normal = f.min_exp + f.precision - 1;
    for (int i = 0; i < 3000; ++i) {
      const uint64_t count = pair_count(&rng);
      const double a0 = pair_at(normal - 1 - (int)(tu_next(&rng) % (uint64_t)(f.precision + 3)), &rng);
      const double a1 = ldexp(a0, -(int)(tu_next(&rng) % 80)) * pair_signed_unit(&rng);
      check_pair(a0, a1, 1, &sub);
      check_pair(a0 * (double)count, a1 * (double)count, count, &sub);
    }
  }
  /* double subnormals, and sums crossing into them */
  for (int i = 0; i < 3000; ++i) {
    const uint64_t u0 = tu_next(&rng) & 0x800fffffffffffffull, u1 = tu_next(&rng) & 0x800fffffffffffffull;
    double a0, a1;
    memcpy(&a0, &u0, sizeof a0);
    memcpy(&a1, &u1, sizeof a1);
    check_pair(a0, a1, pair_count(&rng), &beyond);
    check_pair(0x1p-1022, -a1, pair_count(&rng), &beyond);
    check_pair(-0x1p-1021, a0, pair_count(&rng), &beyond);
  }
  check_pair(0x1p-1022, -0x1p-1074, 1, &beyond);
  check_pair(-0x1p-1074, -0x1p-1074, 3, &beyond);
  /* exact cancellation: +0.0 however many elements */
  for (int i = 0; i < 3000; ++i) {
    const double x = pair_at(-1080 + (int)(tu_next(&rng) % 2079), &rng);
    check_pair(x, -x, pair_count(&rng), &zero);
    check_pair(-x, x, (uint64_t)(i % 2), &zero);
  }
  /* zeros: -0.0 only when every element was -0.0; the mean of no element is NaN */
  const double zeros[] = {0.0, -0.0};
  const uint64_t zero_counts[] = {0, 1, 2, 5, (1ull << 40) + 3};
  for (int z0 = 0; z0 < 2; ++z0)
    for (int z1 = 0; z1 < 2; ++z1)
      for (size_t c = 0; c < sizeof zero_counts / sizeof *zero_counts; ++c) {
        check_pair(zeros[z0], zeros[z1], zero_counts[c], &zero);
        if (zero_counts[c] > 2) /* other elements were +0.0 */
          check_pair_flag(zeros[z0], zeros[z1], zero_counts[c], 1, &zero);
      }
  {
    /* the all -0.0 sum is -0.0 in every format */
    double v = 1.0;
    for (int o = 0; o < PAIR_OUTPUT_COUNT; ++o)
      for (int mean = 0; mean < 2; ++mean) {
        assert_int_equal(cr_exact_pair_value(-0.0, -0.0, 4, 0, mean, cr_exact_format_of(PAIR_OUTPUTS[o]), &v),
                         1);
        assert_true(v == 0.0 && signbit(v));
      }
  }
  for (int i = 0; i < 100; ++i)
    check_pair(pair_at(-100 + (int)(tu_next(&rng) % 200), &rng),
               pair_at(-100 + (int)(tu_next(&rng) % 200), &rng), 0, &zero);
  /* counts from 2^53 on: the pair may leave those to the state, but must not be wrong */
  const uint64_t huge[] = {1ull << 53, (1ull << 53) + 1, (1ull << 60) + 7};
  for (int i = 0; i < 300; ++i) {
    const double a0 = pair_at(60 + (int)(tu_next(&rng) % 200), &rng);
    check_pair(a0, ldexp(a0, -60) * pair_signed_unit(&rng), huge[i % 3], &beyond);
  }
  /* Bounds about 1.3 times the rate over 56 seeds (18.3% to 18.9%: a mean built as a double times
     its count, or just off it, lies within the division's error of a double, and is left to the
     state unless that division was exact), and far above it (none of 10 million means): the pair
     must round nearly every mean at f's subnormals. An exact zero is never left to the state. */
  pair_fallbacks_at_most("overflow edges", &over, 25.0);
  pair_fallbacks_at_most("subnormals of f", &sub, 0.1);
  pair_fallbacks_at_most("exact zeros", &zero, 0.0);
  pair_report("double subnormals, counts from 2^53", &beyond);
}

/* Segments into states round each segment to the bits of one call over it, an empty one's
   state staying as it was; offsets that decrease or are negative change no state. */
static void segments_should_give_each_segments_bits(void **state) {
  (void)state;
  enum { N = 400, SEGS = 6 };
  static const int64_t offsets[SEGS + 1] = {0, 17, 17, 150, 151, 399, 400};
  static const cureduce_dtype INPUTS[] = {CUREDUCE_F32,  CUREDUCE_F64,     CUREDUCE_F16,
                                          CUREDUCE_BF16, CUREDUCE_F8_E4M3, CUREDUCE_F8_E5M2};
  uint64_t rng = tu_seed() + 17;
  double x[N];
  int64_t w[SEGS * CUREDUCE_EXACT_STATE_WORDS], before[SEGS * CUREDUCE_EXACT_STATE_WORDS];
  for (size_t d = 0; d < sizeof INPUTS / sizeof *INPUTS; ++d)
    for (int p = 0; p < EX_PATTERN_COUNT; ++p) {
      const cureduce_dtype in = INPUTS[d];
      const size_t size = cureduce_dtype_size(in);
      ex_fill(in, x, N, (ex_pattern)p, &rng);
      memset(w, 0, sizeof w);
      assert_int_equal(cureduce_cpu_exact_accumulate_segments(in, x, SEGS, offsets, w), CUREDUCE_SUCCESS);
      const cureduce_dtype outs[] = {CUREDUCE_F64, CUREDUCE_F32, in};
      for (int s = 0; s < SEGS; ++s) {
        const uint64_t len = (uint64_t)(offsets[s + 1] - offsets[s]);
        for (int o = 0; o < 3; ++o)
          for (int mean = 0; mean < 2 && (len > 0 || !mean); ++mean) { /* an empty mean: no value */
            const cureduce_op op = mean ? CUREDUCE_MEAN_EXACT : CUREDUCE_SUM_EXACT;
            unsigned char got[8] = {0}, want[8] = {0};
            assert_int_equal(cureduce_cpu_exact_finish(op, w + s * CUREDUCE_EXACT_STATE_WORDS, outs[o], got),
                             CUREDUCE_SUCCESS);
            assert_int_equal(
                cureduce_cpu_reduce(op, in, (const char *)x + offsets[s] * size, len, outs[o], want),
                CUREDUCE_SUCCESS);
            if (memcmp(got, want, sizeof got) != 0)
              fail_msg("%s %s->%s %s segment %d differs from one call", cureduce_op_name(op),
                       cureduce_dtype_name(in), cureduce_dtype_name(outs[o]), EX_PATTERN_NAMES[p], s);
          }
      }
      for (int i = 0; i < CUREDUCE_EXACT_STATE_WORDS; ++i) /* the empty segment */
        assert_int_equal(w[CUREDUCE_EXACT_STATE_WORDS + i], 0);
    }
  ex_fill(CUREDUCE_F64, x, N, EX_UNIFORM, &rng);
  memset(w, 0, sizeof w);
  assert_int_equal(cureduce_cpu_exact_accumulate_segments(CUREDUCE_F64, x, SEGS, offsets, w),
                   CUREDUCE_SUCCESS);
  memcpy(before, w, sizeof w);
  static const int64_t decreasing[SEGS + 1] = {0, 17, 16, 150, 151, 399, 400};
  static const int64_t negative[SEGS + 1] = {-1, 17, 17, 150, 151, 399, 400};
  assert_int_equal(cureduce_cpu_exact_accumulate_segments(CUREDUCE_F64, x, SEGS, decreasing, w),
                   CUREDUCE_ERROR_INVALID_VALUE);
  assert_int_equal(cureduce_cpu_exact_accumulate_segments(CUREDUCE_F64, x, SEGS, negative, w),
                   CUREDUCE_ERROR_INVALID_VALUE);
  assert_memory_equal(before, w, sizeof w);
  assert_int_equal(cureduce_cpu_exact_accumulate_segments(CUREDUCE_F64, NULL, SEGS, offsets, w),
                   CUREDUCE_ERROR_NULL_POINTER);
  assert_int_equal(cureduce_cpu_exact_accumulate_segments(CUREDUCE_F64, x, SEGS, NULL, w),
                   CUREDUCE_ERROR_NULL_POINTER);
  assert_int_equal(cureduce_cpu_exact_accumulate_segments(CUREDUCE_F64, x, SEGS, offsets, NULL),
                   CUREDUCE_ERROR_NULL_POINTER);
  assert_int_equal(cureduce_cpu_exact_accumulate_segments(CUREDUCE_I32, x, SEGS, offsets, w),
                   CUREDUCE_ERROR_UNSUPPORTED);
  assert_int_equal(cureduce_cpu_exact_accumulate_segments(CUREDUCE_F64, NULL, 0, NULL, NULL),
                   CUREDUCE_SUCCESS);
  /* segments that are all empty still need their input, as on the GPU, which cannot see them */
  static const int64_t empty[3] = {5, 5, 5};
  assert_int_equal(cureduce_cpu_exact_accumulate_segments(CUREDUCE_F64, NULL, 2, empty, w),
                   CUREDUCE_ERROR_NULL_POINTER);
  assert_int_equal(cureduce_cpu_exact_accumulate_segments(CUREDUCE_F64, x, 2, empty, w), CUREDUCE_SUCCESS);
  assert_memory_equal(before, w, sizeof w);
}

/* The sum of 2^29 states (the all-reduce limit of cureduce.h) whose limbs 40 and 41 hold
   2^33 - 1, the most a carried state holds, of either sign: limbs of 2^62 - 2^29, the most the
   rounding takes. Limb i weighs 2^(32 i - 1074), so c = 2^62 - 2^29 in limbs 40 and 41 is
   c (2^238 + 2^206) = 2^300 + 2^267 - 2^235, which rounds to 2^300 + 2^267 (its last bit is
   2^248); c in limb 40 and -c in 41 is -(2^300 - 3 2^267 + 2^235), rounding to -(2^300 - 3
   2^267). */
static void states_summed_at_the_all_reduce_limit_should_round_right(void **state) {
  (void)state;
  const int64_t c = ((int64_t)1 << 29) * (((int64_t)1 << 33) - 1);
  const struct {
    int64_t limb40, limb41;
    double want;
  } CASES[] = {{c, c, ldexp(1, 300) + ldexp(1, 267)},
               {-c, -c, -(ldexp(1, 300) + ldexp(1, 267))},
               {c, -c, -(ldexp(1, 300) - 3 * ldexp(1, 267))},
               {-c, c, ldexp(1, 300) - 3 * ldexp(1, 267)}};
  for (size_t k = 0; k < sizeof CASES / sizeof *CASES; ++k) {
    int64_t w[CUREDUCE_EXACT_STATE_WORDS] = {0};
    w[40] = CASES[k].limb40;
    w[41] = CASES[k].limb41;
    w[CR_EXACT_NOT_NEG_ZERO] = 1;
    w[CR_EXACT_COUNT] = (int64_t)1 << 29;
    double got = 0;
    assert_int_equal(cureduce_cpu_exact_finish(CUREDUCE_SUM_EXACT, w, CUREDUCE_F64, &got), CUREDUCE_SUCCESS);
    if (got != CASES[k].want)
      fail_msg("case %zu: %a, not %a", k, got, CASES[k].want);
    /* the same state added to (one more element) still holds: the carry takes it */
    const double one = 1.0;
    assert_int_equal(cureduce_cpu_exact_accumulate(CUREDUCE_F64, &one, 1, w), CUREDUCE_SUCCESS);
    assert_int_equal(cureduce_cpu_exact_finish(CUREDUCE_SUM_EXACT, w, CUREDUCE_F64, &got), CUREDUCE_SUCCESS);
    if (got != CASES[k].want)
      fail_msg("case %zu plus 1: %a, not %a", k, got, CASES[k].want);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(states_summed_at_the_all_reduce_limit_should_round_right),
      cmocka_unit_test(chunks_in_any_order_should_give_one_call_bits),
      cmocka_unit_test(rows_should_give_each_rows_bits),
      cmocka_unit_test(segments_should_give_each_segments_bits),
      cmocka_unit_test(bad_arguments_should_leave_the_state_alone),
      cmocka_unit_test(states_overlapping_what_is_read_should_be_invalid),
      cmocka_unit_test(two_sum_and_round_double_should_be_exact),
      cmocka_unit_test(pair_value_of_random_pairs_should_match_the_state),
      cmocka_unit_test(pair_value_at_rounding_ties_should_match_the_state),
      cmocka_unit_test(pair_value_at_range_edges_should_match_the_state),
      cmocka_unit_test(pair_value_of_exact_means_should_not_fall_back),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
