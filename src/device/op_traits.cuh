// Device-side reduction ops over an accumulator (acc_traits.cuh). Layer: device primitives.
//
// Each op says what one element becomes (lift: from its exact "wide" value and its index),
// how two partial results combine, its identity, and what is written at the end (finish).
// combine is applied in an order fixed by the kernel's partition, which is what makes float
// results reproducible.
#pragma once

#include "acc_traits.cuh"

#include <stdint.h>

namespace cr {

// |w| of a wide value; integers wrap (|INT64_MIN| stays INT64_MIN, as the CPU does).
__device__ __forceinline__ float wide_abs(float w) { return fabsf(w); }
__device__ __forceinline__ double wide_abs(double w) { return fabs(w); }
__device__ __forceinline__ int64_t wide_abs(int64_t w) {
  return w < 0 ? static_cast<int64_t>(0ull - static_cast<uint64_t>(w)) : w;
}

// IEEE 754-2019 minimum and maximum: NaN wins (the first one met), and -0.0 < +0.0.
template <class A> __device__ __forceinline__ typename A::type ieee_min(typename A::type a, typename A::type b) {
  if (A::is_nan(a) || A::is_nan(b))
    return A::is_nan(a) ? a : b;
  if (A::less(a, b))
    return a;
  if (A::less(b, a))
    return b;
  return A::sign_bit(a) ? a : b;
}
template <class A> __device__ __forceinline__ typename A::type ieee_max(typename A::type a, typename A::type b) {
  if (A::is_nan(a) || A::is_nan(b))
    return A::is_nan(a) ? a : b;
  if (A::less(a, b))
    return b;
  if (A::less(b, a))
    return a;
  return A::sign_bit(a) ? b : a;
}

template <cureduce_op OP, class A> struct op;

// Sums: -0.0 is the identity of IEEE addition (+0.0 is not: +0 + -0 = +0), so padding with it
// keeps the sum of only -0.0 values at -0.0. The empty sum is +0.0.
template <class A> struct sum_base {
  using T = typename A::type;
  using Out = T;
  __device__ static T identity() { return A::neg_zero(); }
  __device__ static T combine(T a, T b) { return A::add(a, b); }
  __device__ static Out finish(T v, uint64_t n) { return n == 0 ? A::zero() : v; }
};

template <class A> struct op<CUREDUCE_SUM, A> : sum_base<A> {
  template <class W> __device__ static typename A::type lift(W w, int64_t) { return A::from(w); }
};

template <class A> struct op<CUREDUCE_SUMSQ, A> : sum_base<A> {
  template <class W> __device__ static typename A::type lift(W w, int64_t) {
    const typename A::type t = A::from(w);
    return A::mul(t, t); // rounded once in the accumulator, like every addition
  }
};

template <class A> struct op<CUREDUCE_MEAN, A> : sum_base<A> {
  using T = typename A::type;
  template <class W> __device__ static T lift(W w, int64_t) { return A::from(w); }
  // In double, then rounded once: exact sum and exact n (< 2^53) make this correctly rounded.
  __device__ static T finish(T v, uint64_t n) { return A::from_double(A::to_double(v) / (double)n); }
};

template <class A> struct op<CUREDUCE_MIN, A> {
  using T = typename A::type;
  using Out = T;
  __device__ static T identity() { return A::highest(); }
  template <class W> __device__ static T lift(W w, int64_t) { return A::from(w); }
  __device__ static T combine(T a, T b) { return ieee_min<A>(a, b); }
  __device__ static Out finish(T v, uint64_t) { return v; }
};

template <class A> struct op<CUREDUCE_MAX, A> {
  using T = typename A::type;
  using Out = T;
  __device__ static T identity() { return A::lowest(); }
  template <class W> __device__ static T lift(W w, int64_t) { return A::from(w); }
  __device__ static T combine(T a, T b) { return ieee_max<A>(a, b); }
  __device__ static Out finish(T v, uint64_t) { return v; }
};

template <class A> struct op<CUREDUCE_ABSMAX, A> : op<CUREDUCE_MAX, A> {
  template <class W> __device__ static typename A::type lift(W w, int64_t) { return A::from(wide_abs(w)); }
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
  using V = typename A::type;
  using T = arg_pair<V>;
  using Out = int64_t;
  __device__ static T identity() { return T{IS_MAX ? A::lowest() : A::highest(), INT64_MAX}; }
  template <class W> __device__ static T lift(W w, int64_t idx) { return T{A::from(w), idx}; }
  __device__ static T combine(T a, T b) {
    const bool an = A::is_nan(a.v), bn = A::is_nan(b.v);
    if (an || bn)
      return (an && bn) ? (a.i < b.i ? a : b) : (an ? a : b);
    if (IS_MAX ? A::less(b.v, a.v) : A::less(a.v, b.v))
      return a;
    if (IS_MAX ? A::less(a.v, b.v) : A::less(b.v, a.v))
      return b;
    return a.i < b.i ? a : b;
  }
  __device__ static Out finish(T v, uint64_t) { return v.i; }
};

template <class A> struct op<CUREDUCE_ARGMIN, A> : arg_op<A, false> {};
template <class A> struct op<CUREDUCE_ARGMAX, A> : arg_op<A, true> {};

// Whether the library offers OP with accumulator ACC at all (the one exception of combos.h).
template <cureduce_op OP, cureduce_dtype ACC> constexpr bool offered() {
  return !(OP == CUREDUCE_MEAN && !acc<ACC>::is_float);
}

} // namespace cr
