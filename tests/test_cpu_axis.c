/* The CPU row, column, axis and segment reductions: which elements each result covers, the
 * index the arg ops give (within the row, column, axis or segment), a leading dimension, empty
 * shapes and segments, and bad arguments. Hand-worked cases. CPU only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "test_util.h"

/* 3 x 4 in a row-major array with ld = 5 (the last column of each row is padding, 99). */
static const float M[15] = {1, 2, 3, 4, 99, -5, 6, 7, 8, 99, 9, -10, 11, 0, 99};

static void rows_should_reduce_each_row_within_its_columns(void **state) {
  (void)state;
  float sums[3];
  assert_int_equal(cureduce_cpu_reduce_rows(CUREDUCE_SUM, CUREDUCE_F32, M, 3, 4, 5, CUREDUCE_F32, sums), 0);
  assert_true(sums[0] == 10 && sums[1] == 16 && sums[2] == 10);
  int64_t idx[3];
  assert_int_equal(cureduce_cpu_reduce_rows(CUREDUCE_ARGMAX, CUREDUCE_F32, M, 3, 4, 5, CUREDUCE_F32, idx), 0);
  assert_true(idx[0] == 3 && idx[1] == 3 && idx[2] == 2);
}

static void cols_should_reduce_each_column_down_the_rows(void **state) {
  (void)state;
  float mins[4];
  assert_int_equal(cureduce_cpu_reduce_cols(CUREDUCE_MIN, CUREDUCE_F32, M, 3, 4, 5, CUREDUCE_F32, mins), 0);
  assert_true(mins[0] == -5 && mins[1] == -10 && mins[2] == 3 && mins[3] == 0);
  int64_t idx[4];
  assert_int_equal(cureduce_cpu_reduce_cols(CUREDUCE_ARGMIN, CUREDUCE_F32, M, 3, 4, 5, CUREDUCE_F32, idx), 0);
  assert_true(idx[0] == 1 && idx[1] == 2 && idx[2] == 0 && idx[3] == 2);
}

/* Columns of more than 64 MiB each are read in place, not copied (a copy would double their
   memory): the results must be those of the same column made contiguous. f32 rows of 2^24 + 3
   (64 MiB and 12 bytes a column), 2 columns and a third of padding. */
static void columns_too_tall_to_copy_should_match_the_contiguous_reduction(void **state) {
  (void)state;
  const uint64_t rows = (1u << 24) + 3, cols = 2, ld = 3;
  float *m = malloc(rows * ld * sizeof *m), *column = malloc(rows * sizeof *column);
  assert_non_null(m);
  assert_non_null(column);
  uint64_t rng = 11;
  for (uint64_t i = 0; i < rows * ld; ++i)
    m[i] = (float)((int64_t)(tu_next(&rng) % 2001) - 1000) / 64.0f + 0x1p-20f * (float)(i % 7);
  m[5 * ld + 1] = 4096.0f; /* the second column's maximum, at row 5 */
  const cureduce_op ops[] = {CUREDUCE_SUM, CUREDUCE_MIN, CUREDUCE_ARGMAX, CUREDUCE_SUM_EXACT};
  for (size_t o = 0; o < sizeof ops / sizeof *ops; ++o)
    for (uint64_t j = 0; j < cols; ++j) {
      for (uint64_t i = 0; i < rows; ++i)
        column[i] = m[i * ld + j];
      int64_t got[2] = {0, 0}, want = 1; /* room for an index or a float */
      assert_int_equal(cureduce_cpu_reduce_cols(ops[o], CUREDUCE_F32, m, rows, cols, ld, CUREDUCE_F32, got),
                       0);
      assert_int_equal(cureduce_cpu_reduce(ops[o], CUREDUCE_F32, column, rows, CUREDUCE_F32, &want), 0);
      const size_t bytes = ops[o] == CUREDUCE_ARGMAX ? 8 : 4;
      assert_memory_equal((const char *)got + j * bytes, &want, bytes);
    }
  int64_t idx[2];
  assert_int_equal(
      cureduce_cpu_reduce_cols(CUREDUCE_ARGMAX, CUREDUCE_F32, m, rows, cols, ld, CUREDUCE_F32, idx), 0);
  assert_true(idx[1] == 5);
  free(m);
  free(column);
}

static void segments_should_follow_the_offsets(void **state) {
  (void)state;
  const int32_t x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  const int64_t off[5] = {1, 3, 3, 7, 8}; /* {2,3}, {}, {4,5,6,7}, {8} */
  int64_t sums[4] = {-1, -1, -1, -1};
  assert_int_equal(cureduce_cpu_reduce_segments(CUREDUCE_SUM, CUREDUCE_I32, x, 4, off, CUREDUCE_I64, sums),
                   0);
  assert_true(sums[0] == 5 && sums[1] == 0 && sums[2] == 22 && sums[3] == 8);
  int64_t idx[4] = {-1, -1, -1, -1};
  assert_int_equal(cureduce_cpu_reduce_segments(CUREDUCE_ARGMAX, CUREDUCE_I32, x, 4, off, CUREDUCE_I64, idx),
                   0);
  /* within the segment; the empty segment's output is left alone */
  assert_true(idx[0] == 1 && idx[1] == -1 && idx[2] == 3 && idx[3] == 0);
}

/* A 2 x 3 x 2 array, x[o][k][i] = 100 o + 10 k + i, with one negative entry per (o, i). */
static const int32_t A[12] = {0, 1, 10, -11, 20, 21, 100, 101, -110, 111, 120, 121};

static void axis_should_reduce_the_middle_axis_of_each_outer_slab(void **state) {
  (void)state;
  int64_t sums[4] = {0}, idx[4] = {0};
  assert_int_equal(cureduce_cpu_reduce_axis(CUREDUCE_SUM, CUREDUCE_I32, A, 2, 3, 2, CUREDUCE_I64, sums), 0);
  assert_true(sums[0] == 30 && sums[1] == 11 && sums[2] == 110 && sums[3] == 333);
  assert_int_equal(cureduce_cpu_reduce_axis(CUREDUCE_ARGMIN, CUREDUCE_I32, A, 2, 3, 2, CUREDUCE_I64, idx), 0);
  assert_true(idx[0] == 0 && idx[1] == 1 && idx[2] == 1 && idx[3] == 0);
  /* inner == 1: the rows of a 4 x 3 matrix; outer == 1: the columns of a 6 x 2 one */
  assert_int_equal(cureduce_cpu_reduce_axis(CUREDUCE_MAX, CUREDUCE_I32, A, 4, 3, 1, CUREDUCE_I64, idx), 0);
  assert_true(idx[0] == 10 && idx[1] == 21 && idx[2] == 101 && idx[3] == 121);
  assert_int_equal(cureduce_cpu_reduce_axis(CUREDUCE_SUM, CUREDUCE_I32, A, 1, 6, 2, CUREDUCE_I64, sums), 0);
  assert_true(sums[0] == 140 && sums[1] == 344);
}

static void axis_edge_shapes_and_bad_arguments_should_get_their_status(void **state) {
  (void)state;
  int64_t out[4] = {7, 7, 7, 7};
  /* no outputs: nothing written; length 0: empty reductions */
  assert_int_equal(cureduce_cpu_reduce_axis(CUREDUCE_MAX, CUREDUCE_I32, A, 0, 3, 2, CUREDUCE_I64, out), 0);
  assert_int_equal(cureduce_cpu_reduce_axis(CUREDUCE_MAX, CUREDUCE_I32, A, 2, 3, 0, CUREDUCE_I64, out), 0);
  assert_int_equal(cureduce_cpu_reduce_axis(CUREDUCE_MAX, CUREDUCE_I32, A, 2, 0, 2, CUREDUCE_I64, out),
                   CUREDUCE_EMPTY);
  assert_true(out[0] == 7 && out[3] == 7);
  assert_int_equal(cureduce_cpu_reduce_axis(CUREDUCE_SUM, CUREDUCE_I32, A, 2, 0, 2, CUREDUCE_I64, out), 0);
  assert_true(out[0] == 0 && out[1] == 0 && out[2] == 0 && out[3] == 0);
  out[0] = 7;
  assert_int_equal(
      cureduce_cpu_reduce_axis(CUREDUCE_SUM, CUREDUCE_I32, A, 1u << 31, 1u << 31, 4, CUREDUCE_I64, out),
      CUREDUCE_ERROR_INVALID_VALUE); /* 2^64 elements */
  /* length 0 reads nothing, but 2^64 or 2^60 results of 8 bytes fit no buffer: nothing written */
  assert_int_equal(
      cureduce_cpu_reduce_axis(CUREDUCE_SUM, CUREDUCE_I32, A, 1ull << 32, 0, 1ull << 32, CUREDUCE_I64, out),
      CUREDUCE_ERROR_INVALID_VALUE);
  assert_int_equal(
      cureduce_cpu_reduce_axis(CUREDUCE_SUM, CUREDUCE_I32, A, 1ull << 30, 0, 1ull << 30, CUREDUCE_I64, out),
      CUREDUCE_ERROR_INVALID_VALUE);
  assert_int_equal(cureduce_cpu_reduce_axis(CUREDUCE_SUM, CUREDUCE_I32, NULL, 2, 3, 2, CUREDUCE_I64, out),
                   CUREDUCE_ERROR_NULL_POINTER);
  assert_int_equal(cureduce_cpu_reduce_axis(CUREDUCE_SUM, CUREDUCE_I32, A, 2, 3, 2, CUREDUCE_I64, NULL),
                   CUREDUCE_ERROR_NULL_POINTER);
  assert_int_equal(cureduce_cpu_reduce_axis(CUREDUCE_SUM, CUREDUCE_I32, A, 2, 3, 2, CUREDUCE_I8, out),
                   CUREDUCE_ERROR_UNSUPPORTED);
  assert_true(out[0] == 7);
}

static void empty_rows_and_columns_should_follow_the_full_reduction(void **state) {
  (void)state;
  float out[3] = {7, 7, 7};
  assert_int_equal(cureduce_cpu_reduce_rows(CUREDUCE_MAX, CUREDUCE_F32, M, 3, 0, 5, CUREDUCE_F32, out),
                   CUREDUCE_EMPTY);
  assert_true(out[0] == 7 && out[2] == 7);
  assert_int_equal(cureduce_cpu_reduce_rows(CUREDUCE_SUM, CUREDUCE_F32, M, 3, 0, 5, CUREDUCE_F32, out), 0);
  assert_true(out[0] == 0 && out[1] == 0 && out[2] == 0 && !signbit(out[0]));
  assert_int_equal(cureduce_cpu_reduce_cols(CUREDUCE_MIN, CUREDUCE_F32, M, 0, 3, 5, CUREDUCE_F32, out),
                   CUREDUCE_EMPTY);
  /* no rows at all: nothing to write, so no output pointer is needed (as on the GPU) */
  assert_int_equal(cureduce_cpu_reduce_rows(CUREDUCE_MIN, CUREDUCE_F32, M, 0, 4, 5, CUREDUCE_F32, out), 0);
  assert_int_equal(cureduce_cpu_reduce_rows(CUREDUCE_SUM, CUREDUCE_F32, M, 0, 4, 5, CUREDUCE_F32, NULL), 0);
  assert_int_equal(cureduce_cpu_reduce_cols(CUREDUCE_SUM, CUREDUCE_F32, M, 3, 0, 5, CUREDUCE_F32, NULL), 0);
  const int64_t one_offset[1] = {0};
  assert_int_equal(
      cureduce_cpu_reduce_segments(CUREDUCE_SUM, CUREDUCE_F32, M, 0, one_offset, CUREDUCE_F32, NULL), 0);
  assert_int_equal(cureduce_cpu_reduce_rows(CUREDUCE_SUM, CUREDUCE_F32, M, 1, 0, 5, CUREDUCE_F32, NULL),
                   CUREDUCE_ERROR_NULL_POINTER);
  assert_int_equal(
      cureduce_cpu_reduce_segments(CUREDUCE_SUM, CUREDUCE_F32, M, 1, one_offset, CUREDUCE_F32, NULL),
      CUREDUCE_ERROR_NULL_POINTER);
}

/* Outputs written while the input (or the offsets) is still being read would change it: refused,
   with the input and the offsets left as they were. */
static void outputs_overlapping_what_is_read_should_be_invalid(void **state) {
  (void)state;
  float m[12] = {1, 1, 1, 1, 1, 1, 1, 1, 7, 7, 7, 7};
  /* 4 x 2 rows whose sums would land on rows 1 and 2 */
  assert_int_equal(cureduce_cpu_reduce_rows(CUREDUCE_SUM, CUREDUCE_F32, m, 4, 2, 2, CUREDUCE_F32, m + 2),
                   CUREDUCE_ERROR_INVALID_VALUE);
  assert_int_equal(cureduce_cpu_reduce_cols(CUREDUCE_SUM, CUREDUCE_F32, m, 4, 2, 2, CUREDUCE_F32, m + 7),
                   CUREDUCE_ERROR_INVALID_VALUE);
  /* the padding between rows is part of the input's extent: ld 4, outputs on row 0's padding */
  assert_int_equal(cureduce_cpu_reduce_rows(CUREDUCE_SUM, CUREDUCE_F32, m, 2, 2, 4, CUREDUCE_F32, m + 2),
                   CUREDUCE_ERROR_INVALID_VALUE);
  assert_int_equal(cureduce_cpu_reduce_axis(CUREDUCE_MAX, CUREDUCE_F32, m, 2, 2, 2, CUREDUCE_F32, m + 4),
                   CUREDUCE_ERROR_INVALID_VALUE);
  for (int i = 0; i < 8; ++i)
    assert_true(m[i] == 1);
  /* right after the input: allowed */
  assert_int_equal(cureduce_cpu_reduce_rows(CUREDUCE_SUM, CUREDUCE_F32, m, 4, 2, 2, CUREDUCE_F32, m + 8), 0);
  assert_true(m[8] == 2 && m[11] == 2);

  /* a result that would overwrite an offset still to be read, and one on the segments' elements */
  int64_t in[2] = {1000000000, 1}, off[3] = {0, 1, 2};
  assert_int_equal(
      cureduce_cpu_reduce_segments(CUREDUCE_SUM, CUREDUCE_I64, in, 2, off, CUREDUCE_I64, off + 1),
      CUREDUCE_ERROR_INVALID_VALUE);
  assert_int_equal(cureduce_cpu_reduce_segments(CUREDUCE_SUM, CUREDUCE_I64, in, 2, off, CUREDUCE_I64, in + 1),
                   CUREDUCE_ERROR_INVALID_VALUE);
  assert_true(off[0] == 0 && off[1] == 1 && off[2] == 2 && in[0] == 1000000000 && in[1] == 1);
  /* outputs below the segments' first element overlap nothing read */
  int64_t buf[4] = {5, 5, 3, 4}, from2[3] = {2, 3, 4};
  assert_int_equal(cureduce_cpu_reduce_segments(CUREDUCE_SUM, CUREDUCE_I64, buf, 2, from2, CUREDUCE_I64, buf),
                   0);
  assert_true(buf[0] == 3 && buf[1] == 4);
}

static void bad_arguments_should_get_their_status(void **state) {
  (void)state;
  float out[4];
  assert_int_equal(cureduce_cpu_reduce_rows(CUREDUCE_SUM, CUREDUCE_F32, M, 3, 4, 3, CUREDUCE_F32, out),
                   CUREDUCE_ERROR_INVALID_VALUE); /* ld < cols */
  assert_int_equal(cureduce_cpu_reduce_cols(CUREDUCE_SUM, CUREDUCE_F32, M, 3, 4, 5, CUREDUCE_F32, NULL),
                   CUREDUCE_ERROR_NULL_POINTER);
  assert_int_equal(
      cureduce_cpu_reduce_rows(CUREDUCE_SUM, CUREDUCE_F32, M, UINT64_MAX, 4, 5, CUREDUCE_F32, out),
      CUREDUCE_ERROR_INVALID_VALUE); /* rows * ld overflows */
  assert_int_equal(cureduce_cpu_reduce_rows(CUREDUCE_MEAN, CUREDUCE_I32, M, 3, 4, 5, CUREDUCE_I32, out),
                   CUREDUCE_ERROR_UNSUPPORTED);
  const int64_t decreasing[3] = {0, 4, 2};
  assert_int_equal(
      cureduce_cpu_reduce_segments(CUREDUCE_SUM, CUREDUCE_F32, M, 2, decreasing, CUREDUCE_F32, out),
      CUREDUCE_ERROR_INVALID_VALUE);
  assert_int_equal(cureduce_cpu_reduce_segments(CUREDUCE_SUM, CUREDUCE_F32, M, 2, NULL, CUREDUCE_F32, out),
                   CUREDUCE_ERROR_NULL_POINTER);
  /* the input of segments that are all empty is needed, as on the GPU, which cannot see them */
  const int64_t empty[3] = {2, 2, 2};
  assert_int_equal(
      cureduce_cpu_reduce_segments(CUREDUCE_SUM, CUREDUCE_F32, NULL, 2, empty, CUREDUCE_F32, out),
      CUREDUCE_ERROR_NULL_POINTER);
  /* no segments: nothing is read, so the offsets may be NULL too */
  assert_int_equal(
      cureduce_cpu_reduce_segments(CUREDUCE_SUM, CUREDUCE_F32, NULL, 0, NULL, CUREDUCE_F32, NULL),
      CUREDUCE_SUCCESS);
}

/* f64 shapes of fewer than 2^63 elements but 2^64 bytes or more: their byte offsets would wrap
   back into the buffer, so they are refused and nothing is written. */
static void extents_of_2pow63_bytes_should_be_invalid(void **state) {
  (void)state;
  const double x[2] = {1.25, 2.5};
  double out[2] = {-1, -1};
  const uint64_t far = (uint64_t)1 << 61; /* 2^61 f64 elements: 2^64 bytes */
  assert_int_equal(
      cureduce_cpu_reduce_rows(CUREDUCE_SUM_EXACT, CUREDUCE_F64, x, 2, 2, far, CUREDUCE_F64, out),
      CUREDUCE_ERROR_INVALID_VALUE);
  assert_int_equal(cureduce_cpu_reduce_cols(CUREDUCE_SUM, CUREDUCE_F64, x, 2, 2, far, CUREDUCE_F64, out),
                   CUREDUCE_ERROR_INVALID_VALUE);
  const int64_t offsets[2] = {(int64_t)far, (int64_t)far + 2};
  assert_int_equal(cureduce_cpu_reduce_segments(CUREDUCE_SUM, CUREDUCE_F64, x, 1, offsets, CUREDUCE_F64, out),
                   CUREDUCE_ERROR_INVALID_VALUE);
  assert_int_equal(cureduce_cpu_reduce_axis(CUREDUCE_SUM, CUREDUCE_F64, x, 2, far / 2, 2, CUREDUCE_F64, out),
                   CUREDUCE_ERROR_INVALID_VALUE);
  assert_true(out[0] == -1 && out[1] == -1);
  /* at the limit: two empty i8 rows ld apart span ld bytes, valid up to 2^63 - 1 */
  const int8_t b[4] = {1, 2, 3, 4};
  int64_t two[2] = {7, 7};
  assert_int_equal(
      cureduce_cpu_reduce_rows(CUREDUCE_SUM, CUREDUCE_I8, b, 2, 0, (uint64_t)INT64_MAX, CUREDUCE_I64, two),
      CUREDUCE_SUCCESS);
  assert_true(two[0] == 0 && two[1] == 0);
  two[0] = 7;
  assert_int_equal(cureduce_cpu_reduce_rows(CUREDUCE_SUM, CUREDUCE_I8, b, 2, 0, (uint64_t)INT64_MAX + 1,
                                            CUREDUCE_I64, two),
                   CUREDUCE_ERROR_INVALID_VALUE);
  assert_true(two[0] == 7);
  /* the outputs too: 2^60 rows of no elements would take 2^63 bytes of i64 results */
  assert_int_equal(
      cureduce_cpu_reduce_rows(CUREDUCE_SUM, CUREDUCE_I8, b, (uint64_t)1 << 60, 0, 0, CUREDUCE_I64, two),
      CUREDUCE_ERROR_INVALID_VALUE);
  assert_int_equal(cureduce_cpu_reduce_cols(CUREDUCE_SUM, CUREDUCE_I8, b, 0, (uint64_t)1 << 60,
                                            (uint64_t)1 << 60, CUREDUCE_I64, two),
                   CUREDUCE_ERROR_INVALID_VALUE);
  assert_true(two[0] == 7);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(rows_should_reduce_each_row_within_its_columns),
      cmocka_unit_test(cols_should_reduce_each_column_down_the_rows),
      cmocka_unit_test(columns_too_tall_to_copy_should_match_the_contiguous_reduction),
      cmocka_unit_test(segments_should_follow_the_offsets),
      cmocka_unit_test(axis_should_reduce_the_middle_axis_of_each_outer_slab),
      cmocka_unit_test(axis_edge_shapes_and_bad_arguments_should_get_their_status),
      cmocka_unit_test(empty_rows_and_columns_should_follow_the_full_reduction),
      cmocka_unit_test(outputs_overlapping_what_is_read_should_be_invalid),
      cmocka_unit_test(bad_arguments_should_get_their_status),
      cmocka_unit_test(extents_of_2pow63_bytes_should_be_invalid),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
