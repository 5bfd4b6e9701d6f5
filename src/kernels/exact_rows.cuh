// Exact sums of rows: a team of threads an output (a lane, 4 lanes, a warp or a block), its
// pairs added into one and rounded (exact_output.cuh). Few long rows take exact_full's grid
// instead (dispatch_exact.cu). Layer: kernels.
#pragma once

#include "exact_output.cuh"

namespace cr {

// Where row r lies: r * ld, cols elements.
struct exact_rows_layout {
  uint64_t count, ld, cols;

  __device__ __forceinline__ uint64_t begin(uint64_t r) const { return r * ld; }
  __device__ __forceinline__ uint64_t end(uint64_t r) const { return r * ld + cols; }
};

// Rows, TEAM threads an output: 1, 4 or 32 (rows of at most EXACT_CHUNK elements, a
// warp taking 32 / TEAM of them at a time) or EXACT_AXIS_BLOCK (any length).
template <cureduce_dtype IN, int TEAM>
__global__ void __launch_bounds__(EXACT_AXIS_BLOCK, exact_rows_blocks_per_sm(IN, TEAM))
    exact_rows(const storage_t<IN> *__restrict__ in, exact_rows_layout S, exact_outputs O) {
  constexpr int WARPS = EXACT_AXIS_WARPS;
  __shared__ exact_word states[WARPS][EXACT_STATE_WORDS]; // one a warp, clear between outputs
  __shared__ double pairs[WARPS][2];
  exact_clear_states(states);
  __syncthreads();
  const int lane = threadIdx.x & 31, warp = threadIdx.x / 32;
  exact_word *const mine = states[warp];

  if constexpr (TEAM <= 32) {
    constexpr int PER_WARP = 32 / TEAM;
    const unsigned rank = lane % TEAM;
    const unsigned team_mask = TEAM == 32 ? 0xffffffffu : ((1u << TEAM) - 1u) << (lane - rank);
    const uint64_t step = (uint64_t)gridDim.x * WARPS * PER_WARP;
    for (uint64_t first = ((uint64_t)blockIdx.x * WARPS + warp) * PER_WARP; first < S.count; first += step) {
      const uint64_t s = first + lane / TEAM;
      const bool valid = s < S.count;
      const uint64_t begin = valid ? S.begin(s) : 0, end = valid ? S.end(s) : 0;
      exact_thread<IN> th;
      exact_add_range<IN, 4>(th, in, begin, end, rank, TEAM, mine);
      exact_pair_reduce<TEAM>(th.pair, mine);
      const bool not_neg_zero = (__ballot_sync(0xffffffffu, th.not_neg_zero) & team_mask) != 0;
      const unsigned pushed = __ballot_sync(0xffffffffu, th.pair.pushed); // lanes that used mine
      const bool done = valid && rank == 0 && (pushed & team_mask) == 0 &&
                        exact_write_pair(th.pair, end - begin, not_neg_zero, O, s);
      unsigned redo = __ballot_sync(0xffffffffu, valid && rank == 0 && !done);
      if (redo && pushed)
        exact_clear_warp_state(mine);
      for (; redo; redo &= redo - 1) {
        const uint64_t r = first + (unsigned)(__ffs(redo) - 1) / TEAM;
        exact_output_warp<IN>(in, S.begin(r), S.end(r), O, r, mine);
      }
    }
  } else {
    static_assert(TEAM == EXACT_AXIS_BLOCK, "a team is a lane, 4 lanes, a warp or the block");
    for (uint64_t s = blockIdx.x; s < S.count; s += gridDim.x) {
      const uint64_t begin = S.begin(s), end = S.end(s);
      const bool fast = end - begin <= EXACT_CHUNK;
      exact_thread<IN> th;
      if (fast)
        exact_add_range<IN, 4>(th, in, begin, end, threadIdx.x, EXACT_AXIS_BLOCK, mine);
      bool not_neg_zero;
      const bool used = exact_block_pair(th, pairs, not_neg_zero, mine);
      const bool done =
          threadIdx.x != 0 || (fast && !used && exact_write_pair(th.pair, end - begin, not_neg_zero, O, s));
      if (__syncthreads_or(!done)) {
        exact_clear_states(states);
        __syncthreads();
        exact_output_block<IN>(in, begin, end, O, s, states);
      }
    }
  }
}

} // namespace cr
