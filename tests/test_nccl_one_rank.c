/* The multi-GPU API (cureduce_nccl.h) on a communicator of one rank (ncclCommInitAll over the
 * current device): every op, dtype and accumulator must give cureduce_reduce's bits (the NaN
 * bits aside), rows cureduce_reduce_rows', and bad arguments a status. The multi-rank runs are
 * test_nccl_ranks K. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "cureduce_nccl.h"
#include "dist_gpu_util.h"
#include "gpu_util.h"

#include <nccl.h>

#define MAX_N ((1u << 20) + 7)
#define ROWS 37

static ncclComm_t g_comm;
static cureduce_handle g_h;
static cureduce_dist g_d;
static void *g_host, *g_dev, *g_out, *g_ref;

static int setup(void **state) {
  (void)state;
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || ncclCommInitAll(&g_comm, 1, &dev) != ncclSuccess ||
      cureduce_create(&g_h) != CUREDUCE_SUCCESS ||
      cureduce_dist_create(&g_d, g_comm, g_h) != CUREDUCE_SUCCESS)
    return -1;
  g_host = malloc(MAX_N * 8);
  return g_host && cudaMalloc(&g_dev, MAX_N * 8) == cudaSuccess &&
                 cudaMalloc(&g_out, ROWS * 8) == cudaSuccess && cudaMalloc(&g_ref, ROWS * 8) == cudaSuccess
             ? 0
             : -1;
}

static int teardown(void **state) {
  (void)state;
  cudaFree(g_dev);
  cudaFree(g_out);
  cudaFree(g_ref);
  free(g_host);
  const int ok = cureduce_dist_destroy(g_d) == CUREDUCE_SUCCESS &&
                 cureduce_destroy(g_h) == CUREDUCE_SUCCESS && ncclCommDestroy(g_comm) == ncclSuccess;
  return ok ? 0 : -1;
}

static void every_op_should_give_cureduce_reduce_bits(void **state) {
  (void)state;
  static const uint64_t sizes[] = {1, 31, 33, 4099, MAX_N};
  static const tu_pattern patterns[] = {TU_RANDOM, TU_SPECIALS, TU_NEG_ZEROS};
  dg_combo combos[512];
  const int count = dg_combos(combos, 512);
  uint64_t rng = tu_seed() + 50;
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; ++s)
    for (size_t t = 0; t < sizeof patterns / sizeof *patterns; ++t)
      for (int i = 0; i < count; ++i) {
        const dg_combo *c = &combos[i];
        const uint64_t n = sizes[s];
        tu_fill(c->in, g_host, n, patterns[t], 3, &rng);
        CUDA_OK(cudaMemcpy(g_dev, g_host, n * cureduce_dtype_size(c->in), cudaMemcpyHostToDevice));
        assert_int_equal(cureduce_dist_reduce(g_d, c->op, c->in, g_dev, n, n, c->acc, g_out, NULL),
                         CUREDUCE_SUCCESS);
        assert_int_equal(cureduce_reduce(g_h, c->op, c->in, g_dev, n, c->acc, g_ref, NULL), CUREDUCE_SUCCESS);
        unsigned char got[8] = {0}, want[8] = {0};
        const size_t rsize = cureduce_result_size(c->op, c->acc);
        CUDA_OK(cudaMemcpy(got, g_out, rsize, cudaMemcpyDeviceToHost));
        CUDA_OK(cudaMemcpy(want, g_ref, rsize, cudaMemcpyDeviceToHost));
        if (!dg_same_result(c->op, c->acc, got, want))
          fail_msg("%s %s->%s, n %llu: differs from cureduce_reduce", cureduce_op_name(c->op),
                   cureduce_dtype_name(c->in), cureduce_dtype_name(c->acc), (unsigned long long)n);
      }
}

static void rows_should_give_cureduce_reduce_rows_bits(void **state) {
  (void)state;
  const uint64_t cols = 1000, ld = 1003;
  dg_combo combos[512];
  const int count = dg_combos(combos, 512);
  uint64_t rng = tu_seed() + 51;
  assert_int_equal(cureduce_dist_reserve_rows(g_d, ROWS), CUREDUCE_SUCCESS);
  for (int i = 0; i < count; ++i) {
    const dg_combo *c = &combos[i];
    const size_t rsize = cureduce_result_size(c->op, c->acc);
    tu_fill(c->in, g_host, ROWS * ld, TU_SPECIALS, 3, &rng);
    CUDA_OK(cudaMemcpy(g_dev, g_host, ROWS * ld * cureduce_dtype_size(c->in), cudaMemcpyHostToDevice));
    assert_int_equal(
        cureduce_dist_reduce_rows(g_d, c->op, c->in, g_dev, ROWS, cols, ld, cols, c->acc, g_out, NULL),
        CUREDUCE_SUCCESS);
    assert_int_equal(cureduce_reduce_rows(g_h, c->op, c->in, g_dev, ROWS, cols, ld, c->acc, g_ref, NULL),
                     CUREDUCE_SUCCESS);
    unsigned char got[ROWS * 8], want[ROWS * 8];
    CUDA_OK(cudaMemcpy(got, g_out, ROWS * rsize, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(want, g_ref, ROWS * rsize, cudaMemcpyDeviceToHost));
    for (int r = 0; r < ROWS; ++r)
      if (!dg_same_result(c->op, c->acc, got + (size_t)r * rsize, want + (size_t)r * rsize))
        fail_msg("%s %s->%s: row %d differs from cureduce_reduce_rows", cureduce_op_name(c->op),
                 cureduce_dtype_name(c->in), cureduce_dtype_name(c->acc), r);
  }
  assert_int_equal(cureduce_dist_reduce_rows(g_d, CUREDUCE_SUM, CUREDUCE_F32, g_dev, ROWS + 1, cols, ld, cols,
                                             CUREDUCE_ACC_DEFAULT, g_out, NULL),
                   CUREDUCE_ERROR_INVALID_VALUE); /* beyond the reserved rows */
}

/* n_global == 0: the library's empty rule on every rank, without communication. */
static void empty_arrays_should_follow_the_library(void **state) {
  (void)state;
  float sum = 1.0f, min = 7.0f;
  CUDA_OK(cudaMemset(g_out, 0xff, 8));
  assert_int_equal(
      cureduce_dist_reduce(g_d, CUREDUCE_SUM, CUREDUCE_F32, NULL, 0, 0, CUREDUCE_ACC_DEFAULT, g_out, NULL),
      CUREDUCE_SUCCESS);
  CUDA_OK(cudaMemcpy(&sum, g_out, 4, cudaMemcpyDeviceToHost));
  assert_true(sum == 0.0f && !signbit(sum));
  CUDA_OK(cudaMemcpy(g_out, &min, 4, cudaMemcpyHostToDevice));
  const cureduce_op empty_ops[] = {CUREDUCE_MIN, CUREDUCE_ARGMAX, CUREDUCE_MEAN, CUREDUCE_MEAN_EXACT};
  for (int o = 0; o < 4; ++o)
    assert_int_equal(
        cureduce_dist_reduce(g_d, empty_ops[o], CUREDUCE_F32, NULL, 0, 0, CUREDUCE_ACC_DEFAULT, g_out, NULL),
        CUREDUCE_EMPTY);
  CUDA_OK(cudaMemcpy(&min, g_out, 4, cudaMemcpyDeviceToHost));
  assert_true(min == 7.0f);
  assert_int_equal(
      cureduce_dist_reduce(g_d, CUREDUCE_SUM_EXACT, CUREDUCE_F32, NULL, 0, 0, CUREDUCE_F64, g_out, NULL),
      CUREDUCE_SUCCESS);
  double exact = 1.0;
  CUDA_OK(cudaMemcpy(&exact, g_out, 8, cudaMemcpyDeviceToHost));
  assert_true(exact == 0.0 && !signbit(exact));
  assert_int_equal(cureduce_dist_reserve_rows(g_d, 4), CUREDUCE_SUCCESS);
  assert_int_equal(cureduce_dist_reduce_rows(g_d, CUREDUCE_MAX, CUREDUCE_F32, NULL, 4, 0, 0, 0,
                                             CUREDUCE_ACC_DEFAULT, g_out, NULL),
                   CUREDUCE_EMPTY);
}

static void count_should_sum_over_the_ranks(void **state) {
  (void)state;
  uint64_t total = 0;
  assert_int_equal(cureduce_dist_count(g_d, 123456789012ull, &total, NULL), CUREDUCE_SUCCESS);
  assert_int_equal(total, 123456789012ull);
  assert_int_equal(cureduce_dist_count(g_d, UINT64_MAX, &total, NULL), CUREDUCE_SUCCESS);
  assert_true(total == UINT64_MAX);
  int rank = -1, world = -1;
  assert_int_equal(cureduce_dist_rank(g_d, &rank, &world), CUREDUCE_SUCCESS);
  assert_int_equal(rank, 0);
  assert_int_equal(world, 1);
}

static void bad_arguments_should_return_a_status(void **state) {
  (void)state;
  float host_out = 0;
  cureduce_dist d = (cureduce_dist)1;
  assert_int_equal(cureduce_dist_create(&d, NULL, g_h), CUREDUCE_ERROR_NULL_POINTER);
  assert_null(d);
  assert_int_equal(cureduce_dist_create(&d, g_comm, NULL), CUREDUCE_ERROR_INVALID_HANDLE);
  assert_int_equal(cureduce_dist_create(NULL, g_comm, g_h), CUREDUCE_ERROR_NULL_POINTER);
  assert_int_equal(cureduce_dist_destroy(NULL), CUREDUCE_SUCCESS);
  assert_int_equal(
      cureduce_dist_reduce(NULL, CUREDUCE_SUM, CUREDUCE_F32, g_dev, 1, 1, CUREDUCE_ACC_DEFAULT, g_out, NULL),
      CUREDUCE_ERROR_INVALID_HANDLE);
  assert_int_equal(cureduce_dist_reduce(g_d, (cureduce_op)99, CUREDUCE_F32, g_dev, 1, 1, CUREDUCE_ACC_DEFAULT,
                                        g_out, NULL),
                   CUREDUCE_ERROR_INVALID_OP);
  assert_int_equal(cureduce_dist_reduce(g_d, CUREDUCE_SUM_EXACT, CUREDUCE_I32, g_dev, 1, 1,
                                        CUREDUCE_ACC_DEFAULT, g_out, NULL),
                   CUREDUCE_ERROR_UNSUPPORTED);
  assert_int_equal(
      cureduce_dist_reduce(g_d, CUREDUCE_SUM, CUREDUCE_F32, NULL, 1, 1, CUREDUCE_ACC_DEFAULT, g_out, NULL),
      CUREDUCE_ERROR_NULL_POINTER);
  assert_int_equal(cureduce_dist_reduce(g_d, CUREDUCE_SUM, CUREDUCE_F32, g_dev, 1, 1, CUREDUCE_ACC_DEFAULT,
                                        &host_out, NULL),
                   CUREDUCE_ERROR_HOST_POINTER);
  assert_int_equal(
      cureduce_dist_reduce(g_d, CUREDUCE_SUM, CUREDUCE_F32, g_host, 1, 1, CUREDUCE_ACC_DEFAULT, g_out, NULL),
      CUREDUCE_ERROR_HOST_POINTER);
  assert_int_equal(
      cureduce_dist_reduce(g_d, CUREDUCE_SUM, CUREDUCE_F32, g_dev, 2, 1, CUREDUCE_ACC_DEFAULT, g_out, NULL),
      CUREDUCE_ERROR_INVALID_VALUE); /* n_local > n_global */
  assert_int_equal(cureduce_dist_reduce(g_d, CUREDUCE_SUM, CUREDUCE_F32, (char *)g_dev + 1, 1, 1,
                                        CUREDUCE_ACC_DEFAULT, g_out, NULL),
                   CUREDUCE_ERROR_INVALID_VALUE); /* misaligned */
  assert_int_equal(cureduce_dist_reduce_rows(g_d, CUREDUCE_SUM, CUREDUCE_F32, g_dev, 2, 5, 4, 5,
                                             CUREDUCE_ACC_DEFAULT, g_out, NULL),
                   CUREDUCE_ERROR_INVALID_VALUE); /* ld < cols_local */
  assert_int_equal(cureduce_dist_reduce_rows(g_d, CUREDUCE_SUM, CUREDUCE_F32, g_dev, 1, 4, 4, 4,
                                             CUREDUCE_ACC_DEFAULT, (float *)g_dev + 2, NULL),
                   CUREDUCE_ERROR_INVALID_VALUE); /* d_out inside the row */
  assert_int_equal(cureduce_dist_count(g_d, 1, NULL, NULL), CUREDUCE_ERROR_NULL_POINTER);
  /* segments (the device offsets at g_ref are never read: every call is refused first) */
  const int64_t *offs = (const int64_t *)g_ref, host_offs[2] = {0, 1};
  assert_int_equal(cureduce_dist_reduce_segments(NULL, CUREDUCE_SUM, CUREDUCE_F32, g_dev, 1, offs,
                                                 CUREDUCE_ACC_DEFAULT, g_out, NULL),
                   CUREDUCE_ERROR_INVALID_HANDLE);
  assert_int_equal(cureduce_dist_reduce_segments(g_d, CUREDUCE_SUM_EXACT, CUREDUCE_I8, g_dev, 1, offs,
                                                 CUREDUCE_ACC_DEFAULT, g_out, NULL),
                   CUREDUCE_ERROR_UNSUPPORTED);
  assert_int_equal(cureduce_dist_reduce_segments(g_d, CUREDUCE_SUM, CUREDUCE_F32, NULL, 1, offs,
                                                 CUREDUCE_ACC_DEFAULT, g_out, NULL),
                   CUREDUCE_ERROR_NULL_POINTER);
  assert_int_equal(cureduce_dist_reduce_segments(g_d, CUREDUCE_SUM, CUREDUCE_F32, g_dev, 1, NULL,
                                                 CUREDUCE_ACC_DEFAULT, g_out, NULL),
                   CUREDUCE_ERROR_NULL_POINTER);
  assert_int_equal(cureduce_dist_reduce_segments(g_d, CUREDUCE_SUM, CUREDUCE_F32, g_dev, 1, offs,
                                                 CUREDUCE_ACC_DEFAULT, NULL, NULL),
                   CUREDUCE_ERROR_NULL_POINTER);
  assert_int_equal(cureduce_dist_reduce_segments(g_d, CUREDUCE_SUM, CUREDUCE_F32, g_dev, 1, host_offs,
                                                 CUREDUCE_ACC_DEFAULT, g_out, NULL),
                   CUREDUCE_ERROR_HOST_POINTER);
  assert_int_equal(cureduce_dist_reduce_segments(g_d, CUREDUCE_SUM, CUREDUCE_F32, g_dev, 1,
                                                 (const int64_t *)((const char *)offs + 4),
                                                 CUREDUCE_ACC_DEFAULT, g_out, NULL),
                   CUREDUCE_ERROR_INVALID_VALUE); /* misaligned offsets */
  assert_int_equal(cureduce_dist_reduce_segments(g_d, CUREDUCE_SUM, CUREDUCE_F32, g_dev, 1, offs,
                                                 CUREDUCE_ACC_DEFAULT, (int64_t *)g_ref + 1, NULL),
                   CUREDUCE_ERROR_INVALID_VALUE); /* d_out on the offsets */
  assert_int_equal(cureduce_dist_reduce_segments(g_d, CUREDUCE_SUM, CUREDUCE_F32, g_dev, 1, offs,
                                                 CUREDUCE_ACC_DEFAULT, &host_out, NULL),
                   CUREDUCE_ERROR_HOST_POINTER);
  assert_int_equal(cureduce_dist_reduce_segments(g_d, CUREDUCE_SUM, CUREDUCE_F32, g_dev, 1u << 20, offs,
                                                 CUREDUCE_ACC_DEFAULT, g_out, NULL),
                   CUREDUCE_ERROR_INVALID_VALUE); /* more segments than reserved */
  assert_int_equal(cureduce_dist_reduce_segments(g_d, CUREDUCE_SUM, CUREDUCE_F32, NULL, 0, NULL,
                                                 CUREDUCE_ACC_DEFAULT, NULL, NULL),
                   CUREDUCE_SUCCESS); /* no segments: nothing to do */
}

int main(void) {
  gpu_require_device();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_op_should_give_cureduce_reduce_bits),
      cmocka_unit_test(rows_should_give_cureduce_reduce_rows_bits),
      cmocka_unit_test(empty_arrays_should_follow_the_library),
      cmocka_unit_test(count_should_sum_over_the_ranks),
      cmocka_unit_test(bad_arguments_should_return_a_status),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
