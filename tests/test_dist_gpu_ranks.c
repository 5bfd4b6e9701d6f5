/* The multi-GPU library's kernels with 1 to 8 ranks simulated on one GPU, without NCCL: each
 * shard reduced by the single-GPU call and packed into its partial (src/dist/launch.h), the
 * partials laid side by side as the all-gather leaves them, then combined on the GPU. Checks
 * the partials against the host's (the ARGMIN/ARGMAX key is read on the device) and the results
 * against dist_gpu_util.h's expectation, for full arrays and for rows split by columns; and the
 * partials of a rank's pieces of segments.
 *
 * CUREDUCE_TEST_MAX_N caps the sizes; a capped run (the sanitizer runs) also takes one data
 * pattern and 1, 3 and 8 ranks only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "../src/dist/launch.h"
#include "dist_gpu_util.h"
#include "gpu_util.h"

#define MAX_N (1u << 20)
#define MAX_ROWS 64

static cureduce_handle g_h;
static void *g_host, *g_dev, *g_local, *g_out;
static cr_dist_partial *g_partials;
static uint64_t g_max_n = UINT64_MAX;

/* Under a size cap, fewer cases: each launch is slow under a sanitizer. */
static int capped(void) { return g_max_n < MAX_N; }
static int skip_ranks(int k) { return capped() && k != 1 && k != 3 && k != DU_MAX_RANKS; }

static int setup(void **state) {
  (void)state;
  g_max_n = gpu_test_max_n(g_max_n);
  if (cureduce_create(&g_h) != CUREDUCE_SUCCESS)
    return -1;
  g_host = malloc(MAX_N * 8);
  return g_host && cudaMalloc(&g_dev, MAX_N * 8) == cudaSuccess &&
                 cudaMalloc(&g_local, MAX_ROWS * 8) == cudaSuccess &&
                 cudaMalloc(&g_out, MAX_ROWS * 8) == cudaSuccess &&
                 cudaMalloc((void **)&g_partials, DU_MAX_RANKS * MAX_ROWS * sizeof(cr_dist_partial)) ==
                     cudaSuccess
             ? 0
             : -1;
}

static int teardown(void **state) {
  (void)state;
  cudaFree(g_dev);
  cudaFree(g_local);
  cudaFree(g_out);
  cudaFree(g_partials);
  free(g_host);
  return cureduce_destroy(g_h) == CUREDUCE_SUCCESS ? 0 : -1;
}

/* Rank r's partial of op over the shard [cut[r], cut[r + 1]) of the data at g_dev, made on the
   GPU into g_partials[r], and checked against the host's partial from the same local result. */
static void pack_rank(const dg_combo *c, const uint64_t *cut, int r) {
  const size_t size = cureduce_dtype_size(c->in);
  const uint64_t m = cut[r + 1] - cut[r];
  const char *d_shard = (const char *)g_dev + cut[r] * size;
  if (m > 0)
    assert_int_equal(
        cureduce_reduce(g_h, cr_dist_local_op(c->op, c->acc), c->in, d_shard, m, c->acc, g_local, NULL),
        CUREDUCE_SUCCESS);
  assert_int_equal(cr_dist_launch_pack(c->op, c->in, c->acc, d_shard, 1, 0, (int64_t)m, NULL, g_local,
                                       g_partials + r, NULL),
                   CUREDUCE_SUCCESS);
  unsigned char local[8] = {0};
  cr_dist_partial gpu;
  if (m > 0)
    CUDA_OK(cudaMemcpy(local, g_local, cureduce_result_size(c->op, c->acc), cudaMemcpyDeviceToHost));
  CUDA_OK(cudaMemcpy(&gpu, g_partials + r, sizeof gpu, cudaMemcpyDeviceToHost));
  const cr_dist_partial host =
      du_partial(c->op, c->in, c->acc, (const char *)g_host + cut[r] * size, m, local);
  if (memcmp(&gpu, &host, sizeof gpu) != 0)
    fail_msg("%s %s->%s rank %d: GPU partial {%lld, %lld, %llx}, host {%lld, %lld, %llx}",
             cureduce_op_name(c->op), cureduce_dtype_name(c->in), cureduce_dtype_name(c->acc), r,
             (long long)gpu.count, (long long)gpu.index, (unsigned long long)gpu.value, (long long)host.count,
             (long long)host.index, (unsigned long long)host.value);
}

static void full_arrays_should_combine_as_expected(void **state) {
  (void)state;
  static const uint64_t sizes[] = {1, 33, 4099, MAX_N - 1};
  static const tu_pattern patterns[] = {TU_RANDOM, TU_SPECIALS, TU_INTEGERS};
  dg_combo combos[512];
  const int count = dg_combos(combos, 512);
  uint64_t rng = tu_seed() + 40;
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; ++s)
    for (size_t t = 0; t < sizeof patterns / sizeof *patterns; ++t)
      for (int i = 0; i < count; ++i) {
        const dg_combo *c = &combos[i];
        const uint64_t n = sizes[s];
        if (c->op == CUREDUCE_SUM_EXACT || c->op == CUREDUCE_MEAN_EXACT)
          continue; /* states, not partials: test_gpu_exact_sum and test_nccl_* */
        if (n > g_max_n || (capped() && patterns[t] != TU_SPECIALS))
          continue;
        tu_fill(c->in, g_host, n, patterns[t], 3, &rng);
        CUDA_OK(cudaMemcpy(g_dev, g_host, n * cureduce_dtype_size(c->in), cudaMemcpyHostToDevice));
        for (int k = 1; k <= DU_MAX_RANKS; ++k) {
          if (skip_ranks(k))
            continue;
          uint64_t cut[DU_MAX_RANKS + 1];
          du_split(n, k, &rng, cut);
          for (int r = 0; r < k; ++r)
            pack_rank(c, cut, r);
          CUDA_OK(cudaMemset(g_out, 0xab, 8));
          assert_int_equal(cr_dist_launch_combine(c->op, c->acc, g_partials, k, 1, g_out, NULL),
                           CUREDUCE_SUCCESS);
          unsigned char got[8] = {0}, want[8] = {0};
          CUDA_OK(cudaMemcpy(got, g_out, 8, cudaMemcpyDeviceToHost));
          assert_int_equal(dg_expected(g_h, c->op, c->in, c->acc, g_host, g_dev, n, cut, k, want),
                           CUREDUCE_SUCCESS);
          if (!dg_same_result(c->op, c->acc, got, want))
            fail_msg("%s %s->%s, n %llu over %d ranks: the combined result differs from the expected",
                     cureduce_op_name(c->op), cureduce_dtype_name(c->in), cureduce_dtype_name(c->acc),
                     (unsigned long long)n, k);
        }
      }
}

/* A rows x cols matrix whose columns are split over k ranks: rank r's block is the view of
   columns [cut[r], cut[r + 1]) with ld = cols. */
static void rows_split_by_columns_should_combine_as_expected(void **state) {
  (void)state;
  static const uint64_t shapes[][2] = {{1, 1}, {3, 40}, {MAX_ROWS, 1000}, {17, 4099}};
  dg_combo combos[512];
  const int count = dg_combos(combos, 512);
  uint64_t rng = tu_seed() + 41;
  for (size_t s = 0; s < sizeof shapes / sizeof *shapes; ++s)
    for (int i = 0; i < count; ++i) {
      const dg_combo *c = &combos[i];
      const uint64_t rows = shapes[s][0], cols = shapes[s][1];
      const size_t size = cureduce_dtype_size(c->in), rsize = cureduce_result_size(c->op, c->acc);
      if (c->op == CUREDUCE_SUM_EXACT || c->op == CUREDUCE_MEAN_EXACT || rows * cols > g_max_n)
        continue;
      tu_fill(c->in, g_host, rows * cols, TU_SPECIALS, 3, &rng);
      CUDA_OK(cudaMemcpy(g_dev, g_host, rows * cols * size, cudaMemcpyHostToDevice));
      for (int k = 1; k <= DU_MAX_RANKS; ++k) {
        if (skip_ranks(k))
          continue;
        uint64_t cut[DU_MAX_RANKS + 1];
        du_split(cols, k, &rng, cut);
        unsigned char local[DU_MAX_RANKS][MAX_ROWS * 8];
        for (int r = 0; r < k; ++r) {
          const uint64_t m = cut[r + 1] - cut[r];
          const char *block = (const char *)g_dev + cut[r] * size;
          if (m > 0) {
            assert_int_equal(cureduce_reduce_rows(g_h, cr_dist_local_op(c->op, c->acc), c->in, block, rows, m,
                                                  cols, c->acc, g_local, NULL),
                             CUREDUCE_SUCCESS);
            CUDA_OK(cudaMemcpy(local[r], g_local, rows * rsize, cudaMemcpyDeviceToHost));
          }
          assert_int_equal(cr_dist_launch_pack(c->op, c->in, c->acc, block, rows, cols, (int64_t)m, NULL,
                                               g_local, g_partials + (uint64_t)r * rows, NULL),
                           CUREDUCE_SUCCESS);
        }
        assert_int_equal(cr_dist_launch_combine(c->op, c->acc, g_partials, k, rows, g_out, NULL),
                         CUREDUCE_SUCCESS);
        unsigned char got[MAX_ROWS * 8], want[MAX_ROWS * 8];
        CUDA_OK(cudaMemcpy(got, g_out, rows * rsize, cudaMemcpyDeviceToHost));
        if (dg_split_invariant(c->op, c->acc) || k == 1) {
          assert_int_equal(
              cureduce_reduce_rows(g_h, c->op, c->in, g_dev, rows, cols, cols, c->acc, g_out, NULL),
              CUREDUCE_SUCCESS);
          CUDA_OK(cudaMemcpy(want, g_out, rows * rsize, cudaMemcpyDeviceToHost));
        } else {
          for (uint64_t row = 0; row < rows; ++row) {
            cr_dist_partial p[DU_MAX_RANKS];
            for (int r = 0; r < k; ++r)
              p[r] = du_partial(c->op, c->in, c->acc, (const char *)g_host + (row * cols + cut[r]) * size,
                                cut[r + 1] - cut[r], local[r] + row * rsize);
            cr_dist_combine(c->op, c->acc, p, k, 1, want + row * rsize);
          }
        }
        for (uint64_t row = 0; row < rows; ++row)
          if (!dg_same_result(c->op, c->acc, got + row * rsize, want + row * rsize))
            fail_msg("%s %s->%s, %llu x %llu over %d ranks: row %llu differs from the expected",
                     cureduce_op_name(c->op), cureduce_dtype_name(c->in), cureduce_dtype_name(c->acc),
                     (unsigned long long)rows, (unsigned long long)cols, k, (unsigned long long)row);
      }
    }
}

/* A rank's pieces of segments (its own offsets, empty pieces among them): the partials packed
   from cureduce_reduce_segments' results, counts and arg keys read through the offsets, are the
   host's. */
static void segment_pieces_should_pack_as_on_the_host(void **state) {
  (void)state;
  enum { SEGS = MAX_ROWS };
  const uint64_t n = 5000 < g_max_n ? 5000 : g_max_n;
  dg_combo combos[512];
  const int count = dg_combos(combos, 512);
  uint64_t rng = tu_seed() + 42, cut[SEGS + 1];
  int64_t offsets[SEGS + 1], *d_offsets;
  CUDA_OK(cudaMalloc((void **)&d_offsets, sizeof offsets));
  du_split(n, SEGS, &rng, cut);
  for (int s = 0; s <= SEGS; ++s)
    offsets[s] = (int64_t)cut[s];
  CUDA_OK(cudaMemcpy(d_offsets, offsets, sizeof offsets, cudaMemcpyHostToDevice));
  for (int i = 0; i < count; ++i) {
    const dg_combo *c = &combos[i];
    const size_t size = cureduce_dtype_size(c->in), rsize = cureduce_result_size(c->op, c->acc);
    if (c->op == CUREDUCE_SUM_EXACT || c->op == CUREDUCE_MEAN_EXACT)
      continue;
    tu_fill(c->in, g_host, n, TU_SPECIALS, 3, &rng);
    CUDA_OK(cudaMemcpy(g_dev, g_host, n * size, cudaMemcpyHostToDevice));
    assert_int_equal(cureduce_reduce_segments(g_h, cr_dist_local_op(c->op, c->acc), c->in, g_dev, SEGS,
                                              d_offsets, c->acc, g_local, NULL),
                     CUREDUCE_SUCCESS);
    assert_int_equal(
        cr_dist_launch_pack(c->op, c->in, c->acc, g_dev, SEGS, 0, 0, d_offsets, g_local, g_partials, NULL),
        CUREDUCE_SUCCESS);
    unsigned char local[SEGS * 8];
    cr_dist_partial gpu[SEGS];
    CUDA_OK(cudaMemcpy(local, g_local, SEGS * rsize, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(gpu, g_partials, sizeof gpu, cudaMemcpyDeviceToHost));
    for (int s = 0; s < SEGS; ++s) {
      const cr_dist_partial host = du_partial(c->op, c->in, c->acc, (const char *)g_host + offsets[s] * size,
                                              (uint64_t)(offsets[s + 1] - offsets[s]), local + s * rsize);
      if (memcmp(&gpu[s], &host, sizeof host) != 0)
        fail_msg("%s %s->%s segment %d: GPU partial {%lld, %lld, %llx}, host {%lld, %lld, %llx}",
                 cureduce_op_name(c->op), cureduce_dtype_name(c->in), cureduce_dtype_name(c->acc), s,
                 (long long)gpu[s].count, (long long)gpu[s].index, (unsigned long long)gpu[s].value,
                 (long long)host.count, (long long)host.index, (unsigned long long)host.value);
    }
  }
  CUDA_OK(cudaFree(d_offsets));
}

int main(void) {
  gpu_require_device();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(full_arrays_should_combine_as_expected),
      cmocka_unit_test(rows_split_by_columns_should_combine_as_expected),
      cmocka_unit_test(segment_pieces_should_pack_as_on_the_host),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
