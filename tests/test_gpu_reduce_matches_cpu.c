/* Every GPU reduction (the op named on the command line, each supported input and accumulator
 * pair) agrees with the CPU reference at the edge sizes, at misaligned starts, and on random, integer-valued
 * and special data, and on data spread over the float input's exponent range. Min, max, absmax, the arg
 * indices and integer results must be identical; float sums (sum, sumsq, mean) of integer-valued data, and
 * f64 sums and means of f16 and fp8 inputs, must be exact; float sums of other data must be within a rounding
 * bound of the exact sum.
 *
 * CUREDUCE_TEST_MAX_N caps the sizes (the sanitizer runs use it to stay within time). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "per_op_test.h"

/* 8192 .. 32784: the largest inputs one block takes whole (2 or 4 tiles of 16 KiB, by element
   size: src/dispatch/full_policy.h) and one 16-byte vector more, which the grid takes */
static const uint64_t SIZES[] = {0,     1,     2,     15,    16,    17,     31,      32,     33,    255,
                                 256,   257,   1023,  1025,  4095,  4097,   8192,    8194,   16384, 16388,
                                 32768, 32776, 32784, 65535, 65537, 262143, 1000003, 4194305};
static const unsigned OFFSETS[] = {0, 1, 3, 5}; /* elements from a 256-byte aligned start */

static cureduce_handle g_handle;
static void *g_in;   /* device input, large enough for the largest size plus offset */
static void *g_out;  /* device output */
static void *g_host; /* host copy of the input */
static uint64_t g_max_n;

static void check_one(const combo *c, uint64_t n, unsigned offset, tu_pattern pat, uint64_t *rng) {
  const size_t size = cureduce_dtype_size(c->in), out_size = cureduce_result_size(c->op, c->acc);
  tu_fill(c->in, g_host, n, pat, 8, rng);
  char *d_in = (char *)g_in + offset * size;
  CUDA_OK(cudaMemcpy(d_in, g_host, n * size, cudaMemcpyHostToDevice));
  unsigned char poison[16], got[16], want[16];
  memset(poison, 0xAB, sizeof poison);
  CUDA_OK(cudaMemcpy(g_out, poison, 16, cudaMemcpyHostToDevice));

  const cureduce_status want_st = cureduce_cpu_reduce(c->op, c->in, g_host, n, c->acc, want);
  const cureduce_status got_st = cureduce_reduce(g_handle, c->op, c->in, d_in, n, c->acc, g_out, NULL);
  CUDA_OK(cudaDeviceSynchronize());
  CUDA_OK(cudaMemcpy(got, g_out, 16, cudaMemcpyDeviceToHost));
  const char *what = cureduce_op_name(c->op), *in = cureduce_dtype_name(c->in),
             *acc = cureduce_dtype_name(c->acc);
  if (got_st != want_st)
    fail_msg("%s %s->%s n=%llu offset=%u: status %d, CPU %d", what, in, acc, (unsigned long long)n, offset,
             got_st, want_st);
  if (got_st != CUREDUCE_SUCCESS) {
    if (memcmp(got, poison, 16) != 0)
      fail_msg("%s %s n=%llu: status %d must leave the output untouched", what, in, (unsigned long long)n,
               got_st);
    return;
  }
  if (memcmp(got + out_size, poison + out_size, 16 - out_size) != 0)
    fail_msg("%s %s->%s n=%llu: wrote past its output", what, in, acc, (unsigned long long)n);

  char where[64];
  snprintf(where, sizeof where, "offset=%u", offset);
  rc_check(c, g_host, n, pat, got, want, where);
}

/* Above the grid cap (1024 blocks of 1024 vectors: 16M one-byte elements), so every block runs
   its grid-stride loop more than once. Only integer-valued sums there: CPU time. */
#define LARGE_N 33554433u

static void run_combo(const combo *c) {
  uint64_t rng = tu_seed() ^ ((uint64_t)c->op << 40) ^ ((uint64_t)c->in << 32) ^ (uint64_t)c->acc;
  if ((c->op == CUREDUCE_SUM || c->op == CUREDUCE_ARGMAX) && LARGE_N <= g_max_n) {
    check_one(c, LARGE_N, 0, TU_INTEGERS, &rng);
    check_one(c, LARGE_N, 3, TU_INTEGERS, &rng);
  }
  for (size_t s = 0; s < sizeof SIZES / sizeof SIZES[0]; ++s) {
    const uint64_t n = SIZES[s];
    if (n > g_max_n)
      continue;
    for (size_t o = 0; o < sizeof OFFSETS / sizeof OFFSETS[0]; ++o) {
      check_one(c, n, OFFSETS[o], TU_INTEGERS, &rng);
      if (o == 0 || n < 100000) { /* the other patterns at every size, one alignment when big */
        check_one(c, n, OFFSETS[o], TU_RANDOM, &rng);
        if (tu_is_float(c->in) || tu_is_float(c->acc)) {
          check_one(c, n, OFFSETS[o], TU_SPECIALS, &rng);
          check_one(c, n, OFFSETS[o], TU_NEG_ZEROS, &rng);
        }
        if (tu_is_float(c->in)) {
          check_one(c, n, OFFSETS[o], TU_SPREAD, &rng);
        }
      }
    }
  }
}

static int setup(void **state) {
  (void)state;
  g_max_n = gpu_test_max_n(UINT64_MAX);
  const uint64_t largest = LARGE_N + 8;
  if (cureduce_create(&g_handle) != CUREDUCE_SUCCESS)
    return -1;
  if (cudaMalloc(&g_in, largest * 8) != cudaSuccess || cudaMalloc(&g_out, 16) != cudaSuccess)
    return -1;
  g_host = malloc(largest * 8);
  return g_host ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  (void)cudaFree(g_in);
  (void)cudaFree(g_out);
  free(g_host);
  return cureduce_destroy(g_handle) == CUREDUCE_SUCCESS ? 0 : -1;
}

int main(int argc, char **argv) { return run_per_op_tests(argc, argv, NULL, setup, teardown); }
