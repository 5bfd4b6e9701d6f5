// Device-side reduction ops over an accumulator (acc_traits.cuh). Layer: device primitives.
//
// Each op says what one element becomes (lift: from its exact "wide" value and its index),
// how two partial results combine, its identity, and what is written at the end (finish).
// fold(acc, w, i) adds one element to a thread's running result; elements reach fold in
// increasing index order, which lets the arg ops use a cheaper rule than combine.
// combine is applied in an order fixed by the kernel's partition, which is what makes float
// results reproducible.
#pragma once

#include "acc_traits.cuh"

#include <stdint.h>
#include <type_traits>

namespace cr {

template <cureduce_op OP, class A> struct op;

// Sums: -0.0 is the identity of IEEE addition (+0.0 is not: +0 + -0 = +0), so padding with it
// keeps the sum of only -0.0 values at -0.0. The empty sum is +0.0.
template <class A> struct sum_base {
  using T = typename A::type;
  using Out = T;
  static constexpr bool is_sum = true;
  __device__ static T identity() { return A::neg_zero(); }
  __device__ static T combine(T a, T b) { return A::add(a, b); }
  __device__ static Out finish(T v, uint64_t n) { return n == 0 ? A::zero() : v; }
};

template <class A> struct op<CUREDUCE_SUM, A> : sum_base<A> {
  static constexpr cureduce_op kind = CUREDUCE_SUM;
  template <class W> __device__ static typename A::type lift(W w, int64_t) { return A::from(w); }
  template <class W> __device__ static typename A::type fold(typename A::type acc, W w, int64_t i) {
    return A::add(acc, lift(w, i));
  }
};

template <class A> struct op<CUREDUCE_SUMSQ, A> : sum_base<A> {
  static constexpr cureduce_op kind = CUREDUCE_SUMSQ;
  template <class W> __device__ static typename A::type lift(W w, int64_t) {
    const typename A::type t = A::from(w);
    return A::mul(t, t); // rounded once in the accumulator, like every addition
  }
  template <class W> __device__ static typename A::type fold(typename A::type acc, W w, int64_t i) {
    return A::add(acc, lift(w, i));
  }
};

template <class A> struct op<CUREDUCE_MEAN, A> : sum_base<A> {
  static constexpr cureduce_op kind = CUREDUCE_MEAN;
  using T = typename A::type;
  template <class W> __device__ static T lift(W w, int64_t) { return A::from(w); }
  template <class W> __device__ static T fold(T acc, W w, int64_t i) { return A::add(acc, lift(w, i)); }
  // In double, then rounded once: exact sum and exact n (< 2^53) make this correctly rounded.
  __device__ static T finish(T v, uint64_t n) { return A::from_double(A::to_double(v) / (double)n); }
};

// Minimum and maximum: IEEE 754-2019 (NaN wins, -0.0 < +0.0), see acc_traits.cuh. One
// template for both: IS_MAX picks the identity and the combine.
template <class A, bool IS_MAX> struct extreme_op {
  static constexpr cureduce_op kind = IS_MAX ? CUREDUCE_MAX : CUREDUCE_MIN;
  static constexpr bool is_sum = false;
  using acc_type = A;
  using T = typename A::type;
  using Out = T;
  __device__ static T identity() {
    if constexpr (IS_MAX)
      return A::lowest();
    else
      return A::highest();
  }
  template <class W> __device__ static T lift(W w, int64_t) { return A::from(w); }
  template <class W> __device__ static T fold(T acc, W w, int64_t i) { return combine(acc, lift(w, i)); }
  __device__ static T combine(T a, T b) {
    if constexpr (IS_MAX)
      return A::max_ieee(a, b);
    else
      return A::min_ieee(a, b);
  }
  __device__ static Out finish(T v, uint64_t) { return v; }
};
template <class A> struct op<CUREDUCE_MIN, A> : extreme_op<A, false> {};
template <class A> struct op<CUREDUCE_MAX, A> : extreme_op<A, true> {};

// |x| is taken in the accumulator, so |INT64_MIN| is exact in an f64 accumulator and wraps
// in an integer one.
template <class A> struct op<CUREDUCE_ABSMAX, A> : op<CUREDUCE_MAX, A> {
  static constexpr cureduce_op kind = CUREDUCE_ABSMAX;
  using T = typename A::type;
  template <class W> __device__ static T lift(W w, int64_t) { return A::abs(A::from(w)); }
  template <class W> __device__ static T fold(T acc, W w, int64_t i) {
    return op<CUREDUCE_MAX, A>::combine(acc, lift(w, i));
  }
};

// A value with the index it came from, for ARGMIN and ARGMAX. Plain aggregate: it lives in
// shared memory and is shuffled word by word.
template <class V> struct arg_pair {
  V v;
  int64_t i;
};

// ARGMIN (IS_MAX false) and ARGMAX: the first extreme wins ties (-0.0 and +0.0 tie); a NaN
// beats any number, and between NaNs the first one wins.
template <class A, bool IS_MAX> struct arg_op {
  static constexpr bool is_sum = false;
  static constexpr bool is_max = IS_MAX;
  using acc_type = A;
  using V = typename A::type;
  using T = arg_pair<V>;
  using Out = int64_t;
  // Elements come in increasing index order, so a later one wins only when strictly better:
  // a NaN over a number, or a larger (smaller) number; ties keep the earlier index. The
  // identity's index (INT64_MAX) marks "nothing yet", so ties with it are taken too.
  // Bitwise & and |, not && and ||: nvcc turned the short circuit into a branch per vector
  // (BSSY/BSYNC around each test in the SASS of the fp8 arg ops).
  __device__ static bool beats(V x, T acc) {
    return !A::is_nan(acc.v) &
           (A::is_nan(x) | (IS_MAX ? A::less(acc.v, x) : A::less(x, acc.v)) | (acc.i == INT64_MAX));
  }
  template <class W> __device__ static T fold(T acc, W w, int64_t i) {
    const V x = A::from(w);
    return beats(x, acc) ? T{x, i} : acc;
  }
  __device__ static T identity() { return T{IS_MAX ? A::lowest() : A::highest(), INT64_MAX}; }
  template <class W> __device__ static T lift(W w, int64_t idx) { return T{A::from(w), idx}; }
  // a wins when it is a NaN and b is not, or is the first of two NaNs; or when neither is a
  // NaN and a is better, or ties and comes first. One select, no branch: with an if per
  // case, every shuffle of the warp trees sat behind branches (96 to 181 of them in the arg
  // kernels' SASS, sm_90, against 17 to 21 in the sums).
  __device__ static T combine(T a, T b) {
    const bool an = A::is_nan(a.v), bn = A::is_nan(b.v), a_first = a.i < b.i;
    const bool a_better = IS_MAX ? A::less(b.v, a.v) : A::less(a.v, b.v);
    const bool b_better = IS_MAX ? A::less(a.v, b.v) : A::less(b.v, a.v);
    const bool a_wins = (an & (!bn | a_first)) | (!an & !bn & (a_better | (!b_better & a_first)));
    return a_wins ? a : b;
  }
  __device__ static Out finish(T v, uint64_t) { return v.i; }
};

template <class A> struct op<CUREDUCE_ARGMIN, A> : arg_op<A, false> {
  static constexpr cureduce_op kind = CUREDUCE_ARGMIN;
};
template <class A> struct op<CUREDUCE_ARGMAX, A> : arg_op<A, true> {
  static constexpr cureduce_op kind = CUREDUCE_ARGMAX;
};

// The accumulator an extreme is folded in. Min, max, absmax and the arg ops only compare, and
// every input value converts exactly (i64 -> f64: monotonically) to the user's accumulator,
// so the extreme of the converted values is the converted extreme, and the first index of
// the extreme is the same in any type that holds the inputs exactly. The kernels therefore
// compare in the input's own type and convert the result once (compare_op): an f64
// accumulator would cost registers and a hand-written f64 min per vector. The arg ops compare
// fp8, f16 and bf16 in f32, which measured faster than their own types
// (docs/design.md#accumulators). Kept in the accumulator: sums (which round in it), i64 absmax
// into f64 (|INT64_MIN| is only exact there) and i64 arg ops into f64 (rounding to f64 makes
// ties, and ties pick the first index).
// ARGMIN and ARGMAX: the ops whose result is an index.
constexpr bool is_arg_kind(cureduce_op op) { return op == CUREDUCE_ARGMIN || op == CUREDUCE_ARGMAX; }

template <cureduce_dtype IN, cureduce_op OP, cureduce_dtype ACC> constexpr cureduce_dtype compare_dtype() {
  constexpr bool is_arg = is_arg_kind(OP);
  if (!is_arg && OP != CUREDUCE_MIN && OP != CUREDUCE_MAX && OP != CUREDUCE_ABSMAX)
    return ACC;
  switch (IN) {
  case CUREDUCE_F16: return is_arg ? CUREDUCE_F32 : CUREDUCE_F16;
  case CUREDUCE_BF16: return is_arg ? CUREDUCE_F32 : CUREDUCE_BF16;
  case CUREDUCE_F8_E4M3:
  case CUREDUCE_F8_E5M2: // both are exact in f16
    return is_arg ? CUREDUCE_F32 : CUREDUCE_F16;
  case CUREDUCE_I8: return CUREDUCE_I32;  // |-128| too
  case CUREDUCE_I32: return CUREDUCE_I64; // |INT32_MIN| too
  case CUREDUCE_I64:
    return ACC == CUREDUCE_F64 && OP != CUREDUCE_MIN && OP != CUREDUCE_MAX ? CUREDUCE_F64 : CUREDUCE_I64;
  default: // f32, f64
    return IN;
  }
}

// A value of accumulator From as accumulator To, where To holds it exactly or (i64 -> f64)
// rounds it once.
template <cureduce_dtype To, class From>
__device__ __forceinline__ typename acc<To>::type convert_acc(typename From::type v) {
  if constexpr (From::is_float)
    return acc<To>::from_double(From::to_double(v));
  else
    return acc<To>::from(static_cast<int64_t>(v));
}

// Op, computed in its own accumulator, giving its result in accumulator ACC's type.
template <class Op, cureduce_dtype ACC> struct result_as : Op {
  using Out = typename acc<ACC>::type;
  __device__ static Out finish(typename Op::T v, uint64_t n) {
    return convert_acc<ACC, typename Op::acc_type>(Op::finish(v, n));
  }
};

// The op a kernel runs for input IN, op OP and the user's accumulator ACC (see compare_dtype).
// The arg ops' result is an index, the same in any compare type.
template <cureduce_dtype IN, cureduce_op OP, cureduce_dtype ACC>
using compare_op = typename std::conditional<compare_dtype<IN, OP, ACC>() == ACC || is_arg_kind(OP),
                                             op<OP, acc<compare_dtype<IN, OP, ACC>()>>,
                                             result_as<op<OP, acc<compare_dtype<IN, OP, ACC>()>>, ACC>>::type;

// Whether the library offers OP with accumulator ACC at all (the one exception of combos.h).
template <cureduce_op OP, cureduce_dtype ACC> constexpr bool offered() {
  return !(OP == CUREDUCE_MEAN && !acc<ACC>::is_float);
}

} // namespace cr
