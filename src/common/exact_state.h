/* The exact running state of a sum, shared by the CPU and the GPU: adding a double to it,
 * and rounding it once to a float format. Header-only so that the host and the device run
 * the same rounding code (docs/exact.md says why the result is exact).
 *
 * Layout: CUREDUCE_EXACT_STATE_WORDS int64 words.
 *   words 0 .. CR_EXACT_LIMBS - 1: a fixed-point integer in radix 2^32, limb i weighing
 *     2^(32 i - 1074), so bit 0 of limb 0 is the smallest subnormal double. 72 limbs reach
 *     2^1230: every finite double, and the sum of up to 2^64 of them, fit with room to spare.
 *     A limb may hold any int64; normalizing (carrying) leaves the value unchanged.
 *   CR_EXACT_NAN, CR_EXACT_POS_INF, CR_EXACT_NEG_INF: positive when a NaN, +inf or -inf
 *     was added.
 *   CR_EXACT_NOT_NEG_ZERO: positive when a value other than -0.0 was added (the sum of
 *     only -0.0 values is -0.0).
 *   CR_EXACT_COUNT: the number of elements added (the mean's divisor).
 * Every word combines by integer addition, so two states add word by word, in any order, to
 * the state of both inputs. Limbs kept below 2^33 in magnitude (as every library call leaves
 * them) take 2^29 such additions and stay below 2^62, which the rounding (cr_exact_value_in)
 * needs. */
#ifndef CUREDUCE_EXACT_STATE_H
#define CUREDUCE_EXACT_STATE_H

#include "cureduce.h"

#include "host_device.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define CR_EXACT_LIMBS 72
#define CR_EXACT_LIMB_BITS 32
#define CR_EXACT_LSB_EXP (-1074)
#define CR_EXACT_NAN 72
#define CR_EXACT_POS_INF 73
#define CR_EXACT_NEG_INF 74
#define CR_EXACT_NOT_NEG_ZERO 75
#define CR_EXACT_COUNT 76

#if CUREDUCE_EXACT_STATE_WORDS < CR_EXACT_COUNT + 1
#error "the public state size is smaller than the layout"
#endif

#define CR_EXACT_DIGIT ((int64_t)1 << CR_EXACT_LIMB_BITS)

CR_HD uint64_t cr_exact_bits(double x) {
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

/* The double whose bits are u. */
CR_HD double cr_exact_from_bits(uint64_t u) {
  double x;
  memcpy(&x, &u, sizeof x);
  return x;
}

/* A finite nonzero x as three signed digits d[0..2] to add at limbs k, k+1, k+2; each digit is
   below 2^32 in magnitude. Returns k, or -1 for zero. */
CR_HD int cr_exact_split(double x, int64_t d[3]) {
  const uint64_t bits = cr_exact_bits(x);
  const int field = (int)((bits >> 52) & 0x7ffu);
  uint64_t mant = bits & (((uint64_t)1 << 52) - 1);
  if (field == 0 && mant == 0)
    return -1;
  int exp = CR_EXACT_LSB_EXP;
  if (field != 0) {
    mant |= (uint64_t)1 << 52;
    exp = field - 1075;
  }
  const int offset = exp - CR_EXACT_LSB_EXP;
  const int k = offset / CR_EXACT_LIMB_BITS, s = offset % CR_EXACT_LIMB_BITS;
  const uint64_t lo = (mant & 0xffffffffu) << s; /* < 2^63 */
  const uint64_t hi = (mant >> 32) << s;         /* < 2^52 */
  const uint64_t d1 = (lo >> 32) + (hi & 0xffffffffu);
  const int64_t sign = (bits >> 63) ? -1 : 1;
  d[0] = sign * (int64_t)(lo & 0xffffffffu);
  d[1] = sign * (int64_t)(d1 & 0xffffffffu);
  d[2] = sign * (int64_t)((hi >> 32) + (d1 >> 32));
  return k;
}

/* Add x (any double: NaN and infinities are recorded) to the state's limbs and flags; the
   caller counts elements (CR_EXACT_COUNT). The host's way: the GPU adds with atomics
   (device/exact_block_state.cuh). */
CR_HD void cr_exact_add(int64_t *w, double x) {
  if (x != 0.0 || !signbit(x))
    w[CR_EXACT_NOT_NEG_ZERO] = 1;
  if (isnan(x)) {
    w[CR_EXACT_NAN] = 1;
  } else if (isinf(x)) {
    w[x > 0 ? CR_EXACT_POS_INF : CR_EXACT_NEG_INF] = 1;
  } else {
    int64_t d[3];
    const int k = cr_exact_split(x, d);
    if (k >= 0) {
      w[k] += d[0];
      w[k + 1] += d[1];
      w[k + 2] += d[2];
    }
  }
}

/* Carry limbs [lo, hi) into the next one, so that each of them becomes a digit in [0, 2^32);
   the value is unchanged. */
CR_HD void cr_exact_carry(int64_t *limb, int lo, int hi) {
  for (int i = lo; i < hi; ++i) {
    const int64_t carry = limb[i] >> CR_EXACT_LIMB_BITS; /* arithmetic shift: floor division */
    limb[i] -= carry * CR_EXACT_DIGIT;
    limb[i + 1] += carry;
  }
}

/* Where a value is rounded to: `precision` significant bits, no bit below 2^min_exp, and
   values beyond max_finite overflow (to infinity, or to NaN where the format has none). */
typedef struct cr_exact_format {
  int precision, min_exp;
  double max_finite;
} cr_exact_format;

CR_HD cr_exact_format cr_exact_format_of(cureduce_dtype d) {
  cr_exact_format f;
  switch (d) {
  case CUREDUCE_F32: f.precision = 24, f.min_exp = -149, f.max_finite = 0x1.fffffep127; break;
  case CUREDUCE_F16: f.precision = 11, f.min_exp = -24, f.max_finite = 65504.0; break;
  case CUREDUCE_BF16: f.precision = 8, f.min_exp = -133, f.max_finite = 0x1.fep127; break;
  case CUREDUCE_F8_E4M3: f.precision = 4, f.min_exp = -9, f.max_finite = 448.0; break;
  case CUREDUCE_F8_E5M2: f.precision = 3, f.min_exp = -16, f.max_finite = 57344.0; break;
  default: f.precision = 53, f.min_exp = -1074, f.max_finite = 0x1.fffffffffffffp1023; break;
  }
  return f;
}

/* Digit i of a magnitude whose digits outside [lo, hi] are zero (those are never stored). */
CR_HD uint64_t cr_exact_digit(const int64_t *m, int lo, int hi, int i) {
  return i >= lo && i <= hi ? (uint64_t)m[i] : 0u;
}

/* Bits [pos, pos + count) (count <= 60) of a magnitude held in normalized digits m[lo .. hi]
   (all others zero). */
CR_HD uint64_t cr_exact_bits_at(const int64_t *m, int lo, int hi, int pos, int count) {
  const int j = pos / CR_EXACT_LIMB_BITS, s = pos % CR_EXACT_LIMB_BITS;
  unsigned __int128 v = 0;
  for (int t = 2; t >= 0; --t)
    v = (v << CR_EXACT_LIMB_BITS) | cr_exact_digit(m, lo, hi, j + t);
  return (uint64_t)(v >> s) & ((((uint64_t)1) << count) - 1);
}

/* Whether any bit below position pos is set in digits m[lo .. hi] (all others zero). */
CR_HD int cr_exact_any_below(const int64_t *m, int lo, int hi, int pos) {
  const int j = pos / CR_EXACT_LIMB_BITS, s = pos % CR_EXACT_LIMB_BITS;
  for (int i = lo; i < j && i <= hi; ++i)
    if (m[i] != 0)
      return 1;
  return s > 0 && (cr_exact_digit(m, lo, hi, j) & ((CR_EXACT_DIGIT - 1) >> (CR_EXACT_LIMB_BITS - s))) != 0;
}

/* Position of the highest set bit of a nonzero 32-bit digit. */
CR_HD int cr_exact_msb32(uint32_t x) {
  int r = 0;
  for (int step = 16; step > 0; step >>= 1)
    if (x >> step) {
      x >>= step;
      r += step;
    }
  return r;
}

/* The lowest and highest nonzero limbs of a state (-1 and -1 when every limb is zero). */
CR_HD void cr_exact_range(const int64_t *w, int *bottom, int *top) {
  *bottom = -1;
  *top = -1;
  for (int i = 0; i < CR_EXACT_LIMBS; ++i)
    if (w[i] != 0) {
      *bottom = *bottom < 0 ? i : *bottom;
      *top = i;
    }
}

/* The state's sum (mean = 0) or its sum divided by its count (mean = 1), rounded to nearest,
   ties to even, once, to format f, as a double that holds that value exactly (or +-inf or
   NaN: the caller encodes infinity as NaN for a format without one). The count must be
   positive for a mean. bottom and top are the state's cr_exact_range: only those limbs and
   the few around them are worked on (a handful in real data), so the GPU, which finds the
   range with a warp, keeps its one rounding thread quick. */
CR_HD double cr_exact_value_in(const int64_t *w, int bottom, int top, int mean, cr_exact_format f) {
  if (w[CR_EXACT_NAN] > 0 || (w[CR_EXACT_POS_INF] > 0 && w[CR_EXACT_NEG_INF] > 0))
    return NAN;
  if (w[CR_EXACT_POS_INF] > 0 || w[CR_EXACT_NEG_INF] > 0)
    return w[CR_EXACT_POS_INF] > 0 ? INFINITY : -INFINITY;

  const double zero = (w[CR_EXACT_COUNT] > 0 && w[CR_EXACT_NOT_NEG_ZERO] == 0) ? -0.0 : 0.0;
  if (top < 0)
    return zero;
  /* m[0] is a fraction limb (weight 2^(-1074 - 32)) for the mean's quotient; m[i + 1] holds
     limb i. Limbs below 2^62 in magnitude carry less than 2^31 out of the top one and then at
     most one more: three limbs above it hold the whole carry and the sign. Only digits
     [low, end] are ever stored; the others are zero. */
  enum { M = CR_EXACT_LIMBS + 1, LSB = CR_EXACT_LSB_EXP - CR_EXACT_LIMB_BITS };
  int64_t m[M];
  const int first = bottom + 1, end = top + 4 < M - 1 ? top + 4 : M - 1;
  for (int i = first; i <= end; ++i)
    m[i] = i - 1 < CR_EXACT_LIMBS ? w[i - 1] : 0;
  cr_exact_carry(m, first, end);
  double sign = 1.0;
  if (m[end] < 0) {
    for (int i = first; i <= end; ++i)
      m[i] = -m[i];
    cr_exact_carry(m, first, end);
    sign = -1.0;
  }
  int hi = end;
  while (hi >= first && m[hi] == 0)
    --hi;
  if (hi < first)
    return zero;

  int sticky = 0, low = first;
  if (mean) {
    /* Long division by the count, digit by digit from the top, as far as the rounding needs:
       the quotient's top digit is at hi - 2 or above (the count is below 2^64), so its 55
       bits around the rounding position lie at or above digit hi - 5. Below that the
       remainder and the digits not divided only tell whether anything is left (sticky). */
    const uint64_t count = (uint64_t)w[CR_EXACT_COUNT];
    const int stop = hi - 5 > 0 ? hi - 5 : 0;
    for (int i = stop; i < first; ++i)
      m[i] = 0;
    unsigned __int128 rem = 0;
    for (int i = hi; i >= stop; --i) {
      const unsigned __int128 cur = (rem << CR_EXACT_LIMB_BITS) | (uint64_t)m[i];
      m[i] = (int64_t)(cur / count);
      rem = cur % count;
    }
    sticky = rem != 0;
    low = stop < first ? stop : first;
    while (hi > stop && m[hi] == 0)
      --hi;
    if (m[hi] == 0) /* only when the whole quotient is below 2^-1106: it rounds to zero */
      return sign < 0 ? -0.0 : 0.0;
  }

  const int msb = hi * CR_EXACT_LIMB_BITS + cr_exact_msb32((uint32_t)m[hi]);
  int lsb = msb - (f.precision - 1); /* keep bits [lsb, msb], fewer in the subnormal range */
  if (lsb < f.min_exp - LSB)
    lsb = f.min_exp - LSB;
  uint64_t mant = lsb <= msb ? cr_exact_bits_at(m, low, end, lsb, msb - lsb + 1) : 0;
  if (lsb > 0) { /* round to nearest, ties to even */
    const int round = (int)cr_exact_bits_at(m, low, end, lsb - 1, 1);
    sticky = sticky || cr_exact_any_below(m, low, end, lsb - 1);
    if (round && (sticky || (mant & 1)))
      ++mant; /* may carry to 2^precision: still exact in a double */
  }
  const double v = ldexp((double)mant, lsb + LSB);
  return sign * (v > f.max_finite ? INFINITY : v);
}

/* Position of the highest set bit of a nonzero 64-bit word. */
CR_HD int cr_exact_msb64(uint64_t x) {
#if defined(__CUDA_ARCH__)
  return 63 - __clzll((long long)x);
#else
  return 63 - __builtin_clzll(x);
#endif
}

/* cr_exact_value_in's sum (not a mean) where the nonzero limbs span at most four and the top
   one lies in [-2^62, 2^62) (the state of most data): the value is then v 2^32 + d times
   2^(32 (top - 3) - 1074), v the signed 128-bit integer of the limbs top - 2 .. top plus the
   carry of limb top - 3 and d its digit in [0, 2^32) (zero unless four limbs are nonzero),
   rounded by shifts, with no digits. Four limbs need at least 2^54 in the magnitude's top part,
   so that d only decides the sticky bit. Every word is read before any is used (the GPU's warp
   then waits for one round of loads, not a chain). The same value; returns 0 where the case does
   not apply (flags, wider spans, larger limbs, a four-limb value too small). */
CR_HD int cr_exact_value_narrow(const int64_t *w, int bottom, int top, cr_exact_format f, double *value) {
  if (top < 0 || top - bottom > 3)
    return 0;
  /* limbs below bottom are zero: reading them adds nothing */
  const int64_t nan = w[CR_EXACT_NAN], pos_inf = w[CR_EXACT_POS_INF], neg_inf = w[CR_EXACT_NEG_INF];
  const int64_t l3 = w[top], l2 = top >= 1 ? w[top - 1] : 0, l1 = top >= 2 ? w[top - 2] : 0,
                l0 = top >= 3 ? w[top - 3] : 0;
  const int64_t limit = (int64_t)1 << 62;
  if (nan > 0 || pos_inf > 0 || neg_inf > 0 || l3 >= limit || l3 < -limit)
    return 0;
  /* |v| <= 2^126 + 2^95 + 2^63 + 2^31 < 2^127 */
  const __int128 v = (__int128)l3 * ((__int128)1 << 64) + (__int128)l2 * CR_EXACT_DIGIT + (__int128)l1 +
                     (l0 >> CR_EXACT_LIMB_BITS);
  const uint32_t d = (uint32_t)l0;
  if (v == 0 && d == 0) {
    *value = (w[CR_EXACT_COUNT] > 0 && w[CR_EXACT_NOT_NEG_ZERO] == 0) ? -0.0 : 0.0;
    return 1;
  }
  /* the magnitude: mag 2^32 + (a nonzero digit where sticky_below) */
  const int sticky_below = d != 0;
  const unsigned __int128 mag = v < 0 ? -(unsigned __int128)v - (unsigned)sticky_below : (unsigned __int128)v;
  if (top - bottom == 3 && (mag >> 54) == 0)
    return 0;
  const uint64_t high = (uint64_t)(mag >> 64);
  const int msb = high != 0 ? 64 + cr_exact_msb64(high) : cr_exact_msb64((uint64_t)mag);
  const int base = CR_EXACT_LIMB_BITS * (top - 2) + CR_EXACT_LSB_EXP; /* the weight of mag's bit 0 */
  int lsb = msb - (f.precision - 1); /* keep bits [lsb, msb], fewer in the subnormal range */
  if (lsb < f.min_exp - base)
    lsb = f.min_exp - base;
  /* bits msb .. msb - 63 in one word; those below it and d only as the sticky bit */
  const unsigned __int128 norm = mag << (127 - msb);
  const uint64_t top64 = (uint64_t)(norm >> 64);
  const int kept = msb - lsb + 1; /* below 1 where the value lies under the lowest bit kept */
  uint64_t mant = 0;
  if (kept >= 0) {
    mant = kept > 0 ? top64 >> (64 - kept) : 0;
    const uint64_t rest = kept > 0 ? top64 << kept : top64; /* the rounding bit on top */
    const int sticky = sticky_below || (rest << 1) != 0 || (uint64_t)norm != 0;
    if ((rest >> 63) && (sticky || (mant & 1)))
      ++mant; /* may carry to 2^precision: still exact in a double */
  }
  /* mant 2^s, s >= min_exp >= -1074: a power of two built from its bits (infinity from 2^1024,
     where the value overflows every format) */
  const int s = lsb + base;
  const uint64_t scale_bits = s > 1023     ? (uint64_t)0x7ff << 52
                              : s >= -1022 ? (uint64_t)(s + 1023) << 52
                                           : (uint64_t)1 << (s + 1074);
  const double r = mant != 0 ? (double)mant * cr_exact_from_bits(scale_bits) : 0.0;
  *value = (v < 0 ? -1.0 : 1.0) * (r > f.max_finite ? INFINITY : r);
  return 1;
}

/* a + b = *s + the return value exactly: *s the rounded sum, the result its error (Knuth's
   TwoSum: exact in round to nearest for finite sums). */
CR_HD double cr_two_sum(double a, double b, double *s) {
  const double x = a + b, bp = x - a;
  *s = x;
  return (a - (x - bp)) + (b - bp);
}

/* x rounded to nearest, ties to even, to format f (its precision, its lowest bit, and
   overflow beyond max_finite), as cr_exact_value_in rounds. */
CR_HD double cr_exact_round_double(double x, cr_exact_format f) {
  if (x == 0.0 || !isfinite(x))
    return x;
  /* x's exponent from its bits: -1023 for subnormal x, above the true one, but then lsb is
     below every narrow format's min_exp (-149 and up), which the clamp gives anyway */
  int lsb = (int)((cr_exact_bits(x) >> 52) & 0x7ff) - 1023 - (f.precision - 1);
  if (lsb < f.min_exp)
    lsb = f.min_exp;
  if (lsb > 1023 - 52 || f.precision > 51) { /* beyond every narrow format: scale instead */
    const double v = ldexp(rint(ldexp(x, -lsb)), lsb);
    return fabs(v) > f.max_finite ? copysign(INFINITY, v) : v;
  }
  /* |x| < 2^(lsb + precision) <= 2^(lsb + 51): x + 1.5 2^(lsb + 52) stays in the binade whose
     last bit is 2^lsb, so the addition rounds x to that bit (ties to even: the constant's bit
     there is 0) and the subtraction is exact. */
  const double c = cr_exact_from_bits(((uint64_t)(lsb + 52 + 1023) << 52) | (1ull << 51));
  const double v = copysign((x + c) - c, x);
  return fabs(v) > f.max_finite ? copysign(INFINITY, v) : v;
}

/* The value cr_exact_value would give for a state holding exactly a0 + a1 (finite), the sum
   of `count` elements (not_neg_zero: one of them was not -0.0), without building the state.
   A sum: h + l = a0 + a1 exactly (TwoSum); h is the f64 result, and h moved one step towards
   l where l != 0 and h is even (round to odd) rounds once more, correctly, to any format of
   at most 51 bits. A mean: q = h / count rounded, then h - q count exactly (fma) plus l,
   divided by the count, gives the quotient as a pair within `bound` of the exact one; the
   same rounding applies where that error cannot change it. Returns 0 where it cannot be
   sure (a mean near a rounding boundary, huge counts or tiny sums): the caller then rounds an
   exact state. docs/exact.md#rows-columns-segments-and-axes says why this is exact. */
CR_HD int cr_exact_pair_value(double a0, double a1, uint64_t count, int not_neg_zero, int mean,
                              cr_exact_format f, double *value) {
  double h;
  double l = cr_two_sum(a0, a1, &h);
  if (mean && count == 0) {
    *value = NAN;
    return 1;
  }
  if (h == 0.0) { /* then l == 0: an exact zero */
    *value = count > 0 && !not_neg_zero ? -0.0 : 0.0;
    return 1;
  }
  double bound = 0.0;
  if (mean) {
    if (count >> 53 != 0 || fabs(h) < 0x1p-900)
      return 0;
    const double c = (double)count, q = h / c, r = fma(-q, c, h); /* r: exact remainder */
    double u;
    const double ue = cr_two_sum(r, l, &u); /* r + l = u + ue, |ue| <= half an ulp of u */
    if (u != 0.0 && fabs(u) < 0x1p-960)
      return 0;
    const double t = u / c, te = fma(-t, c, u); /* u = t count + te exactly */
    l = cr_two_sum(q, t, &h);
    /* h + l is the quotient within (ue + te) / count, below 2^-52 |t|; exact when both are 0
       (a count that is a power of two, say), which must not count as near a boundary: such
       quotients often lie on one (a half-ulp low part over 2^k) */
    bound = ue == 0.0 && te == 0.0 ? 0.0 : fabs(t) * 0x1p-49;
  }
  /* h's neighbour on l's side (h is finite and nonzero: one step of its bits) */
  const uint64_t hb = cr_exact_bits(h);
  const uint64_t tb = (l > 0.0) == (h > 0.0) ? hb + 1 : hb - 1;
  double toward;
  memcpy(&toward, &tb, sizeof toward);
  if (f.precision >= 53) {
    /* h + l is h rounded unless (a mean's) l lies within the bound of half a step */
    if (bound > 0.0 && fabs(fabs(l) - 0.5 * fabs(toward - h)) <= bound)
      return 0;
    *value = h;
    return 1;
  }
  if (bound > 0.0 && fabs(l) <= bound)
    return 0;
  const double odd = l != 0.0 && (hb & 1u) == 0 ? toward : h;
  *value = cr_exact_round_double(odd, f);
  return 1;
}

/* The state's value rounded once: a sum by cr_exact_value_narrow where it applies (as the
   GPU's warp finish does), else cr_exact_value_in over the state's whole range. The narrow
   path gives the same value wherever cr_exact_value_in is right, and is right also for
   hand-made states beyond its reach (a top limb at 70 or 71, limbs near the int64 limits
   below the top), so every finish agrees on those too. */
CR_HD double cr_exact_value(const int64_t *w, int mean, cr_exact_format f) {
  int bottom, top;
  cr_exact_range(w, &bottom, &top);
  double v;
  if (!mean && cr_exact_value_narrow(w, bottom, top, f, &v))
    return v;
  return cr_exact_value_in(w, bottom, top, mean, f);
}

/* v (a value of dtype d, or +-inf or NaN) as one element of d at out. A format without
   infinity (e4m3) gets NaN for an overflow. NaN is the format's canonical quiet NaN. */
CR_HD void cr_exact_encode(double v, cureduce_dtype d, void *out) {
  if (d == CUREDUCE_F64) {
    const uint64_t u = isnan(v) ? 0x7ff8000000000000ull : cr_exact_bits(v);
    memcpy(out, &u, sizeof u);
    return;
  }
  if (d == CUREDUCE_F32) {
    const float x = (float)v;
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if (isnan(v))
      u = 0x7fc00000u;
    memcpy(out, &u, sizeof u);
    return;
  }
  /* The narrow formats: exponent and fraction widths, and their NaN. */
  int ebits = 5, fbits = 10;
  uint32_t nan_bits = 0x7e00u;
  int has_inf = 1;
  if (d == CUREDUCE_BF16)
    ebits = 8, fbits = 7, nan_bits = 0x7fc0u;
  else if (d == CUREDUCE_F8_E5M2)
    ebits = 5, fbits = 2, nan_bits = 0x7eu;
  else if (d == CUREDUCE_F8_E4M3)
    ebits = 4, fbits = 3, nan_bits = 0x7fu, has_inf = 0;
  const int bias = (1 << (ebits - 1)) - 1;
  const uint32_t sign = signbit(v) ? 1u << (ebits + fbits) : 0u;
  uint32_t u;
  if (isnan(v) || (isinf(v) && !has_inf)) {
    u = nan_bits | (isnan(v) ? 0u : sign);
  } else if (isinf(v)) {
    u = sign | (((1u << ebits) - 1) << fbits);
  } else if (v == 0.0) {
    u = sign;
  } else {
    const double a = fabs(v);
    const int e = (int)((cr_exact_bits(a) >> 52) & 0x7ffu) - 1023; /* a is a normal double */
    if (e < 1 - bias) /* subnormal in d: a multiple of 2^(1 - bias - fbits) */
      u = sign | (uint32_t)ldexp(a, bias - 1 + fbits);
    else
      u = sign | ((uint32_t)(e + bias) << fbits) | ((uint32_t)ldexp(a, fbits - e) - (1u << fbits));
  }
  if (d == CUREDUCE_F16 || d == CUREDUCE_BF16) {
    const uint16_t h = (uint16_t)u;
    memcpy(out, &h, sizeof h);
  } else {
    *(uint8_t *)out = (uint8_t)u;
  }
}

#endif
