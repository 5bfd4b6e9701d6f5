/* The frame of a per-op GPU test program (test_gpu_reduce_matches_cpu <op>,
 * test_gpu_axis_matches_cpu <op> [part]): one cmocka test per supported (input, accumulator)
 * pair, for the op named on the command line. A program whose checks come in parts (the axis
 * test: rows, cols, segments) names them in `parts` (NULL-terminated; NULL: none), and a second
 * argument then runs one part only (g_part, its index; -1: all), so that CTest can run the parts
 * in parallel. The program defines run_combo (the checks of one pair), its setup and teardown,
 * and a main that returns run_per_op_tests(argc, argv, parts, setup, teardown).
 * Include it after cmocka.h. */
#ifndef CUREDUCE_TEST_PER_OP_TEST_H
#define CUREDUCE_TEST_PER_OP_TEST_H

#include "../src/common/combos.h"
#include "gpu_util.h"
#include "result_check.h"

static cureduce_op g_op;               /* the op named on the command line */
static int g_part = -1;                /* the part named after it (index into parts); -1: all */
static void run_combo(const combo *c); /* defined by the test program */

#define CR_TEST_FN(IN, ACC)                                                                                  \
  static void IN##_acc_##ACC##_should_match_cpu(void **state) {                                              \
    (void)state;                                                                                             \
    const combo c = {g_op, CUREDUCE_##IN, CUREDUCE_##ACC};                                                   \
    run_combo(&c);                                                                                           \
  }
CUREDUCE_FOR_EACH_PAIR(CR_TEST_FN)
#undef CR_TEST_FN

static int run_per_op_tests(int argc, char **argv, const char *const *parts, CMFixtureFunction setup,
                            CMFixtureFunction teardown) {
  int ok = (argc == 2 || (argc == 3 && parts)) && cureduce_op_from_name(argv[1], &g_op) == CUREDUCE_SUCCESS;
  if (ok && argc == 3) {
    for (int i = 0; parts[i]; ++i)
      if (strcmp(argv[2], parts[i]) == 0)
        g_part = i;
    ok = g_part >= 0;
  }
  if (!ok) {
    fprintf(stderr, "usage: %s OP%s (OP: sum, min, max, absmax, sumsq, argmin, argmax, mean", argv[0],
            parts ? " [PART]" : "");
    for (int i = 0; parts && parts[i]; ++i)
      fprintf(stderr, "%s%s", i ? ", " : "; PART: ", parts[i]);
    fprintf(stderr, ")\n");
    return 2;
  }
  gpu_require_device();
  (void)tu_seed();
#define CR_ENTRY(IN, ACC) cmocka_unit_test(IN##_acc_##ACC##_should_match_cpu),
  const struct CMUnitTest tests[] = {CUREDUCE_FOR_EACH_PAIR(CR_ENTRY)};
#undef CR_ENTRY
  char group[64];
  snprintf(group, sizeof group, "%s%s%s", argv[1], g_part >= 0 ? " " : "", g_part >= 0 ? parts[g_part] : "");
  return cmocka_run_group_tests_name(group, tests, setup, teardown);
}

#endif
