// Exact accumulation on the GPU: how a thread sums its elements without losing a bit, in a
// pair of doubles and in tiles summed exactly in f32 (exact_tile.cuh), and pushes what the pair
// cannot hold into its block's state (exact_block_state.cuh). Layer: device primitives. The
// method and the proof that it is exact: docs/exact.md.
#pragma once

#include "acc_traits.cuh"
#include "dtype_traits.cuh"
#include "exact_block_state.cuh"
#include "exact_lane_limbs.cuh"
#include "exact_tile.cuh"
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
  static constexpr int PLAIN_LOG2 = PLAIN;
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

  // flush(), where every pair of the warp holds a plain sum (a1 = 0, |a0| < 2^PLAIN: an
  // integer number of quanta q below 2^53): the warp's sum of them as one int64 by shuffles
  // (below 2^58), added by lane 0 as three digits at q's bit of the state, with no digit split
  // or rounds of warp reductions. Returns false, having added nothing, where any pair is not
  // plain. Every lane of a full warp calls it; PLAIN > 0 only.
  __device__ __forceinline__ bool flush_plain(exact_word *block) const {
    static_assert(PLAIN > 0 && PLAIN < 53, "a quantum to count in");
    if (!__all_sync(0xffffffffu, a1 == 0.0 && fabs(a0) < (double)(1ull << PLAIN)))
      return false;
    long long v = __double2ll_rn(a0 * (double)(1ull << (53 - PLAIN))); // exact: a0 / q
#pragma unroll
    for (int off = 16; off > 0; off /= 2)
      v += __shfl_xor_sync(0xffffffffu, v, off);
    constexpr int BIT = PLAIN - 53 - CR_EXACT_LSB_EXP; // q = 2^(PLAIN - 53) in limbs of 32 bits
    constexpr int LIMB = BIT / CR_EXACT_LIMB_BITS, SHIFT = BIT % CR_EXACT_LIMB_BITS;
    static_assert(LIMB + 2 < CR_EXACT_LIMBS, "three limbs from q's");
    __syncwarp(); // the lanes' own atomic additions to block (exact_push) are seen by lane 0
    if ((threadIdx.x & 31) == 0) {
      // Signed digits, each below 2^31 in magnitude but the top one: a small sum of either
      // sign touches one limb, as cr_exact_split's digits do.
      const __int128 w = (__int128)v << SHIFT; // below 2^89 in magnitude
      const int64_t d0 = (int32_t)(uint32_t)w;
      const __int128 r = (w - d0) >> CR_EXACT_LIMB_BITS;
      const int64_t d1 = (int32_t)(uint32_t)r, d2 = (int64_t)((r - d1) >> CR_EXACT_LIMB_BITS);
      block[LIMB] += (exact_word)d0;
      if (d1 != 0)
        block[LIMB + 1] += (exact_word)d1;
      if (d2 != 0)
        block[LIMB + 2] += (exact_word)d2;
    }
    __syncwarp(); // later additions to block see these
    return true;
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
    // Two vectors at a time: for 16-bit inputs, whose f32 values for four would not fit the 64
    // registers the launch bounds allow (bf16 spilled) and whose f16 split holds 16 at most; for
    // f32 where it has limbs (full arrays), since a check of 8 elements allows 18 exponent
    // fields, not 16, so that uniform data's rare tiny values seldom decline a tile: a declined
    // tile cost its block up to a microsecond (docs/design.md#exact-sums-finish).
    constexpr int G = (sizeof(storage_t<IN>) == 2 || (IN == CUREDUCE_F32 && LIMBS)) && U % 2 == 0 ? 2 : U;
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
    flush_values(block);
    flag_sign(block);
  }

  // flush() but the sign flag: every lane of a full warp calls it, with no block barrier.
  __device__ __forceinline__ void flush_values(exact_word *block) const {
    if constexpr (LIMBS)
      limbs_type::of_block().flush(block);
    // The full-array kernel's threads (the row and segment kernels' teams flush through
    // exact_output.cuh and keep pair.flush: flush_plain is not measured there yet).
    if constexpr (LIMBS_BLOCK > 0 && pair_type::PLAIN_LOG2 > 0) {
      if (!pair.flush_plain(block))
        pair.flush(block);
    } else {
      pair.flush(block);
    }
  }

  // flush() after absorb(other), for TWO_CHAINS in the full-array kernel: both pairs as one
  // integer where the warp's pairs fit its window (exact_push_warp_window), with no pair
  // additions. f32 and bf16 pairs keep flush(): their window gained 2% to 3% from 2^14 to
  // 2^18 and lost 6% on one-block calls (docs/design.md#exact-sums-finish).
  __device__ __forceinline__ void flush_beside(exact_thread &other, exact_word *block) {
    static_assert(LIMBS_BLOCK > 0, "the full-array kernel's threads");
    const double v[4] = {pair.a0, pair.a1, other.pair.a0, other.pair.a1};
    if (exact_push_warp_window(block, v)) { // the same answer in every lane of a warp
      not_neg_zero |= other.not_neg_zero;
    } else {
      absorb(other, block);
      flush_values(block);
    }
    flag_sign(block); // every thread of the block at this one barrier, whichever way its warp went
  }

  // Thread 0 records in warp 0's copy whether any thread added a value other than -0.0 (every
  // thread calls it).
  __device__ __forceinline__ void flag_sign(exact_word *block) const {
    if (__syncthreads_or(not_neg_zero) && threadIdx.x == 0)
      block[CR_EXACT_NOT_NEG_ZERO] = 1;
  }
};

} // namespace cr
