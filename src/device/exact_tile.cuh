// A thread's tile of elements summed exactly in f32 where their exponents allow it, and the
// -0.0 padding and checks the exact kernels' tiles need. Layer: device primitives. Why the sums
// are exact: docs/exact.md.
#pragma once

#include "acc_traits.cuh"
#include "dtype_traits.cuh"
#include "vector_fold.cuh"

#include <stdint.h>
#include <type_traits>

namespace cr {

// The unsigned integer of B bytes (1, 2, 4 or 8).
template <int B>
using uint_bytes = typename std::conditional<
    B == 1, uint8_t,
    typename std::conditional<B == 2, uint16_t,
                              typename std::conditional<B == 4, uint32_t, uint64_t>::type>::type>::type;

// -0.0 in IN's storage: padding that adds nothing and sets no sign flag (an fp8 byte's sign
// bit; the float types' own, as their accumulators have it).
template <cureduce_dtype IN> __device__ __forceinline__ storage_t<IN> negative_zero() {
  if constexpr (IN == CUREDUCE_F8_E4M3 || IN == CUREDUCE_F8_E5M2)
    return storage_t<IN>(0x80u);
  else
    return acc<IN>::neg_zero();
}

// Whether every element of a vector is -0.0 (its bytes are the sign bit of each element).
template <cureduce_dtype IN>
__device__ __forceinline__ bool all_negative_zero(const vec16<storage_t<IN>> &x) {
  unsigned w[4];
  memcpy(w, &x, 16);
  constexpr unsigned P = sizeof(storage_t<IN>) == 1   ? 0x80808080u
                         : sizeof(storage_t<IN>) == 2 ? 0x80008000u
                                                      : 0x80000000u;
  constexpr unsigned LOW = sizeof(storage_t<IN>) == 8 ? 0u : P; // f64: low words are zero
  return w[0] == LOW && w[1] == P && w[2] == LOW && w[3] == P;
}

// Whether the GPU compiled for has per-half (16x2) integer add-and-min and three-way max
// instructions (sm_90 on; bf16_fields): older GPUs would emulate them, and check bf16 tiles on
// their f32 values instead.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
constexpr bool EXACT_PACKED_HALVES = true;
#else
constexpr bool EXACT_PACKED_HALVES = false;
#endif

// The f64 sum of U vectors of one thread, and whether it is exact and finite. Elements are
// added in f32, split where needed so that no addition rounds; only tile sums become f64.
//
// f32 and bf16 (as f32 values): with |x| < 2^E for all W elements and 2^L the last bit of the
// smallest nonzero one, each x splits exactly into hi = (x + s) - s, a multiple of
// u = 2^(E - 23 + log2 W) (s = 1.5 2^23 u), and lo = x - hi, |lo| <= u / 2. The W hi parts are
// multiples of u below 2^24 u, the lo parts multiples of 2^L below 2^(L + 24) when
// u <= 2^(L + 25 - log2 W): both f32 sums are exact when E - L <= 48 - 2 log2 W, that is when
// the tile's exponent fields (integer max and min of the bits) lie within SPREAD of each
// other. Otherwise (rare in real data; every tile of adversarial data) the elements are added
// one by one: in the full-array kernel as integers into the thread's own limbs
// (exact_lane_limbs), except f32 vectors with at most one element further below
// (exact_thread::add_vector_leaving_small: a group of 8 uniform f32 values with one small
// element, about one group in 65000, then costs three pair additions); elsewhere into the pair.
// f16: its whole range fits the split at one fixed s for W <= 16, so it is never checked.
// fp8: e4m3 values are multiples of 2^-9 below 2^9, so 64 of them sum exactly in f32 with no
// check; e5m2 values are multiples of 2^-16, summed in one f32 when all lie below 4 and split at
// |x| = 1 into two such sums otherwise. f64 is never summed this way.
template <cureduce_dtype IN, int U> struct exact_tile {
  using V = vec16<storage_t<IN>>;
  static constexpr int N = V::N;
  static constexpr int W = U * N; // elements summed
  static constexpr int LOG2W = W <= 4 ? 2 : W <= 8 ? 3 : W <= 16 ? 4 : W <= 32 ? 5 : 6;
  static_assert(W <= 64, "tiles of more than 64 elements need a wider check");
  // Whether a declined tile may keep its elements near the largest as one sum (f32; bf16
  // tiles, whose spread is 32, rarely fail).
  static constexpr bool LEAVES_SMALL = IN == CUREDUCE_F32;
  static constexpr int P = IN == CUREDUCE_F32 ? 24 : 8; // significand bits (f32, bf16)
  static constexpr int SPREAD = 48 - 2 * LOG2W - P;
  // Whether the check reads bf16's packed halves (bf16_fields), not the f32 values.
  static constexpr bool PACKED = IN == CUREDUCE_BF16 && EXACT_PACKED_HALVES;

  // Element i of vector u as an f32 value (exact).
  static __device__ __forceinline__ float value(const V (&x)[U], int u, int i) {
    if constexpr (IN == CUREDUCE_F32) {
      return x[u][i];
    } else if constexpr (IN == CUREDUCE_BF16) {
      unsigned short h;
      memcpy(&h, &x[u].s[i], 2);
      return __uint_as_float((unsigned)h << 16);
    } else {
      return __half2float(x[u][i]);
    }
  }

  // The exact sum of K <= U vectors' f32 values whose nonzero exponent fields lie within SPREAD
  // of hi, the largest: split at s and summed in four f32 chains.
  template <int K> static __device__ __forceinline__ double split_sum(const float (&v)[K][N], int hi) {
    // s = 1.5 2^23 u, u = 2^(E - 23 + log2 W), E = hi - 126: exponent field hi + 1 + log2 W.
    return split_sum_at<K>(v, __uint_as_float(((unsigned)(hi + 1 + LOG2W) << 23) | 0x400000u));
  }

  // The sum of K vectors' f32 values split at s = 1.5 2^23 u: hi = (x + s) - s, a multiple of u,
  // and lo = x - hi, in four f32 chains; exact where the caller knows both sums to fit 24 bits.
  template <int K> static __device__ __forceinline__ double split_sum_at(const float (&v)[K][N], float s) {
    float sh0 = -0.0f, sh1 = -0.0f, sl0 = -0.0f, sl1 = -0.0f;
#pragma unroll
    for (int u = 0; u < K; ++u) {
#pragma unroll
      for (int i = 0; i < N; ++i) {
        const float h = __fadd_rn(__fadd_rn(v[u][i], s), -s), l = __fadd_rn(v[u][i], -h);
        if (i % 2) {
          sh1 = __fadd_rn(sh1, h);
          sl1 = __fadd_rn(sl1, l);
        } else {
          sh0 = __fadd_rn(sh0, h);
          sl0 = __fadd_rn(sl0, l);
        }
      }
    }
    // Each f32 sum is exact (any order), and so is their sum in f64 (49 bits at most).
    return __dadd_rn((double)__fadd_rn(sh0, sh1), (double)__fadd_rn(sl0, sl1));
  }

  // bf16: the largest exponent field of the U vectors and the smallest of their nonzero
  // elements (at least 1), the f32 check's fields, from the packed words: each 16-bit half's
  // magnitude (its exponent field in bits 7..14) is ordered as its field, so a mask, a
  // per-half add-and-min and half a three-way max cover two elements: about half the
  // instructions of the check on the f32 values (EXACT_PACKED_HALVES).
  static __device__ __forceinline__ void bf16_fields(const V (&x)[U], int &hi, int &lo) {
    unsigned mx = 0u, mn = ~0u;
#pragma unroll
    for (int u = 0; u < U; ++u) {
      unsigned w[4];
      memcpy(w, &x[u], 16);
#pragma unroll
      for (int k = 0; k < 4; k += 2) {
        const unsigned m0 = w[k] & 0x7fff7fffu, m1 = w[k + 1] & 0x7fff7fffu;
        mx = __vimax3_u16x2(mx, m0, m1);
        mn = __viaddmin_u16x2(m0, 0xffffffffu, mn); // a zero half becomes 0xffff: no constraint
        mn = __viaddmin_u16x2(m1, 0xffffffffu, mn);
      }
    }
    hi = (int)(max(mx >> 16, mx & 0xffffu) >> 7);
    lo = max((int)(((min(mn >> 16, mn & 0xffffu) + 1u) & 0xffffu) >> 7), 1);
  }

  // hi: the largest exponent field, where the tile is declined (for add_vector_leaving_small).
  static __device__ __forceinline__ bool sum(const V (&x)[U], double &t, int &hi_field) {
    if constexpr (IN == CUREDUCE_F16) {
      // f16 values are multiples of 2^-24 below 2^16, so a tile of 16 needs no check: split at
      // s = 1.5 2^19, the hi parts are multiples of 2^-4 whose 16 sum below 2^20 (2^24 of them)
      // and the lo parts multiples of 2^-24 of at most 2^-5 whose 16 sum to at most 2^-1 (2^23
      // of them). NaN and infinities leave the sum non-finite.
      static_assert(W <= 16, "an f16 tile of 16 elements at most");
      float v[U][N];
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int i = 0; i < N; ++i)
          v[u][i] = value(x, u, i);
      hi_field = 0;
      t = split_sum_at<U>(v, 0x1.8p19f);
      return isfinite(t);
    } else if constexpr (IN == CUREDUCE_F32 || IN == CUREDUCE_BF16) {
      float v[U][N];
      unsigned mx = 0u, mn = ~0u;
#pragma unroll
      for (int u = 0; u < U; ++u) {
#pragma unroll
        for (int i = 0; i < N; ++i) {
          v[u][i] = value(x, u, i);
          if constexpr (!PACKED) {
            const unsigned a = __float_as_uint(v[u][i]) << 1; // no sign: exponent field in bits 24..31
            mx = max(mx, a);
            mn = min(mn, a - 1u); // a zero becomes the largest value: it constrains nothing
          }
        }
      }
      int hi, lo;
      if constexpr (!PACKED) {
        hi = (int)(mx >> 24);
        lo = max((int)((mn + 1u) >> 24), 1);
      } else {
        bf16_fields(x, hi, lo);
      }
      hi_field = hi;
      if (hi + LOG2W + 1 >= 255 || hi - lo > SPREAD) // also NaN and infinities (field 255)
        return false;
      if constexpr (P + LOG2W < 24) {
        // bf16: when the exponents lie within 24 - p - log2 W of each other (most
        // tiles of most data), the plain f32 sum is already exact (every partial sum is a
        // multiple of 2^L below 2^(L + 24)): one addition an element instead of five.
        if (hi - lo <= 24 - P - LOG2W) {
          float p0 = -0.0f, p1 = -0.0f;
#pragma unroll
          for (int u = 0; u < U; ++u)
#pragma unroll
            for (int i = 0; i < N; ++i) {
              if (i % 2)
                p1 = __fadd_rn(p1, v[u][i]);
              else
                p0 = __fadd_rn(p0, v[u][i]);
            }
          t = (double)__fadd_rn(p0, p1);
          return true;
        }
      }
      t = split_sum<U>(v, hi);
      return true;
    } else if constexpr (IN == CUREDUCE_F8_E4M3) {
      // Multiples of 2^-9 below 2^9: 64 of them (W <= 64) sum exactly in f32's 24 bits.
      t = (double)fp8_tile_sum<IN, U>(x);
      return isfinite(t);
    } else if constexpr (IN == CUREDUCE_F8_E5M2) {
      return e5m2_exact_sum<U>(x, t);
    } else {
      return false; // f64: element by element
    }
  }
};

} // namespace cr
