/* The GPU entry points refuse bad input with a distinct status and write nothing: NULL handle,
 * NULL pointers, unknown enums, unsupported combinations, host pointers, misaligned pointers,
 * outputs that overlap what a call reads, and the empty min/max. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "gpu_util.h"

static cureduce_handle h;
static float *d_in, *d_out;

static float read_out(void) {
  float v;
  CUDA_OK(cudaMemcpy(&v, d_out, sizeof v, cudaMemcpyDeviceToHost));
  return v;
}

static int setup(void **state) {
  (void)state;
  if (cureduce_create(&h) != CUREDUCE_SUCCESS)
    return -1;
  const float ones[8] = {1, 1, 1, 1, 1, 1, 1, 1}, sentinel = 42.0f;
  if (cudaMalloc((void **)&d_in, sizeof ones) != cudaSuccess ||
      cudaMalloc((void **)&d_out, 16) != cudaSuccess)
    return -1;
  if (cudaMemcpy(d_in, ones, sizeof ones, cudaMemcpyHostToDevice) != cudaSuccess)
    return -1;
  return cudaMemcpy(d_out, &sentinel, sizeof sentinel, cudaMemcpyHostToDevice) == cudaSuccess ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  (void)cudaFree(d_in);
  (void)cudaFree(d_out);
  return cureduce_destroy(h) == CUREDUCE_SUCCESS ? 0 : -1;
}

static void each_bad_argument_should_have_its_own_status(void **state) {
  (void)state;
  const cureduce_op SUM = CUREDUCE_SUM;
  const cureduce_dtype F32 = CUREDUCE_F32;
  assert_int_equal(cureduce_reduce(NULL, SUM, F32, d_in, 8, F32, d_out, NULL), CUREDUCE_ERROR_INVALID_HANDLE);
  assert_int_equal(cureduce_reduce(h, (cureduce_op)17, F32, d_in, 8, F32, d_out, NULL),
                   CUREDUCE_ERROR_INVALID_OP);
  assert_int_equal(cureduce_reduce(h, SUM, (cureduce_dtype)17, d_in, 8, F32, d_out, NULL),
                   CUREDUCE_ERROR_INVALID_DTYPE);
  assert_int_equal(cureduce_reduce(h, SUM, F32, d_in, 8, CUREDUCE_I32, d_out, NULL),
                   CUREDUCE_ERROR_UNSUPPORTED);
  assert_int_equal(cureduce_reduce(h, SUM, F32, NULL, 8, F32, d_out, NULL), CUREDUCE_ERROR_NULL_POINTER);
  assert_int_equal(cureduce_reduce(h, SUM, F32, d_in, 8, F32, NULL, NULL), CUREDUCE_ERROR_NULL_POINTER);
  float host_in[8] = {0}, host_out = 0;
  assert_int_equal(cureduce_reduce(h, SUM, F32, host_in, 8, F32, d_out, NULL), CUREDUCE_ERROR_HOST_POINTER);
  assert_int_equal(cureduce_reduce(h, SUM, F32, d_in, 8, F32, &host_out, NULL), CUREDUCE_ERROR_HOST_POINTER);
  assert_int_equal(cureduce_reduce(h, SUM, F32, (char *)d_in + 1, 4, F32, d_out, NULL),
                   CUREDUCE_ERROR_INVALID_VALUE);
  assert_int_equal(cureduce_reduce(h, SUM, F32, d_in, 4, F32, (char *)d_out + 2, NULL),
                   CUREDUCE_ERROR_INVALID_VALUE);
  /* 2^62 f32 elements: 2^64 bytes, whose byte offsets would wrap back into the buffer */
  assert_int_equal(cureduce_reduce(h, SUM, F32, d_in, 1ull << 62, F32, d_out, NULL),
                   CUREDUCE_ERROR_INVALID_VALUE);
  assert_int_equal(cureduce_reduce(h, CUREDUCE_SUM_EXACT, F32, d_in, 1ull << 62, F32, d_out, NULL),
                   CUREDUCE_ERROR_INVALID_VALUE);
  CUDA_OK(cudaDeviceSynchronize());
  assert_true(read_out() == 42.0f); /* nothing was written by any of them */
  assert_true(host_out == 0.0f);
}

static void axis_calls_should_check_their_arguments(void **state) {
  (void)state;
  const cureduce_op SUM = CUREDUCE_SUM;
  const cureduce_dtype F32 = CUREDUCE_F32;
  float host[8] = {0};
  assert_int_equal(cureduce_reduce_rows(NULL, SUM, F32, d_in, 2, 4, 4, F32, d_out, NULL),
                   CUREDUCE_ERROR_INVALID_HANDLE);
  assert_int_equal(cureduce_reduce_rows(h, SUM, F32, d_in, 2, 4, 3, F32, d_out, NULL),
                   CUREDUCE_ERROR_INVALID_VALUE);
  assert_int_equal(cureduce_reduce_cols(h, SUM, F32, d_in, UINT64_MAX, 4, 4, F32, d_out, NULL),
                   CUREDUCE_ERROR_INVALID_VALUE);
  assert_int_equal(cureduce_reduce_cols(h, SUM, F32, NULL, 2, 4, 4, F32, d_out, NULL),
                   CUREDUCE_ERROR_NULL_POINTER);
  assert_int_equal(cureduce_reduce_rows(h, SUM, F32, host, 2, 4, 4, F32, d_out, NULL),
                   CUREDUCE_ERROR_HOST_POINTER);
  assert_int_equal(cureduce_reduce_rows(h, SUM, F32, d_in, 1, 4, 4, F32, (char *)d_out + 2, NULL),
                   CUREDUCE_ERROR_INVALID_VALUE);
  assert_int_equal(cureduce_reduce_rows(h, CUREDUCE_MIN, F32, d_in, 1, 0, 4, F32, d_out, NULL),
                   CUREDUCE_EMPTY);
  assert_int_equal(cureduce_reduce_segments(h, SUM, F32, d_in, 1, NULL, F32, d_out, NULL),
                   CUREDUCE_ERROR_NULL_POINTER);
  /* no segments: no pointer is read, so any may be NULL (as for the exact states) */
  assert_int_equal(cureduce_reduce_segments(h, SUM, F32, NULL, 0, NULL, F32, NULL, NULL), CUREDUCE_SUCCESS);
  const int64_t host_offsets[2] = {0, 4};
  assert_int_equal(cureduce_reduce_segments(h, SUM, F32, d_in, 1, host_offsets, F32, d_out, NULL),
                   CUREDUCE_ERROR_HOST_POINTER);
  assert_int_equal(cureduce_reduce_segments(h, CUREDUCE_MEAN, CUREDUCE_I32, d_in, 1, host_offsets,
                                            CUREDUCE_I64, d_out, NULL),
                   CUREDUCE_ERROR_UNSUPPORTED);
  /* the outer x length x inner call */
  assert_int_equal(cureduce_reduce_axis(NULL, SUM, F32, d_in, 2, 2, 2, F32, d_out, NULL),
                   CUREDUCE_ERROR_INVALID_HANDLE);
  assert_int_equal(cureduce_reduce_axis(h, SUM, F32, NULL, 2, 2, 2, F32, d_out, NULL),
                   CUREDUCE_ERROR_NULL_POINTER);
  assert_int_equal(cureduce_reduce_axis(h, SUM, F32, host, 2, 2, 2, F32, d_out, NULL),
                   CUREDUCE_ERROR_HOST_POINTER);
  assert_int_equal(cureduce_reduce_axis(h, SUM, F32, d_in, 2, 2, 2, F32, host, NULL),
                   CUREDUCE_ERROR_HOST_POINTER);
  assert_int_equal(cureduce_reduce_axis(h, SUM, F32, d_in, 1ull << 32, 1ull << 32, 2, F32, d_out, NULL),
                   CUREDUCE_ERROR_INVALID_VALUE); /* 2^65 elements */
  /* length 0 reads nothing, but 2^64 + 2^32 results (their count wraps to 2^32) fit no buffer */
  assert_int_equal(cureduce_reduce_axis(h, SUM, F32, d_in, (1ull << 32) + 1, 0, 1ull << 32, F32, d_out, NULL),
                   CUREDUCE_ERROR_INVALID_VALUE);
  /* fewer than 2^63 elements but 2^64 bytes: rows 2^62 f32 elements apart, 2^60 x 2 x 2 */
  assert_int_equal(cureduce_reduce_rows(h, SUM, F32, d_in, 2, 4, 1ull << 62, F32, d_out, NULL),
                   CUREDUCE_ERROR_INVALID_VALUE);
  assert_int_equal(cureduce_reduce_axis(h, SUM, F32, d_in, 1ull << 60, 2, 2, F32, d_out, NULL),
                   CUREDUCE_ERROR_INVALID_VALUE);
  assert_int_equal(cureduce_reduce_axis(h, CUREDUCE_ARGMAX, F32, d_in, 2, 0, 2, F32, d_out, NULL),
                   CUREDUCE_EMPTY);
  assert_int_equal(
      cureduce_reduce_axis(h, CUREDUCE_MEAN, CUREDUCE_I32, d_in, 2, 2, 2, CUREDUCE_I64, d_out, NULL),
      CUREDUCE_ERROR_UNSUPPORTED);
  assert_int_equal(cureduce_reduce_axis(h, SUM, F32, NULL, 0, 2, 2, F32, NULL, NULL), CUREDUCE_SUCCESS);
  CUDA_OK(cudaDeviceSynchronize());
  assert_true(read_out() == 42.0f); /* nothing was written by any of them */
}

/* Outputs (or exact states) that overlap the input or the offsets the call reads: the kernels
   would write them while other blocks still read. Refused, with nothing written. */
static void outputs_overlapping_what_is_read_should_be_invalid(void **state) {
  (void)state;
  enum { W = CUREDUCE_EXACT_STATE_WORDS };
  const cureduce_op SUM = CUREDUCE_SUM;
  const cureduce_dtype F32 = CUREDUCE_F32, F64 = CUREDUCE_F64;
  double *buf; /* 3 states' worth of 8-byte words, all 1.0 */
  CUDA_OK(cudaMalloc((void **)&buf, 3 * W * sizeof(double)));
  double ones[3 * W];
  for (int k = 0; k < 3 * W; ++k)
    ones[k] = 1.0;
  CUDA_OK(cudaMemcpy(buf, ones, sizeof ones, cudaMemcpyHostToDevice));
  const int64_t offsets[3] = {0, 2, 4};
  int64_t *d_offsets = (int64_t *)(void *)(buf + 2 * W);
  CUDA_OK(cudaMemcpy(d_offsets, offsets, sizeof offsets, cudaMemcpyHostToDevice));
  int64_t *const states = (int64_t *)(void *)buf;
  assert_int_equal(cureduce_reduce_rows(h, SUM, F64, buf, 4, 2, 2, F64, buf + 2, NULL),
                   CUREDUCE_ERROR_INVALID_VALUE);
  assert_int_equal(cureduce_reduce_cols(h, SUM, F64, buf, 4, 2, 2, F64, buf + 7, NULL),
                   CUREDUCE_ERROR_INVALID_VALUE);
  assert_int_equal(cureduce_reduce_rows(h, SUM, F64, buf, 2, 2, 4, F64, buf + 2, NULL),
                   CUREDUCE_ERROR_INVALID_VALUE); /* on row 0's padding: the extent counts */
  assert_int_equal(cureduce_reduce_axis(h, SUM, F64, buf, 2, 2, 2, F64, buf + 4, NULL),
                   CUREDUCE_ERROR_INVALID_VALUE);
  assert_int_equal(
      cureduce_reduce_segments(h, SUM, F64, buf, 2, d_offsets, F64, (double *)(void *)d_offsets + 1, NULL),
      CUREDUCE_ERROR_INVALID_VALUE);
  assert_int_equal(cureduce_exact_accumulate(h, F64, buf, 4, states + 3, NULL), CUREDUCE_ERROR_INVALID_VALUE);
  assert_int_equal(cureduce_exact_accumulate_rows(h, F64, buf + W, 2, 4, W, states, NULL),
                   CUREDUCE_ERROR_INVALID_VALUE);
  assert_int_equal(cureduce_exact_accumulate_segments(h, F64, buf, 2, d_offsets, d_offsets - W, NULL),
                   CUREDUCE_ERROR_INVALID_VALUE); /* states 0..1 cover the offsets */
  assert_int_equal(cureduce_exact_finish_rows(h, CUREDUCE_SUM_EXACT, states, 2, F64, buf + W, NULL),
                   CUREDUCE_ERROR_INVALID_VALUE);
  assert_int_equal(cureduce_exact_finish(h, CUREDUCE_SUM_EXACT, states, F64, buf + W - 1, NULL),
                   CUREDUCE_ERROR_INVALID_VALUE);
  /* right after the input: allowed */
  assert_int_equal(cureduce_reduce_rows(h, SUM, F32, d_in, 2, 2, 2, F32, d_in + 4, NULL), CUREDUCE_SUCCESS);
  double back[3 * W];
  int64_t offsets_back[3];
  CUDA_OK(cudaMemcpy(back, buf, 2 * W * sizeof(double), cudaMemcpyDeviceToHost));
  CUDA_OK(cudaMemcpy(offsets_back, d_offsets, sizeof offsets_back, cudaMemcpyDeviceToHost));
  float rows_out[2];
  CUDA_OK(cudaMemcpy(rows_out, d_in + 4, sizeof rows_out, cudaMemcpyDeviceToHost));
  const float ones_f[2] = {1, 1};
  CUDA_OK(cudaMemcpy(d_in + 4, ones_f, sizeof ones_f, cudaMemcpyHostToDevice)); /* d_in as setup left it */
  CUDA_OK(cudaFree(buf));
  for (int k = 0; k < 2 * W; ++k)
    assert_true(back[k] == 1.0);
  assert_memory_equal(offsets_back, offsets, sizeof offsets);
  assert_true(rows_out[0] == 2.0f && rows_out[1] == 2.0f);
}

static void empty_min_and_max_should_leave_the_output_untouched(void **state) {
  (void)state;
  assert_int_equal(cureduce_reduce(h, CUREDUCE_MIN, CUREDUCE_F32, d_in, 0, CUREDUCE_F32, d_out, NULL),
                   CUREDUCE_EMPTY);
  assert_int_equal(cureduce_reduce(h, CUREDUCE_MAX, CUREDUCE_F32, NULL, 0, CUREDUCE_F32, d_out, NULL),
                   CUREDUCE_EMPTY);
  CUDA_OK(cudaDeviceSynchronize());
  assert_true(read_out() == 42.0f);
}

static void empty_sum_should_write_positive_zero(void **state) {
  (void)state;
  assert_int_equal(cureduce_reduce(h, CUREDUCE_SUM, CUREDUCE_F32, NULL, 0, CUREDUCE_F32, d_out, NULL), 0);
  CUDA_OK(cudaDeviceSynchronize());
  const float v = read_out();
  assert_true(v == 0.0f && !signbit(v));
  const float sentinel = 42.0f;
  CUDA_OK(cudaMemcpy(d_out, &sentinel, sizeof sentinel, cudaMemcpyHostToDevice));
}

static void reduce_to_host_should_return_the_value(void **state) {
  (void)state;
  float v = 0;
  assert_int_equal(
      cureduce_reduce_to_host(h, CUREDUCE_SUM, CUREDUCE_F32, d_in, 8, CUREDUCE_ACC_DEFAULT, &v, NULL), 0);
  assert_true(v == 8.0f);
  int64_t i = 5;
  assert_int_equal(cureduce_reduce_to_host(h, CUREDUCE_SUM, CUREDUCE_F32, d_in, 8, CUREDUCE_I64, &i, NULL),
                   CUREDUCE_ERROR_UNSUPPORTED);
  assert_int_equal(i, 5);
}

static void create_should_refuse_a_null_out_pointer(void **state) {
  (void)state;
  assert_int_equal(cureduce_create(NULL), CUREDUCE_ERROR_NULL_POINTER);
  assert_int_equal(cureduce_destroy(NULL), CUREDUCE_SUCCESS);
}

int main(void) {
  gpu_require_device();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(each_bad_argument_should_have_its_own_status),
      cmocka_unit_test(axis_calls_should_check_their_arguments),
      cmocka_unit_test(outputs_overlapping_what_is_read_should_be_invalid),
      cmocka_unit_test(empty_min_and_max_should_leave_the_output_untouched),
      cmocka_unit_test(empty_sum_should_write_positive_zero),
      cmocka_unit_test(reduce_to_host_should_return_the_value),
      cmocka_unit_test(create_should_refuse_a_null_out_pointer),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
