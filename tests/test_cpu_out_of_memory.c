/* A host allocation that fails part way through a CPU call leaves the caller's output and
 * states as they were: the rows, columns, axis and segment reductions and the exact states,
 * with each allocation of the call failed in turn (malloc wrapped at link time). CPU only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "test_util.h"

#include <stdlib.h>
#include <string.h>

void *__real_malloc(size_t size);

/* The library's allocations while armed: the fail_at-th fails (none when 0). */
static long fail_at, calls;

void *__wrap_malloc(size_t size) {
  if (fail_at > 0 && ++calls == fail_at)
    return NULL;
  return __real_malloc(size);
}

enum { ROWS = 3, COLS = 4, WORDS = CUREDUCE_EXACT_STATE_WORDS };
static const float M[ROWS * COLS] = {1, 2, 3, 4, -5, 6, 7, 8, 9, -10, 11, 0.5f};
static const int64_t OFFSETS[ROWS + 1] = {0, 4, 4, 12};

/* One call writing to out (bytes), by kind. */
typedef cureduce_status (*call_fn)(cureduce_op op, void *out);

static cureduce_status rows(cureduce_op op, void *out) {
  return cureduce_cpu_reduce_rows(op, CUREDUCE_F32, M, ROWS, COLS, COLS, CUREDUCE_F32, out);
}
static cureduce_status cols(cureduce_op op, void *out) {
  return cureduce_cpu_reduce_cols(op, CUREDUCE_F32, M, ROWS, COLS, COLS, CUREDUCE_F32, out);
}
static cureduce_status axis(cureduce_op op, void *out) { /* 3 x 2 x 2 */
  return cureduce_cpu_reduce_axis(op, CUREDUCE_F32, M, ROWS, 2, 2, CUREDUCE_F32, out);
}
static cureduce_status segments(cureduce_op op, void *out) {
  return cureduce_cpu_reduce_segments(op, CUREDUCE_F32, M, ROWS, OFFSETS, CUREDUCE_F32, out);
}
static cureduce_status full(cureduce_op op, void *out) {
  return cureduce_cpu_reduce(op, CUREDUCE_F32, M, ROWS * COLS, CUREDUCE_F32, out);
}
static cureduce_status state_rows(cureduce_op op, void *out) {
  (void)op;
  return cureduce_cpu_exact_accumulate_rows(CUREDUCE_F32, M, ROWS, COLS, COLS, out);
}
static cureduce_status state_segments(cureduce_op op, void *out) {
  (void)op;
  return cureduce_cpu_exact_accumulate_segments(CUREDUCE_F32, M, ROWS, OFFSETS, out);
}
static cureduce_status state_one(cureduce_op op, void *out) {
  (void)op;
  return cureduce_cpu_exact_accumulate(CUREDUCE_F32, M, ROWS * COLS, out);
}

/* Fail the call's first, second, ... allocation until it makes fewer: each failure must be
   OUT_OF_MEMORY with out unchanged, and the call then succeeds. out starts as a pattern of
   bytes, or as zeros for states (states of no elements, which the call adds to). */
static void check_call(const char *name, call_fn call, cureduce_op op, size_t bytes, int zeros) {
  static unsigned char out[ROWS * WORDS * sizeof(int64_t)], before[sizeof out];
  assert_true(bytes <= sizeof out);
  int failures = 0;
  for (long k = 1;; ++k) {
    for (size_t i = 0; i < bytes; ++i)
      out[i] = zeros ? 0 : (unsigned char)(i * 37 + 11);
    memcpy(before, out, bytes);
    calls = 0;
    fail_at = k;
    const cureduce_status st = call(op, out);
    fail_at = 0;
    if (calls < k) { /* no k-th allocation: nothing failed */
      if (st != CUREDUCE_SUCCESS)
        fail_msg("%s op %d: status %d with every allocation granted", name, (int)op, (int)st);
      break;
    }
    if (st != CUREDUCE_ERROR_OUT_OF_MEMORY)
      fail_msg("%s op %d: allocation %ld failed, status %d", name, (int)op, k, (int)st);
    if (memcmp(out, before, bytes) != 0)
      fail_msg("%s op %d: allocation %ld failed and the output changed", name, (int)op, k);
    ++failures;
  }
  if (failures == 0)
    fail_msg("%s op %d: no allocation to fail", name, (int)op);
}

static void failed_allocations_should_leave_the_outputs_alone(void **state) {
  (void)state;
  static const cureduce_op ops[] = {CUREDUCE_SUM_EXACT, CUREDUCE_MEAN_EXACT, CUREDUCE_SUM, CUREDUCE_MAX};
  for (size_t o = 0; o < sizeof ops / sizeof ops[0]; ++o) {
    check_call("rows", rows, ops[o], ROWS * sizeof(float), 0);
    check_call("cols", cols, ops[o], COLS * sizeof(float), 0);
    check_call("axis", axis, ops[o], ROWS * 2 * sizeof(float), 0);
    check_call("segments", segments, ops[o], ROWS * sizeof(float), 0);
    check_call("full", full, ops[o], sizeof(float), 0);
  }
}

static void failed_allocations_should_leave_the_states_alone(void **state) {
  (void)state;
  check_call("state rows", state_rows, CUREDUCE_SUM_EXACT, ROWS * WORDS * sizeof(int64_t), 1);
  check_call("state segments", state_segments, CUREDUCE_SUM_EXACT, ROWS * WORDS * sizeof(int64_t), 1);
  check_call("state", state_one, CUREDUCE_SUM_EXACT, WORDS * sizeof(int64_t), 1);
}

/* Calls with nothing to read allocate nothing, so they cannot run out of memory. */
static void empty_inputs_should_allocate_nothing(void **state) {
  (void)state;
  float out[COLS] = {7, 7, 7, 7};
  calls = 0;
  fail_at = 1;
  assert_int_equal(cureduce_cpu_reduce(CUREDUCE_MAX, CUREDUCE_F32, NULL, 0, CUREDUCE_F32, out),
                   CUREDUCE_EMPTY);
  assert_int_equal(cureduce_cpu_reduce_rows(CUREDUCE_SUM, CUREDUCE_F32, NULL, ROWS, 0, 0, CUREDUCE_F32, out),
                   CUREDUCE_SUCCESS);
  assert_int_equal(
      cureduce_cpu_reduce_cols(CUREDUCE_SUM, CUREDUCE_F32, NULL, (uint64_t)1 << 40, 0, 0, CUREDUCE_F32, out),
      CUREDUCE_SUCCESS);
  assert_int_equal(cureduce_cpu_reduce_axis(CUREDUCE_SUM, CUREDUCE_F32, NULL, 2, 0, 2, CUREDUCE_F32, out),
                   CUREDUCE_SUCCESS);
  static const int64_t none[3] = {4, 4, 4};
  assert_int_equal(cureduce_cpu_reduce_segments(CUREDUCE_SUM, CUREDUCE_F32, M, 2, none, CUREDUCE_F32, out),
                   CUREDUCE_SUCCESS);
  fail_at = 0;
  assert_int_equal(calls, 0);
  assert_true(out[0] == 0 && out[3] == 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(failed_allocations_should_leave_the_outputs_alone),
      cmocka_unit_test(failed_allocations_should_leave_the_states_alone),
      cmocka_unit_test(empty_inputs_should_allocate_nothing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
