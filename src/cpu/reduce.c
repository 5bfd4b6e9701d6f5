/* The CPU reductions: the test oracle for min and max, and the no-GPU fallback for every op.
 *
 * Inputs are decoded in chunks (decode.h) so one loop serves every dtype. Float sums are
 * pairwise in the accumulator's precision: each addition is done in double and rounded once
 * to the accumulator, which equals a correctly rounded addition in the accumulator because
 * double has more than 2p + 2 bits for every p here (f32: 24, f16: 11, bf16: 8). */
#include "cureduce.h"

#include "convert.h"
#include "decode.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef double (*round_fn)(double);

static double round_f64(double x) { return x; }
static double round_f32(double x) { return (float)x; }
static double round_f16(double x) { return cr_f16_to_float(cr_float_to_f16((float)x)); }
static double round_bf16(double x) { return cr_bf16_to_float(cr_float_to_bf16((float)x)); }

static round_fn rounding_of(cureduce_dtype acc) {
  switch (acc) {
  case CUREDUCE_F32: return round_f32;
  case CUREDUCE_F16: return round_f16;
  case CUREDUCE_BF16: return round_bf16;
  default: return round_f64;
  }
}

/* Pairwise sum of v[0..n) with every addition rounded by r. */
static double pairwise(const double *v, size_t n, round_fn r) {
  if (n <= 8) {
    double s = -0.0; /* -0.0 is the identity of IEEE addition: -0 + x == x, -0 included */
    for (size_t i = 0; i < n; ++i)
      s = r(s + v[i]);
    return s;
  }
  const size_t half = n / 2;
  return r(pairwise(v, half, r) + pairwise(v + half, n - half, r));
}

/* IEEE 754-2019 minimum/maximum: NaN wins, and -0.0 orders below +0.0. */
static double min_f(double a, double b) {
  if (isnan(a) || isnan(b))
    return isnan(a) ? a : b;
  if (a == b)
    return signbit(a) ? a : b;
  return a < b ? a : b;
}

static double max_f(double a, double b) {
  if (isnan(a) || isnan(b))
    return isnan(a) ? a : b;
  if (a == b)
    return signbit(a) ? b : a;
  return a > b ? a : b;
}

static double reduce_float(cureduce_op op, cureduce_dtype in, const void *h_in, uint64_t n,
                           round_fn r, double *buf) {
  /* Chunk results are combined as a binary counter: level k holds the sum of 2^k chunks,
     so the whole sum stays pairwise. */
  double level[64];
  int have[64] = {0};
  double acc = op == CUREDUCE_MIN ? INFINITY : (op == CUREDUCE_MAX ? -INFINITY : -0.0);
  for (uint64_t first = 0; first < n; first += CR_DECODE_CHUNK) {
    const size_t count = (size_t)(n - first < CR_DECODE_CHUNK ? n - first : CR_DECODE_CHUNK);
    cr_decode_float(in, h_in, first, count, buf);
    if (op != CUREDUCE_SUM) {
      for (size_t k = 0; k < count; ++k)
        acc = op == CUREDUCE_MIN ? min_f(acc, buf[k]) : max_f(acc, buf[k]);
      continue;
    }
    double c = pairwise(buf, count, r);
    int k = 0;
    for (; have[k]; ++k) {
      c = r(level[k] + c);
      have[k] = 0;
    }
    level[k] = c;
    have[k] = 1;
  }
  if (op == CUREDUCE_SUM)
    for (int k = 0; k < 64; ++k)
      if (have[k])
        acc = r(level[k] + acc);
  return acc;
}

static int64_t reduce_int(cureduce_op op, cureduce_dtype in, const void *h_in, uint64_t n,
                          int64_t *buf) {
  uint64_t sum = 0; /* unsigned: wrapping is defined */
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (uint64_t first = 0; first < n; first += CR_DECODE_CHUNK) {
    const size_t count = (size_t)(n - first < CR_DECODE_CHUNK ? n - first : CR_DECODE_CHUNK);
    cr_decode_int(in, h_in, first, count, buf);
    for (size_t k = 0; k < count; ++k) {
      sum += (uint64_t)buf[k];
      lo = buf[k] < lo ? buf[k] : lo;
      hi = buf[k] > hi ? buf[k] : hi;
    }
  }
  if (op == CUREDUCE_SUM)
    return (int64_t)sum;
  return op == CUREDUCE_MIN ? lo : hi;
}

static void write_int(cureduce_dtype acc, int64_t v, void *h_out) {
  if (acc == CUREDUCE_I32) {
    const int32_t w = (int32_t)(uint32_t)(uint64_t)v; /* modulo 2^32, as the GPU wraps */
    memcpy(h_out, &w, sizeof w);
  } else {
    memcpy(h_out, &v, sizeof v);
  }
}

cureduce_status cureduce_cpu_reduce(cureduce_op op, cureduce_dtype in_dtype, const void *h_in,
                                    uint64_t n, cureduce_dtype acc_dtype, void *h_out) {
  cureduce_status st = cureduce_supported(op, in_dtype, acc_dtype);
  if (st != CUREDUCE_SUCCESS)
    return st;
  if (!h_out || (n > 0 && !h_in))
    return CUREDUCE_ERROR_NULL_POINTER;
  if (acc_dtype == CUREDUCE_ACC_DEFAULT)
    (void)cureduce_default_acc(in_dtype, &acc_dtype);
  if (n == 0 && op != CUREDUCE_SUM)
    return CUREDUCE_EMPTY;

  void *buf = malloc(CR_DECODE_CHUNK * sizeof(double));
  if (!buf)
    return CUREDUCE_ERROR_OUT_OF_MEMORY;
  if (cr_dtype_is_float(in_dtype)) {
    double v = reduce_float(op, in_dtype, h_in, n, rounding_of(acc_dtype), buf);
    if (n == 0)
      v = 0.0; /* the empty sum is +0.0, not the identity -0.0 */
    st = cureduce_from_double(acc_dtype, v, h_out); /* exact: v is a value of acc_dtype */
  } else {
    write_int(acc_dtype, reduce_int(op, in_dtype, h_in, n, buf), h_out);
  }
  free(buf);
  return st;
}
