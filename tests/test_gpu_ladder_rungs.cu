// Every rung of the teaching ladder, for each dtype and op it offers, gives exactly the CPU's
// bits at the edge sizes and at every misaligned start, on every run. The data are small
// integers of random sign, so the f32 partial sums stay exact integers (far below 2^24) in any
// order that does not depend on the values, and the rungs, the atomic ones too, are compared
// bit for bit. Values a rung must never fold in lie on both sides of the input, and a min or
// max is planted once, so a rung that reads outside the array or skips an element gives a
// different answer.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" { // cmocka 1.1's header has no C++ guards
#include <cmocka.h>
}

#include "../ladder/ladder.h"
#include "gpu_util.h"

#include <string.h>
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
static const unsigned OFFSETS[] = {0, 1, 2, 3};
static const uint64_t GUARD = 16; // poisoned elements after the input
static const uint64_t LEAD = 4;   // and before it (then the offset's): 16 bytes keep the alignment
static const uint64_t LARGEST = LEAD + 3 + (1u << 24) + 3 + GUARD;

struct fixture {
  void *d_in, *d_out, *d_scratch;
  unsigned *d_counter;
  int sms;
  uint64_t max_n;
};
static fixture F;

// Element i of a 4-byte dtype: an integer, as f32 or i32.
static void put(cureduce_dtype d, char *p, uint64_t i, int v) {
  if (d == CUREDUCE_F32) {
    const float f = (float)v;
    memcpy(p + i * 4, &f, 4);
  } else {
    const int32_t x = v;
    memcpy(p + i * 4, &x, 4);
  }
}

// What no element reaches: 2^20 for a sum (a stray one moves the total), below every element
// for min, above for max.
static int poison(cureduce_op op) { return op == CUREDUCE_MIN ? -(1 << 20) : 1 << 20; }

// The input at LEAD + off elements into the buffer, with the guards; data in [-8, 8], and for
// min and max one element of -1000 or 1000: at a random place, the last, the first, a random
// place for offsets 0 to 3, so the extreme is neither everywhere nor always in the same spot.
static std::vector<char> make_input(cureduce_dtype d, cureduce_op op, uint64_t n, unsigned off,
                                    uint64_t *rng) {
  const uint64_t start = LEAD + off;
  std::vector<char> buf((start + n + GUARD) * 4);
  for (uint64_t i = 0; i < start; ++i)
    put(d, buf.data(), i, poison(op));
  tu_fill(d, buf.data() + start * 4, n, TU_INTEGERS, 8, rng);
  for (uint64_t i = 0; i < GUARD; ++i)
    put(d, buf.data(), start + n + i, poison(op));
  if (op != CUREDUCE_SUM && n > 0) {
    const uint64_t at = off == 1 ? n - 1 : off == 2 ? 0 : tu_next(rng) % n;
    put(d, buf.data(), start + at, op == CUREDUCE_MIN ? -1000 : 1000);
  }
  return buf;
}

// Run rung r twice on the input at d_in and compare each result's bits with want.
static void check_rung(const ladder::rung_info &r, cureduce_dtype d, cureduce_op op, const void *d_in,
                       uint64_t n, unsigned off, uint32_t want) {
  const ladder::rung_ctx c = {d, op, d_in, n, F.d_out, F.d_scratch, F.d_counter, 0, F.sms};
  for (int rep = 0; rep < 2; ++rep) {       // twice: the counters of 12a and 13 must reset
    CUDA_OK(cudaMemset(F.d_out, 0xAB, 16)); // poison: each run must write its result
    r.run(c);
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaDeviceSynchronize());
    uint32_t got;
    CUDA_OK(cudaMemcpy(&got, F.d_out, 4, cudaMemcpyDeviceToHost));
    if (got != want) {
      float gf, wf;
      memcpy(&gf, &got, 4);
      memcpy(&wf, &want, 4);
      if (d == CUREDUCE_F32)
        fail_msg("rung %s %s f32 n=%llu offset=%u run %d: got %.9g (0x%08x), want %.9g (0x%08x)", r.id,
                 cureduce_op_name(op), (unsigned long long)n, off, rep, gf, got, wf, want);
      else
        fail_msg("rung %s %s i32 n=%llu offset=%u run %d: got %d, want %d", r.id, cureduce_op_name(op),
                 (unsigned long long)n, off, rep, (int32_t)got, (int32_t)want);
    }
  }
}

// One input per (dtype, op, n, offset), made once and given to every rung that offers it.
static int check_all(cureduce_dtype d, cureduce_op op, uint64_t *rng) {
  int rungs = 0;
  for (const auto &r : ladder::RUNGS)
    rungs += ladder::rung_supports(r, d, op);
  for (uint64_t n : SIZES) {
    if (n > F.max_n || (n == 0 && op != CUREDUCE_SUM))
      continue;
    for (unsigned off : OFFSETS) {
      const std::vector<char> buf = make_input(d, op, n, off, rng);
      CUDA_OK(cudaMemcpy(F.d_in, buf.data(), buf.size(), cudaMemcpyHostToDevice));
      const char *host = buf.data() + (LEAD + off) * 4;
      uint32_t want = 0;
      if (d == CUREDUCE_F32) {
        float f;
        assert_int_equal(cureduce_cpu_reduce(op, d, host, n, CUREDUCE_F32, &f), 0);
        memcpy(&want, &f, 4);
      } else {
        int64_t v;
        assert_int_equal(cureduce_cpu_reduce(op, d, host, n, CUREDUCE_I64, &v), 0);
        want = (uint32_t)(uint64_t)v; // the rungs' i32 sums wrap; these never do
      }
      for (const auto &r : ladder::RUNGS)
        if (ladder::rung_supports(r, d, op))
          check_rung(r, d, op, (const char *)F.d_in + (LEAD + off) * 4, n, off, want);
    }
  }
  return rungs;
}

static void every_rung_should_match_the_cpu_at_edge_sizes_and_offsets(void **state) {
  (void)state;
  uint64_t rng = tu_seed();
  int checked = 0;
  for (cureduce_dtype d : {CUREDUCE_F32, CUREDUCE_I32})
    for (cureduce_op op : {CUREDUCE_SUM, CUREDUCE_MIN, CUREDUCE_MAX})
      checked += check_all(d, op, &rng);
  assert_true(checked >= 60); // (rung, dtype, op): every rung offers f32 sum and all of i32, at least
}

static int setup(void **state) {
  (void)state;
  F.max_n = gpu_test_max_n(UINT64_MAX);
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&F.sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
    return -1;
  if (cudaMalloc(&F.d_in, LARGEST * 4) != cudaSuccess || cudaMalloc(&F.d_out, 16) != cudaSuccess ||
      cudaMalloc(&F.d_scratch, ladder::scratch_bytes(LARGEST)) != cudaSuccess ||
      cudaMalloc((void **)&F.d_counter, 4) != cudaSuccess)
    return -1;
  // the input buffer is initialized once so that no rung reads never-written memory
  return cudaMemset(F.d_counter, 0, 4) == cudaSuccess && cudaMemset(F.d_in, 0, LARGEST * 4) == cudaSuccess
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
