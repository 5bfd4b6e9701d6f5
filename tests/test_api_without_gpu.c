/* Without a GPU the library still works on the CPU and says so through its statuses: creating
 * a handle returns NO_DEVICE exactly when the CUDA runtime finds no device. Runs everywhere. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "cureduce.h"

#include <cuda_runtime_api.h>

static void create_should_return_no_device_exactly_when_there_is_none(void **state) {
  (void)state;
  int count = 0;
  const int have_gpu = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  cureduce_handle h = (cureduce_handle)(uintptr_t)0x1;
  const cureduce_status st = cureduce_create(&h);
  if (have_gpu) {
    assert_int_equal(st, CUREDUCE_SUCCESS);
    assert_non_null(h);
    assert_int_equal(cureduce_destroy(h), CUREDUCE_SUCCESS);
  } else {
    assert_int_equal(st, CUREDUCE_ERROR_NO_DEVICE);
    assert_null(h);
  }
}

static void a_null_handle_should_be_refused_before_touching_the_gpu(void **state) {
  (void)state;
  float out = 3.0f;
  assert_int_equal(cureduce_reduce(NULL, CUREDUCE_SUM, CUREDUCE_F32, &out, 1, CUREDUCE_F32, &out, NULL),
                   CUREDUCE_ERROR_INVALID_HANDLE);
  assert_int_equal(
      cureduce_reduce_to_host(NULL, CUREDUCE_SUM, CUREDUCE_F32, &out, 1, CUREDUCE_F32, &out, NULL),
      CUREDUCE_ERROR_INVALID_HANDLE);
  assert_true(out == 3.0f);
  /* the exact state calls too, the state left as it was */
  int64_t w[CUREDUCE_EXACT_STATE_WORDS] = {0}, other[CUREDUCE_EXACT_STATE_WORDS] = {0};
  const int64_t offsets[2] = {0, 1};
  w[0] = 5;
  assert_int_equal(cureduce_exact_accumulate(NULL, CUREDUCE_F32, &out, 1, w, NULL),
                   CUREDUCE_ERROR_INVALID_HANDLE);
  assert_int_equal(cureduce_exact_accumulate_rows(NULL, CUREDUCE_F32, &out, 1, 1, 1, w, NULL),
                   CUREDUCE_ERROR_INVALID_HANDLE);
  assert_int_equal(cureduce_exact_accumulate_segments(NULL, CUREDUCE_F32, &out, 1, offsets, w, NULL),
                   CUREDUCE_ERROR_INVALID_HANDLE);
  assert_int_equal(cureduce_exact_combine(NULL, w, other, NULL), CUREDUCE_ERROR_INVALID_HANDLE);
  assert_int_equal(cureduce_exact_finish(NULL, CUREDUCE_SUM_EXACT, w, CUREDUCE_F32, &out, NULL),
                   CUREDUCE_ERROR_INVALID_HANDLE);
  assert_int_equal(cureduce_exact_finish_rows(NULL, CUREDUCE_SUM_EXACT, w, 1, CUREDUCE_F32, &out, NULL),
                   CUREDUCE_ERROR_INVALID_HANDLE);
  assert_true(out == 3.0f && w[0] == 5);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(create_should_return_no_device_exactly_when_there_is_none),
      cmocka_unit_test(a_null_handle_should_be_refused_before_touching_the_gpu),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
