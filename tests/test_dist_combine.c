/* The distributed reductions' combine (src/dist/combine.h) on the CPU, with 1 to 8 simulated
 * ranks: arrays split at random points (empty shards included), each shard reduced with the CPU
 * library, the partials combined in rank order as the GPUs combine them after the all-gather.
 * No GPU and no NCCL needed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "dist_util.h"
#include "exact_patterns.h"

static const uint64_t SIZES[] = {1, 2, 31, 32, 33, 1023, 1025, 4099, 20011};
#define SIZE_COUNT (sizeof SIZES / sizeof *SIZES)
#define SPLITS_PER_SIZE 3

static const tu_pattern PATTERNS[] = {TU_INTEGERS, TU_RANDOM, TU_SPECIALS, TU_NEG_ZEROS, TU_CONSTANT};
static const char *const PATTERN_NAMES[] = {"integers", "random", "specials", "neg-zeros", "constant"};
#define PATTERN_COUNT (sizeof PATTERNS / sizeof *PATTERNS)

static void *g_data; /* room for the largest size of the widest dtype */

static int setup(void **state) {
  (void)state;
  g_data = malloc(SIZES[SIZE_COUNT - 1] * 8);
  return g_data ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  free(g_data);
  return 0;
}

/* The combined result of op over h_in split at cut (k ranks), written to out. */
static void combine_split(cureduce_op op, cureduce_dtype in, cureduce_dtype acc, const void *h_in,
                          const uint64_t *cut, int k, void *out) {
  cr_dist_partial p[DU_MAX_RANKS];
  assert_int_equal(du_cpu_partials(op, in, acc, h_in, cut, k, p), CUREDUCE_SUCCESS);
  cr_dist_combine(op, acc, p, k, 1, out);
}

/* For every pair, op and pattern, every size split into 1..8 ranks in several random ways:
   check is given the whole array's CPU result (whole) and the sharding. */
typedef void (*split_check)(cureduce_op op, du_pair pr, tu_pattern pat, const void *h_in, uint64_t n,
                            const void *whole, const uint64_t *cut, int k);

static void for_every_split(const cureduce_op *ops, int op_count, int float_acc_only, int int_acc_only,
                            split_check check) {
  uint64_t rng = tu_seed() + 30;
  for (size_t pi = 0; pi < DU_PAIR_COUNT; ++pi) {
    const du_pair pr = DU_PAIRS[pi];
    if ((float_acc_only && !cr_dist_float_acc(pr.acc)) || (int_acc_only && cr_dist_float_acc(pr.acc)))
      continue;
    for (size_t t = 0; t < PATTERN_COUNT; ++t)
      for (size_t s = 0; s < SIZE_COUNT; ++s) {
        const uint64_t n = SIZES[s];
        tu_fill(pr.in, g_data, n, PATTERNS[t], 3, &rng);
        for (int o = 0; o < op_count; ++o) {
          unsigned char whole[8] = {0};
          assert_int_equal(cureduce_cpu_reduce(ops[o], pr.in, g_data, n, pr.acc, whole), CUREDUCE_SUCCESS);
          for (int k = 1; k <= DU_MAX_RANKS; ++k)
            for (int trial = 0; trial < SPLITS_PER_SIZE; ++trial) {
              uint64_t cut[DU_MAX_RANKS + 1];
              du_split(n, k, &rng, cut);
              check(ops[o], pr, PATTERNS[t], g_data, n, whole, cut, k);
            }
        }
      }
  }
}

static void fail_split(const char *what, cureduce_op op, du_pair pr, tu_pattern pat, uint64_t n,
                       const uint64_t *cut, int k) {
  char cuts[256];
  int at = 0;
  for (int r = 1; r < k && at < 200; ++r)
    at += snprintf(cuts + at, sizeof cuts - (size_t)at, " %llu", (unsigned long long)cut[r]);
  cuts[at] = 0;
  fail_msg("%s: %s %s->%s, %s, n %llu over %d ranks, cuts at%s", what, cureduce_op_name(op),
           cureduce_dtype_name(pr.in), cureduce_dtype_name(pr.acc), PATTERN_NAMES[pat], (unsigned long long)n,
           k, k > 1 ? cuts : " (none)");
}

static void check_same_as_whole(cureduce_op op, du_pair pr, tu_pattern pat, const void *h_in, uint64_t n,
                                const void *whole, const uint64_t *cut, int k) {
  unsigned char split[8] = {0};
  combine_split(op, pr.in, pr.acc, h_in, cut, k, split);
  if (!tu_same_value(pr.acc, whole, split))
    fail_split("differs from the whole array", op, pr, pat, n, cut, k);
}

static void min_max_absmax_should_equal_the_whole_array(void **state) {
  (void)state;
  const cureduce_op ops[] = {CUREDUCE_MIN, CUREDUCE_MAX, CUREDUCE_ABSMAX};
  for_every_split(ops, 3, 0, 0, check_same_as_whole);
}

static void integer_sums_should_equal_the_whole_array(void **state) {
  (void)state;
  const cureduce_op ops[] = {CUREDUCE_SUM, CUREDUCE_SUMSQ};
  for_every_split(ops, 2, 0, 1, check_same_as_whole);
}

static void check_arg(cureduce_op op, du_pair pr, tu_pattern pat, const void *h_in, uint64_t n,
                      const void *whole, const uint64_t *cut, int k) {
  int64_t expected = -1, split = -2;
  memcpy(&expected, whole, sizeof expected);
  combine_split(op, pr.in, pr.acc, h_in, cut, k, &split);
  if (expected != split) {
    char what[96];
    snprintf(what, sizeof what, "global index %lld, the whole array's %lld", (long long)split,
             (long long)expected);
    fail_split(what, op, pr, pat, n, cut, k);
  }
}

static void arg_ops_should_give_the_whole_arrays_index(void **state) {
  (void)state;
  const cureduce_op ops[] = {CUREDUCE_ARGMIN, CUREDUCE_ARGMAX};
  for_every_split(ops, 2, 0, 0, check_arg);
}

/* The rank-order combination written out independently: the ranks' local sums (for MEAN but
   into f64, their local means times their counts) added in double from -0.0, skipping empty
   ranks, divided by n for MEAN, rounded once into acc. */
static void check_float_sum(cureduce_op op, du_pair pr, tu_pattern pat, const void *h_in, uint64_t n,
                            const void *whole, const uint64_t *cut, int k) {
  const size_t size = cureduce_dtype_size(pr.in);
  double s = -0.0;
  for (int r = 0; r < k; ++r) {
    const uint64_t m = cut[r + 1] - cut[r];
    unsigned char local[8] = {0};
    double v = 0;
    if (m == 0)
      continue;
    assert_int_equal(cureduce_cpu_reduce(cr_dist_local_op(op, pr.acc), pr.in,
                                         (const char *)h_in + cut[r] * size, m, pr.acc, local),
                     CUREDUCE_SUCCESS);
    assert_int_equal(cureduce_to_double(pr.acc, local, &v), CUREDUCE_SUCCESS);
    s += cr_dist_local_op(op, pr.acc) == CUREDUCE_MEAN ? v * (double)m : v; /* a local mean */
  }
  if (op == CUREDUCE_MEAN)
    s /= (double)n;
  unsigned char expected[8] = {0}, split[8] = {0};
  /* rounded once (cr_dist_round: narrow_sums_should_round_once pins its bits), then exact */
  assert_int_equal(cureduce_from_double(pr.acc, cr_dist_round(pr.acc, s), expected), CUREDUCE_SUCCESS);
  combine_split(op, pr.in, pr.acc, h_in, cut, k, split);
  if (!tu_same_value(pr.acc, expected, split))
    fail_split("differs from the rank-order sum", op, pr, pat, n, cut, k);
  /* Small integers in f32 or f64 add exactly, however they are split: the whole array's (not
     for a mean into f32, whose ranks' means are rounded). */
  if (pat == TU_INTEGERS && (pr.acc == CUREDUCE_F64 || (pr.acc == CUREDUCE_F32 && op != CUREDUCE_MEAN)))
    check_same_as_whole(op, pr, pat, h_in, n, whole, cut, k);
}

static void float_sums_should_be_the_rank_order_sum_rounded_once(void **state) {
  (void)state;
  const cureduce_op ops[] = {CUREDUCE_SUM, CUREDUCE_SUMSQ, CUREDUCE_MEAN};
  for_every_split(ops, 3, 1, 0, check_float_sum);
}

/* Exact sums: one state per rank, added as integers as the all-reduce adds them, rounded once:
   the bits of one call over the whole array, for every split and in any order of addition. */
static void exact_sums_should_be_identical_for_any_split(void **state) {
  (void)state;
  static const cureduce_dtype INPUTS[] = {CUREDUCE_F32,  CUREDUCE_F64,     CUREDUCE_F16,
                                          CUREDUCE_BF16, CUREDUCE_F8_E4M3, CUREDUCE_F8_E5M2};
  const uint64_t sizes[] = {1, 33, 1025, 20011};
  uint64_t rng = tu_seed() + 31;
  for (size_t d = 0; d < sizeof INPUTS / sizeof *INPUTS; ++d)
    for (int pat = 0; pat < EX_PATTERN_COUNT; ++pat)
      for (size_t s = 0; s < sizeof sizes / sizeof *sizes; ++s) {
        const cureduce_dtype in = INPUTS[d];
        const size_t size = cureduce_dtype_size(in);
        const uint64_t n = sizes[s];
        ex_fill(in, g_data, n, (ex_pattern)pat, &rng);
        for (int k = 1; k <= DU_MAX_RANKS; ++k) {
          uint64_t cut[DU_MAX_RANKS + 1];
          du_split(n, k, &rng, cut);
          int64_t states[DU_MAX_RANKS][CUREDUCE_EXACT_STATE_WORDS] = {{0}};
          int64_t forward[CUREDUCE_EXACT_STATE_WORDS] = {0}, backward[CUREDUCE_EXACT_STATE_WORDS] = {0};
          for (int r = 0; r < k; ++r)
            assert_int_equal(cureduce_cpu_exact_accumulate(in, (const char *)g_data + cut[r] * size,
                                                           cut[r + 1] - cut[r], states[r]),
                             CUREDUCE_SUCCESS);
          for (int r = 0; r < k; ++r) {
            assert_int_equal(cureduce_cpu_exact_combine(forward, states[r]), CUREDUCE_SUCCESS);
            assert_int_equal(cureduce_cpu_exact_combine(backward, states[k - 1 - r]), CUREDUCE_SUCCESS);
          }
          assert_memory_equal(forward, backward, sizeof forward);
          const cureduce_dtype outs[] = {CUREDUCE_F64, CUREDUCE_F32, in};
          for (int o = 0; o < 3; ++o)
            for (int mean = 0; mean < 2; ++mean) {
              const cureduce_op op = mean ? CUREDUCE_MEAN_EXACT : CUREDUCE_SUM_EXACT;
              unsigned char one[8] = {0}, split[8] = {0};
              assert_int_equal(cureduce_cpu_reduce(op, in, g_data, n, outs[o], one), CUREDUCE_SUCCESS);
              assert_int_equal(cureduce_cpu_exact_finish(op, forward, outs[o], split), CUREDUCE_SUCCESS);
              if (memcmp(one, split, cureduce_dtype_size(outs[o])) != 0)
                fail_msg("%s %s->%s %s, n %llu over %d ranks: differs from one call", cureduce_op_name(op),
                         cureduce_dtype_name(in), cureduce_dtype_name(outs[o]), EX_PATTERN_NAMES[pat],
                         (unsigned long long)n, k);
            }
        }
      }
}

/* Ranks without elements are skipped: they neither turn a sum of -0.0 into +0.0 nor shift the
   global index; with no elements anywhere, sums are +0.0 and the other ops write nothing. */
static void empty_shards_should_be_skipped(void **state) {
  (void)state;
  const float neg_zeros[3] = {-0.0f, -0.0f, -0.0f};
  const uint64_t cut[5] = {0, 0, 3, 3, 3}; /* only rank 1 holds elements */
  float sum = 1.0f;
  combine_split(CUREDUCE_SUM, CUREDUCE_F32, CUREDUCE_F32, neg_zeros, cut, 4, &sum);
  assert_true(sum == 0.0f && signbit(sum));

  const float x[5] = {4.0f, 2.0f, 9.0f, 2.0f, -1.0f};
  const uint64_t late[4] = {0, 0, 0, 5}; /* rank 2 holds everything */
  int64_t at = -1;
  combine_split(CUREDUCE_ARGMIN, CUREDUCE_F32, CUREDUCE_F32, x, late, 3, &at);
  assert_int_equal(at, 4);
  const uint64_t middle[5] = {0, 1, 1, 3, 5}; /* {4} {} {2, 9} {2, -1} */
  combine_split(CUREDUCE_ARGMAX, CUREDUCE_F32, CUREDUCE_F32, x, middle, 4, &at);
  assert_int_equal(at, 2);

  const uint64_t none[4] = {0, 0, 0, 0};
  float out = 7.0f;
  combine_split(CUREDUCE_SUM, CUREDUCE_F32, CUREDUCE_F32, x, none, 3, &out);
  assert_true(out == 0.0f && !signbit(out));
  const cureduce_op untouched[] = {CUREDUCE_MIN, CUREDUCE_MAX, CUREDUCE_ABSMAX, CUREDUCE_MEAN};
  for (int o = 0; o < 4; ++o) {
    unsigned char buf[8], before[8];
    memset(buf, 0x77, sizeof buf);
    memcpy(before, buf, sizeof buf);
    combine_split(untouched[o], CUREDUCE_F32, CUREDUCE_F32, x, none, 3, buf);
    assert_memory_equal(buf, before, sizeof buf);
  }
  at = 77;
  combine_split(CUREDUCE_ARGMAX, CUREDUCE_F32, CUREDUCE_F32, x, none, 3, &at);
  assert_int_equal(at, 77);
  int32_t isum = 5;
  const int8_t ints[2] = {1, 2};
  combine_split(CUREDUCE_SUM, CUREDUCE_I8, CUREDUCE_I32, ints, none, 3, &isum);
  assert_int_equal(isum, 0);
}

/* A NaN wins MIN, MAX and the arg ops on whichever rank it is, and the first NaN's global index
   is returned, also when a later rank holds an earlier-looking extreme; ties (+0.0 and -0.0
   included) go to the lowest global index. */
static void nan_and_ties_should_follow_the_library(void **state) {
  (void)state;
  const double x[8] = {-INFINITY, 1.0, 5.0, NAN, 2.0, NAN, -7.0, 9.0};
  const uint64_t cut[5] = {0, 2, 4, 6, 8}; /* NaNs at global 3 (rank 1) and 5 (rank 2) */
  int64_t at = -1;
  combine_split(CUREDUCE_ARGMIN, CUREDUCE_F64, CUREDUCE_F64, x, cut, 4, &at);
  assert_int_equal(at, 3);
  combine_split(CUREDUCE_ARGMAX, CUREDUCE_F64, CUREDUCE_F64, x, cut, 4, &at);
  assert_int_equal(at, 3);
  double v = 0;
  combine_split(CUREDUCE_MIN, CUREDUCE_F64, CUREDUCE_F64, x, cut, 4, &v);
  assert_true(isnan(v));
  combine_split(CUREDUCE_SUM, CUREDUCE_F64, CUREDUCE_F64, x, cut, 4, &v);
  assert_true(isnan(v));

  const float zeros[6] = {1.0f, 0.0f, 3.0f, -0.0f, 0.0f, -0.0f};
  const uint64_t zcut[4] = {0, 2, 4, 6};
  combine_split(CUREDUCE_ARGMIN, CUREDUCE_F32, CUREDUCE_F32, zeros, zcut, 3, &at);
  assert_int_equal(at, 1); /* +0.0 == -0.0: the first zero */
  float m = 1.0f;
  combine_split(CUREDUCE_MIN, CUREDUCE_F32, CUREDUCE_F32, zeros, zcut, 3, &m);
  assert_true(m == 0.0f && signbit(m)); /* MIN(-0.0, +0.0) is -0.0 */
  combine_split(CUREDUCE_MAX, CUREDUCE_F32, CUREDUCE_F32, zeros + 1, zcut, 2, &m);
  assert_true(m == 3.0f);

  const int32_t ties[6] = {4, 9, 1, 9, 1, 0};
  const uint64_t tcut[4] = {0, 2, 4, 6};
  combine_split(CUREDUCE_ARGMAX, CUREDUCE_I32, CUREDUCE_I64, ties, tcut, 3, &at);
  assert_int_equal(at, 1);
  combine_split(CUREDUCE_ARGMIN, CUREDUCE_I32, CUREDUCE_I64, ties, tcut, 2, &at);
  assert_int_equal(at, 2); /* the first 1 (ranks 0 and 1 hold 4 elements) */
}

/* f16 and bf16 sums over ranks are rounded once from the double total, not through f32 first:
   1 + 2^-11 + 2^-24 lies just above the f16 midpoint 1 + 2^-11 (so 1 + 2^-10), but through f32
   it is that midpoint (a tie to even) and then 1; likewise 1 + 2^-8 + 2^-40 in bf16. */
static void narrow_sums_should_round_once(void **state) {
  (void)state;
  const uint64_t cut[4] = {0, 1, 2, 3};
  const uint16_t f16[3] = {0x3c00, 0x1000, 0x0001}, bf16[3] = {0x3f80, 0x3b80, 0x2b80};
  uint16_t got = 0;
  combine_split(CUREDUCE_SUM, CUREDUCE_F16, CUREDUCE_F16, f16, cut, 3, &got);
  assert_int_equal(got, 0x3c01);
  combine_split(CUREDUCE_SUM, CUREDUCE_BF16, CUREDUCE_BF16, bf16, cut, 3, &got);
  assert_int_equal(got, 0x3f81);
  const uint16_t f16_neg[3] = {0xbc00, 0x9000, 0x8001}; /* the same, negated */
  combine_split(CUREDUCE_SUM, CUREDUCE_F16, CUREDUCE_F16, f16_neg, cut, 3, &got);
  assert_int_equal(got, 0xbc01);
  /* exactly the midpoint: a tie, to even */
  combine_split(CUREDUCE_SUM, CUREDUCE_F16, CUREDUCE_F16, f16, cut, 2, &got);
  assert_int_equal(got, 0x3c00);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(narrow_sums_should_round_once),
      cmocka_unit_test(min_max_absmax_should_equal_the_whole_array),
      cmocka_unit_test(integer_sums_should_equal_the_whole_array),
      cmocka_unit_test(arg_ops_should_give_the_whole_arrays_index),
      cmocka_unit_test(float_sums_should_be_the_rank_order_sum_rounded_once),
      cmocka_unit_test(exact_sums_should_be_identical_for_any_split),
      cmocka_unit_test(empty_shards_should_be_skipped),
      cmocka_unit_test(nan_and_ties_should_follow_the_library),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
