/* The frame of a per-op GPU test program (test_gpu_reduce_matches_cpu <op>,
 * test_gpu_axis_matches_cpu <op>): one cmocka test per supported (input, accumulator) pair, for
 * the op named on the command line. The program defines run_combo (the checks of one pair),
 * its setup and teardown, and a main that returns run_per_op_tests(argc, argv, setup, teardown).
 * Include it after cmocka.h. */
#ifndef CUREDUCE_TEST_PER_OP_TEST_H
#define CUREDUCE_TEST_PER_OP_TEST_H

#include "../src/common/combos.h"
#include "gpu_util.h"
#include "result_check.h"

static cureduce_op g_op;               /* the op named on the command line */
static void run_combo(const combo *c); /* defined by the test program */

#define CR_TEST_FN(IN, ACC)                                                                     \
  static void IN##_acc_##ACC##_should_match_cpu(void **state) {                                 \
    (void)state;                                                                                \
    const combo c = {g_op, CUREDUCE_##IN, CUREDUCE_##ACC};                                      \
    run_combo(&c);                                                                              \
  }
CUREDUCE_FOR_EACH_PAIR(CR_TEST_FN)
#undef CR_TEST_FN

static int run_per_op_tests(int argc, char **argv, CMFixtureFunction setup, CMFixtureFunction teardown) {
  if (argc != 2 || cureduce_op_from_name(argv[1], &g_op) != CUREDUCE_SUCCESS) {
    fprintf(stderr, "usage: %s OP (sum, min, max, absmax, sumsq, argmin, argmax, mean)\n", argv[0]);
    return 2;
  }
  gpu_require_device();
  (void)tu_seed();
#define CR_ENTRY(IN, ACC) cmocka_unit_test(IN##_acc_##ACC##_should_match_cpu),
  const struct CMUnitTest tests[] = {CUREDUCE_FOR_EACH_PAIR(CR_ENTRY)};
#undef CR_ENTRY
  return cmocka_run_group_tests_name(argv[1], tests, setup, teardown);
}

#endif
