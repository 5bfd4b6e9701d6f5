// One 16-byte vector of any element type, and how its elements fold into a running result.
// Layer: device primitives. Every kernel that loads 16-byte vectors (full array, rows, columns,
// segments) folds them here, so each fast path is written once.
#pragma once

#include "dtype_traits.cuh"
#include "op_traits.cuh"

#include <stdint.h>
#include <string.h>
#include <type_traits>

namespace cr {

template <class T> struct alignas(16) vec16 {
  static constexpr int N = 16 / sizeof(T);
  T v[N];
};

// The minimum (or maximum) of one vector's elements, or of their magnitudes (ABS), as a value
// of accumulator A, with IEEE 754-2019 semantics (NaN wins, -0.0 < +0.0). Exact: every input
// value is exact in the formats the trees work in. 16-bit and fp8 inputs reduce as packed pairs
// (one min.NaN.f16x2 / bf16x2 per two elements), i8 inputs four bytes at a time (__vmaxs4).
template <cureduce_dtype IN, class A, bool IS_MAX, bool ABS>
__device__ __forceinline__ typename A::type vector_extreme(const vec16<storage_t<IN>> &x) {
  constexpr int N = vec16<storage_t<IN>>::N;
  if constexpr (IN == CUREDUCE_F16 || IN == CUREDUCE_BF16 || IN == CUREDUCE_F8_E4M3 ||
                IN == CUREDUCE_F8_E5M2) {
    using P = typename std::conditional<IN == CUREDUCE_BF16, __nv_bfloat162, __half2>::type;
    constexpr int PAIRS = N / 2;
    P p[PAIRS];
    if constexpr (IN == CUREDUCE_F16 || IN == CUREDUCE_BF16) {
      memcpy(p, x.v, 16);
    } else {
      constexpr __nv_fp8_interpretation_t KIND = IN == CUREDUCE_F8_E4M3 ? __NV_E4M3 : __NV_E5M2;
#pragma unroll
      for (int k = 0; k < PAIRS; ++k)
        p[k] = __half2(__nv_cvt_fp8x2_to_halfraw2((__nv_fp8x2_storage_t)(x.v[2 * k] | (x.v[2 * k + 1] << 8)), KIND));
    }
#pragma unroll
    for (int k = 0; k < PAIRS; ++k)
      if (ABS)
        p[k] = __habs2(p[k]);
#pragma unroll
    for (int width = PAIRS / 2; width > 0; width /= 2)
#pragma unroll
      for (int k = 0; k < width; ++k)
        p[k] = IS_MAX ? __hmax2_nan(p[k], p[k + width]) : __hmin2_nan(p[k], p[k + width]);
    const auto lo = __low2float(p[0]), hi = __high2float(p[0]);
    return IS_MAX ? A::max_ieee(A::from(lo), A::from(hi)) : A::min_ieee(A::from(lo), A::from(hi));
  } else if constexpr (IN == CUREDUCE_I8) {
    int w[4];
    memcpy(w, x.v, 16);
    auto bytes_extreme = [&](bool want_max) {
      auto op4 = [&](int a, int b) { return want_max ? (int)__vmaxs4(a, b) : (int)__vmins4(a, b); };
      int m = op4(op4(w[0], w[1]), op4(w[2], w[3]));
      m = op4(m, (int)__byte_perm(m, 0, 0x3232)); // bytes 0,1 against bytes 2,3
      m = op4(m, (int)__byte_perm(m, 0, 0x1111)); // byte 0 against byte 1
      return A::from((int64_t)(int8_t)(m & 0xff));
    };
    if constexpr (ABS) // |x| in the accumulator: |-128| is 128 there, not a wrapped byte
      return A::max_ieee(A::abs(bytes_extreme(true)), A::abs(bytes_extreme(false)));
    else
      return bytes_extreme(IS_MAX);
  } else {
    auto value = [&](int i) {
      const typename A::type v = A::from(widen<IN>(x.v[i]));
      return ABS ? A::abs(v) : v;
    };
    typename A::type m = value(0);
#pragma unroll
    for (int i = 1; i < N; ++i)
      m = IS_MAX ? A::max_ieee(m, value(i)) : A::min_ieee(m, value(i));
    return m;
  }
}

// Fold one vector's elements, whose first has index `first`, into acc, in element order.
// Min, max, absmax and the arg ops reduce the vector first (vector_extreme). Two element types
// get a faster path for the sums that computes the same result:
//  - fp8: pairs are converted by one instruction (e4m3x2/e5m2x2 -> f16x2), then to f32;
//  - i8 sums into an integer accumulator: __dp4a adds (or squares and adds) four bytes in one
//    instruction; integer sums are exact in any grouping, so the bits do not change.
template <cureduce_dtype IN, class Op>
__device__ __forceinline__ typename Op::T fold_vector(typename Op::T acc,
                                                      const vec16<storage_t<IN>> &x, int64_t first) {
  constexpr int N = vec16<storage_t<IN>>::N;
  if constexpr ((IN == CUREDUCE_F8_E4M3 || IN == CUREDUCE_F8_E5M2) && Op::is_sum) {
    constexpr __nv_fp8_interpretation_t KIND = IN == CUREDUCE_F8_E4M3 ? __NV_E4M3 : __NV_E5M2;
#pragma unroll
    for (int i = 0; i < N; i += 2) {
      const __nv_fp8x2_storage_t pair = (__nv_fp8x2_storage_t)(x.v[i] | (x.v[i + 1] << 8));
      const float2 f = __half22float2(__half2(__nv_cvt_fp8x2_to_halfraw2(pair, KIND)));
      acc = Op::fold(acc, f.x, first + i);
      acc = Op::fold(acc, f.y, first + i + 1);
    }
    return acc;
  } else if constexpr (Op::kind == CUREDUCE_MIN || Op::kind == CUREDUCE_MAX || Op::kind == CUREDUCE_ABSMAX) {
    return Op::combine(acc, vector_extreme<IN, typename Op::acc_type, Op::kind != CUREDUCE_MIN,
                                           Op::kind == CUREDUCE_ABSMAX>(x));
  } else if constexpr (Op::kind == CUREDUCE_ARGMIN || Op::kind == CUREDUCE_ARGMAX) {
    // The vector's extreme first; only when it beats the running best (rare once the best is
    // good), look for the first element equal to it, or the first NaN.
    using A = typename Op::acc_type;
    const typename A::type m = vector_extreme<IN, A, Op::is_max, false>(x);
    if (Op::beats(m, acc)) {
#pragma unroll
      for (int i = 0; i < N; ++i) {
        const typename A::type xi = A::from(widen<IN>(x.v[i]));
        if (A::is_nan(m) ? A::is_nan(xi) : !(A::less(xi, m) || A::less(m, xi)))
          return typename Op::T{xi, first + i};
      }
    }
    return acc;
  } else if constexpr (IN == CUREDUCE_I8 && Op::is_sum && (Op::kind == CUREDUCE_SUM || Op::kind == CUREDUCE_SUMSQ) &&
                       !std::is_floating_point<typename Op::T>::value) {
    int w[4];
    memcpy(w, x.v, 16);
    int s = 0; // at most 16 * 128^2 = 2^18: no overflow
#pragma unroll
    for (int k = 0; k < 4; ++k)
      s = Op::kind == CUREDUCE_SUM ? __dp4a(w[k], 0x01010101, s) : __dp4a(w[k], w[k], s);
    return Op::combine(acc, static_cast<typename Op::T>(s));
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i)
      acc = Op::fold(acc, widen<IN>(x.v[i]), first + i);
    return acc;
  }
}

// A load through L2 only (ld.global.cg) of any 2, 4, 8 or 16-byte T: partials written by other
// SMs are never stale in our L1.
template <class T> __device__ __forceinline__ T load_cg(const T *p) {
  T v;
  if constexpr (sizeof(T) == 16) {
    const int4 w = __ldcg(reinterpret_cast<const int4 *>(p));
    memcpy(&v, &w, 16);
  } else if constexpr (sizeof(T) == 8) {
    const long long w = __ldcg(reinterpret_cast<const long long *>(p));
    memcpy(&v, &w, 8);
  } else if constexpr (sizeof(T) == 4) {
    const int w = __ldcg(reinterpret_cast<const int *>(p));
    memcpy(&v, &w, 4);
  } else {
    const short w = __ldcg(reinterpret_cast<const short *>(p));
    memcpy(&v, &w, 2);
  }
  return v;
}

} // namespace cr
