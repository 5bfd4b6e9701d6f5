/* The GPU keeps the API's special-value semantics in small hand-made cases: signed zeros in
 * min and max, NaN in min/max/argmin/argmax (the first NaN's index), infinities in sums, and
 * the sum of only -0.0, for f32, f16, bf16 and f64; and each integer type's minimum, whose
 * magnitude 2^(bits-1) wraps in an accumulator of its own width, at every place of a vector.
 * Each case is compared with the CPU reference. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_util.h"

static cureduce_handle h;
static void *d_in, *d_out;

static void expect_same(cureduce_op op, cureduce_dtype d, const double *vals, int n, const char *what) {
  unsigned char host[64], got[16], want[16];
  const size_t size = cureduce_dtype_size(d);
  for (int i = 0; i < n; ++i)
    (void)cureduce_from_double(d, vals[i], host + i * size);
  CUDA_OK(cudaMemcpy(d_in, host, n * size, cudaMemcpyHostToDevice));
  assert_int_equal(cureduce_cpu_reduce(op, d, host, (uint64_t)n, CUREDUCE_ACC_DEFAULT, want), 0);
  assert_int_equal(cureduce_reduce_to_host(h, op, d, d_in, (uint64_t)n, CUREDUCE_ACC_DEFAULT, got, NULL), 0);
  cureduce_dtype acc;
  (void)cureduce_resolve_acc(op, d, CUREDUCE_ACC_DEFAULT, &acc);
  const cureduce_dtype out = (op == CUREDUCE_ARGMIN || op == CUREDUCE_ARGMAX) ? CUREDUCE_I64 : acc;
  if (!tu_same_value(out, got, want)) {
    double g, w;
    (void)cureduce_to_double(out, got, &g);
    (void)cureduce_to_double(out, want, &w);
    fail_msg("%s %s %s: GPU %g (sign %d), CPU %g (sign %d)", what, cureduce_op_name(op),
             cureduce_dtype_name(d), g, signbit(g) != 0, w, signbit(w) != 0);
  }
}

static void special_values_should_behave_as_on_the_cpu(void **state) {
  (void)state;
  const cureduce_dtype dts[] = {CUREDUCE_F32, CUREDUCE_F16, CUREDUCE_BF16, CUREDUCE_F64};
  const double zeros_pm[] = {0.0, -0.0}, zeros_mp[] = {-0.0, 0.0}, negz[] = {-0.0, -0.0, -0.0};
  const double with_nan[] = {1.0, 5.0, NAN, -7.0, NAN, 2.0};
  const double infs[] = {1.0, INFINITY, 2.0}, both_infs[] = {INFINITY, 1.0, -INFINITY};
  const double ties[] = {3.0, -1.0, 3.0, -1.0};
  for (size_t k = 0; k < sizeof dts / sizeof dts[0]; ++k) {
    const cureduce_dtype d = dts[k];
    for (int op = 0; op < CUREDUCE_OP_COUNT; ++op) {
      expect_same((cureduce_op)op, d, zeros_pm, 2, "+0,-0");
      expect_same((cureduce_op)op, d, zeros_mp, 2, "-0,+0");
      expect_same((cureduce_op)op, d, negz, 3, "-0,-0,-0");
      expect_same((cureduce_op)op, d, with_nan, 6, "with NaN");
      expect_same((cureduce_op)op, d, infs, 3, "+inf");
      expect_same((cureduce_op)op, d, both_infs, 3, "+inf,-inf");
      expect_same((cureduce_op)op, d, ties, 4, "ties");
    }
  }
}

#define INT_CASE_N 100003 /* the longest integer case */

/* n elements of integer dtype d: the type's maximum, and its minimum at positions at[0..k). */
static void put_extremes(cureduce_dtype d, unsigned char *p, uint64_t n, const uint64_t *at, int k) {
  const size_t size = cureduce_dtype_size(d);
  const int64_t hi = d == CUREDUCE_I8 ? INT8_MAX : d == CUREDUCE_I32 ? INT32_MAX : INT64_MAX;
  const int64_t lo = -hi - 1;
  for (uint64_t i = 0; i < n; ++i)
    memcpy(p + i * size, &hi, size); /* little-endian: the low bytes of the int64_t */
  for (int j = 0; j < k; ++j)
    memcpy(p + at[j] * size, &lo, size);
}

/* Every op and accumulator of d on the input in host (also at d_in): the full array, and as
 * rows of `cols` elements when cols > 0. */
static void expect_same_all(cureduce_dtype d, const unsigned char *host, uint64_t n, uint64_t cols,
                            const char *what) {
  const size_t size = cureduce_dtype_size(d);
  unsigned char got[16], want[16];
  unsigned char *rows_got = malloc(8 * (n / (cols ? cols : 1) + 1));
  assert_non_null(rows_got);
  for (int op = 0; op < CUREDUCE_OP_COUNT; ++op)
    for (int acc = 0; acc < CUREDUCE_DTYPE_COUNT; ++acc) {
      if (cureduce_supported((cureduce_op)op, d, (cureduce_dtype)acc) != CUREDUCE_SUCCESS)
        continue;
      const cureduce_dtype out = (op == CUREDUCE_ARGMIN || op == CUREDUCE_ARGMAX) ? CUREDUCE_I64 : acc;
      const size_t osize = cureduce_dtype_size(out);
      assert_int_equal(cureduce_cpu_reduce((cureduce_op)op, d, host, n, (cureduce_dtype)acc, want), 0);
      assert_int_equal(
          cureduce_reduce_to_host(h, (cureduce_op)op, d, d_in, n, (cureduce_dtype)acc, got, NULL), 0);
      if (!tu_same_value(out, got, want))
        fail_msg("%s: %s %s -> %s, n=%llu: GPU and CPU differ", what, cureduce_op_name((cureduce_op)op),
                 cureduce_dtype_name(d), cureduce_dtype_name((cureduce_dtype)acc), (unsigned long long)n);
      if (cols == 0)
        continue;
      const uint64_t rows = n / cols;
      assert_int_equal(cureduce_reduce_rows(h, (cureduce_op)op, d, d_in, rows, cols, cols,
                                            (cureduce_dtype)acc, d_out, NULL),
                       0);
      CUDA_OK(cudaMemcpy(rows_got, d_out, rows * osize, cudaMemcpyDeviceToHost));
      for (uint64_t r = 0; r < rows; ++r) {
        assert_int_equal(
            cureduce_cpu_reduce((cureduce_op)op, d, host + r * cols * size, cols, (cureduce_dtype)acc, want),
            0);
        if (!tu_same_value(out, rows_got + r * osize, want))
          fail_msg("%s: %s %s -> %s, row %llu of %llu x %llu: GPU and CPU differ", what,
                   cureduce_op_name((cureduce_op)op), cureduce_dtype_name(d),
                   cureduce_dtype_name((cureduce_dtype)acc), (unsigned long long)r, (unsigned long long)rows,
                   (unsigned long long)cols);
      }
    }
  free(rows_got);
}

static void integer_minimums_should_behave_as_on_the_cpu(void **state) {
  (void)state;
  const cureduce_dtype dts[] = {CUREDUCE_I8, CUREDUCE_I32, CUREDUCE_I64};
  unsigned char *host = malloc(INT_CASE_N * 8);
  assert_non_null(host);
  uint64_t rng = tu_seed();
  for (size_t k = 0; k < sizeof dts / sizeof dts[0]; ++k) {
    const cureduce_dtype d = dts[k];
    const size_t size = cureduce_dtype_size(d);
    const uint64_t n = 2 * (16 / size) + 3; /* two 16-byte vectors and a tail */
    for (uint64_t pos = 0; pos < n; ++pos) {
      put_extremes(d, host, n, &pos, 1);
      CUDA_OK(cudaMemcpy(d_in, host, n * size, cudaMemcpyHostToDevice));
      expect_same_all(d, host, n, 0, "one minimum among maxima");
    }
    const uint64_t at[3] = {0, tu_next(&rng) % INT_CASE_N, INT_CASE_N - 1};
    for (int j = 1; j <= 3; ++j) { /* the middle one alone, then with the first, then all */
      const uint64_t *first = j == 1 ? at + 1 : at;
      put_extremes(d, host, INT_CASE_N, first, j == 1 ? 1 : j);
      CUDA_OK(cudaMemcpy(d_in, host, INT_CASE_N * size, cudaMemcpyHostToDevice));
      expect_same_all(d, host, INT_CASE_N, 0, "minimums in a long array");
    }
    const uint64_t cols = 1000, rows = 37, spots[2] = {tu_next(&rng) % (rows * cols), 5 * cols + 7};
    put_extremes(d, host, rows * cols, spots, 2);
    CUDA_OK(cudaMemcpy(d_in, host, rows * cols * size, cudaMemcpyHostToDevice));
    expect_same_all(d, host, rows * cols, cols, "minimums in rows");
  }
  free(host);
}

static int setup(void **state) {
  (void)state;
  if (cureduce_create(&h) != CUREDUCE_SUCCESS)
    return -1;
  return cudaMalloc(&d_in, INT_CASE_N * 8) == cudaSuccess &&
                 cudaMalloc(&d_out, 16 * INT_CASE_N) == cudaSuccess
             ? 0
             : -1;
}

static int teardown(void **state) {
  (void)state;
  (void)cudaFree(d_in);
  (void)cudaFree(d_out);
  return cureduce_destroy(h) == CUREDUCE_SUCCESS ? 0 : -1;
}

int main(void) {
  gpu_require_device();
  const struct CMUnitTest tests[] = {cmocka_unit_test(special_values_should_behave_as_on_the_cpu),
                                     cmocka_unit_test(integer_minimums_should_behave_as_on_the_cpu)};
  return cmocka_run_group_tests(tests, setup, teardown);
}
