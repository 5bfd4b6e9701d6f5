/* The metadata functions of the API: names, sizes, parsing, default accumulators, the
 * supported-combination check, status strings and version. CPU only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "cureduce.h"

#include <math.h>
#include <string.h>

static void dtype_names_should_round_trip(void **state) {
  (void)state;
  for (int d = 0; d < CUREDUCE_DTYPE_COUNT; ++d) {
    const char *name = cureduce_dtype_name((cureduce_dtype)d);
    assert_non_null(name);
    cureduce_dtype back;
    assert_int_equal(cureduce_dtype_from_name(name, &back), CUREDUCE_SUCCESS);
    assert_int_equal(back, d);
  }
  cureduce_dtype d;
  assert_int_equal(cureduce_dtype_from_name("f128", &d), CUREDUCE_ERROR_INVALID_DTYPE);
  assert_int_equal(cureduce_dtype_from_name(NULL, &d), CUREDUCE_ERROR_NULL_POINTER);
  assert_null(cureduce_dtype_name((cureduce_dtype)99));
  assert_null(cureduce_dtype_name(CUREDUCE_ACC_DEFAULT));
}

static void op_names_should_round_trip(void **state) {
  (void)state;
  for (int o = 0; o < CUREDUCE_OP_COUNT; ++o) {
    cureduce_op back;
    assert_int_equal(cureduce_op_from_name(cureduce_op_name((cureduce_op)o), &back), 0);
    assert_int_equal(back, o);
  }
  cureduce_op op;
  assert_int_equal(cureduce_op_from_name("prod", &op), CUREDUCE_ERROR_INVALID_OP);
  assert_null(cureduce_op_name((cureduce_op)-3));
}

static void dtype_sizes_should_match_the_formats(void **state) {
  (void)state;
  const size_t expect[CUREDUCE_DTYPE_COUNT] = {4, 8, 2, 2, 1, 1, 1, 4, 8};
  for (int d = 0; d < CUREDUCE_DTYPE_COUNT; ++d)
    assert_int_equal(cureduce_dtype_size((cureduce_dtype)d), expect[d]);
  assert_int_equal(cureduce_dtype_size((cureduce_dtype)42), 0);
}

static void default_accumulators_should_follow_the_contract(void **state) {
  (void)state;
  const cureduce_dtype expect[CUREDUCE_DTYPE_COUNT] = {CUREDUCE_F32, CUREDUCE_F64, CUREDUCE_F32,
                                                       CUREDUCE_F32, CUREDUCE_F32, CUREDUCE_F32,
                                                       CUREDUCE_I64, CUREDUCE_I64, CUREDUCE_I64};
  for (int d = 0; d < CUREDUCE_DTYPE_COUNT; ++d) {
    cureduce_dtype acc;
    assert_int_equal(cureduce_default_acc((cureduce_dtype)d, &acc), CUREDUCE_SUCCESS);
    assert_int_equal(acc, expect[d]);
  }
}

static void supported_should_accept_the_listed_pairs_and_refuse_others(void **state) {
  (void)state;
  assert_int_equal(cureduce_supported(CUREDUCE_SUM, CUREDUCE_F16, CUREDUCE_F16), 0);
  assert_int_equal(cureduce_supported(CUREDUCE_SUM, CUREDUCE_BF16, CUREDUCE_BF16), 0);
  assert_int_equal(cureduce_supported(CUREDUCE_MAX, CUREDUCE_F8_E4M3, CUREDUCE_F16), 0);
  assert_int_equal(cureduce_supported(CUREDUCE_SUM, CUREDUCE_I8, CUREDUCE_I32), 0);
  assert_int_equal(cureduce_supported(CUREDUCE_MIN, CUREDUCE_F32, CUREDUCE_ACC_DEFAULT), 0);
  assert_int_equal(cureduce_supported(CUREDUCE_SUM, CUREDUCE_F32, CUREDUCE_F16), CUREDUCE_ERROR_UNSUPPORTED);
  assert_int_equal(cureduce_supported(CUREDUCE_SUM, CUREDUCE_I32, CUREDUCE_F32), CUREDUCE_ERROR_UNSUPPORTED);
  assert_int_equal(cureduce_supported(CUREDUCE_SUM, CUREDUCE_F64, CUREDUCE_F32), CUREDUCE_ERROR_UNSUPPORTED);
  assert_int_equal(cureduce_supported((cureduce_op)17, CUREDUCE_F32, CUREDUCE_F32),
                   CUREDUCE_ERROR_INVALID_OP);
  assert_int_equal(cureduce_supported(CUREDUCE_SUM, (cureduce_dtype)9, CUREDUCE_F32),
                   CUREDUCE_ERROR_INVALID_DTYPE);
  assert_int_equal(cureduce_supported(CUREDUCE_SUM, CUREDUCE_F32, (cureduce_dtype)-2),
                   CUREDUCE_ERROR_INVALID_DTYPE);
}

static void mean_of_integers_should_default_to_f64_and_refuse_integer_accumulators(void **state) {
  (void)state;
  cureduce_dtype acc;
  assert_int_equal(cureduce_resolve_acc(CUREDUCE_MEAN, CUREDUCE_I32, CUREDUCE_ACC_DEFAULT, &acc), 0);
  assert_int_equal(acc, CUREDUCE_F64);
  assert_int_equal(cureduce_resolve_acc(CUREDUCE_SUM, CUREDUCE_I32, CUREDUCE_ACC_DEFAULT, &acc), 0);
  assert_int_equal(acc, CUREDUCE_I64);
  assert_int_equal(cureduce_resolve_acc(CUREDUCE_MEAN, CUREDUCE_BF16, CUREDUCE_ACC_DEFAULT, &acc), 0);
  assert_int_equal(acc, CUREDUCE_F32);
  assert_int_equal(cureduce_supported(CUREDUCE_MEAN, CUREDUCE_I8, CUREDUCE_I64), CUREDUCE_ERROR_UNSUPPORTED);
  assert_int_equal(cureduce_supported(CUREDUCE_MEAN, CUREDUCE_I8, CUREDUCE_F64), CUREDUCE_SUCCESS);
}

static void arg_ops_should_write_an_int64_index(void **state) {
  (void)state;
  assert_int_equal(cureduce_result_size(CUREDUCE_ARGMAX, CUREDUCE_F16), 8);
  assert_int_equal(cureduce_result_size(CUREDUCE_ARGMIN, CUREDUCE_F32), 8);
  assert_int_equal(cureduce_result_size(CUREDUCE_MAX, CUREDUCE_F16), 2);
  assert_int_equal(cureduce_result_size(CUREDUCE_MEAN, CUREDUCE_F64), 8);
  /* unknown ops and dtypes: 0, as cureduce_dtype_size, whatever the other argument */
  assert_int_equal(cureduce_result_size((cureduce_op)99, CUREDUCE_F32), 0);
  assert_int_equal(cureduce_result_size(CUREDUCE_ARGMIN, (cureduce_dtype)99), 0);
  assert_int_equal(cureduce_result_size(CUREDUCE_ARGMAX, CUREDUCE_ACC_DEFAULT), 0);
  assert_int_equal(cureduce_result_size(CUREDUCE_SUM, CUREDUCE_ACC_DEFAULT), 0);
}

static void every_status_should_have_its_own_sentence(void **state) {
  (void)state;
  for (int a = 0; a <= CUREDUCE_ERROR_INVALID_VALUE; ++a) {
    const char *sa = cureduce_status_string((cureduce_status)a);
    assert_non_null(sa);
    assert_string_not_equal(sa, "unknown cureduce status");
    for (int b = 0; b < a; ++b)
      assert_string_not_equal(sa, cureduce_status_string((cureduce_status)b));
  }
  assert_string_equal(cureduce_status_string((cureduce_status)1234), "unknown cureduce status");
}

static void version_should_match_the_header(void **state) {
  (void)state;
  assert_int_equal(cureduce_version(), CUREDUCE_VERSION);
}

static void from_double_should_refuse_nan_for_integers(void **state) {
  (void)state;
  int32_t v = 5;
  assert_int_equal(cureduce_from_double(CUREDUCE_I32, NAN, &v), CUREDUCE_ERROR_INVALID_VALUE);
  assert_int_equal(v, 5);
  assert_int_equal(cureduce_from_double(CUREDUCE_I32, 1e12, &v), CUREDUCE_SUCCESS);
  assert_int_equal(v, INT32_MAX);
}

static void from_double_should_round_once_and_saturate(void **state) {
  (void)state;
  /* 1 + 2^-11 + 2^-24: through f32 to nearest it is 1 + 2^-11, a tie that f16 rounds to 1 */
  uint16_t h = 0;
  assert_int_equal(cureduce_from_double(CUREDUCE_F16, 1.0 + 0x1p-11 + 0x1p-24, &h), CUREDUCE_SUCCESS);
  assert_int_equal(h, 0x3c01);
  assert_int_equal(cureduce_from_double(CUREDUCE_BF16, 1.0 + 0x1p-8 + 0x1p-24, &h), CUREDUCE_SUCCESS);
  assert_int_equal(h, 0x3f81);
  uint8_t q = 0;
  assert_int_equal(cureduce_from_double(CUREDUCE_F8_E4M3, 1.0 + 0x1p-4 + 0x1p-24, &q), CUREDUCE_SUCCESS);
  assert_int_equal(q, 0x39);
  int64_t v = 0;
  assert_int_equal(cureduce_from_double(CUREDUCE_I64, 1e300, &v), CUREDUCE_SUCCESS);
  assert_true(v == INT64_MAX);
  assert_int_equal(cureduce_from_double(CUREDUCE_I64, 0x1p63, &v), CUREDUCE_SUCCESS);
  assert_true(v == INT64_MAX);
  assert_int_equal(cureduce_from_double(CUREDUCE_I64, -1e300, &v), CUREDUCE_SUCCESS);
  assert_true(v == INT64_MIN);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(dtype_names_should_round_trip),
      cmocka_unit_test(op_names_should_round_trip),
      cmocka_unit_test(dtype_sizes_should_match_the_formats),
      cmocka_unit_test(default_accumulators_should_follow_the_contract),
      cmocka_unit_test(supported_should_accept_the_listed_pairs_and_refuse_others),
      cmocka_unit_test(mean_of_integers_should_default_to_f64_and_refuse_integer_accumulators),
      cmocka_unit_test(arg_ops_should_write_an_int64_index),
      cmocka_unit_test(every_status_should_have_its_own_sentence),
      cmocka_unit_test(version_should_match_the_header),
      cmocka_unit_test(from_double_should_refuse_nan_for_integers),
      cmocka_unit_test(from_double_should_round_once_and_saturate),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
