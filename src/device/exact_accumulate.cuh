// Exact accumulation on the GPU: how a thread sums its elements without losing a bit, in a
// pair of doubles and in tiles summed exactly in f32, and pushes what the pair cannot hold
// into its block's state (exact_block_state.cuh). Layer: device primitives. The method and
// the proof that it is exact: docs/exact.md.
#pragma once

#include "acc_traits.cuh"
#include "dtype_traits.cuh"
#include "exact_block_state.cuh"
#include "exact_lane_limbs.cuh"
#include "vector_fold.cuh"

#include <stdint.h>
#include <type_traits>

namespace cr {

// log2 of 2^53 q for the input types whose values are all multiples of a quantum q large
// enough to matter (their smallest subnormal: e4m3 2^-9, e5m2 2^-16, f16 2^-24), else 0. A sum
// of such multiples below 2^53 q in magnitude is an integer number of q under 2^53: exact in
// f64, with no TwoSum.
template <cureduce_dtype IN> constexpr int exact_plain_log2() {
  return IN == CUREDUCE_F8_E4M3 ? 44 : IN == CUREDUCE_F8_E5M2 ? 37 : IN == CUREDUCE_F16 ? 29 : 0;
}

// A thread's running sum as an unevaluated sum of two doubles, a0 + a1, plus whatever it has
// pushed to the block's state. TwoSum (Knuth) finds the rounding error of each addition
// exactly; what the pair cannot hold goes to the block's state, so nothing is lost. Values
// near the top of the double range (where a0 + x could overflow) and non-finite ones are
// pushed directly. With PLAIN > 0 (exact_plain_log2) every value added must be a multiple of
// the input type's quantum q, 2^PLAIN being 2^53 q: additions whose computed sum stays below
// 2^PLAIN are exact as they are (the bound is representable and rounding is monotonic, so a
// computed sum below it is the exact one) and skip TwoSum.
template <int PLAIN> struct exact_pair {
  double a0 = 0.0, a1 = 0.0;
  bool pushed = false; // whether anything went to the block's state

  __device__ __forceinline__ void add(double x, exact_word *block) {
    if constexpr (PLAIN > 0) { // NaN, infinities and sums from 2^PLAIN up fail the test
      const double s = __dadd_rn(a0, x);
      if (fabs(s) < (double)(1ull << PLAIN)) {
        a0 = s;
        return;
      }
    }
    if (!(fabs(x) < 0x1p1000 && fabs(a0) < 0x1p1000)) {
      exact_push(block, x);
      pushed = true;
      return;
    }
    const double s = __dadd_rn(a0, x), bp = __dadd_rn(s, -a0);
    const double e = __dadd_rn(__dadd_rn(a0, -__dadd_rn(s, -bp)), __dadd_rn(x, -bp));
    a0 = s;
    const double s2 = __dadd_rn(a1, e), bp2 = __dadd_rn(s2, -a1);
    const double e2 = __dadd_rn(__dadd_rn(a1, -__dadd_rn(s2, -bp2)), __dadd_rn(e, -bp2));
    a1 = s2;
    if (e2 != 0.0) {
      exact_push(block, e2);
      pushed = true;
    }
  }

  // add(x)'s new pair where it pushes nothing (x and a0 below 2^1000, a second error of zero),
  // with no branch: false where it would push, and then n0 and n1 mean nothing.
  __device__ __forceinline__ bool add_quietly(double x, double &n0, double &n1) const {
    const double s = __dadd_rn(a0, x), bp = __dadd_rn(s, -a0);
    const double e = __dadd_rn(__dadd_rn(a0, -__dadd_rn(s, -bp)), __dadd_rn(x, -bp));
    const double s2 = __dadd_rn(a1, e), bp2 = __dadd_rn(s2, -a1);
    const double e2 = __dadd_rn(__dadd_rn(a1, -__dadd_rn(s2, -bp2)), __dadd_rn(e, -bp2));
    n0 = s;
    n1 = s2;
    return fabs(x) < 0x1p1000 && fabs(a0) < 0x1p1000 && e2 == 0.0;
  }

  // add(x) to this pair and add(y) to q, the two chains' additions side by side: no branch
  // between them unless one pushes.
  __device__ __forceinline__ void add_beside(exact_pair &q, double x, double y, exact_word *block) {
    double p0, p1, q0, q1;
    if (add_quietly(x, p0, p1) & q.add_quietly(y, q0, q1)) {
      a0 = p0, a1 = p1, q.a0 = q0, q.a1 = q1;
    } else {
      add(x, block);
      q.add(y, block);
    }
  }

  // Every lane of a full warp calls it.
  __device__ __forceinline__ void flush(exact_word *block) const {
    exact_push_warp(block, a0);
    exact_push_warp(block, a1);
  }
};

// The pairs of each group of WIDTH consecutive lanes (a power of two, up to 32) added into the
// group's first lane's pair; what a pair cannot hold goes to s. Every lane of the warp calls it.
template <int WIDTH, int PLAIN>
__device__ __forceinline__ void exact_pair_reduce(exact_pair<PLAIN> &p, exact_word *s) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int off = WIDTH / 2; off > 0; off /= 2) {
    const double b0 = __shfl_down_sync(0xffffffffu, p.a0, off, WIDTH);
    const double b1 = __shfl_down_sync(0xffffffffu, p.a1, off, WIDTH);
    if (lane % WIDTH < off) {
      p.add(b0, s);
      p.add(b1, s);
    }
  }
}

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

// The f64 sum of U vectors of one thread, and whether it is exact and finite. Elements are
// added in f32, split where needed so that no addition rounds; only tile sums become f64.
//
// f32, bf16, f16 (as f32 values): with |x| < 2^E for all W elements and 2^L the last bit of the
// smallest nonzero one, each x splits exactly into hi = (x + s) - s, a multiple of
// u = 2^(E - 23 + log2 W) (s = 1.5 2^23 u), and lo = x - hi, |lo| <= u / 2. The W hi parts are
// multiples of u below 2^24 u, the lo parts multiples of 2^L below 2^(L + 24) when
// u <= 2^(L + 25 - log2 W): both f32 sums are exact when E - L <= 48 - 2 log2 W, that is when
// the tile's exponent fields (integer max and min of the bits) lie within SPREAD of each
// other. Otherwise (rare in real data; every tile of adversarial data) the elements are added
// one by one: in the full-array kernel as integers into the thread's own limbs
// (exact_lane_limbs), except f32 vectors with at most one element further below
// (exact_thread::add_vector_leaving_small: a tile of uniform f32 data with one small element,
// about one tile in 4096, then costs five pair additions); elsewhere into the pair.
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
  static constexpr int P = IN == CUREDUCE_F32 ? 24 : IN == CUREDUCE_BF16 ? 8 : 11; // significand bits
  static constexpr int SPREAD = 48 - 2 * LOG2W - P;

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

  // f(pair) for each pair of an fp8 tile's elements, as an exact float2.
  template <class F> static __device__ __forceinline__ void each_fp8_pair(const V (&x)[U], F f) {
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int k = 0; k < N / 2; ++k)
        f(__half22float2(fp8_pair<IN>(x[u], k)));
  }

  // The plain f32 sum of an fp8 tile, in two chains (even and odd elements): exact wherever
  // the caller knows every partial sum to fit f32's 24 bits.
  static __device__ __forceinline__ float fp8_sum(const V (&x)[U]) {
    float s0 = -0.0f, s1 = -0.0f;
    each_fp8_pair(x, [&](float2 f) {
      s0 = __fadd_rn(s0, f.x);
      s1 = __fadd_rn(s1, f.y);
    });
    return __fadd_rn(s0, s1);
  }

  // The exact sum of K <= U vectors' f32 values whose nonzero exponent fields lie within SPREAD
  // of hi, the largest: split at s and summed in four f32 chains.
  template <int K> static __device__ __forceinline__ double split_sum(const float (&v)[K][N], int hi) {
    // s = 1.5 2^23 u, u = 2^(E - 23 + log2 W), E = hi - 126: exponent field hi + 1 + log2 W.
    const float s = __uint_as_float(((unsigned)(hi + 1 + LOG2W) << 23) | 0x400000u);
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

  // hi: the largest exponent field, where the tile is declined (for add_vector_leaving_small).
  static __device__ __forceinline__ bool sum(const V (&x)[U], double &t, int &hi_field) {
    if constexpr (IN == CUREDUCE_F32 || IN == CUREDUCE_BF16 || IN == CUREDUCE_F16) {
      float v[U][N];
      unsigned mx = 0u, mn = ~0u;
#pragma unroll
      for (int u = 0; u < U; ++u) {
#pragma unroll
        for (int i = 0; i < N; ++i) {
          v[u][i] = value(x, u, i);
          const unsigned a = __float_as_uint(v[u][i]) << 1; // no sign: exponent field in bits 24..31
          mx = max(mx, a);
          mn = min(mn, a - 1u); // a zero becomes the largest value: it constrains nothing
        }
      }
      const int hi = (int)(mx >> 24), lo = max((int)((mn + 1u) >> 24), 1);
      hi_field = hi;
      if (hi + LOG2W + 1 >= 255 || hi - lo > SPREAD) // also NaN and infinities (field 255)
        return false;
      if constexpr (P + LOG2W < 24) {
        // bf16 and f16: when the exponents lie within 24 - p - log2 W of each other (most
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
      t = (double)fp8_sum(x);
      return isfinite(t);
    } else if constexpr (IN == CUREDUCE_F8_E5M2) {
      // A tile whose elements all lie below 4 in magnitude (most tiles of most data): 64
      // multiples of 2^-16 below 4 sum exactly in f32, one addition an element. A byte's
      // magnitude (its low 7 bits) is at least 0x44 (exponent field 17 and up, NaN and
      // infinities included) exactly when adding 0x3c sets its top bit, with no carry out.
      unsigned wide = 0u;
#pragma unroll
      for (int u = 0; u < U; ++u) {
        unsigned w[4];
        memcpy(w, &x[u], 16);
#pragma unroll
        for (int j = 0; j < 4; ++j)
          wide |= (w[j] & 0x7f7f7f7fu) + 0x3c3c3c3cu;
      }
      if (!(wide & 0x80808080u)) {
        t = (double)fp8_sum(x);
        return true;
      }
      // Otherwise two f32 sums: |x| >= 1 (multiples of 2^-2 below 2^16) and |x| < 1
      // (multiples of 2^-16): each holds 64 terms exactly in 24 bits.
      float big = -0.0f, small = -0.0f;
      each_fp8_pair(x, [&](float2 f) {
        const float b0 = fabsf(f.x) >= 1.0f ? f.x : 0.0f, b1 = fabsf(f.y) >= 1.0f ? f.y : 0.0f;
        big = __fadd_rn(__fadd_rn(big, b0), b1);
        small = __fadd_rn(__fadd_rn(small, __fadd_rn(f.x, -b0)), __fadd_rn(f.y, -b1));
      });
      t = __dadd_rn((double)big, (double)small);
      return isfinite(t);
    } else {
      return false; // f64: element by element
    }
  }
};

// One thread's exact accumulation: tiles through exact_tile when it can, element by element
// otherwise: with LIMBS_BLOCK > 0 (the full-array kernel, its block size) f32 and bf16
// elements into the thread's own limbs, the others through the pair.
template <cureduce_dtype IN, int LIMBS_BLOCK = 0> struct exact_thread {
  using pair_type = exact_pair<exact_plain_log2<IN>()>;
  using V = vec16<storage_t<IN>>;
  static constexpr bool LIMBS = LIMBS_BLOCK > 0 && (IN == CUREDUCE_F32 || IN == CUREDUCE_BF16);
  using limbs_type = exact_lane_limbs<(LIMBS_BLOCK > 0 ? LIMBS_BLOCK : 32)>;
  pair_type pair;
  bool not_neg_zero = false;

  // Before the first tile, where the thread has limbs.
  __device__ __forceinline__ void reset_limbs() const {
    if constexpr (LIMBS)
      limbs_type::of_block().reset();
  }

  __device__ __forceinline__ void scalar(storage_t<IN> x, exact_word *block) {
    const double v = (double)widen<IN>(x);
    not_neg_zero |= !(v == 0.0 && signbit(v));
    pair.add(v, block);
  }

  template <int U> __device__ __forceinline__ void tile(const V (&x)[U], exact_word *block) {
#pragma unroll
    for (int u = 0; u < U; ++u)
      not_neg_zero |= !all_negative_zero<IN>(x[u]);
    // 16-bit inputs check and sum two vectors at a time: their f32 values for four would not
    // fit the 64 registers the launch bounds allow (they spilled to local memory).
    constexpr int G = sizeof(storage_t<IN>) == 2 && U % 2 == 0 ? 2 : U;
    using Part = V[G];
#pragma unroll
    for (int g = 0; g < U; g += G) {
      const Part &part = *reinterpret_cast<const Part *>(&x[g]);
      double t;
      int hi;
      if (exact_tile<IN, G>::sum(part, t, hi)) {
        pair.add(t, block);
      } else {
#pragma unroll
        for (int u = 0; u < G; ++u) { // constant indices: the vectors stay in registers
          if constexpr (LIMBS)
            add_declined<G>(part[u], hi, block);
          else
            pair = add_elements(part[u], pair, block);
        }
      }
    }
  }

  // Whether tile_beside() uses a second sum: for f64, whose every element takes a pair
  // addition, a chain of a dozen dependent additions.
  static constexpr bool TWO_CHAINS = IN == CUREDUCE_F64;

  // tile(x), with `other` taking every second element where TWO_CHAINS: two chains of
  // additions, half as long, so that a thread's last tile ends sooner. absorb(other) before
  // the flush.
  template <int U>
  __device__ __forceinline__ void tile_beside(exact_thread &other, const V (&x)[U], exact_word *block) {
    if constexpr (TWO_CHAINS) {
      static_assert(V::N == 2, "an element for each chain");
#pragma unroll
      for (int u = 0; u < U; ++u) {
        not_neg_zero |= !all_negative_zero<IN>(x[u]);
        pair.add_beside(other.pair, (double)widen<IN>(x[u][0]), (double)widen<IN>(x[u][1]), block);
      }
    } else {
      tile<U>(x, block);
    }
  }

  // Another thread sum added into this one.
  __device__ __forceinline__ void absorb(const exact_thread &o, exact_word *block) {
    pair.add(o.pair.a0, block);
    pair.add(o.pair.a1, block);
    pair.pushed |= o.pair.pushed;
    not_neg_zero |= o.not_neg_zero;
  }

  // One vector of a tile of G that exact_tile::sum declined, hi its largest exponent field,
  // into the thread's limbs; but an f32 vector with at most one element (nonzero) further than
  // SPREAD below hi (a tiny value in uniform data) through the pair: the others as one sum,
  // and that element alone.
  template <int G> __device__ __forceinline__ void add_declined(const V &x, int hi, exact_word *s) {
    using Tile = exact_tile<IN, G>;
    if constexpr (Tile::LEAVES_SMALL) {
      const unsigned below = hi > Tile::SPREAD ? (unsigned)(hi - Tile::SPREAD) << 24 : 0u;
      unsigned left = 0u;
#pragma unroll
      for (int i = 0; i < V::N; ++i) {
        const unsigned a = __float_as_uint(static_cast<float>(widen<IN>(x[i]))) << 1;
        left |= (a != 0u && a < below ? 1u : 0u) << i;
      }
      if (hi + Tile::LOG2W + 1 < 255 && __popc(left) <= 1) {
        pair = add_vector_leaving_small<G>(x, hi, left, pair, s);
        return;
      }
    }
    add_to_limbs(x, s);
  }

  // The elements of one vector into the thread's limbs (NaN and infinities: their flags in s).
  // Out of line: the rare path, whose registers the loop would otherwise spill.
  static __device__ __noinline__ void add_to_limbs(V x, exact_word *s) {
    float v[V::N];
#pragma unroll
    for (int i = 0; i < V::N; ++i)
      v[i] = static_cast<float>(widen<IN>(x[i]));
    limbs_type::of_block().add(v, s);
  }

  // add_declined's vector through the pair: `left` marks its one element (or none) far below
  // hi, the others are one exact sum (a subset of a tile that passes the check with the same
  // largest exponent). Out of line: the rare path.
  template <int G>
  static __device__ __noinline__ pair_type add_vector_leaving_small(V x, int hi, unsigned left, pair_type p,
                                                                    exact_word *block) {
    float v[1][V::N];
#pragma unroll
    for (int i = 0; i < V::N; ++i)
      v[0][i] = (left >> i) & 1u ? 0.0f : static_cast<float>(widen<IN>(x[i]));
    p.add(exact_tile<IN, G>::template split_sum<1>(v, hi), block);
#pragma unroll
    for (int i = 0; i < V::N; ++i)
      if ((left >> i) & 1u)
        p.add((double)widen<IN>(x[i]), block);
    return p;
  }

  // The elements of one vector, one by one. Out of line (outside f64 it is the rare path);
  // everything passes by value, so nothing of the caller's needs an address.
  static __device__ __noinline__ pair_type add_elements(vec16<storage_t<IN>> x, pair_type p,
                                                        exact_word *block) {
#pragma unroll
    for (int i = 0; i < vec16<storage_t<IN>>::N; ++i)
      p.add((double)widen<IN>(x[i]), block);
    return p;
  }

  // Everything this thread holds, into its warp's copy of the block's state (every thread
  // calls it; thread 0 records the sign flag in warp 0's copy).
  __device__ __forceinline__ void flush(exact_word *block) const {
    if constexpr (LIMBS)
      limbs_type::of_block().flush(block);
    pair.flush(block);
    if (__syncthreads_or(not_neg_zero) && threadIdx.x == 0)
      block[CR_EXACT_NOT_NEG_ZERO] = 1;
  }
};

} // namespace cr
