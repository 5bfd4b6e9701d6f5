// Each thread's own limbs of an exact state, in shared memory: where the full-array kernel
// adds the elements of f32 and bf16 tiles that cannot be summed in f32 (wide exponents,
// values near the top of the range), each as an integer, with no rounding step and no atomics.
// Layer: device primitives. Why it is exact: docs/exact.md.
#pragma once

#include "exact_block_state.cuh"

#include <stdint.h>

namespace cr {

// Every f32 (and bf16) value is m 2^(f - 150), m below 2^24 and f = max(field, 1), so its
// lowest bit lies f + 924 bits above the state's (2^-1074): limbs 28 to 36. The 2^20 values a
// thread adds at most (a block takes at most 2^28) stay below 2^148, limb 38: 11 limbs.
constexpr int EXACT_LANE_LIMB0 = 28, EXACT_LANE_LIMBS = 11;

// The limbs of a block of BLOCK threads: limb j of thread t at w[j][t], so a warp's accesses to
// one limb index or to many are consecutive words either way, with no bank conflicts. Each
// addition is below 2^55 in magnitude (a significand shifted by at most 31), so a limb holding
// less than 2^32 takes 255 of them before it could reach 2^63: carry() brings limbs 0 ..
// LIMBS - 2 back to [0, 2^32) before that. All of it is the thread's own: no barrier.
template <int BLOCK> struct exact_lane_limbs {
  static constexpr int MAX_ADDS = 255;
  int64_t w[EXACT_LANE_LIMBS][BLOCK];
  int adds[BLOCK]; // additions since the last carry; -1: none yet, limbs not zeroed

  // The block's limbs: one __shared__ variable in each kernel that uses them.
  static __device__ __forceinline__ exact_lane_limbs &of_block() {
    __shared__ exact_lane_limbs limbs;
    return limbs;
  }

  // Before the thread's first addition.
  __device__ __forceinline__ void reset() { adds[threadIdx.x] = -1; }

  // Add the f32 values x[0 .. N) (elements of f32 or bf16) exactly: NaN and infinities set
  // their flags in s (the warp's copy of the block's state).
  template <int N> __device__ __forceinline__ void add(const float (&x)[N], exact_word *s) {
    static_assert(N <= MAX_ADDS, "more additions than a carried limb can take");
    const int t = threadIdx.x;
    int n = adds[t];
    if (n < 0) {
#pragma unroll
      for (int j = 0; j < EXACT_LANE_LIMBS; ++j)
        w[j][t] = 0;
      n = 0;
    } else if (n > MAX_ADDS - N) {
      carry();
      n = 0;
    }
    adds[t] = n + N;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const unsigned b = __float_as_uint(x[i]), field = (b >> 23) & 0xffu;
      if (field == 0xffu) {
        exact_push(s, (double)x[i]);
        continue;
      }
      const unsigned m = (b & 0x7fffffu) | (field != 0u ? 0x800000u : 0u);
      const int lsb = (int)max(field, 1u) + 924;
      const int64_t v = (int64_t)((uint64_t)m << (lsb % CR_EXACT_LIMB_BITS));
      w[lsb / CR_EXACT_LIMB_BITS - EXACT_LANE_LIMB0][t] += (b >> 31) ? -v : v;
    }
  }

  // The value unchanged, limbs 0 .. LIMBS - 2 in [0, 2^32): each keeps its low 32 bits and
  // passes the rest (an arithmetic shift: floor division) to the next.
  __device__ __forceinline__ void carry() {
    const int t = threadIdx.x;
    int64_t c = 0;
#pragma unroll
    for (int j = 0; j < EXACT_LANE_LIMBS - 1; ++j) {
      const int64_t v = w[j][t] + c;
      c = v >> CR_EXACT_LIMB_BITS;
      w[j][t] = v - c * CR_EXACT_DIGIT;
    }
    w[EXACT_LANE_LIMBS - 1][t] += c;
  }

  // The warp's limbs added into its copy of the block's state s (each limb's sum below 2^37),
  // by lane 0 with plain loads and stores, as exact_push_warp's leaders do. Every lane of a
  // full warp calls it.
  __device__ __forceinline__ void flush(exact_word *s) {
    const bool used = adds[threadIdx.x] >= 0;
    __syncwarp(); // the lanes' own flag additions to s are seen by lane 0
    if (!__any_sync(0xffffffffu, used))
      return;
    if (used)
      carry(); // every limb below 2^32 in magnitude (the top one: a sum below 2^148)
#pragma unroll
    for (int j = 0; j < EXACT_LANE_LIMBS; ++j) {
      const int64_t v = used ? w[j][threadIdx.x] : 0;
      const unsigned lo = __reduce_add_sync(0xffffffffu, (unsigned)(v & 0xffff));
      const int hi = (int)__reduce_add_sync(0xffffffffu, (unsigned)(int)(v >> 16));
      if ((threadIdx.x & 31) == 0)
        s[EXACT_LANE_LIMB0 + j] += (exact_word)((int64_t)hi * 65536 + (int64_t)lo);
    }
    __syncwarp(); // the next additions to s see these
  }
};

} // namespace cr
