// What the exact row, column and segment kernels share (exact_rows.cuh, exact_cols.cuh,
// exact_chunked.cuh). Layer: kernels.
//
// Each output is summed in registers first: every thread's elements into an exact pair
// (exact_thread, as in exact_full), then the pairs of the output's team added into one, which
// cr_exact_pair_value rounds. That is exact unless a pair had to give a part away (exact_pair
// pushes it into the warp's state in shared memory and says so: wide, huge or non-finite data;
// the state itself cannot tell, as pushes may cancel) or a mean lies too close to a rounding
// boundary. Such an output is summed again from its elements into a full exact state and
// rounded from that (the slow paths here). The order of additions never matters, so neither
// does the team or the grid.
#pragma once

#include "../device/exact_accumulate.cuh"
#include "../device/exact_round.cuh"

namespace cr {

constexpr int EXACT_AXIS_BLOCK = 256, EXACT_AXIS_WARPS = EXACT_AXIS_BLOCK / 32;
// A state of 77 words in shared memory: limbs, flags and the count.
constexpr int EXACT_STATE_WORDS = CR_EXACT_COUNT + 1;
// The slow paths carry their limbs after every chunk of this many elements (each element adds
// less than 2^32 to a limb, so limbs stay far below the 2^62 the rounding takes); the fast
// path takes outputs of at most this many elements.
constexpr uint64_t EXACT_CHUNK = 1ull << 27;

// Where results go: output o at out + o * size, a mean or a sum, in dtype.
struct exact_outputs {
  int mean;
  cureduce_dtype dtype;
  int size;
  char *out;
};

// Clear one warp's state (every lane calls it) or, with every thread of the block, all the
// warps' states (the caller then waits at a barrier before they are used).
__device__ __forceinline__ void exact_clear_warp_state(exact_word *s) {
  for (int i = threadIdx.x & 31; i < EXACT_STATE_WORDS; i += 32)
    s[i] = 0;
  __syncwarp();
}
__device__ __forceinline__ void exact_clear_states(exact_word (*s)[EXACT_STATE_WORDS]) {
  for (int i = threadIdx.x; i < EXACT_AXIS_WARPS * EXACT_STATE_WORDS; i += EXACT_AXIS_BLOCK)
    (&s[0][0])[i] = 0;
}

// Round the exact sum a0 + a1 of `count` elements into output o, where cr_exact_pair_value can.
// Returns false where it cannot (the caller then sums the output again into a state). An
// empty segment's mean is left untouched.
template <int PLAIN>
__device__ __forceinline__ bool exact_write_pair(const exact_pair<PLAIN> &p, uint64_t count,
                                                 bool not_neg_zero, const exact_outputs &O, uint64_t o) {
  double v;
  if (!cr_exact_pair_value(p.a0, p.a1, count, not_neg_zero, O.mean, cr_exact_format_of(O.dtype), &v))
    return false;
  if (count > 0 || !O.mean) { // one store of the output's width (the API checks its alignment)
    unsigned long long bits = 0;
    cr_exact_encode(v, O.dtype, &bits);
    char *const at = O.out + o * O.size;
    if (O.size == 8)
      *reinterpret_cast<unsigned long long *>(at) = bits;
    else if (O.size == 4)
      *reinterpret_cast<unsigned *>(at) = (unsigned)bits;
    else if (O.size == 2)
      *reinterpret_cast<unsigned short *>(at) = (unsigned short)bits;
    else
      *reinterpret_cast<unsigned char *>(at) = (unsigned char)bits;
  }
  return true;
}

// Add elements [begin, end) of in to th: thread `rank` of a team of T takes its share of the
// head below the first 16-byte boundary, every T-th vector (U at a time), and of the tail.
template <cureduce_dtype IN, int U>
__device__ __forceinline__ void exact_add_range(exact_thread<IN> &th, const storage_t<IN> *in, uint64_t begin,
                                                uint64_t end, unsigned rank, unsigned T, exact_word *s) {
  using V = vec16<storage_t<IN>>;
  const storage_t<IN> *p = in + begin;
  const uint64_t len = end - begin;
  uint64_t head = ((16u - (unsigned)(reinterpret_cast<uintptr_t>(p) & 15u)) & 15u) / sizeof(storage_t<IN>);
  head = head < len ? head : len;
  for (uint64_t k = rank; k < head; k += T)
    th.scalar(p[k], s);
  const uint64_t vectors = (len - head) / V::N;
  const V *body = reinterpret_cast<const V *>(p + head);
  uint64_t i = rank;
  for (; i + (uint64_t)(U - 1) * T < vectors; i += (uint64_t)U * T) {
    V x[U];
#pragma unroll
    for (int u = 0; u < U; ++u)
      x[u] = body[i + (uint64_t)u * T];
    th.template tile<U>(x, s);
  }
  for (; i < vectors; i += T) {
    const V x[1] = {body[i]};
    th.template tile<1>(x, s);
  }
  for (uint64_t k = head + vectors * V::N + rank; k < len; k += T)
    th.scalar(p[k], s);
}

// What the lanes of a warp hold for one output of `count` elements, added into the warp's state
// s (clear on entry, cleared again on exit) and rounded from there. Every lane calls it.
template <cureduce_dtype IN>
__device__ void exact_round_warp(const exact_thread<IN> &th, uint64_t count, const exact_outputs &O,
                                 uint64_t o, exact_word *s) {
  const int lane = threadIdx.x & 31;
  th.pair.flush(s);
  const bool not_neg_zero = __any_sync(0xffffffffu, th.not_neg_zero);
  if (lane == 0) {
    s[CR_EXACT_NOT_NEG_ZERO] = not_neg_zero;
    s[CR_EXACT_COUNT] = count;
  }
  __syncwarp();
  if (count > 0 || !O.mean)
    exact_write_result_warp(reinterpret_cast<const int64_t *>(s), O.mean, O.dtype, O.out + o * O.size);
  __syncwarp();
  exact_clear_warp_state(s);
}

// The slow path of one output of at most EXACT_CHUNK elements, by one warp: its elements into
// the warp's state s (clear on entry, cleared again on exit), rounded from there.
template <cureduce_dtype IN>
__device__ void exact_output_warp(const storage_t<IN> *in, uint64_t begin, uint64_t end,
                                  const exact_outputs &O, uint64_t o, exact_word *s) {
  exact_thread<IN> th;
  exact_add_range<IN, 4>(th, in, begin, end, threadIdx.x & 31, 32, s);
  exact_round_warp<IN>(th, end - begin, O, o, s);
}

// The slow path of one output of any length, by the whole block: its elements into the warps'
// states (clear on entry, cleared again on exit), added into the first and carried after each
// chunk, rounded by warp 0.
template <cureduce_dtype IN>
__device__ void exact_output_block(const storage_t<IN> *in, uint64_t begin, uint64_t end,
                                   const exact_outputs &O, uint64_t o, exact_word (*s)[EXACT_STATE_WORDS]) {
  const int warp = threadIdx.x / 32;
  bool not_neg_zero = false;
  for (uint64_t c = begin; c < end; c += EXACT_CHUNK) {
    exact_thread<IN> th;
    exact_add_range<IN, 4>(th, in, c, end - c < EXACT_CHUNK ? end : c + EXACT_CHUNK, threadIdx.x,
                           EXACT_AXIS_BLOCK, s[warp]);
    th.pair.flush(s[warp]);
    not_neg_zero |= th.not_neg_zero;
    __syncthreads();
    for (int i = threadIdx.x; i < EXACT_BLOCK_WORDS; i += EXACT_AXIS_BLOCK) {
      exact_word sum = s[0][i];
#pragma unroll
      for (int w = 1; w < EXACT_AXIS_WARPS; ++w) {
        sum += s[w][i];
        s[w][i] = 0;
      }
      s[0][i] = sum;
    }
    exact_block_carry(s[0]);
  }
  not_neg_zero = __syncthreads_or(not_neg_zero);
  if (threadIdx.x == 0) {
    s[0][CR_EXACT_NOT_NEG_ZERO] = not_neg_zero;
    s[0][CR_EXACT_COUNT] = end - begin;
  }
  __syncthreads();
  if (warp == 0 && (end > begin || !O.mean))
    exact_write_result_warp(reinterpret_cast<const int64_t *>(s[0]), O.mean, O.dtype, O.out + o * O.size);
  __syncthreads();
  exact_clear_states(s);
  __syncthreads();
}

// The pairs of the block's threads added into thread 0's (th.pair), through `pairs` (a pair a
// warp in shared memory), and whether any thread's element was not -0.0 into not_neg_zero.
// Every thread calls it; returns, in every thread, whether any pair pushed.
template <cureduce_dtype IN>
__device__ __forceinline__ bool exact_block_pair(exact_thread<IN> &th, double (*pairs)[2], bool &not_neg_zero,
                                                 exact_word *mine) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x / 32;
  exact_pair_reduce<32>(th.pair, mine);
  bool pushed = th.pair.pushed;
  if (lane == 0) {
    pairs[warp][0] = th.pair.a0;
    pairs[warp][1] = th.pair.a1;
  }
  not_neg_zero = __syncthreads_or(th.not_neg_zero);
  if (warp == 0) {
    typename exact_thread<IN>::pair_type p;
    if (lane < EXACT_AXIS_WARPS) {
      p.a0 = pairs[lane][0];
      p.a1 = pairs[lane][1];
    }
    exact_pair_reduce<EXACT_AXIS_WARPS>(p, mine);
    th.pair = p;
    pushed = pushed || p.pushed;
  }
  return __syncthreads_or(pushed);
}

// exact_rows' blocks an SM: 3 (80 registers) where 64 registers spill, that is every team
// of f32, f16 and bf16 and the block team of fp8 (their loops kept vectors in local memory, so
// loads waited for spill stores); 4 for f64 and the smaller fp8 teams, which fit 64.
constexpr int exact_rows_blocks_per_sm(cureduce_dtype IN, int TEAM) {
  const bool spills_at_64 = IN == CUREDUCE_F32 || IN == CUREDUCE_F16 || IN == CUREDUCE_BF16 ||
                            (TEAM == EXACT_AXIS_BLOCK && IN != CUREDUCE_F64);
  return spills_at_64 ? 3 : 4;
}

} // namespace cr
