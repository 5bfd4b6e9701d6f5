// Device-side reduction ops over an accumulator (acc_traits.cuh): identity, combine and the
// final value. Layer: device primitives.
//
// combine must be associative for the tree to be a valid reduction and is applied in an order
// fixed by the kernel's partition, which is what makes float results reproducible.
#pragma once

#include "acc_traits.cuh"

namespace cr {

template <cureduce_op OP, class A> struct op;

template <class A> struct op<CUREDUCE_SUM, A> {
  using T = typename A::type;
  // -0.0 is the identity of IEEE addition (+0.0 is not: +0 + -0 = +0), so padding lanes with
  // it keeps the sum of only -0.0 values at -0.0.
  __device__ static T identity() { return A::neg_zero(); }
  __device__ static T combine(T a, T b) { return A::add(a, b); }
  // The empty sum is +0.0.
  __device__ static T finish(T v, uint64_t n) { return n == 0 ? A::zero() : v; }
};

// IEEE 754-2019 minimum: NaN wins (the first one met), and -0.0 < +0.0.
template <class A> struct op<CUREDUCE_MIN, A> {
  using T = typename A::type;
  __device__ static T identity() { return A::highest(); }
  __device__ static T combine(T a, T b) {
    if (A::is_nan(a) || A::is_nan(b))
      return A::is_nan(a) ? a : b;
    if (A::less(a, b))
      return a;
    if (A::less(b, a))
      return b;
    return A::sign_bit(a) ? a : b;
  }
  __device__ static T finish(T v, uint64_t) { return v; }
};

// IEEE 754-2019 maximum: NaN wins (the first one met), and +0.0 > -0.0.
template <class A> struct op<CUREDUCE_MAX, A> {
  using T = typename A::type;
  __device__ static T identity() { return A::lowest(); }
  __device__ static T combine(T a, T b) {
    if (A::is_nan(a) || A::is_nan(b))
      return A::is_nan(a) ? a : b;
    if (A::less(a, b))
      return b;
    if (A::less(b, a))
      return a;
    return A::sign_bit(a) ? b : a;
  }
  __device__ static T finish(T v, uint64_t) { return v; }
};

} // namespace cr
