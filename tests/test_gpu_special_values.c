/* The GPU keeps the API's special-value semantics in small hand-made cases: signed zeros in
 * min and max, NaN in min/max/argmin/argmax (the first NaN's index), infinities in sums, and
 * the sum of only -0.0. Each case is compared with the CPU reference, for f32, f16 and bf16. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

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

static int setup(void **state) {
  (void)state;
  if (cureduce_create(&h) != CUREDUCE_SUCCESS)
    return -1;
  return cudaMalloc(&d_in, 64) == cudaSuccess && cudaMalloc(&d_out, 16) == cudaSuccess ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  (void)cudaFree(d_in);
  (void)cudaFree(d_out);
  return cureduce_destroy(h) == CUREDUCE_SUCCESS ? 0 : -1;
}

int main(void) {
  gpu_require_device();
  const struct CMUnitTest tests[] = {cmocka_unit_test(special_values_should_behave_as_on_the_cpu)};
  return cmocka_run_group_tests(tests, setup, teardown);
}
