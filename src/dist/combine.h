/* The per-rank partial of a distributed reduction and its combine in rank order, compiled for
 * the host and the device: the GPU combines with this code after the all-gather, and the CPU
 * test (tests/test_dist_combine.c) combines simulated ranks with the same code.
 *
 * A partial is CR_DIST_PARTIAL_WORDS int64 words, the same on every rank, so the partials of
 * all ranks travel in one all-gather of ncclInt64:
 *   count  the number of elements the rank reduced (0: the partial holds nothing);
 *   index  ARGMIN/ARGMAX: the index of the rank's winner within its shard; else 0;
 *   value  the rank's result of cr_dist_local_op(op, acc) in the accumulator dtype, in the low
 *          bytes as cureduce_reduce writes it, the other bytes zero; for ARGMIN/ARGMAX, the
 *          winning element itself as the key (cr_dist_set_key_*): a double for a float
 *          accumulator, an int64 for an integer one.
 * The exact sums do not use partials: their states add as integers (cureduce.h).
 *
 * The combine visits the ranks in order 0, 1, ... and skips empty ones, so the same partials
 * give the same bits wherever it runs (docs/multi_gpu.md says what each op gives). */
#ifndef CUREDUCE_DIST_COMBINE_H
#define CUREDUCE_DIST_COMBINE_H

#include "cureduce.h"

#include "../common/float_order.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

#define CR_DIST_PARTIAL_WORDS 3

typedef struct cr_dist_partial {
  int64_t count;
  int64_t index;
  int64_t value;
} cr_dist_partial;

/* The op each rank runs on its shard: op itself, but MEAN into f64, which sums locally (the
   combine divides once). A local mean m of f32, f16 or bf16 times its count is exact in double
   (count < 2^29 for f32): the combine adds the ranks' rounded means times their counts; with
   one rank that gives the single-GPU MEAN's bits, which divide a sum held in more than f32. */
CR_HD cureduce_op cr_dist_local_op(cureduce_op op, cureduce_dtype acc) {
  return op == CUREDUCE_MEAN && acc == CUREDUCE_F64 ? CUREDUCE_SUM : op;
}

CR_HD int cr_dist_is_arg(cureduce_op op) { return op == CUREDUCE_ARGMIN || op == CUREDUCE_ARGMAX; }

CR_HD int cr_dist_float_acc(cureduce_dtype acc) {
  return acc == CUREDUCE_F32 || acc == CUREDUCE_F64 || acc == CUREDUCE_F16 || acc == CUREDUCE_BF16;
}

/* x rounded once to nearest even into acc (f64, f32, f16, bf16), as a double. */
CR_HD double cr_dist_round(cureduce_dtype acc, double x) {
  switch (acc) {
  case CUREDUCE_F32: return (double)(float)x;
#if defined(__CUDA_ARCH__)
  case CUREDUCE_F16: return (double)__half2float(__double2half(x));
  case CUREDUCE_BF16: return (double)__bfloat162float(__double2bfloat16(x));
#else
  case CUREDUCE_F16:
  case CUREDUCE_BF16: {
    uint16_t h = 0;
    double r = x;
    (void)cureduce_from_double(acc, x, &h); /* rounds once, as on the GPU */
    (void)cureduce_to_double(acc, &h, &r);
    return r;
  }
#endif
  default: return x;
  }
}

/* One float accumulator value at p, as a double. */
CR_HD double cr_dist_load_float(cureduce_dtype acc, const void *p) {
  switch (acc) {
  case CUREDUCE_F32: {
    float f;
    memcpy(&f, p, sizeof f);
    return (double)f;
  }
  case CUREDUCE_F64: {
    double d;
    memcpy(&d, p, sizeof d);
    return d;
  }
  default: {
#if defined(__CUDA_ARCH__)
    unsigned short u;
    memcpy(&u, p, sizeof u);
    return acc == CUREDUCE_F16 ? (double)__half2float(__ushort_as_half(u))
                               : (double)__bfloat162float(__ushort_as_bfloat16(u));
#else
    double d = 0;
    (void)cureduce_to_double(acc, p, &d);
    return d;
#endif
  }
  }
}

/* x (already a value of acc) written as one element of acc at p. */
CR_HD void cr_dist_store_float(cureduce_dtype acc, double x, void *p) {
  switch (acc) {
  case CUREDUCE_F32: {
    const float f = (float)x;
    memcpy(p, &f, sizeof f);
    break;
  }
  case CUREDUCE_F64: memcpy(p, &x, sizeof x); break;
  default: {
#if defined(__CUDA_ARCH__)
    const unsigned short u = acc == CUREDUCE_F16 ? __half_as_ushort(__float2half_rn((float)x))
                                                 : __bfloat16_as_ushort(__float2bfloat16_rn((float)x));
    memcpy(p, &u, sizeof u);
#else
    (void)cureduce_from_double(acc, x, p);
#endif
  }
  }
}

/* One integer accumulator value (i32 or i64) at p, sign-extended. */
CR_HD int64_t cr_dist_load_int(cureduce_dtype acc, const void *p) {
  if (acc == CUREDUCE_I32) {
    int32_t v;
    memcpy(&v, p, sizeof v);
    return (int64_t)v;
  }
  int64_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

/* The ARGMIN/ARGMAX key of a rank: its winning element's value, exactly (a double for a float
   accumulator; every offered input converts into it without rounding, but int64 beyond 2^53,
   which rounds as the library's comparison does), or an integer for an integer one. */
CR_HD void cr_dist_set_key_float(cr_dist_partial *p, double x) { memcpy(&p->value, &x, sizeof x); }
CR_HD void cr_dist_set_key_int(cr_dist_partial *p, int64_t x) { p->value = x; }

/* ARGMIN/ARGMAX: the global index (elements of lower ranks + local index) of the first winner.
   A later rank replaces the best only when strictly better, so ties keep the lowest global
   index; a NaN beats any number and, once found, is kept (the first NaN's index). */
CR_HD void cr_dist_combine_arg(cureduce_op op, cureduce_dtype acc, const cr_dist_partial *p, int world,
                               uint64_t stride, void *out) {
  const int is_min = op == CUREDUCE_ARGMIN, fl = cr_dist_float_acc(acc);
  int64_t offset = 0, best = -1, best_i = 0;
  double best_f = 0.0;
  for (int r = 0; r < world; ++r) {
    const cr_dist_partial *q = p + (uint64_t)r * stride;
    if (q->count > 0) {
      const int64_t at = offset + q->index;
      if (fl) {
        double x;
        memcpy(&x, &q->value, sizeof x);
        if (best < 0 || (!isnan(best_f) && (isnan(x) || (is_min ? x < best_f : x > best_f))))
          best = at, best_f = x;
      } else if (best < 0 || (is_min ? q->value < best_i : q->value > best_i)) {
        best = at, best_i = q->value;
      }
    }
    offset += q->count;
  }
  if (best >= 0)
    memcpy(out, &best, sizeof best);
}

/* Integer accumulators: sums wrap modulo 2^bits of the accumulator (so they equal the sum of
   the whole array however it was split); MIN, MAX and ABSMAX (whose partials are already
   magnitudes) compare as int64. */
CR_HD void cr_dist_combine_int(cureduce_op op, cureduce_dtype acc, const cr_dist_partial *p, int world,
                               uint64_t stride, void *out) {
  const int sum = op == CUREDUCE_SUM || op == CUREDUCE_SUMSQ;
  uint64_t s = 0;
  int64_t best = 0;
  int any = 0;
  for (int r = 0; r < world; ++r) {
    const cr_dist_partial *q = p + (uint64_t)r * stride;
    if (q->count == 0)
      continue;
    const int64_t v = cr_dist_load_int(acc, &q->value);
    s += (uint64_t)v;
    if (!any || (op == CUREDUCE_MIN ? v < best : v > best))
      best = v;
    any = 1;
  }
  if (!any && !sum)
    return;
  const int64_t r64 = sum ? (int64_t)s : best;
  if (acc == CUREDUCE_I32) {
    const int32_t r32 = (int32_t)(uint32_t)(uint64_t)r64;
    memcpy(out, &r32, sizeof r32);
  } else {
    memcpy(out, &r64, sizeof r64);
  }
}

/* Float accumulators: MIN, MAX and ABSMAX with the library's NaN and signed-zero rules (the
   same value as over the whole array); SUM, SUMSQ and MEAN add the partials in double, in rank
   order starting from -0.0 (the identity that keeps a sum of only -0.0 at -0.0), and round
   once into the accumulator; MEAN adds the ranks' sums (local means times their counts, but
   into f64) and divides by the total count before that one rounding. */
CR_HD void cr_dist_combine_float(cureduce_op op, cureduce_dtype acc, const cr_dist_partial *p, int world,
                                 uint64_t stride, void *out) {
  const int sum = op == CUREDUCE_SUM || op == CUREDUCE_SUMSQ || op == CUREDUCE_MEAN;
  double s = -0.0, best = 0.0;
  int64_t total = 0;
  for (int r = 0; r < world; ++r) {
    const cr_dist_partial *q = p + (uint64_t)r * stride;
    if (q->count == 0)
      continue;
    const double v = cr_dist_load_float(acc, &q->value);
    if (cr_dist_local_op(op, acc) == CUREDUCE_MEAN)
      s += v * (double)q->count;
    else if (sum)
      s += v;
    else if (total == 0)
      best = v;
    else
      best = op == CUREDUCE_MIN ? cr_float_min(best, v) : cr_float_max(best, v);
    total += q->count;
  }
  if (total == 0) { /* no elements anywhere: the library's empty sum, else nothing */
    if (op == CUREDUCE_SUM || op == CUREDUCE_SUMSQ)
      cr_dist_store_float(acc, 0.0, out);
    return;
  }
  if (op == CUREDUCE_MEAN)
    s /= (double)total;
  cr_dist_store_float(acc, sum ? cr_dist_round(acc, s) : best, out);
}

/* The result of op over all ranks from their partials (rank r's at p[r * stride]), written to
   out as cureduce_reduce writes it: an acc value, or an int64 index for ARGMIN/ARGMAX. With no
   elements on any rank, SUM and SUMSQ write zero and the other ops write nothing. */
CR_HD void cr_dist_combine(cureduce_op op, cureduce_dtype acc, const cr_dist_partial *p, int world,
                           uint64_t stride, void *out) {
  if (cr_dist_is_arg(op))
    cr_dist_combine_arg(op, acc, p, world, stride, out);
  else if (cr_dist_float_acc(acc))
    cr_dist_combine_float(op, acc, p, world, stride, out);
  else
    cr_dist_combine_int(op, acc, p, world, stride, out);
}

#endif
