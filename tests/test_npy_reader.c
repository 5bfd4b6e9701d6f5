/* The .npy reader (cli/npy.c) on byte images built here as NumPy writes them: every dtype in
 * both byte orders, the raw types that need --dtype, Fortran order, shapes, and each way a
 * file can be bad, with the message it gets. CPU only, no NumPy needed. */
#define _POSIX_C_SOURCE 200809L /* fmemopen, mkdtemp, geteuid */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
/* cmocka.h needs the three above first */
#include <cmocka.h>

#include "npy.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* --- Building images -------------------------------------------------------------------- */

typedef struct image {
  unsigned char *bytes;
  size_t len;
} image;

/* "\x93NUMPY", version, header length, then the dict padded with spaces and a final '\n' so
   that the data starts at a multiple of 64, as NumPy pads it. */
static image make_image(int major, const char *dict, const void *data, size_t nbytes) {
  const size_t pre = major == 1 ? 10 : 12, dlen = strlen(dict);
  const size_t hlen = (pre + dlen + 1 + 63) / 64 * 64 - pre;
  image im = {malloc(pre + hlen + nbytes + 1), pre + hlen + nbytes};
  assert_non_null(im.bytes);
  memcpy(im.bytes, "\x93NUMPY", 6);
  im.bytes[6] = (unsigned char)major;
  im.bytes[7] = 0;
  for (size_t i = 0; i < pre - 8; ++i)
    im.bytes[8 + i] = (unsigned char)(hlen >> (8 * i));
  memcpy(im.bytes + pre, dict, dlen);
  memset(im.bytes + pre + dlen, ' ', hlen - dlen - 1);
  im.bytes[pre + hlen - 1] = '\n';
  if (nbytes)
    memcpy(im.bytes + pre + hlen, data, nbytes);
  return im;
}

/* The dict NumPy writes. */
static image npy(int major, const char *descr, int fortran, const char *shape, const void *data,
                 size_t nbytes) {
  char dict[1024];
  snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }", descr,
           fortran ? "True" : "False", shape);
  return make_image(major, dict, data, nbytes);
}

static int read_image(image im, cureduce_dtype hint, npy_array *a, char *err, size_t errlen) {
  FILE *f = fmemopen(im.bytes, im.len, "rb");
  assert_non_null(f);
  memset(a, 0x5a, sizeof *a); /* the reader must set or zero every field */
  const int rc = npy_read(f, hint, a, err, errlen);
  fclose(f);
  free(im.bytes);
  return rc;
}

static void assert_zeroed(const npy_array *a) {
  static const npy_array zero;
  assert_memory_equal(a, &zero, sizeof zero);
}

/* Reads im expecting an error whose message holds each phrase (NULL-terminated list). */
static void expect_code(image im, cureduce_dtype hint, int code, va_list phrases) {
  npy_array a;
  char err[512];
  assert_int_equal(read_image(im, hint, &a, err, sizeof err), code);
  assert_zeroed(&a);
  npy_free(&a);
  for (const char *phrase; (phrase = va_arg(phrases, const char *));)
    if (!strstr(err, phrase))
      fail_msg("the message \"%s\" lacks \"%s\"", err, phrase);
  assert_true(strlen(err) > 0 && err[strlen(err) - 1] != '\n');
}

/* A file that is wrong: 1. */
static void expect_error(image im, cureduce_dtype hint, ...) {
  va_list ap;
  va_start(ap, hint);
  expect_code(im, hint, 1, ap);
  va_end(ap);
}

/* A hint that is missing or disagrees with the file: NPY_ERR_HINT, which the CLI reports as a
   usage error. */
static void expect_hint_error(image im, cureduce_dtype hint, ...) {
  va_list ap;
  va_start(ap, hint);
  expect_code(im, hint, NPY_ERR_HINT, ap);
  va_end(ap);
}

/* Reads im expecting success with this dtype, shape and data (little-endian, C order). */
static void expect_array(image im, cureduce_dtype hint, cureduce_dtype dtype, int ndim, const uint64_t *shape,
                         const void *data, size_t nbytes) {
  npy_array a;
  char err[512] = "";
  if (read_image(im, hint, &a, err, sizeof err))
    fail_msg("unexpected error: %s", err);
  assert_int_equal(a.dtype, dtype);
  assert_int_equal(a.ndim, ndim);
  uint64_t count = 1;
  for (int k = 0; k < ndim; ++k) {
    assert_int_equal(a.shape[k], shape[k]);
    count *= shape[k];
  }
  assert_int_equal(a.count, count);
  assert_int_equal(count * cureduce_dtype_size(dtype), nbytes);
  assert_non_null(a.data);
  if (nbytes)
    assert_memory_equal(a.data, data, nbytes);
  npy_free(&a);
  assert_null(a.data);
}

static void reversed_elements(unsigned char *dst, const void *src, size_t count, size_t size) {
  const unsigned char *s = src;
  for (size_t i = 0; i < count; ++i)
    for (size_t b = 0; b < size; ++b)
      dst[i * size + b] = s[i * size + size - 1 - b];
}

/* --- dtypes ----------------------------------------------------------------------------- */

static const float F32[4] = {1.5f, -2.25f, 3e38f, -0.0f};
static const double F64[4] = {1e300, -2.5, 0x1.23456789abcdep-1000, 7};
static const uint16_t F16[4] = {0x3c00, 0xc000, 0x7bff, 0x0001};
static const int8_t I8[4] = {-128, -1, 0, 127};
static const int32_t I32[4] = {INT32_MIN, -2, 0x01020304, INT32_MAX};
static const int64_t I64[4] = {INT64_MIN, -3, 0x0102030405060708, INT64_MAX};

typedef struct typed_case {
  const char *code;
  cureduce_dtype dtype;
  const void *values;
} typed_case;

static const typed_case TYPED[] = {
    {"f4", CUREDUCE_F32, F32}, {"f8", CUREDUCE_F64, F64}, {"f2", CUREDUCE_F16, F16},
    {"i1", CUREDUCE_I8, I8},   {"i4", CUREDUCE_I32, I32}, {"i8", CUREDUCE_I64, I64},
};

static const uint64_t SHAPE4[1] = {4};

static void typed_little_endian_dtypes_are_read_with_their_values(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof TYPED / sizeof TYPED[0]; ++i) {
    const size_t nbytes = 4 * cureduce_dtype_size(TYPED[i].dtype);
    char descr[8];
    snprintf(descr, sizeof descr, "<%s", TYPED[i].code);
    expect_array(npy(1, descr, 0, "(4,)", TYPED[i].values, nbytes), CUREDUCE_ACC_DEFAULT, TYPED[i].dtype, 1,
                 SHAPE4, TYPED[i].values, nbytes);
  }
  expect_array(npy(1, "|i1", 0, "(4,)", I8, 4), CUREDUCE_ACC_DEFAULT, CUREDUCE_I8, 1, SHAPE4, I8, 4);
}

static void typed_big_endian_dtypes_are_byte_swapped_to_little_endian(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof TYPED / sizeof TYPED[0]; ++i) {
    const size_t size = cureduce_dtype_size(TYPED[i].dtype);
    unsigned char big[32];
    reversed_elements(big, TYPED[i].values, 4, size);
    char descr[8];
    snprintf(descr, sizeof descr, ">%s", TYPED[i].code);
    expect_array(npy(1, descr, 0, "(4,)", big, 4 * size), CUREDUCE_ACC_DEFAULT, TYPED[i].dtype, 1, SHAPE4,
                 TYPED[i].values, 4 * size);
  }
}

static void native_byte_order_is_little_endian(void **state) {
  (void)state;
  expect_array(npy(1, "=f4", 0, "(4,)", F32, 16), CUREDUCE_ACC_DEFAULT, CUREDUCE_F32, 1, SHAPE4, F32, 16);
  expect_array(npy(1, "=i8", 0, "(4,)", I64, 32), CUREDUCE_ACC_DEFAULT, CUREDUCE_I64, 1, SHAPE4, I64, 32);
  expect_array(npy(1, "=f2", 0, "(4,)", F16, 8), CUREDUCE_ACC_DEFAULT, CUREDUCE_F16, 1, SHAPE4, F16, 8);
}

static void typed_descr_with_matching_hint_is_read(void **state) {
  (void)state;
  expect_array(npy(1, "<f2", 0, "(4,)", F16, 8), CUREDUCE_F16, CUREDUCE_F16, 1, SHAPE4, F16, 8);
}

static const uint8_t BYTES[4] = {0x00, 0x7e, 0x80, 0xff};
static const uint16_t HALVES[4] = {0x3f80, 0xbf80, 0x7f80, 0x0001};

static void raw_one_byte_types_are_read_as_the_fp8_hint(void **state) {
  (void)state;
  /* ml_dtypes writes float8_e4m3fn as '<V1' (float8_e5m2 as '<f1': typed_e5m2_...) */
  const char *descrs[] = {"|V1", "<V1", "|u1", "<u1", ">V1"};
  const cureduce_dtype hints[] = {CUREDUCE_F8_E4M3, CUREDUCE_F8_E5M2};
  for (size_t d = 0; d < sizeof descrs / sizeof descrs[0]; ++d)
    for (size_t h = 0; h < 2; ++h)
      expect_array(npy(1, descrs[d], 0, "(4,)", BYTES, 4), hints[h], hints[h], 1, SHAPE4, BYTES, 4);
}

static void raw_two_byte_types_are_read_as_the_16_bit_hint(void **state) {
  (void)state;
  /* ml_dtypes writes bfloat16 as '<V2', and as '>V2' when big-endian */
  const char *descrs[] = {"|V2", "<V2", "<u2"};
  const cureduce_dtype hints[] = {CUREDUCE_BF16, CUREDUCE_F16};
  for (size_t d = 0; d < sizeof descrs / sizeof descrs[0]; ++d)
    for (size_t h = 0; h < 2; ++h)
      expect_array(npy(1, descrs[d], 0, "(4,)", HALVES, 8), hints[h], hints[h], 1, SHAPE4, HALVES, 8);
  unsigned char big[8];
  reversed_elements(big, HALVES, 4, 2);
  expect_array(npy(1, ">V2", 0, "(4,)", big, 8), CUREDUCE_BF16, CUREDUCE_BF16, 1, SHAPE4, HALVES, 8);
  expect_array(npy(1, ">u2", 0, "(4,)", big, 8), CUREDUCE_F16, CUREDUCE_F16, 1, SHAPE4, HALVES, 8);
}

/* '<f1' is ml_dtypes' float8_e5m2 alone (its other one-byte types are '<V1'), so it needs no hint
   and refuses another. */
static void typed_e5m2_is_read_without_a_hint(void **state) {
  (void)state;
  expect_array(npy(1, "<f1", 0, "(4,)", BYTES, 4), CUREDUCE_ACC_DEFAULT, CUREDUCE_F8_E5M2, 1, SHAPE4, BYTES,
               4);
  expect_array(npy(1, "|f1", 0, "(4,)", BYTES, 4), CUREDUCE_F8_E5M2, CUREDUCE_F8_E5M2, 1, SHAPE4, BYTES, 4);
  expect_hint_error(npy(1, "<f1", 0, "(4,)", BYTES, 4), CUREDUCE_F8_E4M3, "'<f1' (e5m2)", "--dtype says e4m3",
                    NULL);
}

static void raw_type_without_hint_says_which_dtypes_fit(void **state) {
  (void)state;
  expect_hint_error(npy(1, "<V1", 0, "(4,)", BYTES, 4), CUREDUCE_ACC_DEFAULT, "raw 1-byte values ('<V1')",
                    "--dtype e4m3 or e5m2", NULL);
  expect_hint_error(npy(1, "<V2", 0, "(4,)", HALVES, 8), CUREDUCE_ACC_DEFAULT, "raw 2-byte values ('<V2')",
                    "--dtype bf16 or f16", NULL);
}

static void hint_of_the_wrong_size_for_raw_bytes_names_both(void **state) {
  (void)state;
  expect_hint_error(npy(1, "<V2", 0, "(4,)", HALVES, 8), CUREDUCE_F8_E4M3, "'<V2'", "e4m3", "bf16 or f16",
                    NULL);
  expect_hint_error(npy(1, "|V1", 0, "(4,)", BYTES, 4), CUREDUCE_F32, "'|V1'", "f32", "e4m3 or e5m2", NULL);
  /* one byte, but an integer: raw bytes hold fp8 */
  expect_hint_error(npy(1, "|u1", 0, "(4,)", BYTES, 4), CUREDUCE_I8, "'|u1'", "i8", "e4m3 or e5m2", NULL);
}

static void hint_disagreeing_with_typed_descr_names_both(void **state) {
  (void)state;
  expect_hint_error(npy(1, "<f4", 0, "(4,)", F32, 16), CUREDUCE_BF16, "'<f4' (f32)", "--dtype says bf16",
                    NULL);
  expect_hint_error(npy(1, "<f2", 0, "(4,)", F16, 8), CUREDUCE_BF16, "'<f2' (f16)", "--dtype says bf16",
                    NULL);
  expect_hint_error(npy(1, "|i1", 0, "(4,)", I8, 4), CUREDUCE_F8_E4M3, "'|i1' (i8)", "--dtype says e4m3",
                    NULL);
}

static void hint_that_is_no_dtype_is_refused(void **state) {
  (void)state;
  expect_error(npy(1, "<f4", 0, "(4,)", F32, 16), (cureduce_dtype)42, "42", NULL);
}

static void unsupported_descr_lists_what_is_supported(void **state) {
  (void)state;
  const char *descrs[] = {"<u4", "|b1", "<c8", "<i2", "<f16", "|O", "<U3", "f4x", ""};
  for (size_t d = 0; d < sizeof descrs / sizeof descrs[0]; ++d)
    expect_error(npy(1, descrs[d], 0, "(1,)", F64, 8), CUREDUCE_ACC_DEFAULT, "unsupported dtype", "f4", "V2",
                 NULL);
}

static void structured_descr_is_refused(void **state) {
  (void)state;
  expect_error(make_image(1,
                          "{'descr': [('a', '<f4'), ('b', '<i4')], 'fortran_order': False, 'shape': (2,), }",
                          F32, 16),
               CUREDUCE_ACC_DEFAULT, "structured dtypes are not supported", NULL);
}

/* --- Fortran order ---------------------------------------------------------------------- */

static void fortran_order_2d_is_transposed_to_c_order(void **state) {
  (void)state;
  /* [[0 1 2] [3 4 5]] in column-major order */
  const float file[6] = {0, 3, 1, 4, 2, 5}, want[6] = {0, 1, 2, 3, 4, 5};
  const uint64_t shape[2] = {2, 3};
  expect_array(npy(1, "<f4", 1, "(2, 3)", file, 24), CUREDUCE_ACC_DEFAULT, CUREDUCE_F32, 2, shape, want, 24);
}

/* Element (i0, ..., iN-1) of a column-major file sits at i0 + d0*(i1 + d1*(...)). */
static size_t column_major_offset(size_t flat, int ndim, const uint64_t *shape) {
  size_t idx[8], off = 0;
  for (int k = ndim - 1; k >= 0; --k) {
    idx[k] = flat % shape[k];
    flat /= shape[k];
  }
  for (int k = ndim - 1; k >= 0; --k)
    off = off * shape[k] + idx[k];
  return off;
}

static void check_fortran(const char *shape_text, int ndim, const uint64_t *shape, int big_endian) {
  size_t n = 1;
  for (int k = 0; k < ndim; ++k)
    n *= shape[k];
  int32_t *want = malloc(n * 4), *file = malloc(n * 4);
  assert_true(want && file);
  for (size_t i = 0; i < n; ++i)
    want[i] = (int32_t)(i * 7919 + 1);
  for (size_t i = 0; i < n; ++i)
    file[column_major_offset(i, ndim, shape)] = want[i];
  unsigned char *bytes = (unsigned char *)file;
  if (big_endian) {
    unsigned char *b = malloc(n * 4);
    assert_non_null(b);
    reversed_elements(b, file, n, 4);
    free(file);
    bytes = b;
  }
  expect_array(npy(1, big_endian ? ">i4" : "<i4", 1, shape_text, bytes, n * 4), CUREDUCE_ACC_DEFAULT,
               CUREDUCE_I32, ndim, shape, want, n * 4);
  free(bytes);
  free(want);
}

static void fortran_order_3d_is_transposed_to_c_order(void **state) {
  (void)state;
  /* np.arange(24).reshape(2, 3, 4) in column-major order */
  const int32_t file[24] = {0, 12, 4, 16, 8,  20, 1, 13, 5, 17, 9,  21,
                            2, 14, 6, 18, 10, 22, 3, 15, 7, 19, 11, 23};
  int32_t want[24];
  for (int i = 0; i < 24; ++i)
    want[i] = i;
  const uint64_t shape[3] = {2, 3, 4};
  expect_array(npy(1, "<i4", 1, "(2, 3, 4)", file, 96), CUREDUCE_ACC_DEFAULT, CUREDUCE_I32, 3, shape, want,
               96);
}

static void fortran_order_of_any_shape_and_byte_order_is_transposed(void **state) {
  (void)state;
  const uint64_t s1[2] = {37, 70}, s2[3] = {4, 1, 3}, s3[4] = {5, 1, 37, 40}, s4[5] = {2, 3, 1, 4, 5},
                 s5[1] = {9}, s6[3] = {1, 65, 1};
  for (int big = 0; big < 2; ++big) {
    check_fortran("(37, 70)", 2, s1, big);
    check_fortran("(4, 1, 3)", 3, s2, big);
    check_fortran("(5, 1, 37, 40)", 4, s3, big);
    check_fortran("(2, 3, 1, 4, 5)", 5, s4, big);
    check_fortran("(9,)", 1, s5, big);
    check_fortran("(1, 65, 1)", 3, s6, big);
  }
}

/* --- Shapes ----------------------------------------------------------------------------- */

static void shape_and_ndim_are_kept(void **state) {
  (void)state;
  const uint64_t s1[1] = {4}, s2[2] = {2, 2}, s3[3] = {1, 4, 1};
  expect_array(npy(1, "<f4", 0, "(4,)", F32, 16), CUREDUCE_ACC_DEFAULT, CUREDUCE_F32, 1, s1, F32, 16);
  expect_array(npy(1, "<f4", 0, "(2, 2)", F32, 16), CUREDUCE_ACC_DEFAULT, CUREDUCE_F32, 2, s2, F32, 16);
  expect_array(npy(1, "<f4", 0, "(1, 4, 1)", F32, 16), CUREDUCE_ACC_DEFAULT, CUREDUCE_F32, 3, s3, F32, 16);
}

static void scalar_has_ndim_0_and_count_1(void **state) {
  (void)state;
  expect_array(npy(1, "<f8", 0, "()", F64, 8), CUREDUCE_ACC_DEFAULT, CUREDUCE_F64, 0, NULL, F64, 8);
  expect_array(npy(1, "<f8", 1, "()", F64, 8), CUREDUCE_ACC_DEFAULT, CUREDUCE_F64, 0, NULL, F64, 8);
}

static void empty_shapes_have_count_0(void **state) {
  (void)state;
  const uint64_t s1[1] = {0}, s2[2] = {3, 0}, s3[3] = {0, 1ull << 62, 1ull << 62};
  expect_array(npy(1, "<f4", 0, "(0,)", NULL, 0), CUREDUCE_ACC_DEFAULT, CUREDUCE_F32, 1, s1, NULL, 0);
  expect_array(npy(1, "<f4", 1, "(3, 0)", NULL, 0), CUREDUCE_ACC_DEFAULT, CUREDUCE_F32, 2, s2, NULL, 0);
  /* a zero makes the product 0 however large the other dimensions */
  expect_array(npy(1, "<f8", 0, "(0, 4611686018427387904, 4611686018427387904)", NULL, 0),
               CUREDUCE_ACC_DEFAULT, CUREDUCE_F64, 3, s3, NULL, 0);
}

static void negative_dimension_is_named(void **state) {
  (void)state;
  expect_error(npy(1, "<f4", 0, "(-5,)", F32, 16), CUREDUCE_ACC_DEFAULT, "negative dimension -5 in 'shape'",
               NULL);
  expect_error(npy(1, "<f4", 0, "(2, -99999999999999999999999)", F32, 16), CUREDUCE_ACC_DEFAULT,
               "negative dimension -99999999999999999999", NULL);
}

static void malformed_dimension_is_refused(void **state) {
  (void)state;
  expect_error(npy(1, "<f4", 0, "(3, x)", F32, 16), CUREDUCE_ACC_DEFAULT, "malformed 'shape'", "'x'", NULL);
  expect_error(npy(1, "<f4", 0, "(3.5,)", F32, 16), CUREDUCE_ACC_DEFAULT, "malformed 'shape'", "'3.5'", NULL);
  expect_error(npy(1, "<f4", 0, "(3 4)", F32, 16), CUREDUCE_ACC_DEFAULT, "malformed 'shape'", NULL);
  expect_error(npy(1, "<f4", 0, "(3,,)", F32, 16), CUREDUCE_ACC_DEFAULT, "malformed 'shape'", NULL);
  expect_error(npy(1, "<f4", 0, "(-,)", F32, 16), CUREDUCE_ACC_DEFAULT, "malformed 'shape'", NULL);
  expect_error(npy(1, "<f4", 0, "4", F32, 16), CUREDUCE_ACC_DEFAULT, "'shape' is not a tuple", NULL);
  expect_error(npy(1, "<f4", 0, "(4,", F32, 16), CUREDUCE_ACC_DEFAULT, "malformed", NULL);
}

static void dimension_past_64_bits_is_too_large(void **state) {
  (void)state;
  expect_error(npy(1, "<f4", 0, "(18446744073709551616,)", F32, 16), CUREDUCE_ACC_DEFAULT,
               "dimension 18446744073709551616 in 'shape' is too large", NULL);
}

static void more_than_64_dimensions_are_refused(void **state) {
  (void)state;
  char shape[256] = "(";
  for (int k = 0; k < NPY_MAX_DIMS; ++k)
    strcat(shape, "1, ");
  uint64_t ones[NPY_MAX_DIMS];
  for (int k = 0; k < NPY_MAX_DIMS; ++k)
    ones[k] = 1;
  char shape64[256];
  strcat(strcpy(shape64, shape), ")");
  expect_array(npy(1, "<f4", 0, shape64, F32, 4), CUREDUCE_ACC_DEFAULT, CUREDUCE_F32, NPY_MAX_DIMS, ones, F32,
               4);
  strcat(shape, "1)");
  expect_error(npy(1, "<f4", 0, shape, F32, 4), CUREDUCE_ACC_DEFAULT, "more than 64 dimensions", NULL);
}

static void shape_whose_product_overflows_is_too_large(void **state) {
  (void)state;
  expect_error(npy(1, "<f4", 0, "(4294967296, 4294967296, 2)", F32, 16), CUREDUCE_ACC_DEFAULT, "too large",
               "(4294967296, 4294967296, 2)", NULL);
}

static void byte_count_past_size_max_is_too_large(void **state) {
  (void)state;
  /* 2^61 eight-byte elements: 2^64 bytes */
  expect_error(npy(1, "<f8", 0, "(2305843009213693952,)", F64, 8), CUREDUCE_ACC_DEFAULT, "too large",
               "2305843009213693952 elements of 8 bytes", NULL);
}

/* --- Damaged files ---------------------------------------------------------------------- */

static void truncated_data_says_promised_and_found(void **state) {
  (void)state;
  image im = npy(1, "<f4", 0, "(4,)", F32, 16);
  im.len -= 3;
  expect_error(im, CUREDUCE_ACC_DEFAULT, "truncated data", "4 elements of 4 bytes (16 bytes)", "holds 13",
               NULL);
  /* 2^60 bytes promised: the reader must not try to allocate them before they arrive */
  im = npy(2, "|i1", 0, "(1152921504606846976,)", F64, 8);
  expect_error(im, CUREDUCE_ACC_DEFAULT, "truncated data", "(1152921504606846976 bytes)", "holds 8", NULL);
}

static void truncated_header_says_promised_and_found(void **state) {
  (void)state;
  image im = npy(1, "<f4", 0, "(4,)", F32, 16);
  im.len = 50; /* the header is 118 bytes */
  expect_error(im, CUREDUCE_ACC_DEFAULT, "truncated header", "promises 118 bytes", "holds 40", NULL);
  im = npy(2, "<f4", 0, "(4,)", F32, 16);
  im.len = 10; /* inside a 2.0 preamble */
  expect_error(im, CUREDUCE_ACC_DEFAULT, "truncated header", "has 12 bytes", "holds 10", NULL);
  im = npy(1, "<f4", 0, "(4,)", F32, 16);
  im.len = 7;
  expect_error(im, CUREDUCE_ACC_DEFAULT, "truncated header", "holds 7", NULL);
}

static void trailing_bytes_after_the_data_are_ignored(void **state) {
  (void)state;
  const float data[6] = {1, 2, 3, 4, 99, 99};
  const uint64_t shape[1] = {4};
  expect_array(npy(1, "<f4", 0, "(4,)", data, 24), CUREDUCE_ACC_DEFAULT, CUREDUCE_F32, 1, shape, data, 16);
}

static void bad_magic_is_refused(void **state) {
  (void)state;
  image im = npy(1, "<f4", 0, "(4,)", F32, 16);
  im.bytes[1] = 'n';
  expect_error(im, CUREDUCE_ACC_DEFAULT, "not a .npy file", "bad magic", NULL);
  const char text[] = "hello, not numpy\n";
  im.bytes = malloc(sizeof text);
  memcpy(im.bytes, text, sizeof text);
  im.len = sizeof text - 1;
  expect_error(im, CUREDUCE_ACC_DEFAULT, "bad magic", NULL);
}

static void unknown_format_version_is_refused(void **state) {
  (void)state;
  image im = npy(1, "<f4", 0, "(4,)", F32, 16);
  im.bytes[6] = 4;
  expect_error(im, CUREDUCE_ACC_DEFAULT, "unsupported .npy format version 4.0", NULL);
  im = npy(1, "<f4", 0, "(4,)", F32, 16);
  im.bytes[7] = 1;
  expect_error(im, CUREDUCE_ACC_DEFAULT, "version 1.1", NULL);
}

static void absurd_header_length_is_refused(void **state) {
  (void)state;
  image im = npy(2, "<f4", 0, "(4,)", F32, 16);
  im.bytes[8] = im.bytes[9] = im.bytes[10] = im.bytes[11] = 0xff;
  expect_error(im, CUREDUCE_ACC_DEFAULT, "header length 4294967295", "limit", NULL);
}

static void versions_2_and_3_are_read_like_version_1(void **state) {
  (void)state;
  const uint64_t shape[2] = {2, 2};
  for (int major = 1; major <= 3; ++major)
    expect_array(npy(major, "<f4", 0, "(2, 2)", F32, 16), CUREDUCE_ACC_DEFAULT, CUREDUCE_F32, 2, shape, F32,
                 16);
}

static void header_keys_in_any_order_and_spacing_are_parsed(void **state) {
  (void)state;
  const uint64_t shape[2] = {2, 2}, s1[1] = {4};
  expect_array(make_image(1, "{ 'shape' :( 2 ,2 ) ,'fortran_order':False,   'descr':'<f4'}", F32, 16),
               CUREDUCE_ACC_DEFAULT, CUREDUCE_F32, 2, shape, F32, 16);
  expect_array(make_image(3, "{\"fortran_order\": False,\t\"descr\": \"<f4\", \"shape\": (4,)}", F32, 16),
               CUREDUCE_ACC_DEFAULT, CUREDUCE_F32, 1, s1, F32, 16);
  /* Python 2 wrote long integers with an L */
  expect_array(make_image(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 2L), }", F32, 16),
               CUREDUCE_ACC_DEFAULT, CUREDUCE_F32, 2, shape, F32, 16);
}

static void malformed_header_dict_is_refused(void **state) {
  (void)state;
  expect_error(make_image(1, "{'descr': '<f4', 'fortran_order': False}", F32, 16), CUREDUCE_ACC_DEFAULT,
               "no 'shape'", NULL);
  expect_error(make_image(1, "{'fortran_order': False, 'shape': (4,)}", F32, 16), CUREDUCE_ACC_DEFAULT,
               "no 'descr'", NULL);
  expect_error(make_image(1, "{'descr': '<f4', 'shape': (4,)}", F32, 16), CUREDUCE_ACC_DEFAULT,
               "no 'fortran_order'", NULL);
  expect_error(make_image(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), 'x': 1}", F32, 16),
               CUREDUCE_ACC_DEFAULT, "unexpected key 'x'", NULL);
  expect_error(
      make_image(1, "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (4,)}", F32, 16),
      CUREDUCE_ACC_DEFAULT, "'descr' appears twice", NULL);
  expect_error(make_image(1, "{'descr': '<f4', 'fortran_order': maybe, 'shape': (4,)}", F32, 16),
               CUREDUCE_ACC_DEFAULT, "neither True nor False", NULL);
  expect_error(make_image(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,)} x", F32, 16),
               CUREDUCE_ACC_DEFAULT, "after the closing", NULL);
  expect_error(make_image(1, "{'descr': '<f4 'fortran_order': False, 'shape': (4,)}", F32, 16),
               CUREDUCE_ACC_DEFAULT, "malformed header", NULL);
  expect_error(make_image(1, "['descr', '<f4']", F32, 16), CUREDUCE_ACC_DEFAULT, "not a dict", NULL);
  expect_error(make_image(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,)", F32, 16),
               CUREDUCE_ACC_DEFAULT, "malformed header", NULL);
}

static void error_message_is_cut_to_the_buffer(void **state) {
  (void)state;
  npy_array a;
  char err[8];
  memset(err, 'x', sizeof err);
  assert_int_not_equal(
      read_image(npy(1, "<c8", 0, "(1,)", F64, 8), CUREDUCE_ACC_DEFAULT, &a, err, sizeof err), 0);
  assert_int_equal(strlen(err), sizeof err - 1);
  assert_int_not_equal(read_image(npy(1, "<c8", 0, "(1,)", F64, 8), CUREDUCE_ACC_DEFAULT, &a, NULL, 0), 0);
  assert_zeroed(&a);
}

static void npy_free_is_safe_on_a_zeroed_array(void **state) {
  (void)state;
  npy_array a;
  memset(&a, 0, sizeof a);
  npy_free(&a);
  npy_free(&a);
  assert_null(a.data);
}

/* --- Files by path ---------------------------------------------------------------------- */

static char dir[64];

static int make_dir(void **state) {
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/test_npy_reader.XXXXXX");
  return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state) {
  (void)state;
  const char *names[] = {"a.npy", "short.npy", "empty.npy", "secret.npy"};
  char path[128];
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    unlink(path);
  }
  snprintf(path, sizeof path, "%s/sub.npy", dir);
  rmdir(path);
  return rmdir(dir);
}

static void write_file(const char *path, image im) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(im.bytes, 1, im.len, f), im.len);
  fclose(f);
  free(im.bytes);
}

static void load_error(const char *name, const char *phrase) {
  char path[128], err[256];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  npy_array a;
  memset(&a, 0x5a, sizeof a);
  assert_int_not_equal(npy_load(path, CUREDUCE_ACC_DEFAULT, &a, err, sizeof err), 0);
  assert_zeroed(&a);
  if (!strstr(err, phrase))
    fail_msg("the message \"%s\" lacks \"%s\"", err, phrase);
}

static void file_is_loaded_by_path(void **state) {
  (void)state;
  char path[128], err[256];
  snprintf(path, sizeof path, "%s/a.npy", dir);
  const float file[6] = {0, 3, 1, 4, 2, 5}, want[6] = {0, 1, 2, 3, 4, 5};
  write_file(path, npy(1, "<f4", 1, "(2, 3)", file, 24));
  npy_array a;
  if (npy_load(path, CUREDUCE_ACC_DEFAULT, &a, err, sizeof err))
    fail_msg("unexpected error: %s", err);
  assert_int_equal(a.ndim, 2);
  assert_int_equal(a.count, 6);
  assert_memory_equal(a.data, want, sizeof want);
  npy_free(&a);
}

static void truncated_file_says_promised_and_found(void **state) {
  (void)state;
  char path[128];
  snprintf(path, sizeof path, "%s/short.npy", dir);
  image im = npy(1, "<f4", 0, "(1000000000000,)", F32, 16);
  write_file(path, im);
  load_error("short.npy", "truncated data");
  load_error("short.npy", "(4000000000000 bytes), the file holds 16");
  snprintf(path, sizeof path, "%s/empty.npy", dir);
  write_file(path, (image){malloc(1), 0});
  load_error("empty.npy", "empty");
}

static void missing_file_says_no_such_file(void **state) {
  (void)state;
  load_error("nope.npy", "no such file");
}

static void directory_says_is_a_directory(void **state) {
  (void)state;
  char path[128];
  snprintf(path, sizeof path, "%s/sub.npy", dir);
  assert_int_equal(mkdir(path, 0700), 0);
  load_error("sub.npy", "is a directory");
}

static void unreadable_file_says_permission_denied(void **state) {
  (void)state;
  if (geteuid() == 0) {
    print_message("skipped: running as root, which may read any file\n");
    skip();
  }
  char path[128];
  snprintf(path, sizeof path, "%s/secret.npy", dir);
  write_file(path, npy(1, "<f4", 0, "(4,)", F32, 16));
  assert_int_equal(chmod(path, 0), 0);
  load_error("secret.npy", "permission denied");
}

int main(void) {
  const struct CMUnitTest streams[] = {
      cmocka_unit_test(typed_little_endian_dtypes_are_read_with_their_values),
      cmocka_unit_test(typed_big_endian_dtypes_are_byte_swapped_to_little_endian),
      cmocka_unit_test(native_byte_order_is_little_endian),
      cmocka_unit_test(typed_descr_with_matching_hint_is_read),
      cmocka_unit_test(raw_one_byte_types_are_read_as_the_fp8_hint),
      cmocka_unit_test(raw_two_byte_types_are_read_as_the_16_bit_hint),
      cmocka_unit_test(typed_e5m2_is_read_without_a_hint),
      cmocka_unit_test(raw_type_without_hint_says_which_dtypes_fit),
      cmocka_unit_test(hint_of_the_wrong_size_for_raw_bytes_names_both),
      cmocka_unit_test(hint_disagreeing_with_typed_descr_names_both),
      cmocka_unit_test(hint_that_is_no_dtype_is_refused),
      cmocka_unit_test(unsupported_descr_lists_what_is_supported),
      cmocka_unit_test(structured_descr_is_refused),
      cmocka_unit_test(fortran_order_2d_is_transposed_to_c_order),
      cmocka_unit_test(fortran_order_3d_is_transposed_to_c_order),
      cmocka_unit_test(fortran_order_of_any_shape_and_byte_order_is_transposed),
      cmocka_unit_test(shape_and_ndim_are_kept),
      cmocka_unit_test(scalar_has_ndim_0_and_count_1),
      cmocka_unit_test(empty_shapes_have_count_0),
      cmocka_unit_test(negative_dimension_is_named),
      cmocka_unit_test(malformed_dimension_is_refused),
      cmocka_unit_test(dimension_past_64_bits_is_too_large),
      cmocka_unit_test(more_than_64_dimensions_are_refused),
      cmocka_unit_test(shape_whose_product_overflows_is_too_large),
      cmocka_unit_test(byte_count_past_size_max_is_too_large),
      cmocka_unit_test(truncated_data_says_promised_and_found),
      cmocka_unit_test(truncated_header_says_promised_and_found),
      cmocka_unit_test(trailing_bytes_after_the_data_are_ignored),
      cmocka_unit_test(bad_magic_is_refused),
      cmocka_unit_test(unknown_format_version_is_refused),
      cmocka_unit_test(absurd_header_length_is_refused),
      cmocka_unit_test(versions_2_and_3_are_read_like_version_1),
      cmocka_unit_test(header_keys_in_any_order_and_spacing_are_parsed),
      cmocka_unit_test(malformed_header_dict_is_refused),
      cmocka_unit_test(error_message_is_cut_to_the_buffer),
      cmocka_unit_test(npy_free_is_safe_on_a_zeroed_array),
  };
  const struct CMUnitTest files[] = {
      cmocka_unit_test(file_is_loaded_by_path),
      cmocka_unit_test(truncated_file_says_promised_and_found),
      cmocka_unit_test(missing_file_says_no_such_file),
      cmocka_unit_test(directory_says_is_a_directory),
      cmocka_unit_test(unreadable_file_says_permission_denied),
  };
  const int failed = cmocka_run_group_tests_name("streams", streams, NULL, NULL);
  return failed + cmocka_run_group_tests_name("files", files, make_dir, remove_dir);
}
