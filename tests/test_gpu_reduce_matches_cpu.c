/* Every GPU reduction (the op named on the command line, each supported input and accumulator
 * pair) agrees with the CPU reference at the edge sizes, at misaligned starts, and on random, integer-valued and special
 * data. Min, max, absmax, the arg indices and integer results must be identical; float sums
 * (sum, sumsq, mean) of integer-valued data must be exact; float sums of random data must be
 * within a rounding bound of the exact sum.
 *
 * CUREDUCE_TEST_MAX_N caps the sizes (the sanitizer runs use it to stay within time). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "../src/common/combos.h"
#include "gpu_util.h"

static const uint64_t SIZES[] = {0,     1,     2,      15,      16,      17,       31,      32,
                                 33,    255,   256,    257,     1023,    1025,     4095,    4097,
                                 65535, 65537, 262143, 1000003, 4194305};
static const unsigned OFFSETS[] = {0, 1, 3, 5}; /* elements from a 256-byte aligned start */

typedef struct combo {
  cureduce_op op;
  cureduce_dtype in, acc;
} combo;

static cureduce_handle g_handle;
static void *g_in;   /* device input, large enough for the largest size plus offset */
static void *g_out;  /* device output */
static void *g_host; /* host copy of the input */
static uint64_t g_max_n;

/* Unit roundoff of a float accumulator. */
static double unit_roundoff(cureduce_dtype acc) {
  switch (acc) {
  case CUREDUCE_F64: return 0x1p-53;
  case CUREDUCE_F32: return 0x1p-24;
  case CUREDUCE_F16: return 0x1p-11;
  default: return 0x1p-8; /* bf16 */
  }
}

/* The smallest subnormal of a float accumulator. */
static double smallest(cureduce_dtype acc) {
  switch (acc) {
  case CUREDUCE_F64: return 0x1p-1074;
  case CUREDUCE_F32: return 0x1p-149;
  case CUREDUCE_F16: return 0x1p-24;
  default: return 0x1p-133; /* bf16 */
  }
}

static double max_finite(cureduce_dtype acc) {
  switch (acc) {
  case CUREDUCE_F64: return 1.7976931348623157e308;
  case CUREDUCE_F16: return 65504.0;
  default: return 3.3895313892515355e38; /* bf16; f32's is a little larger */
  }
}

static int sum_like(cureduce_op op) {
  return op == CUREDUCE_SUM || op == CUREDUCE_SUMSQ || op == CUREDUCE_MEAN;
}

/* The exact sum of the op's terms (x, or x * x rounded to double) and the sum of their
   magnitudes, for the rounding bound of float sums. */
static void exact_terms(const combo *c, uint64_t n, double *exact, double *abs_sum) {
  const size_t size = cureduce_dtype_size(c->in);
  double *terms = malloc((n ? n : 1) * sizeof *terms);
  *abs_sum = 0;
  for (uint64_t i = 0; i < n; ++i) {
    double x;
    (void)cureduce_to_double(c->in, (char *)g_host + i * size, &x);
    terms[i] = c->op == CUREDUCE_SUMSQ ? x * x : x;
    *abs_sum += fabs(terms[i]);
  }
  (void)cureduce_cpu_sum_exact(CUREDUCE_F64, terms, n, CUREDUCE_F64, exact);
  free(terms);
}

/* Whether a float sum-like result must equal the CPU's bit for bit: integer-valued terms whose
   partial sums stay exact in the accumulator, and the all -0.0 pattern. */
static int float_sum_is_exact(const combo *c, uint64_t n, tu_pattern pat) {
  if (pat == TU_NEG_ZEROS)
    return 1;
  if (pat != TU_INTEGERS)
    return 0;
  const uint64_t term = c->op == CUREDUCE_SUMSQ ? 64 : 8; /* |x| <= 8 */
  switch (c->acc) {
  case CUREDUCE_F16: return n * term <= 2048;
  case CUREDUCE_BF16: return n * term <= 256;
  /* f32 sums of +-8: exact up to 2^21 terms for sure; beyond, random partial sums stay far
     below 2^24 (a partial of k terms spreads about 5 sqrt(k): 29000 at k = 2^25). Squares are
     all positive, so their partial sums grow with n: exact only while 64 n <= 2^24. */
  case CUREDUCE_F32: return c->op == CUREDUCE_SUMSQ ? n * term <= (1u << 24) : 1;
  default: return 1;
  }
}

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
    fail_msg("%s %s->%s n=%llu offset=%u: status %d, CPU %d", what, in, acc,
             (unsigned long long)n, offset, got_st, want_st);
  if (got_st != CUREDUCE_SUCCESS) {
    if (memcmp(got, poison, 16) != 0)
      fail_msg("%s %s n=%llu: status %d must leave the output untouched", what, in, (unsigned long long)n, got_st);
    return;
  }
  if (memcmp(got + out_size, poison + out_size, 16 - out_size) != 0)
    fail_msg("%s %s->%s n=%llu: wrote past its output", what, in, acc, (unsigned long long)n);

  const cureduce_dtype out_dtype = out_size == 8 && (c->op == CUREDUCE_ARGMIN || c->op == CUREDUCE_ARGMAX)
                                       ? CUREDUCE_I64 : c->acc;
  const int float_sum = sum_like(c->op) && tu_is_float(c->acc);
  if (!float_sum || float_sum_is_exact(c, n, pat)) {
    if (!tu_same_value(out_dtype, got, want)) {
      double g, w;
      (void)cureduce_to_double(out_dtype, got, &g);
      (void)cureduce_to_double(out_dtype, want, &w);
      fail_msg("%s %s->%s n=%llu offset=%u pattern=%d: GPU %.17g, CPU %.17g", what, in, acc,
               (unsigned long long)n, offset, pat, g, w);
    }
    return;
  }
  /* Float sum of non-exact data: against the exact sum, within a tree-rounding bound. */
  double exact, abs_sum, g;
  exact_terms(c, n, &exact, &abs_sum);
  (void)cureduce_to_double(c->acc, got, &g);
  /* A narrow accumulator may overflow on the way when the magnitudes add up past its range
     (fp8 "specials" saturate to 57344 and 448, and f16 ends at 65504): inf or NaN is then a
     correct IEEE outcome of the order the kernel uses (for mean, of the sum before dividing). */
  if (!isfinite(g) && abs_sum >= max_finite(c->acc))
    return;
  if (c->op == CUREDUCE_MEAN)
    exact /= (double)n, abs_sum /= (double)n;
  if (isnan(exact) || isinf(exact)) {
    if (!tu_same_value(CUREDUCE_F64, &g, &exact))
      fail_msg("%s %s->%s n=%llu: GPU %g, exact %g", what, in, acc, (unsigned long long)n, g, exact);
    return;
  }
  /* Each term passes through at most a few hundred roundings in the per-thread chains and
     the trees; the bound also covers rounding each term (square) and the result to acc. */
  const double u = unit_roundoff(c->acc);
  /* plus n half-units of the smallest subnormal: a tiny square may round to zero (underflow) */
  const double bound = (log2((double)n + 1) + 64) * u * abs_sum + fabs(exact) * u + (double)n * smallest(c->acc);
  if (!(fabs(g - exact) <= bound))
    fail_msg("%s %s->%s n=%llu offset=%u: GPU %.17g, exact %.17g, bound %.3g", what, in, acc,
             (unsigned long long)n, offset, g, exact, bound);
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
      }
    }
  }
}

/* One test per supported (input, accumulator) pair, for the op named on the command line. */
static cureduce_op g_op;

#define CR_TEST_FN(IN, ACC)                                                                     \
  static void IN##_acc_##ACC##_should_match_cpu(void **state) {                                 \
    (void)state;                                                                                \
    const combo c = {g_op, CUREDUCE_##IN, CUREDUCE_##ACC};                                      \
    run_combo(&c);                                                                              \
  }
CUREDUCE_FOR_EACH_PAIR(CR_TEST_FN)

static int setup(void **state) {
  (void)state;
  const char *cap = getenv("CUREDUCE_TEST_MAX_N");
  g_max_n = cap ? strtoull(cap, NULL, 0) : UINT64_MAX;
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

int main(int argc, char **argv) {
  if (argc != 2 || cureduce_op_from_name(argv[1], &g_op) != CUREDUCE_SUCCESS) {
    fprintf(stderr, "usage: %s OP (sum, min, max, absmax, sumsq, argmin, argmax, mean)\n", argv[0]);
    return 2;
  }
  gpu_require_device();
  (void)tu_seed();
#define CR_ENTRY(IN, ACC) cmocka_unit_test(IN##_acc_##ACC##_should_match_cpu),
  const struct CMUnitTest tests[] = {CUREDUCE_FOR_EACH_PAIR(CR_ENTRY)};
  return cmocka_run_group_tests_name(argv[1], tests, setup, teardown);
}
