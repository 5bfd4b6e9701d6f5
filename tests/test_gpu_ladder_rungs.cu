// Every rung of the teaching ladder, for each dtype and op it offers, gives exactly the CPU's
// answer at the edge sizes and at misaligned starts. The data are small integers, so every
// f32 sum is exact in any order and the rungs can be compared bit for bit, the atomic ones too.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" { // cmocka 1.1's header has no C++ guards
#include <cmocka.h>
}

#include "../ladder/ladder.h"
#include "gpu_util.h"

#include <vector>

static const uint64_t SIZES[] = {0,
                                 1,
                                 2,
                                 3,
                                 4,
                                 5,
                                 31,
                                 32,
                                 33,
                                 255,
                                 256,
                                 257,
                                 511,
                                 512,
                                 513,
                                 1023,
                                 1025,
                                 4097,
                                 65535,
                                 65537,
                                 1000003,
                                 (1u << 20) + 1,
                                 (1u << 24) + 3};
static const unsigned OFFSETS[] = {0, 1, 3};

struct fixture {
  void *d_in, *d_out, *d_scratch;
  unsigned *d_counter;
  int sms;
  uint64_t max_n;
};
static fixture F;

static void check_rung(const ladder::rung_info &r, cureduce_dtype d, cureduce_op op, uint64_t *rng) {
  for (uint64_t n : SIZES) {
    if (n > F.max_n || (n == 0 && op != CUREDUCE_SUM))
      continue;
    for (unsigned off : OFFSETS) {
      std::vector<char> host((n + 4) * 4);
      tu_fill(d, host.data(), n, TU_INTEGERS, 8, rng);
      char *d_in = (char *)F.d_in + off * 4;
      CUDA_OK(cudaMemcpy(d_in, host.data(), n * 4, cudaMemcpyHostToDevice));
      CUDA_OK(cudaMemset(F.d_out, 0xAB, 16));
      int64_t want_i = 0;
      float want_f = 0;
      if (d == CUREDUCE_F32)
        assert_int_equal(cureduce_cpu_reduce(op, d, host.data(), n, CUREDUCE_F32, &want_f), 0);
      else
        assert_int_equal(cureduce_cpu_reduce(op, d, host.data(), n, CUREDUCE_I64, &want_i), 0);
      const ladder::rung_ctx c = {d, op, d_in, n, F.d_out, F.d_scratch, F.d_counter, 0, F.sms};
      for (int rep = 0; rep < 2; ++rep) { // twice: the counters of 12a and 13 must reset
        r.run(c);
        CUDA_OK(cudaGetLastError());
        CUDA_OK(cudaDeviceSynchronize());
        if (d == CUREDUCE_F32) {
          float got;
          CUDA_OK(cudaMemcpy(&got, F.d_out, 4, cudaMemcpyDeviceToHost));
          if (!(got == want_f))
            fail_msg("rung %s %s f32 n=%llu offset=%u run %d: got %.9g, want %.9g", r.id,
                     cureduce_op_name(op), (unsigned long long)n, off, rep, got, want_f);
        } else {
          int32_t got;
          CUDA_OK(cudaMemcpy(&got, F.d_out, 4, cudaMemcpyDeviceToHost));
          if (got != (int32_t)want_i)
            fail_msg("rung %s %s i32 n=%llu offset=%u run %d: got %d, want %lld", r.id, cureduce_op_name(op),
                     (unsigned long long)n, off, rep, got, (long long)want_i);
        }
      }
    }
  }
}

static void every_rung_should_match_the_cpu_at_edge_sizes_and_offsets(void **state) {
  (void)state;
  uint64_t rng = tu_seed();
  int checked = 0;
  for (const auto &r : ladder::RUNGS)
    for (cureduce_dtype d : {CUREDUCE_F32, CUREDUCE_I32})
      for (cureduce_op op : {CUREDUCE_SUM, CUREDUCE_MIN, CUREDUCE_MAX})
        if (ladder::rung_supports(r, d, op)) {
          check_rung(r, d, op, &rng);
          ++checked;
        }
  assert_true(checked >= 60); // every rung offers f32 sum and all of i32, at least
}

static int setup(void **state) {
  (void)state;
  F.max_n = gpu_test_max_n(UINT64_MAX);
  const uint64_t largest = (1u << 24) + 8;
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&F.sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
    return -1;
  if (cudaMalloc(&F.d_in, largest * 4) != cudaSuccess || cudaMalloc(&F.d_out, 16) != cudaSuccess ||
      cudaMalloc(&F.d_scratch, ladder::scratch_bytes(largest)) != cudaSuccess ||
      cudaMalloc((void **)&F.d_counter, 4) != cudaSuccess)
    return -1;
  // the input buffer is initialized once so that no rung reads never-written memory
  return cudaMemset(F.d_counter, 0, 4) == cudaSuccess && cudaMemset(F.d_in, 0, largest * 4) == cudaSuccess
             ? 0
             : -1;
}

static int teardown(void **state) {
  (void)state;
  cudaFree(F.d_in);
  cudaFree(F.d_out);
  cudaFree(F.d_scratch);
  cudaFree(F.d_counter);
  return 0;
}

int main(void) {
  gpu_require_device();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_rung_should_match_the_cpu_at_edge_sizes_and_offsets),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
