// Exact sums of full arrays, in one launch. Layer: kernels.
//
// The input is split as in reduce_full_single_pass.cuh (scalar head, 16-byte vectors in
// tiles of BLOCK * UNROLL, scalar tail). Each thread sums its tiles exactly
// (device/exact_accumulate.cuh), each warp adds its threads' remainders into its copy of the
// block's state in shared memory by integer atomics, and each block adds the sum of its
// copies to a global state. Integer
// additions commute, so neither the grid nor the order of arrival changes a bit of the
// result. The last block to arrive either rounds the global state into the output and clears
// it for the next launch (a one-call sum), or carries its limbs (a caller's running state). A
// one-call sum of one block rounds its own state and leaves the global one alone.
// A grid of several rows (blockIdx.y, ld elements apart, each laid out as L) sums each row so,
// with a state, a ticket and an output of its own.
#pragma once

#include "../device/block_ticket.cuh"
#include "../device/exact_accumulate.cuh"
#include "../device/exact_round.cuh"
#include "reduce_full_single_pass.cuh"

namespace cr {

// What the last block does with the global state.
struct exact_finish {
  int round;                // 1: round into out and clear the state; 0: carry and keep it
  int mean;                 // divide by the count before rounding
  cureduce_dtype out_dtype; // F64, F32 or a narrow float
  void *out;
  int out_size; // bytes between the outputs of a batch of rows
};

template <cureduce_dtype IN, int BLOCK, int UNROLL>
__global__ void __launch_bounds__(BLOCK, sm_max_threads() / BLOCK / 2)
    exact_full(const storage_t<IN> *__restrict__ in, full_layout L, exact_word *__restrict__ state,
               unsigned int *__restrict__ ticket, exact_finish fin, uint64_t ld) {
  using V = vec16<storage_t<IN>>;
  in += blockIdx.y * ld;
  state += blockIdx.y * (uint64_t)CUREDUCE_EXACT_STATE_WORDS;
  ticket += blockIdx.y;
  fin.out = static_cast<char *>(fin.out) + blockIdx.y * (uint64_t)fin.out_size;
  __shared__ exact_block<BLOCK / 32> shared;
  shared.clear();
  exact_word *const block = shared.mine(); // this warp's copy
  const int tid = threadIdx.x;
  exact_thread<IN> th, other; // other: the second chain of f64 (exact_thread::tile_beside)

  if (blockIdx.x == 0 && tid < (int)L.head)
    th.scalar(in[tid], block);

  const V *body = reinterpret_cast<const V *>(in + L.head);
  uint64_t tile = blockIdx.x;
  const V *p = body + tile * (uint64_t)(BLOCK * UNROLL) + tid;
  const uint64_t stride = (uint64_t)gridDim.x * (BLOCK * UNROLL);
  for (; tile < L.full_tiles; tile += gridDim.x, p += stride) {
    V x[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
      x[u] = p[u * BLOCK];
    th.template tile_beside<UNROLL>(other, x, block);
  }
  if (tile < L.tiles) { // the one partial tile, if any: vector by vector
    const uint64_t base = tile * (uint64_t)(BLOCK * UNROLL) + tid;
    for (int u = 0; u < UNROLL; ++u) {
      const uint64_t i = base + (uint64_t)u * BLOCK;
      if (i < L.vectors) {
        const V x[1] = {body[i]};
        th.template tile<1, true>(x, block);
      }
    }
  }
  if (blockIdx.x == gridDim.x - 1 && tid < (int)L.tail)
    th.scalar(in[L.head + L.vectors * V::N + tid], block);

  if constexpr (exact_thread<IN>::TWO_CHAINS)
    th.absorb(other, block);
  th.flush(block);
  exact_word *const merged = shared.merge();
  exact_block_carry(merged);
  __shared__ int64_t final_state[CR_EXACT_COUNT + 1];
  if (gridDim.x == 1 && fin.round) { // the only block of its row: its state is the whole sum
    for (int i = tid; i <= CR_EXACT_COUNT; i += BLOCK)
      final_state[i] = i < CR_EXACT_COUNT ? (int64_t)merged[i] : (int64_t)L.n;
  } else {
    exact_block_publish(merged, state);
    if (blockIdx.x == 0 && tid == 0)
      atomicAdd(&state[CR_EXACT_COUNT], (exact_word)L.n);
    if (!block_last_arrival(ticket, gridDim.x))
      return;
    if (!fin.round) {
      exact_global_carry(state);
      return;
    }
    for (int i = tid; i <= CR_EXACT_COUNT; i += BLOCK)
      final_state[i] = (int64_t)__ldcg(&state[i]);
    for (int i = tid; i <= CR_EXACT_COUNT; i += BLOCK)
      state[i] = 0; // ready for the next launch
  }
  __syncthreads();
  if (tid < 32)
    exact_write_result_warp(final_state, fin.mean, fin.out_dtype, fin.out);
}

// Add one state into another (dst += src), then carry: one block.
__global__ void exact_combine(exact_word *__restrict__ dst, const exact_word *__restrict__ src) {
  for (int i = threadIdx.x; i <= CR_EXACT_COUNT; i += blockDim.x)
    atomicAdd(&dst[i], src[i]);
  __syncthreads();
  __threadfence();
  exact_global_carry(dst);
}

// Round a state into out: one warp.
__global__ void exact_round(const int64_t *__restrict__ state, int mean, cureduce_dtype out_dtype,
                            void *out) {
  exact_write_result_warp(state, mean, out_dtype, out);
}

} // namespace cr
