// Rounding an exact state on the GPU, once, into the output: by one thread, or by a whole warp
// with one digit a lane. Layer: device primitives. The same value as the CPU's cr_exact_value
// (common/exact_state.h); docs/exact.md#finish says how.
#pragma once

#include "../common/exact_state.h"

#include <stdint.h>

namespace cr {

// The rounded result of a state (a copy in registers or shared memory), written to out: one
// thread.
__device__ __forceinline__ void exact_write_result(const int64_t *state, int mean, cureduce_dtype out_dtype,
                                                   void *out) {
  const double v = mean && state[CR_EXACT_COUNT] == 0
                       ? (double)NAN
                       : cr_exact_value(state, mean, cr_exact_format_of(out_dtype));
  cr_exact_encode(v, out_dtype, out);
}

// cr_exact_value_in's common case by a whole warp, one digit a lane: the nonzero limbs lie
// within 22 of each other (the state of most data) and a mean's count is below 2^32, so each
// step of the long division is a 64-bit one. Lane j holds digit m[b0 + j] of
// cr_exact_value_in (m[i] = limb i - 1, m[0] the quotient's fraction digit), so its loops over
// digits become one step of every lane, a ballot or a shuffle: the same value, in about half
// one thread's time (docs/design.md#exact-sums-finish). Every lane gets the value.
// Returns false where the case does not apply (flags, no limbs, wide spans, huge counts).
__device__ __forceinline__ bool exact_value_lanes(const int64_t *w, int bottom, int top, int mean,
                                                  cr_exact_format f, double *value) {
  constexpr int M = CR_EXACT_LIMBS + 1, LSB = CR_EXACT_LSB_EXP - CR_EXACT_LIMB_BITS;
  constexpr unsigned ALL = 0xffffffffu;
  const uint64_t count = (uint64_t)w[CR_EXACT_COUNT];
  if (w[CR_EXACT_NAN] > 0 || w[CR_EXACT_POS_INF] > 0 || w[CR_EXACT_NEG_INF] > 0 || top < 0 ||
      (mean && (count == 0 || count >> 32 != 0)))
    return false;
  const int first = bottom + 1, end = top + 4 < M - 1 ? top + 4 : M - 1;
  const int b0 = first - 6 > 0 ? first - 6 : 0, jfirst = first - b0, jend = end - b0;
  if (jend >= 32)
    return false;
  const int j = threadIdx.x & 31;
  int64_t r = j >= jfirst && j <= jend ? w[b0 + j - 1] : 0;
  // Carry digits [jfirst, jend) into the next one until each lies in [0, 2^32): the same
  // digits as cr_exact_carry's one pass (there is one such form of a value).
  const auto carry = [&] {
    for (;;) {
      const int64_t c = j >= jfirst && j < jend ? r >> CR_EXACT_LIMB_BITS : 0;
      if (!__any_sync(ALL, c != 0))
        return;
      const int64_t in = __shfl_up_sync(ALL, c, 1);
      r += (j > 0 ? in : 0) - c * CR_EXACT_DIGIT;
    }
  };
  carry();
  double sign = 1.0;
  if (__shfl_sync(ALL, r, jend) < 0) {
    r = -r; // zero outside [jfirst, jend]
    carry();
    sign = -1.0;
  }
  const unsigned nonzero = __ballot_sync(ALL, j >= jfirst && j <= jend && r != 0);
  if (nonzero == 0) {
    *value = (w[CR_EXACT_COUNT] > 0 && w[CR_EXACT_NOT_NEG_ZERO] == 0) ? -0.0 : 0.0;
    return true;
  }
  int hi = 31 - __clz((int)nonzero), sticky = 0, jlow = jfirst; // digits outside [jlow, jend] are zero
  if (mean) {
    // Long division of digits hi down to jstop (>= 0: b0 is first - 6, or 0), as
    // cr_exact_value_in does, in every lane on the digits gathered by shuffles.
    const int jstop = (b0 + hi - 5 > 0 ? b0 + hi - 5 : 0) - b0;
    uint64_t d[6], rem = 0;
#pragma unroll
    for (int k = 0; k < 6; ++k)
      d[k] = (uint64_t)__shfl_sync(ALL, r, hi - k >= 0 ? hi - k : 0);
#pragma unroll
    for (int k = 0; k < 6; ++k)
      if (hi - k >= jstop) {
        const uint64_t cur = (rem << CR_EXACT_LIMB_BITS) | d[k];
        d[k] = cur / count;
        rem = cur % count;
      }
#pragma unroll
    for (int k = 0; k < 6; ++k)
      if (j == hi - k && j >= jstop)
        r = (int64_t)d[k];
    sticky = rem != 0;
    jlow = jstop < jfirst ? jstop : jfirst;
    const unsigned q = __ballot_sync(ALL, j >= jstop && j <= hi && r != 0);
    if (q == 0) { // only when the whole quotient is below 2^-1106
      *value = sign < 0 ? -0.0 : 0.0;
      return true;
    }
    hi = 31 - __clz((int)q);
  }
  // Digit i of m (zero outside the window), and bits [pos, pos + n) of the magnitude.
  const auto digit = [&](int i) -> uint64_t {
    const int k = i - b0;
    const uint64_t v = (uint64_t)__shfl_sync(ALL, r, k >= 0 && k < 32 ? k : 0);
    return k >= jlow && k <= jend ? v : 0u;
  };
  const auto bits_at = [&](int pos, int n) -> uint64_t {
    const int k = pos / CR_EXACT_LIMB_BITS, s = pos % CR_EXACT_LIMB_BITS;
    const uint64_t low = digit(k) | (digit(k + 1) << CR_EXACT_LIMB_BITS), high = digit(k + 2);
    const uint64_t v = s == 0 ? low : (low >> s) | (high << (64 - s));
    return v & ((((uint64_t)1) << n) - 1);
  };
  const int msb = (b0 + hi) * CR_EXACT_LIMB_BITS + cr_exact_msb32((uint32_t)__shfl_sync(ALL, r, hi));
  int lsb = msb - (f.precision - 1);
  if (lsb < f.min_exp - LSB)
    lsb = f.min_exp - LSB;
  uint64_t mant = lsb <= msb ? bits_at(lsb, msb - lsb + 1) : 0;
  if (lsb > 0) { // round to nearest, ties to even
    const int pos = lsb - 1, pj = pos / CR_EXACT_LIMB_BITS, ps = pos % CR_EXACT_LIMB_BITS;
    const uint64_t part = digit(pj) & ((CR_EXACT_DIGIT - 1) >> (CR_EXACT_LIMB_BITS - ps));
    const bool below = __any_sync(ALL, j >= jlow && j <= jend && b0 + j < pj && r != 0);
    sticky = sticky || below || (ps > 0 && part != 0);
    if (bits_at(pos, 1) && (sticky || (mant & 1)))
      ++mant;
  }
  const double v = ldexp((double)mant, lsb + LSB);
  *value = sign * (v > f.max_finite ? INFINITY : v);
  return true;
}

// The same as exact_write_result by one full warp: the lanes find the nonzero limbs with three
// ballots. A sum over at most four limbs (most data) is rounded by 128-bit shifts
// (cr_exact_value_narrow), in every lane alike; other states by the lanes together where they
// can (exact_value_lanes), else by lane 0 alone.
__device__ __forceinline__ void exact_write_result_warp(const int64_t *state, int mean,
                                                        cureduce_dtype out_dtype, void *out) {
  static_assert(CR_EXACT_LIMBS > 64 && CR_EXACT_LIMBS <= 96, "three ballots cover the limbs");
  const int lane = threadIdx.x & 31;
  const unsigned b0 = __ballot_sync(0xffffffffu, state[lane] != 0);
  const unsigned b1 = __ballot_sync(0xffffffffu, state[32 + lane] != 0);
  const unsigned b2 = __ballot_sync(0xffffffffu, 64 + lane < CR_EXACT_LIMBS && state[64 + lane] != 0);
  const int bottom = b0 ? __ffs(b0) - 1 : b1 ? 31 + __ffs(b1) : b2 ? 63 + __ffs(b2) : -1;
  const int top = b2 ? 95 - __clz(b2) : b1 ? 63 - __clz(b1) : b0 ? 31 - __clz(b0) : -1;
  const cr_exact_format f = cr_exact_format_of(out_dtype);
  double v = (double)NAN;
  if (!(mean && state[CR_EXACT_COUNT] == 0) && !(!mean && cr_exact_value_narrow(state, bottom, top, f, &v)) &&
      !exact_value_lanes(state, bottom, top, mean, f, &v) && lane == 0)
    v = cr_exact_value_in(state, bottom, top, mean, f);
  if (lane == 0)
    cr_exact_encode(v, out_dtype, out);
}

} // namespace cr
