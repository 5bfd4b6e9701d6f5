// Compensated f32 sums: the full-array kernel's accumulator for float sums into f32. Layer:
// device primitives.
//
// A partial is a pair (hi, lo) standing for hi + lo: hi is the plain f32 sum, and lo gathers
// the rounding error of every addition into hi, each found exactly by TwoSum (Knuth). What is
// added is each element for f32 inputs, and one plain sum per vector for narrower inputs
// (vector_folder in vector_fold.cuh says why). The pair travels through the thread's chain,
// the warp and block trees and the last block's fold of the partials, and is rounded to one
// f32 only at the end. Without it, the H100 bench of 3dbb65a had f32 sums 2 to 3 times
// further from the exact sum than CUB's at 4 of 11 sizes; compensating only the per-thread
// chains (ea437b9) still left 4 of 11. With it, none (0a991fd), at 1.00 to 1.01 of the read
// roofline from 2^28 up (bench.csv). Deterministic like any fixed order of float operations.
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

template <class Op> struct compensated_op {
  using base = Op; // the plain op: its lift and its result type
  static constexpr cureduce_op kind = Op::kind;
  static constexpr bool is_sum = true;
  using T = f32_pair;
  using Out = typename Op::Out;

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
  __device__ static float value(T v) {
    return isfinite(v.hi) && v.lo != 0.0f ? __fadd_rn(v.hi, v.lo) : v.hi;
  }
  __device__ static Out finish(T v, uint64_t n) {
    if constexpr (kind == CUREDUCE_MEAN) // the pair's exact value in double, divided once
      return isfinite(v.hi) && v.lo != 0.0f
                 ? __double2float_rn(((double)v.hi + (double)v.lo) / (double)n)
                 : Op::finish(v.hi, n); // also keeps a mean of -0.0 at -0.0
    else
      return Op::finish(value(v), n);
  }
};

template <class Op> constexpr bool is_compensated = false;
template <class Op> constexpr bool is_compensated<compensated_op<Op>> = true;

// The op the full-array kernel runs for (IN, OP, ACC): compensated where compensated_sum says
// so, extremes in the input's own type (compare_op, op_traits.cuh).
template <cureduce_dtype IN, cureduce_op OP, cureduce_dtype ACC>
using full_op = typename std::conditional<compensated_sum<op<OP, acc<ACC>>>(),
                                          compensated_op<op<OP, acc<ACC>>>, compare_op<IN, OP, ACC>>::type;

} // namespace cr
