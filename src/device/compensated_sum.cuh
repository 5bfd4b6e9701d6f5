// The full-array kernel's accumulators for float sums into f32: a compensated pair (f32
// inputs, e4m3 sums) or an f64 sum (other narrow floats, widened_op below). Layer: device
// primitives.
//
// A partial is a pair (hi, lo) standing for hi + lo: hi is the plain f32 sum, and lo gathers
// the rounding error of every addition into hi, each found exactly by TwoSum (Knuth). What is
// added is each element for f32 inputs, and one plain sum per vector for narrower inputs
// (vector_folder in vector_fold.cuh says why). The pair travels through the thread's chain,
// the warp and block trees and the last block's fold of the partials, and is rounded to one
// f32 only at the end: f32 sums are then no further from the exact sum than CUB's, at no cost
// in bandwidth (docs/design.md#accumulators). Deterministic like any fixed order of float
// operations.
#pragma once

#include "op_traits.cuh"

#include <math.h>
#include <type_traits>

namespace cr {

struct f32_pair { // plain aggregate: lives in shared memory and is shuffled word by word
  float hi, lo;
};

// Whether op Op (a sum, sum of squares or mean) is computed with compensation: float sums into
// an f32 accumulator. f64 needs no help; f16 and bf16 accumulators are the precision their
// users chose to trade, so they stay plain.
template <class Op> constexpr bool compensated_sum() {
  if constexpr (Op::is_sum)
    return std::is_same<typename Op::T, float>::value;
  else
    return false;
}

// What the two accumulators below share: the plain op they carry (its lift and its result).
template <class Op> struct sum_carrier {
  using base = Op;
  static constexpr cureduce_op kind = Op::kind;
  static constexpr bool is_sum = true;
  using Out = typename Op::Out;
};

template <class Op> struct compensated_op : sum_carrier<Op> {
  using T = f32_pair;
  using typename sum_carrier<Op>::Out;
  using sum_carrier<Op>::kind;

  // a + y with the rounding error kept (TwoSum: no assumption on which is larger).
  __device__ static T add(T a, float y) {
    const float t = __fadd_rn(a.hi, y), yb = __fsub_rn(t, a.hi);
    const float e = __fadd_rn(__fsub_rn(a.hi, __fsub_rn(t, yb)), __fsub_rn(y, yb));
    return T{t, __fadd_rn(a.lo, e)};
  }
  // -0.0 + 0: the value of a pair with lo == 0 is hi, so a sum of only -0.0 stays -0.0.
  __device__ static T identity() { return T{-0.0f, 0.0f}; }
  __device__ static T combine(T a, T b) {
    T r = add(a, b.hi);
    r.lo = __fadd_rn(r.lo, b.lo);
    return r;
  }
  template <class W> __device__ static T fold(T acc, W w, int64_t i) { return add(acc, Op::lift(w, i)); }
  // hi + lo rounded once. Not when hi is inf or NaN: that is the IEEE answer of the plain sum,
  // and lo is NaN there (TwoSum of an infinity).
  __device__ static float value(T v) { return isfinite(v.hi) && v.lo != 0.0f ? __fadd_rn(v.hi, v.lo) : v.hi; }
  __device__ static Out finish(T v, uint64_t n) {
    if constexpr (kind == CUREDUCE_MEAN) // the pair's exact value in double, divided once
      return isfinite(v.hi) && v.lo != 0.0f ? __double2float_rn(((double)v.hi + (double)v.lo) / (double)n)
                                            : Op::finish(v.hi, n); // also keeps a mean of -0.0 at -0.0
    else
      return Op::finish(value(v), n);
  }
};

// Whether plain f32 additions of the terms of a whole tile (up to 64 elements) are exact, so
// that compensation is needed once per tile only: e4m3 sums. Every e4m3 value is a multiple of
// 2^-9 below 448 in magnitude, so 64 of them sum to a multiple of 2^-9 below 2^14.9, which
// takes 24 bits: exact in f32, in any order. (Squares are multiples of 2^-18 up to 2^17.6:
// not exact.)
template <cureduce_dtype IN, class Op>
constexpr bool exact_tile_sums_f32 = IN == CUREDUCE_F8_E4M3 &&
                                     (Op::kind == CUREDUCE_SUM || Op::kind == CUREDUCE_MEAN);

// Sums into f32 of f16, bf16 and fp8 inputs (but e4m3 sums and means, whose tiles are exact
// and take one TwoSum a tile) keep their running sum in f64 instead of a pair: each vector's
// plain f32 sum, the same as the pair is given, is converted once and added: one F2F and one
// DADD a vector where the pair takes a TwoSum of six FADDs. 53 bits keep at least what the
// pair's 48 do, and the result is rounded to f32 once at the end, as with the pair; it is
// faster than the pair on large inputs (docs/design.md#accumulators). f32 inputs keep the pair:
// they would need a conversion per element (F2F.F64 runs on a narrow pipe), not one per vector.
template <class Op> struct widened_op : sum_carrier<Op> {
  using T = double;
  using typename sum_carrier<Op>::Out;
  using sum_carrier<Op>::kind;

  __device__ static T add(T a, float y) { return __dadd_rn(a, (double)y); }
  __device__ static T identity() { return -0.0; } // a sum of only -0.0 stays -0.0
  __device__ static T combine(T a, T b) { return __dadd_rn(a, b); }
  template <class W> __device__ static T fold(T acc, W w, int64_t i) { return add(acc, Op::lift(w, i)); }
  __device__ static Out finish(T v, uint64_t n) {
    if constexpr (kind == CUREDUCE_MEAN) // divided in double, rounded once (n = 0: NaN)
      return __double2float_rn(v / (double)n);
    else
      return Op::finish(__double2float_rn(v), n);
  }
};

template <class Op> constexpr bool is_widened = false;
template <class Op> constexpr bool is_widened<widened_op<Op>> = true;

// Accumulators that take f32 terms through Op::add: the kernel gives them one plain f32 sum a
// vector (narrow inputs) or every f32 element (vector_folder, vector_fold.cuh).
template <class Op> constexpr bool adds_f32_terms = false;
template <class Op> constexpr bool adds_f32_terms<compensated_op<Op>> = true;
template <class Op> constexpr bool adds_f32_terms<widened_op<Op>> = true;

// The op the full-array kernel runs for (IN, OP, ACC): float sums into f32 (compensated_sum)
// as a pair for f32 inputs and e4m3 sums, in f64 for the other narrow floats; extremes in the
// input's own type (compare_op, op_traits.cuh).
template <cureduce_dtype IN, cureduce_op OP, cureduce_dtype ACC>
using full_op = typename std::conditional<
    compensated_sum<op<OP, acc<ACC>>>(),
    typename std::conditional<IN != CUREDUCE_F32 && !exact_tile_sums_f32<IN, op<OP, acc<ACC>>>,
                              widened_op<op<OP, acc<ACC>>>, compensated_op<op<OP, acc<ACC>>>>::type,
    compare_op<IN, OP, ACC>>::type;

} // namespace cr
