/* GPU float results are reproducible: the same input gives the same bits on every run, on
 * separate handles and streams, and inside a captured CUDA graph (which also shows the call
 * allocates nothing and never synchronizes); column sums too, whose row slices are folded
 * by whichever block of a column tile arrives last. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" { // cmocka 1.1 has no C++ guards
#include <cmocka.h>
}

#include "gpu_util.h"

#define N 12345679u /* multi-block, with a partial tile and a tail */

static void repeated_runs_should_give_identical_bits(void **state) {
  (void)state;
  const cureduce_dtype dts[] = {CUREDUCE_F32, CUREDUCE_F16, CUREDUCE_BF16, CUREDUCE_F8_E4M3, CUREDUCE_F64};
  uint64_t rng = tu_seed();
  float *host = (float *)malloc(N * 8);
  void *d_in;
  double *d_out;
  CUDA_OK(cudaMalloc(&d_in, N * 8));
  CUDA_OK(cudaMalloc((void **)&d_out, 64 * sizeof(double)));
  cureduce_handle h1, h2;
  assert_int_equal(cureduce_create(&h1), 0);
  assert_int_equal(cureduce_create(&h2), 0);
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (size_t k = 0; k < sizeof dts / sizeof dts[0]; ++k) {
    tu_fill(dts[k], host, N, TU_RANDOM, 0, &rng);
    CUDA_OK(cudaMemcpy(d_in, host, N * cureduce_dtype_size(dts[k]), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemset(d_out, 0xff, 32 * sizeof(double))); /* NaN poison: an unwritten output shows */
    for (int r = 0; r < 32; ++r)                           /* alternate handles and streams */
      assert_int_equal(cureduce_reduce(r % 2 ? h2 : h1, CUREDUCE_SUM, dts[k], d_in, N, CUREDUCE_F64,
                                       d_out + r, r % 2 ? (void *)s : NULL),
                       0);
    CUDA_OK(cudaDeviceSynchronize());
    double got[32];
    CUDA_OK(cudaMemcpy(got, d_out, sizeof got, cudaMemcpyDeviceToHost));
    if (got[0] != got[0])
      fail_msg("%s: run 0 did not write its output", cureduce_dtype_name(dts[k]));
    for (int r = 1; r < 32; ++r)
      if (memcmp(&got[r], &got[0], sizeof got[0]) != 0)
        fail_msg("%s: run %d gave %a, run 0 gave %a", cureduce_dtype_name(dts[k]), r, got[r], got[0]);
  }
  CUDA_OK(cudaStreamDestroy(s));
  assert_int_equal(cureduce_destroy(h1), 0);
  assert_int_equal(cureduce_destroy(h2), 0);
  CUDA_OK(cudaFree(d_in));
  CUDA_OK(cudaFree(d_out));
  free(host);
}

static void a_captured_graph_should_replay_the_same_result(void **state) {
  (void)state;
  uint64_t rng = tu_seed() + 1;
  float *host = (float *)malloc(N * sizeof *host);
  tu_fill(CUREDUCE_F32, host, N, TU_RANDOM, 0, &rng);
  float *d_in, *d_out;
  CUDA_OK(cudaMalloc((void **)&d_in, N * sizeof *host));
  CUDA_OK(cudaMalloc((void **)&d_out, 2 * sizeof(float)));
  CUDA_OK(cudaMemcpy(d_in, host, N * sizeof *host, cudaMemcpyHostToDevice));
  cureduce_handle h;
  assert_int_equal(cureduce_create(&h), 0);
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  assert_int_equal(cureduce_reduce(h, CUREDUCE_SUM, CUREDUCE_F32, d_in, N, CUREDUCE_F32, d_out, s), 0);

  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CUDA_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  const cureduce_status st =
      cureduce_reduce(h, CUREDUCE_SUM, CUREDUCE_F32, d_in, N, CUREDUCE_F32, d_out + 1, s);
  CUDA_OK(cudaStreamEndCapture(s, &graph));
  assert_int_equal(st, 0);
  CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
  for (int r = 0; r < 5; ++r) {
    const float poison = -1.0f;
    CUDA_OK(cudaMemcpyAsync(d_out + 1, &poison, sizeof poison, cudaMemcpyHostToDevice, s));
    CUDA_OK(cudaGraphLaunch(exec, s));
    CUDA_OK(cudaStreamSynchronize(s));
    float got[2];
    CUDA_OK(cudaMemcpy(got, d_out, sizeof got, cudaMemcpyDeviceToHost));
    if (memcmp(&got[0], &got[1], sizeof(float)) != 0)
      fail_msg("graph replay %d gave %a, direct call %a", r, (double)got[1], (double)got[0]);
  }
  CUDA_OK(cudaGraphExecDestroy(exec));
  CUDA_OK(cudaGraphDestroy(graph));
  CUDA_OK(cudaStreamDestroy(s));
  assert_int_equal(cureduce_destroy(h), 0);
  CUDA_OK(cudaFree(d_in));
  CUDA_OK(cudaFree(d_out));
  free(host);
}

/* Occupies `blocks` blocks of the GPU for about `cycles` clock cycles. */
__global__ void hog(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

static void results_should_not_depend_on_how_many_sms_are_free(void **state) {
  (void)state;
  /* The partition depends on n and dtype only, so a GPU with fewer free SMs (here: most SMs
     busy with another stream's kernel, so blocks run in another order on fewer SMs) gives
     the same bits. */
  uint64_t rng = tu_seed() + 2;
  float *host = (float *)malloc(N * sizeof *host);
  tu_fill(CUREDUCE_F32, host, N, TU_RANDOM, 0, &rng);
  float *d_in, *d_out;
  CUDA_OK(cudaMalloc((void **)&d_in, N * sizeof *host));
  CUDA_OK(cudaMalloc((void **)&d_out, 2 * sizeof(float)));
  CUDA_OK(cudaMemcpy(d_in, host, N * sizeof *host, cudaMemcpyHostToDevice));
  cureduce_handle h;
  assert_int_equal(cureduce_create(&h), 0);
  assert_int_equal(cureduce_reduce(h, CUREDUCE_SUM, CUREDUCE_F32, d_in, N, CUREDUCE_F32, d_out, NULL), 0);
  CUDA_OK(cudaDeviceSynchronize());
  int sms = 0, dev = 0;
  CUDA_OK(cudaGetDevice(&dev));
  CUDA_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  cudaStream_t busy, work;
  CUDA_OK(cudaStreamCreateWithFlags(&busy, cudaStreamNonBlocking));
  CUDA_OK(cudaStreamCreateWithFlags(&work, cudaStreamNonBlocking));
  hog<<<(unsigned)(sms - 4), 1024, 0, busy>>>(20000000); /* ~10 ms at 2 GHz, all but 4 SMs */
  CUDA_OK(cudaGetLastError());
  assert_int_equal(cureduce_reduce(h, CUREDUCE_SUM, CUREDUCE_F32, d_in, N, CUREDUCE_F32, d_out + 1, work), 0);
  CUDA_OK(cudaDeviceSynchronize());
  float got[2];
  CUDA_OK(cudaMemcpy(got, d_out, sizeof got, cudaMemcpyDeviceToHost));
  if (memcmp(&got[0], &got[1], sizeof(float)) != 0)
    fail_msg("with most SMs busy: %a, with all free: %a", (double)got[1], (double)got[0]);
  CUDA_OK(cudaStreamDestroy(busy));
  CUDA_OK(cudaStreamDestroy(work));
  assert_int_equal(cureduce_destroy(h), 0);
  CUDA_OK(cudaFree(d_in));
  CUDA_OK(cudaFree(d_out));
  free(host);
}

/* Column sums of shapes cut into many row slices (folded by the last block of each column
   tile to arrive, which differs from run to run): every run, and a run with most SMs busy,
   gives the same bits. */
static void column_sums_should_give_identical_bits(void **state) {
  (void)state;
  const struct {
    cureduce_dtype dt;
    uint64_t rows, cols;
  } cases[] = {{CUREDUCE_F32, 135000, 1},   {CUREDUCE_BF16, 46000, 3},  {CUREDUCE_F32, 65536, 128},
               {CUREDUCE_BF16, 65536, 128}, {CUREDUCE_F32, 100003, 40}, {CUREDUCE_BF16, 4096, 4096},
               {CUREDUCE_F32, 300000, 3}};
  /* The sanitizer runs cap the elements of a case: the first two are still cut into several slices. */
  const uint64_t max_n = gpu_test_max_n(UINT64_MAX);
  enum { RUNS = 8 };
  uint64_t rng = tu_seed() + 3;
  const size_t max_elems = 16777216;
  float *host = (float *)malloc(max_elems * sizeof(float));
  void *d_in;
  float *d_out;
  CUDA_OK(cudaMalloc(&d_in, max_elems * sizeof(float)));
  CUDA_OK(cudaMalloc((void **)&d_out, (RUNS + 1) * 4096 * sizeof(float)));
  cureduce_handle h;
  assert_int_equal(cureduce_create(&h), 0);
  int sms = 0, dev = 0;
  CUDA_OK(cudaGetDevice(&dev));
  CUDA_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  cudaStream_t busy, work;
  CUDA_OK(cudaStreamCreateWithFlags(&busy, cudaStreamNonBlocking));
  CUDA_OK(cudaStreamCreateWithFlags(&work, cudaStreamNonBlocking));
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    const uint64_t rows = cases[k].rows, cols = cases[k].cols, n = rows * cols;
    if (n > max_n && k >= 2)
      continue;
    tu_fill(cases[k].dt, host, n, TU_RANDOM, 0, &rng);
    CUDA_OK(cudaMemcpy(d_in, host, n * cureduce_dtype_size(cases[k].dt), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemset(d_out, 0xff, (RUNS + 1) * 4096 * sizeof(float))); /* NaN poison */
    for (int r = 0; r < RUNS; ++r)
      assert_int_equal(cureduce_reduce_cols(h, CUREDUCE_SUM, cases[k].dt, d_in, rows, cols, cols,
                                            CUREDUCE_F32, d_out + r * 4096, work),
                       0);
    hog<<<(unsigned)(sms - 4), 1024, 0, busy>>>(20000000); /* all but 4 SMs, ~10 ms */
    CUDA_OK(cudaGetLastError());
    assert_int_equal(cureduce_reduce_cols(h, CUREDUCE_SUM, cases[k].dt, d_in, rows, cols, cols, CUREDUCE_F32,
                                          d_out + RUNS * 4096, work),
                     0);
    CUDA_OK(cudaDeviceSynchronize());
    float *got = (float *)malloc((RUNS + 1) * 4096 * sizeof(float));
    CUDA_OK(cudaMemcpy(got, d_out, (RUNS + 1) * 4096 * sizeof(float), cudaMemcpyDeviceToHost));
    for (uint64_t c = 0; c < cols; ++c) /* sums of finite data: NaN is the poison, unwritten */
      if (got[c] != got[c])
        fail_msg("%s %llux%llu columns: column %llu was not written", cureduce_dtype_name(cases[k].dt),
                 (unsigned long long)rows, (unsigned long long)cols, (unsigned long long)c);
    for (int r = 1; r <= RUNS; ++r)
      if (memcmp(got + r * 4096, got, cols * sizeof(float)) != 0)
        fail_msg("%s %llux%llu columns: run %d%s differs from run 0", cureduce_dtype_name(cases[k].dt),
                 (unsigned long long)rows, (unsigned long long)cols, r, r == RUNS ? " (most SMs busy)" : "");
    free(got);
  }
  CUDA_OK(cudaStreamDestroy(busy));
  CUDA_OK(cudaStreamDestroy(work));
  assert_int_equal(cureduce_destroy(h), 0);
  CUDA_OK(cudaFree(d_in));
  CUDA_OK(cudaFree(d_out));
  free(host);
}

int main(void) {
  gpu_require_device();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(repeated_runs_should_give_identical_bits),
      cmocka_unit_test(a_captured_graph_should_replay_the_same_result),
      cmocka_unit_test(results_should_not_depend_on_how_many_sms_are_free),
      cmocka_unit_test(column_sums_should_give_identical_bits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
