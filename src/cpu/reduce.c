/* The CPU reductions: the test oracle, and the no-GPU fallback for every op.
 *
 * Inputs are decoded in chunks (decode.h) so one loop serves every dtype. Float accumulators
 * work in double and round once to the accumulator after each operation, which equals a
 * correctly rounded operation in the accumulator because double has at least 2p + 2 bits for
 * every p here (f32: 24, f16: 11, bf16: 8). Sums are pairwise; min, max and arg are exact. */
#include "cureduce.h"

#include "../common/convert.h"
#include "../common/float_order.h"
#include "../common/matrix_shape.h"
#include "decode.h"
#include "work.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef double (*round_fn)(double);

static double round_f64(double x) { return x; }
static double round_f32(double x) { return (float)x; }
/* Once: a mean's quotient need not be exact in f32 (convert.h). */
static double round_f16(double x) { return cr_f16_to_float(cr_double_to_f16(x)); }
static double round_bf16(double x) { return cr_bf16_to_float(cr_double_to_bf16(x)); }

static round_fn rounding_of(cureduce_dtype acc) {
  switch (acc) {
  case CUREDUCE_F32: return round_f32;
  case CUREDUCE_F16: return round_f16;
  case CUREDUCE_BF16: return round_bf16;
  default: return round_f64;
  }
}

static int is_sum_like(cureduce_op op) {
  return op == CUREDUCE_SUM || op == CUREDUCE_SUMSQ || op == CUREDUCE_MEAN;
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

/* Decode elements [first, first + count) as doubles, whatever the input dtype (integers are
   rounded to nearest when beyond 2^53, as the GPU's conversion does). */
static void decode_as_double(cureduce_dtype in, const void *h_in, uint64_t first, size_t count,
                             uint64_t stride, double *buf) {
  if (cr_dtype_is_float(in)) {
    cr_decode_float(in, h_in, first, count, stride, buf);
    return;
  }
  int64_t *ints = (int64_t *)buf; /* same size: decode in place, then convert */
  cr_decode_int(in, h_in, first, count, stride, ints);
  for (size_t k = 0; k < count; ++k)
    buf[k] = (double)ints[k];
}

/* Each element as the op sees it, rounded to the accumulator: x, |x| or x * x. */
static void transform(cureduce_op op, double *buf, size_t count, round_fn r) {
  for (size_t k = 0; k < count; ++k) {
    const double x = r(buf[k]);
    buf[k] = op == CUREDUCE_ABSMAX ? fabs(x) : op == CUREDUCE_SUMSQ ? r(x * x) : x;
  }
}

static double reduce_float(cureduce_op op, cureduce_dtype in, const void *h_in, uint64_t n, round_fn r,
                           const cr_cpu_work *w) {
  double *buf = w->buf;
  /* Chunk sums are combined as a binary counter: level k holds the sum of 2^k chunks, so the
     whole sum stays pairwise. */
  double level[64];
  int have[64] = {0};
  double acc = op == CUREDUCE_MIN ? INFINITY : (is_sum_like(op) ? -0.0 : -INFINITY);
  for (uint64_t first = 0; first < n; first += CR_DECODE_CHUNK) {
    const size_t count = (size_t)(n - first < CR_DECODE_CHUNK ? n - first : CR_DECODE_CHUNK);
    decode_as_double(in, h_in, first, count, w->stride, buf);
    transform(op, buf, count, r);
    if (!is_sum_like(op)) {
      for (size_t k = 0; k < count; ++k)
        acc = op == CUREDUCE_MIN ? cr_float_min(acc, buf[k]) : cr_float_max(acc, buf[k]);
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
  if (is_sum_like(op))
    for (int k = 0; k < 64; ++k)
      if (have[k])
        acc = r(level[k] + acc);
  if (op == CUREDUCE_MEAN)
    acc = r(acc / (double)n); /* n < 2^53 in practice, so (double)n is exact */
  return acc;
}

/* Index of the first minimum (or maximum) of values rounded to the accumulator; the first
   NaN wins. Integer accumulators compare exactly as int64. */
static int64_t arg_scan(cureduce_op op, cureduce_dtype in, const void *h_in, uint64_t n, cureduce_dtype acc,
                        const cr_cpu_work *w) {
  void *buf = w->buf;
  const int float_acc = cr_dtype_is_float(acc);
  const round_fn r = rounding_of(acc);
  double best_f = 0;
  int64_t best_i = 0, best = -1;
  for (uint64_t first = 0; first < n; first += CR_DECODE_CHUNK) {
    const size_t count = (size_t)(n - first < CR_DECODE_CHUNK ? n - first : CR_DECODE_CHUNK);
    if (float_acc)
      decode_as_double(in, h_in, first, count, w->stride, buf);
    else
      cr_decode_int(in, h_in, first, count, w->stride, buf);
    for (size_t k = 0; k < count; ++k) {
      const int64_t idx = (int64_t)(first + k);
      if (float_acc) {
        const double x = r(((double *)buf)[k]);
        if (best >= 0 && isnan(best_f))
          return best;
        const int better = best < 0 || isnan(x) || (op == CUREDUCE_ARGMIN ? x < best_f : x > best_f);
        if (better)
          best = idx, best_f = x;
      } else {
        const int64_t x = ((int64_t *)buf)[k];
        if (best < 0 || (op == CUREDUCE_ARGMIN ? x < best_i : x > best_i))
          best = idx, best_i = x;
      }
    }
  }
  return best;
}

static int64_t reduce_int(cureduce_op op, cureduce_dtype in, const void *h_in, uint64_t n,
                          const cr_cpu_work *w) {
  int64_t *buf = (int64_t *)w->buf;
  uint64_t sum = 0; /* unsigned: wrapping is defined */
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (uint64_t first = 0; first < n; first += CR_DECODE_CHUNK) {
    const size_t count = (size_t)(n - first < CR_DECODE_CHUNK ? n - first : CR_DECODE_CHUNK);
    cr_decode_int(in, h_in, first, count, w->stride, buf);
    for (size_t k = 0; k < count; ++k) {
      const uint64_t u = (uint64_t)buf[k];
      sum += op == CUREDUCE_SUMSQ ? u * u : u;
      /* |x| with wrapping: |INT64_MIN| stays INT64_MIN, as on the GPU */
      const int64_t x = op == CUREDUCE_ABSMAX && buf[k] < 0 ? (int64_t)(0 - u) : buf[k];
      lo = x < lo ? x : lo;
      hi = x > hi ? x : hi;
    }
  }
  if (op == CUREDUCE_SUM || op == CUREDUCE_SUMSQ)
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

cureduce_status cr_cpu_reduce_in(cureduce_op op, cureduce_dtype in_dtype, const void *h_in, uint64_t n,
                                 cureduce_dtype acc_dtype, void *h_out, const cr_cpu_work *w) {
  if (n == 0) {
    if (!cr_op_empty_is_zero(op))
      return CUREDUCE_EMPTY;
    if (cr_dtype_is_float(acc_dtype))
      return cureduce_from_double(acc_dtype, 0.0, h_out); /* +0.0, not the identity -0.0 */
    write_int(acc_dtype, 0, h_out);
    return CUREDUCE_SUCCESS;
  }
  if (cr_op_is_exact(op))
    return cr_cpu_exact(op, in_dtype, h_in, n, acc_dtype, h_out, w);
  if (op == CUREDUCE_ARGMIN || op == CUREDUCE_ARGMAX) {
    const int64_t idx = arg_scan(op, in_dtype, h_in, n, acc_dtype, w);
    memcpy(h_out, &idx, sizeof idx);
    return CUREDUCE_SUCCESS;
  }
  if (cr_dtype_is_float(acc_dtype)) {
    const double v = reduce_float(op, in_dtype, h_in, n, rounding_of(acc_dtype), w);
    return cureduce_from_double(acc_dtype, v, h_out); /* exact: v is a value of acc_dtype */
  }
  write_int(acc_dtype, reduce_int(op, in_dtype, h_in, n, w), h_out);
  return CUREDUCE_SUCCESS;
}

cureduce_status cureduce_cpu_reduce(cureduce_op op, cureduce_dtype in_dtype, const void *h_in, uint64_t n,
                                    cureduce_dtype acc_dtype, void *h_out) {
  cureduce_status st = cureduce_resolve_acc(op, in_dtype, acc_dtype, &acc_dtype);
  if (st != CUREDUCE_SUCCESS)
    return st;
  if (!h_out || (n > 0 && !h_in))
    return CUREDUCE_ERROR_NULL_POINTER;
  if (!cr_extent_ok(n, cureduce_dtype_size(in_dtype)))
    return CUREDUCE_ERROR_INVALID_VALUE;
  if (n == 0) /* nothing to read: no work to allocate */
    return cr_cpu_reduce_in(op, in_dtype, h_in, 0, acc_dtype, h_out, NULL);
  cr_cpu_work w;
  st = cr_cpu_work_alloc(&w, cr_op_is_exact(op));
  if (st != CUREDUCE_SUCCESS)
    return st;
  st = cr_cpu_reduce_in(op, in_dtype, h_in, n, acc_dtype, h_out, &w);
  cr_cpu_work_free(&w);
  return st;
}

cureduce_status cureduce_cpu_sum_exact(cureduce_dtype in_dtype, const void *h_in, uint64_t n,
                                       cureduce_dtype out_dtype, void *h_out) {
  return cureduce_cpu_reduce(CUREDUCE_SUM_EXACT, in_dtype, h_in, n, out_dtype, h_out);
}
