/* Running exact states on the CPU: split into chunks in any way and combined in any order, they
 * round to the bits of one call; bad arguments get a status and leave the state alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "exact_patterns.h"

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
      /* three chunks into three states, combined last-first */
      const uint64_t c1 = tu_next(&rng) % n, c2 = c1 + tu_next(&rng) % (n - c1 + 1);
      int64_t a[CUREDUCE_EXACT_STATE_WORDS] = {0}, b[CUREDUCE_EXACT_STATE_WORDS] = {0},
              c[CUREDUCE_EXACT_STATE_WORDS] = {0};
      assert_int_equal(cureduce_cpu_exact_accumulate(in, x, c1, a), CUREDUCE_SUCCESS);
      assert_int_equal(cureduce_cpu_exact_accumulate(in, (char *)x + c1 * size, c2 - c1, b), 0);
      assert_int_equal(cureduce_cpu_exact_accumulate(in, (char *)x + c2 * size, n - c2, c), 0);
      assert_int_equal(cureduce_cpu_exact_combine(c, b), CUREDUCE_SUCCESS);
      assert_int_equal(cureduce_cpu_exact_combine(c, a), CUREDUCE_SUCCESS);
      const cureduce_dtype outs[] = {CUREDUCE_F64, CUREDUCE_F32, in};
      for (int o = 0; o < 3; ++o)
        for (int mean = 0; mean < 2; ++mean) {
          const cureduce_op op = mean ? CUREDUCE_MEAN_EXACT : CUREDUCE_SUM_EXACT;
          unsigned char one[8] = {0}, split[8] = {0};
          assert_int_equal(cureduce_cpu_reduce(op, in, x, n, outs[o], one), CUREDUCE_SUCCESS);
          assert_int_equal(cureduce_cpu_exact_finish(op, c, outs[o], split), CUREDUCE_SUCCESS);
          if (memcmp(one, split, cureduce_dtype_size(outs[o])) != 0)
            fail_msg("%s %s->%s %s: split at %llu, %llu differs from one call", cureduce_op_name(op),
                     cureduce_dtype_name(in), cureduce_dtype_name(outs[o]), EX_PATTERN_NAMES[p],
                     (unsigned long long)c1, (unsigned long long)c2);
        }
    }
  free(x);
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
  assert_int_equal(cureduce_cpu_exact_combine(w, NULL), CUREDUCE_ERROR_NULL_POINTER);
  assert_memory_equal(w, before, sizeof w);
  double r = 5.0;
  assert_int_equal(cureduce_cpu_exact_finish(CUREDUCE_OP_COUNT, w, CUREDUCE_F64, &r),
                   CUREDUCE_ERROR_INVALID_OP);
  assert_int_equal(cureduce_cpu_exact_finish(CUREDUCE_MEAN, w, CUREDUCE_F64, &r), CUREDUCE_ERROR_UNSUPPORTED);
  assert_int_equal(cureduce_cpu_exact_finish(CUREDUCE_SUM_EXACT, w, CUREDUCE_I64, &r),
                   CUREDUCE_ERROR_UNSUPPORTED);
  assert_int_equal(cureduce_cpu_exact_finish(CUREDUCE_SUM_EXACT, NULL, CUREDUCE_F64, &r),
                   CUREDUCE_ERROR_NULL_POINTER);
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(chunks_in_any_order_should_give_one_call_bits),
      cmocka_unit_test(bad_arguments_should_leave_the_state_alone),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
