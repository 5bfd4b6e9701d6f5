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
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(create_should_return_no_device_exactly_when_there_is_none),
      cmocka_unit_test(a_null_handle_should_be_refused_before_touching_the_gpu),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
