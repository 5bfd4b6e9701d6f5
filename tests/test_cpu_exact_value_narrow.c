/* The rounding of a state whose nonzero limbs span at most four (cr_exact_value_narrow, by
 * 128-bit shifts: the GPU's finish for most data) gives the bits of the digit-by-digit rounding
 * (cr_exact_value_in) to every format, on random states, at and next to every format's rounding
 * ties, in the subnormal ranges and at overflow; it declines the states it cannot hold. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "test_util.h"

#include "../src/common/exact_state.h"

static const cureduce_dtype OUTPUTS[] = {CUREDUCE_F64,  CUREDUCE_F32,     CUREDUCE_F16,
                                         CUREDUCE_BF16, CUREDUCE_F8_E4M3, CUREDUCE_F8_E5M2};
#define OUTPUT_COUNT ((int)(sizeof OUTPUTS / sizeof *OUTPUTS))

/* The same result: the same bits (so the sign of a zero counts), or both NaN. */
static int same(double a, double b) { return (isnan(a) && isnan(b)) || cr_exact_bits(a) == cr_exact_bits(b); }

/* A state's narrow rounding against its digit-by-digit one, to every format. Returns how many
   formats took the narrow path (all or none: the case does not depend on the format). */
static int check_state(const int64_t *w) {
  int bottom, top, taken = 0;
  cr_exact_range(w, &bottom, &top);
  for (int o = 0; o < OUTPUT_COUNT; ++o) {
    const cr_exact_format f = cr_exact_format_of(OUTPUTS[o]);
    double got = 12345.0;
    if (!cr_exact_value_narrow(w, bottom, top, f, &got))
      continue;
    ++taken;
    const double want = cr_exact_value_in(w, bottom, top, 0, f);
    if (!same(got, want))
      fail_msg("limbs %d..%d (%lld %lld %lld) to %s: narrow %a, digit by digit %a", bottom, top,
               (long long)w[bottom < 0 ? 0 : bottom], (long long)w[bottom + 1 < 72 ? bottom + 1 : 71],
               (long long)w[top < 0 ? 0 : top], cureduce_dtype_name(OUTPUTS[o]), got, want);
  }
  return taken;
}

/* A random signed limb below 2^bits in magnitude. */
static int64_t limb_below(int bits, uint64_t *rng) {
  const int64_t m = (int64_t)(tu_next(rng) >> (64 - bits));
  return tu_next(rng) & 1 ? -m : m;
}

static void random_narrow_states_should_round_as_digit_by_digit(void **state) {
  (void)state;
  uint64_t rng = tu_seed() + 211;
  int states[6] = {0}, taken[6] = {0}; /* by span: 1 to 5 limbs */
  for (int s = 0; s < 300000; ++s) {
    int64_t w[CUREDUCE_EXACT_STATE_WORDS] = {0};
    const int span = 1 + (int)(tu_next(&rng) % 5);
    /* a quarter at the ends: the subnormal ranges (low limbs) and overflow (high limbs, up to
       68: cr_exact_value_in, the reference, carries the top limb only below 69) */
    const uint64_t end = tu_next(&rng) % 8;
    const int bottom = end == 0   ? (int)(tu_next(&rng) % 4)
                       : end == 1 ? 69 - span - (int)(tu_next(&rng) % 4)
                                  : (int)(tu_next(&rng) % (uint64_t)(69 - span + 1));
    for (int i = bottom; i < bottom + span; ++i)
      w[i] = limb_below(1 + (int)(tu_next(&rng) % 62), &rng);
    w[bottom] = w[bottom] != 0 ? w[bottom] : 1;
    w[bottom + span - 1] = w[bottom + span - 1] != 0 ? w[bottom + span - 1] : -1;
    if (tu_next(&rng) % 16 == 0 && span > 1) { /* cancels to zero, or to one unit */
      const int64_t k = limb_below(28, &rng);
      w[bottom] = k * CR_EXACT_DIGIT + (int64_t)(tu_next(&rng) % 2);
      w[bottom + 1] = -k;
      for (int i = bottom + 2; i < bottom + span; ++i)
        w[i] = 0;
    }
    w[CR_EXACT_COUNT] = (int64_t)(1 + tu_next(&rng) % 1000);
    w[CR_EXACT_NOT_NEG_ZERO] = (int64_t)(tu_next(&rng) % 2);
    int b, t;
    cr_exact_range(w, &b, &t);
    const int got = t < 0 ? 1 : t - b + 1;
    states[got] += 1;
    taken[got] += check_state(w) == OUTPUT_COUNT;
  }
  for (int k = 1; k <= 5; ++k)
    printf("# %d-limb states: %d of %d rounded by the narrow path\n", k, taken[k], states[k]);
  /* every span of up to three (limbs below 2^62), most of four (a top part from 2^54), no wider */
  for (int k = 1; k <= 3; ++k)
    assert_int_equal(taken[k], states[k]);
  assert_true(taken[4] > states[4] / 2);
  assert_int_equal(taken[5], 0);
}

/* V = (2 j + 1) 2^(t - 1) + delta, a tie of format f at its bit t (j a value of f's precision,
   or a subnormal's), or next to it, as three limbs from `bottom` whose digits are moved between
   neighbours at random (the same value; limbs of any sign, as blocks' atomics leave them). */
static void tie_state(cr_exact_format f, uint64_t *rng, int64_t *w) {
  const int p = f.precision, e_max = ilogb(f.max_finite);
  /* the tie's round bit at an absolute exponent in [min_exp - 2, e_max - p + 3], at least two
     above the state's lowest bit */
  const int lo = f.min_exp - 2 > -1072 ? f.min_exp - 2 : -1072, hi = e_max - p + 3;
  const int e = lo + (int)(tu_next(rng) % (uint64_t)(hi - lo + 1));
  /* limbs whose bit 0 lies at least 2 below e and whose top leaves room above the value */
  int b_min = (e + p + 4 - 120 + 1074 + 31) / 32, b_max = (e - 2 + 1074) / 32;
  b_min = b_min > 0 ? b_min : 0;
  b_max = b_max < 66 ? b_max : 66;
  if (b_min > b_max)
    b_min = b_max;
  const int bottom = b_min + (int)(tu_next(rng) % (uint64_t)(b_max - b_min + 1));
  const int t = e - (32 * bottom - 1074); /* the round bit, relative to bit 0 of limb bottom */
  const uint64_t top_bit = tu_next(rng) % 4 == 0 ? 0 : 1ull << (p - 1);
  const uint64_t j = top_bit | (tu_next(rng) % (1ull << (p - 1)));
  unsigned __int128 v = (((unsigned __int128)(2 * j + 1)) << t);
  const int d = (int)(tu_next(rng) % 5) - 2; /* -2 .. 2 units of the lowest bit */
  v = d < 0 && v < (unsigned __int128)-d ? v : v + (unsigned __int128)(__int128)d;
  const int negative = (int)(tu_next(rng) & 1);
  int64_t dig[3] = {(int64_t)(uint32_t)v, (int64_t)(uint32_t)(v >> 32), (int64_t)(v >> 64)};
  for (int i = 0; i < 2; ++i) { /* move r units of limb i + 1 down into limb i */
    const int64_t r = (int64_t)(tu_next(rng) % (1ull << 29)) - (1ll << 28);
    dig[i] += r * CR_EXACT_DIGIT;
    dig[i + 1] -= r;
  }
  for (int i = 0; i < 3; ++i)
    w[bottom + i] = negative ? -dig[i] : dig[i];
  const uint64_t four = bottom > 0 ? tu_next(rng) % 3 : 0;
  if (four == 1) { /* a fourth limb below: the same value (-k 2^32 moved down a limb) */
    const int64_t k = (int64_t)(tu_next(rng) % (1ull << 20)) - (1ll << 19);
    w[bottom - 1] = k * CR_EXACT_DIGIT;
    w[bottom] -= k;
  } else if (four == 2) { /* a fourth limb below: just off the tie, either way */
    w[bottom - 1] = (int64_t)(tu_next(rng) % (1ull << 33)) - (1ll << 32);
  }
  w[CR_EXACT_COUNT] = 3;
  w[CR_EXACT_NOT_NEG_ZERO] = 1;
}

static void narrow_states_at_rounding_ties_should_round_as_digit_by_digit(void **state) {
  (void)state;
  uint64_t rng = tu_seed() + 223;
  int taken = 0, total = 0;
  for (int o = 0; o < OUTPUT_COUNT; ++o) {
    const cr_exact_format f = cr_exact_format_of(OUTPUTS[o]);
    for (int s = 0; s < 50000; ++s) {
      int64_t w[CUREDUCE_EXACT_STATE_WORDS] = {0};
      tie_state(f, &rng, w);
      ++total;
      taken += check_state(w) == OUTPUT_COUNT;
    }
  }
  printf("# %d of %d states at or next to ties rounded by the narrow path\n", taken, total);
  assert_true(taken > total / 2); /* four limbs whose top part is below 2^54 are declined */
}

/* NaN and infinity flags, spans of five limbs, four whose top part is below 2^54 and top limbs
   from 2^62 in magnitude are not the narrow path's: it declines them. */
static void states_outside_the_case_should_be_declined(void **state) {
  (void)state;
  const cr_exact_format f = cr_exact_format_of(CUREDUCE_F64);
  double v = 0.0;
  int64_t w[CUREDUCE_EXACT_STATE_WORDS] = {0};
  w[40] = 5;
  w[42] = -7;
  assert_true(cr_exact_value_narrow(w, 40, 42, f, &v));
  assert_true(v == cr_exact_value_in(w, 40, 42, 0, f));
  w[43] = 1; /* four limbs: the top part from 2^54 */
  assert_true(cr_exact_value_narrow(w, 40, 43, f, &v));
  assert_true(v == cr_exact_value_in(w, 40, 43, 0, f));
  w[44] = 1; /* five */
  assert_false(cr_exact_value_narrow(w, 40, 44, f, &v));
  w[44] = 0;
  w[43] = 0;
  w[39] = 1; /* four, with a top part below 2^54: 2^64 - 2^32 2^32 + 5 */
  w[41] = -CR_EXACT_DIGIT;
  w[42] = 1;
  assert_false(cr_exact_value_narrow(w, 39, 42, f, &v));
  w[39] = 0;
  w[41] = 0;
  w[42] = -7;
  for (int flag = CR_EXACT_NAN; flag <= CR_EXACT_NEG_INF; ++flag) {
    w[flag] = 1;
    assert_false(cr_exact_value_narrow(w, 40, 42, f, &v));
    w[flag] = 0;
  }
  w[42] = (int64_t)1 << 62;
  assert_false(cr_exact_value_narrow(w, 40, 42, f, &v));
  w[42] = -((int64_t)1 << 62);
  assert_true(cr_exact_value_narrow(w, 40, 42, f, &v));
  assert_true(v == cr_exact_value_in(w, 40, 42, 0, f));
  w[42] = -((int64_t)1 << 62) - 1;
  assert_false(cr_exact_value_narrow(w, 40, 42, f, &v));
}

/* The CPU's finish of a sum rounds as the GPU's, narrow path first: a hand-made state with a
   limb at 71 (2^1230, beyond any sum) overflows, where the digit-by-digit rounding, which
   carries the top limb only below 69, would lose it. */
static void cpu_finish_of_a_top_limb_state_should_overflow(void **state) {
  (void)state;
  int64_t w[CUREDUCE_EXACT_STATE_WORDS] = {0};
  w[71] = CR_EXACT_DIGIT;
  w[CR_EXACT_COUNT] = 1;
  w[CR_EXACT_NOT_NEG_ZERO] = 1;
  double got = 0.0;
  assert_int_equal(cureduce_cpu_exact_finish(CUREDUCE_SUM_EXACT, w, CUREDUCE_F64, &got), CUREDUCE_SUCCESS);
  assert_true(isinf(got) && got > 0);
  w[71] = -CR_EXACT_DIGIT;
  assert_int_equal(cureduce_cpu_exact_finish(CUREDUCE_SUM_EXACT, w, CUREDUCE_F64, &got), CUREDUCE_SUCCESS);
  assert_true(isinf(got) && got < 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(random_narrow_states_should_round_as_digit_by_digit),
      cmocka_unit_test(narrow_states_at_rounding_ties_should_round_as_digit_by_digit),
      cmocka_unit_test(states_outside_the_case_should_be_declined),
      cmocka_unit_test(cpu_finish_of_a_top_limb_state_should_overflow),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
