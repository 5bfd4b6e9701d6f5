// The benchmark's CPU references. See references.h.
#include "references.h"

#include "../src/cpu/decode.h"
#include "../src/cpu/superacc.h"

#include <float.h>
#include <math.h>
#include <thread>

namespace bench {
namespace {

// One segment's partial results, combinable in index order.
struct partial {
  superacc sum, sumsq;
  double abs_sum = 0, sq_abs_sum = 0;
  uint64_t isum = 0, isumsq = 0;
  double min = INFINITY, max = -INFINITY, absmax = -INFINITY;
  int64_t argmin = -1, argmax = -1;
  double argmin_v = 0, argmax_v = 0;
  bool has_nan = false;
  int64_t first_nan = -1;
  partial() {
    sa_init(&sum);
    sa_init(&sumsq);
  }
};

// b follows a in index order.
void merge(partial &a, const partial &b) {
  sa_merge(&a.sum, &b.sum);
  sa_merge(&a.sumsq, &b.sumsq);
  a.abs_sum += b.abs_sum, a.sq_abs_sum += b.sq_abs_sum;
  a.isum += b.isum, a.isumsq += b.isumsq;
  a.min = fmin(a.min, b.min), a.max = fmax(a.max, b.max), a.absmax = fmax(a.absmax, b.absmax);
  if (b.argmin >= 0 && (a.argmin < 0 || b.argmin_v < a.argmin_v))
    a.argmin = b.argmin, a.argmin_v = b.argmin_v;
  if (b.argmax >= 0 && (a.argmax < 0 || b.argmax_v > a.argmax_v))
    a.argmax = b.argmax, a.argmax_v = b.argmax_v;
  if (a.first_nan < 0)
    a.first_nan = b.first_nan;
  a.has_nan |= b.has_nan;
}

// Reduce elements [lo, hi) into p.
void reduce_segment(cureduce_dtype d, const void *h, uint64_t lo, uint64_t hi, partial &p) {
  const bool is_float = cr_dtype_is_float(d);
  std::vector<double> f(CR_DECODE_CHUNK);
  std::vector<int64_t> q(CR_DECODE_CHUNK);
  for (uint64_t first = lo; first < hi; first += CR_DECODE_CHUNK) {
    const size_t count = (size_t)(hi - first < CR_DECODE_CHUNK ? hi - first : CR_DECODE_CHUNK);
    if (is_float) {
      cr_decode_float(d, h, first, count, 1, f.data());
    } else {
      cr_decode_int(d, h, first, count, 1, q.data());
      for (size_t k = 0; k < count; ++k)
        f[k] = (double)q[k];
    }
    for (size_t k = 0; k < count; ++k) {
      const double x = f[k];
      const int64_t idx = (int64_t)(first + k);
      if (isnan(x)) {
        p.has_nan = true;
        if (p.first_nan < 0)
          p.first_nan = idx;
        continue;
      }
      sa_add(&p.sum, x);
      sa_add(&p.sumsq, x * x);
      p.abs_sum += fabs(x), p.sq_abs_sum += x * x;
      if (!is_float) {
        const uint64_t u = (uint64_t)q[k];
        p.isum += u, p.isumsq += u * u;
      }
      if (p.argmin < 0 || x < p.argmin_v)
        p.argmin = idx, p.argmin_v = x; // strict: the first wins
      if (p.argmax < 0 || x > p.argmax_v)
        p.argmax = idx, p.argmax_v = x;
      p.min = fmin(p.min, x), p.max = fmax(p.max, x), p.absmax = fmax(p.absmax, fabs(x));
    }
  }
}

// Reduce [lo, hi) with `threads` threads, segments merged in order.
void reduce_parallel(cureduce_dtype d, const void *h, uint64_t lo, uint64_t hi, int threads, partial &out) {
  const uint64_t len = hi - lo;
  const int t = len < (uint64_t)threads * 65536 ? 1 : threads;
  std::vector<partial> parts(t);
  std::vector<std::thread> pool;
  for (int i = 0; i < t; ++i)
    pool.emplace_back([&, i] { reduce_segment(d, h, lo + len * i / t, lo + len * (i + 1) / t, parts[i]); });
  for (auto &th : pool)
    th.join();
  for (auto &p : parts)
    merge(out, p);
}

} // namespace

std::vector<prefix_reference> compute_references(cureduce_dtype dtype, const void *h,
                                                 const std::vector<uint64_t> &sizes, int threads) {
  std::vector<prefix_reference> refs;
  partial acc;
  uint64_t done = 0;
  for (uint64_t n : sizes) {
    reduce_parallel(dtype, h, done, n, threads, acc);
    done = n;
    prefix_reference r;
    r.n = n;
    r.sum = sa_round(&acc.sum, CUREDUCE_F64);
    r.mean = cr_exact_value(acc.sum.w, 1, cr_exact_format_of(CUREDUCE_F64));
    r.sum_f32 = sa_round(&acc.sum, CUREDUCE_F32);
    r.mean_f32 = cr_exact_value(acc.sum.w, 1, cr_exact_format_of(CUREDUCE_F32));
    if (cureduce_supported(CUREDUCE_SUM_EXACT, dtype, dtype) == CUREDUCE_SUCCESS) { // float inputs
      r.sum_own = sa_round(&acc.sum, dtype);
      r.mean_own = cr_exact_value(acc.sum.w, 1, cr_exact_format_of(dtype));
    }
    r.sumsq = sa_round(&acc.sumsq, CUREDUCE_F64);
    r.abs_sum = acc.abs_sum, r.sq_abs_sum = acc.sq_abs_sum;
    r.isum = (int64_t)acc.isum, r.isumsq = (int64_t)acc.isumsq;
    r.min = acc.min, r.max = acc.max, r.absmax = acc.absmax;
    r.argmin = acc.argmin, r.argmax = acc.argmax;
    r.has_nan = acc.has_nan;
    if (acc.has_nan)
      r.argmin = r.argmax = acc.first_nan;
    refs.push_back(r);
  }
  return refs;
}

} // namespace bench
