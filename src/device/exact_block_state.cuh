// An exact state (common/exact_state.h) held by a block in shared memory, and added to a
// global one: adding a double to it by integer atomics (one lane, or a whole warp at once), a
// copy per warp, gathered by one warp or published carried, and the carries that keep limbs
// small. Layer: device primitives. Why the result is exact: docs/exact.md.
#pragma once

#include "../common/exact_state.h"

#include <stdint.h>

namespace cr {

// The words of a state that blocks hold in shared memory: the limbs and the four flags (the
// element count is added once per launch, not per block).
constexpr int EXACT_BLOCK_WORDS = CR_EXACT_COUNT;
using exact_word = unsigned long long; // int64 words as the atomics take them (two's complement)

// Add d to a 64-bit word in shared memory by two 32-bit atomic additions: the low half's,
// whose old value says whether it wrapped, then the high half's with that carry. Many
// additions in any order leave the word at its first value plus their sum (mod 2^64), once
// all are done. A 64-bit shared atomic addition is a compare-and-swap loop on sm_90, which
// lanes of a warp adding to the same word retry one by one; the 32-bit one is an instruction.
__device__ __forceinline__ void shared_add64(exact_word *w, exact_word d) {
  unsigned *const half = reinterpret_cast<unsigned *>(w); // little-endian: the low half first
  const unsigned lo = (unsigned)d, old = atomicAdd(&half[0], lo);
  const unsigned hi = (unsigned)(d >> 32) + (old + lo < old ? 1u : 0u);
  if (hi != 0)
    atomicAdd(&half[1], hi);
}

// add(limb, digit) for each nonzero digit of a finite double x (its at most three digits,
// cr_exact_split), each below 2^32 in magnitude.
template <class Add> __device__ __forceinline__ void exact_each_digit(double x, Add add) {
  int64_t d[3];
  const int k = cr_exact_split(x, d);
  if (k < 0)
    return;
#pragma unroll
  for (int t = 0; t < 3; ++t)
    if (d[t] != 0)
      add(k + t, d[t]);
}

// Add x to a state in shared memory: NaN and infinities set their flag, a finite x its three
// digits. Exact and order-free: integer additions. Out of line: it is the rare path of every
// loop that calls it.
__device__ __noinline__ void exact_push(exact_word *s, double x) {
  if (isnan(x)) {
    shared_add64(&s[CR_EXACT_NAN], 1ull);
  } else if (isinf(x)) {
    shared_add64(&s[x > 0 ? CR_EXACT_POS_INF : CR_EXACT_NEG_INF], 1ull);
  } else {
    exact_each_digit(x, [&](int limb, int64_t digit) { shared_add64(&s[limb], (exact_word)digit); });
  }
}

// exact_push by every lane of a full warp at once, into the warp's own copy of the block's
// state (exact_block: no other warp adds to s meanwhile). Lanes whose values fall on the same
// three limbs (most of them, when a block flushes its threads' sums) add their digits with
// warp reductions, and one lane of each such group adds the three sums to s with plain loads
// and stores, in turn with the other groups' lanes: 64-bit shared atomics are
// compare-and-swap loops on sm_90, slow even without contention. A digit (below 2^32 in
// magnitude) goes to the 32-bit reduction as two 16-bit halves, whose sums over 32 lanes fit
// 32 bits exactly.
__device__ __forceinline__ void exact_push_warp(exact_word *s, double x) {
  int64_t d[3] = {0, 0, 0};
  const bool finite = isfinite(x);
  const int k = finite ? cr_exact_split(x, d) : -1;
  if (!finite)
    exact_push(s, x); // a flag
  const int lane = threadIdx.x & 31;
  __syncwarp(); // the lanes' own atomic additions to s (exact_push) are seen by every leader
  unsigned pending = __ballot_sync(0xffffffffu, k >= 0);
  while (pending) { // one round per distinct limb index among the lanes
    const int leader = __ffs(pending) - 1;
    const int kl = __shfl_sync(0xffffffffu, k, leader);
    const bool mine = k == kl && ((pending >> lane) & 1);
    int64_t sum[3];
#pragma unroll
    for (int t = 0; t < 3; ++t) {
      const int64_t v = mine ? d[t] : 0;
      const unsigned lo = __reduce_add_sync(0xffffffffu, (unsigned)(v & 0xffff));
      const int hi = (int)__reduce_add_sync(0xffffffffu, (unsigned)(int)(v >> 16));
      sum[t] = (int64_t)hi * 65536 + (int64_t)lo;
    }
    if (lane == leader)
#pragma unroll
      for (int t = 0; t < 3; ++t)
        s[kl + t] += (exact_word)sum[t];
    __syncwarp(); // the next round's leader sees these sums
    pending &= ~__ballot_sync(0xffffffffu, mine);
  }
}

// exact_push_warp of K values a lane at once, as one signed 128-bit integer: every value's
// significand placed in a 120-bit window whose top is the warp's largest exponent, the lanes'
// sums (below 2^127) added by shuffles, and the total added by lane 0 as five digits: a
// couple of hundred instructions, where exact_push_warp takes a round of six warp reductions
// per distinct limb among the lanes for each of a lane's values. Exact where no value has a
// set bit below the window (a thread's pair of a block's sum: a1 lies below a0, and the lanes'
// a0 near each other); returns false, having added nothing, where one has or one is not
// finite. Every lane of a full warp calls it.
template <int K> __device__ __forceinline__ bool exact_push_warp_window(exact_word *s, const double (&v)[K]) {
  static_assert(K >= 1 && K <= 4, "32 K values below 2^120 fit 127 bits");
  constexpr int WINDOW = 120;
  uint64_t m[K]; // |v[k]| = m[k] 2^(f[k] - 1075): bit 0 of m[k] at bit f[k] - 1 of the state
  int f[K], top = 0;
  bool finite = true;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const uint64_t b = (uint64_t)__double_as_longlong(v[k]);
    const int field = (int)((b >> 52) & 0x7ffu);
    finite &= field != 0x7ff;
    m[k] = (b & ((1ull << 52) - 1)) | (field != 0 ? 1ull << 52 : 0ull);
    f[k] = max(field, 1);
    top = m[k] != 0 ? max(top, f[k]) : top;
  }
  const int fmax = (int)__reduce_max_sync(0xffffffffu, (unsigned)top);
  // The window's lowest bit, as a bit of the state: the largest value's bit 0 lands 67 above
  // it, its top bit at 119.
  const int base = max(fmax - 1 - (WINDOW - 53), 0);
  __int128 sum = 0;
  bool fits = true;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int up = f[k] - 1 - base; // at most WINDOW - 53
    __int128 t;
    if (up >= 0) {
      t = (__int128)m[k] << up;
    } else {
      const int down = -up;
      fits &= down < 64 ? (m[k] & ((1ull << down) - 1)) == 0 : m[k] == 0;
      t = down < 64 ? (__int128)(m[k] >> down) : 0;
    }
    sum += v[k] < 0.0 ? -t : t;
  }
  if (!__all_sync(0xffffffffu, finite && fits))
    return false;
  if (fmax == 0) // every value zero
    return true;
  uint64_t lo = (uint64_t)sum, hi = (uint64_t)(sum >> 64);
#pragma unroll
  for (int off = 16; off > 0; off /= 2) {
    const __int128 o = (__int128)__shfl_xor_sync(0xffffffffu, hi, off) << 64 |
                       (__int128)__shfl_xor_sync(0xffffffffu, lo, off);
    const __int128 r = ((__int128)hi << 64 | (__int128)lo) + o;
    lo = (uint64_t)r;
    hi = (uint64_t)(r >> 64);
  }
  __syncwarp(); // the lanes' own atomic additions to s (exact_push) are seen by lane 0
  if ((threadIdx.x & 31) == 0) {
    // The total T at bit `base`: limb base / 32, shifted by base % 32, as signed digits below
    // 2^31 in magnitude (the top one below 2^30), so a small total touches few limbs.
    const __int128 T = (__int128)((unsigned __int128)hi << 64 | lo);
    const int limb = base / CR_EXACT_LIMB_BITS, shift = base % CR_EXACT_LIMB_BITS;
    const int64_t d0 = (int32_t)(uint32_t)(lo << shift);
    __int128 r = (T >> (CR_EXACT_LIMB_BITS - shift)) + (d0 < 0 ? 1 : 0); // (T 2^shift - d0) / 2^32
    if (d0 != 0)
      s[limb] += (exact_word)d0;
#pragma unroll
    for (int i = 1; i < 4; ++i) {
      const int64_t d = (int32_t)(uint32_t)r;
      r = (r - d) >> CR_EXACT_LIMB_BITS;
      if (d != 0)
        s[limb + i] += (exact_word)d;
    }
    if (r != 0)
      s[limb + 4] += (exact_word)(int64_t)r;
  }
  __syncwarp(); // later additions to s see these
  return true;
}

// A block's state in shared memory, one copy per warp: a warp's atomic additions then never
// wait behind another warp's on the same limbs (at every block's flush all the warps add to
// the same few limbs). publish() adds the copies' sum, carried, to a global state; a block's
// one warp can instead gather them to round them itself (gather_warp). Every thread calls
// clear() and publish() (a barrier inside).
template <int WARPS> struct exact_block {
  exact_word w[WARPS][EXACT_BLOCK_WORDS];

  __device__ __forceinline__ void clear() {
    for (int i = threadIdx.x; i < WARPS * EXACT_BLOCK_WORDS; i += blockDim.x)
      (&w[0][0])[i] = 0;
    __syncthreads();
  }
  // The calling warp's copy.
  __device__ __forceinline__ exact_word *mine() { return w[threadIdx.x / 32]; }
  // The copies' sum into dst[0 .. EXACT_BLOCK_WORDS), by one full warp, with no barrier: every
  // copy must be complete and seen by the warp (after a block barrier; this warp's own later
  // additions are ordered by the __syncwarp here).
  __device__ __forceinline__ void gather_warp(int64_t *dst) const {
    __syncwarp();
    for (int i = threadIdx.x & 31; i < EXACT_BLOCK_WORDS; i += 32) {
      exact_word sum = w[0][i];
#pragma unroll
      for (int k = 1; k < WARPS; ++k)
        sum += w[k][i];
      dst[i] = (int64_t)sum;
    }
  }
  // The copies' sum added to a global state (nonzero words only), each limb carried once on the
  // way as exact_block_carry would: limb i's low 32 bits plus limb i - 1's carry (the top limb
  // keeps its own), so each addition stays below 2^33 in magnitude while the copies' limbs
  // stay below 2^62. A thread a word, reading limb i - 1's copies too: no barrier after the one
  // that completes the copies.
  __device__ __forceinline__ void publish(exact_word *global) const {
    __syncthreads();
    for (int i = threadIdx.x; i < EXACT_BLOCK_WORDS; i += blockDim.x) {
      exact_word sum = w[0][i], below = i > 0 && i < CR_EXACT_LIMBS ? w[0][i - 1] : 0;
#pragma unroll
      for (int k = 1; k < WARPS; ++k) {
        sum += w[k][i];
        below += i > 0 && i < CR_EXACT_LIMBS ? w[k][i - 1] : 0;
      }
      int64_t v = (int64_t)sum;
      if (i < CR_EXACT_LIMBS) {
        const int64_t carry = i < CR_EXACT_LIMBS - 1 ? v >> CR_EXACT_LIMB_BITS : 0;
        v += ((int64_t)below >> CR_EXACT_LIMB_BITS) - carry * CR_EXACT_DIGIT;
      }
      if (v != 0)
        atomicAdd(&global[i], (exact_word)v);
    }
  }
};

// One carry step over limbs [0, CR_EXACT_LIMBS - 1), in parallel: limb i keeps its low 32
// bits plus the carry of limb i - 1. The value is unchanged; limbs below 2^62 in magnitude
// come out below 2^33. Every thread calls it (barriers inside).
__device__ __forceinline__ void exact_block_carry(exact_word *block) {
  __syncthreads();
  int64_t carry = 0, mine = 0;
  const int i = threadIdx.x;
  if (i < CR_EXACT_LIMBS) {
    mine = (int64_t)block[i];
    carry = i < CR_EXACT_LIMBS - 1 ? mine >> CR_EXACT_LIMB_BITS : 0;
  }
  __syncthreads();
  if (i < CR_EXACT_LIMBS)
    block[i] = (exact_word)(mine - carry * CR_EXACT_DIGIT);
  __syncthreads();
  if (i < CR_EXACT_LIMBS - 1 && carry != 0)
    atomicAdd(&block[i + 1], (exact_word)carry);
  __syncthreads();
}

// Add a finite double's digits to a global state (zero adds nothing): each addition below
// 2^32 in magnitude. One thread.
__device__ __forceinline__ void exact_global_add(exact_word *global, double x) {
  exact_each_digit(x, [&](int limb, int64_t digit) { atomicAdd(&global[limb], (exact_word)digit); });
}

// Add a state held in shared memory (limbs of any size, flags) to a global one and clear it:
// each limb below the top goes as its low 32 bits and the rest (added to the limb above), so
// no addition to the global state reaches 2^32 in magnitude however long the shared one
// gathered pushes. Thread `rank` of a team of `team` takes words rank, rank + team, ...
__device__ __forceinline__ void exact_publish_split(exact_word *s, exact_word *global, int rank, int team) {
  for (int i = rank; i < EXACT_BLOCK_WORDS; i += team) {
    const int64_t v = (int64_t)s[i];
    s[i] = 0;
    if (v == 0)
      continue;
    if (i < CR_EXACT_LIMBS - 1) {
      const int64_t hi = v >> CR_EXACT_LIMB_BITS, lo = v - hi * CR_EXACT_DIGIT;
      if (lo != 0)
        atomicAdd(&global[i], (exact_word)lo);
      if (hi != 0)
        atomicAdd(&global[i + 1], (exact_word)hi);
    } else {
      atomicAdd(&global[i], (exact_word)v);
    }
  }
}

// One carry step on a global state that other kernels may be adding to at the same time:
// each move of a carry is two atomic additions that leave the value unchanged. Limbs come out
// below 2^33 in magnitude (plus whatever is added meanwhile). Threads 0..CR_EXACT_LIMBS - 2.
__device__ __forceinline__ void exact_global_carry(exact_word *global) {
  const int i = threadIdx.x;
  if (i < CR_EXACT_LIMBS - 1) {
    const int64_t v = (int64_t)__ldcg(&global[i]);
    const int64_t carry = v >> CR_EXACT_LIMB_BITS;
    if (carry != 0) {
      atomicAdd(&global[i], (exact_word)(-carry * CR_EXACT_DIGIT));
      atomicAdd(&global[i + 1], (exact_word)carry);
    }
  }
}

} // namespace cr
