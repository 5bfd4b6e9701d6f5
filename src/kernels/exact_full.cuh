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
// with a state, a ticket and an output of its own. exact_row_states adds the rows of a matrix
// to callers' states, a block a row, with the same block sum (exact_block_sum); segments go to
// states through exact_chunked_states (exact_chunked.cuh).
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

// Block `b` of `blocks`' exact sum of the array laid out as L at `in` (tiles b, b + blocks,
// ...; the head in block 0, the tail in the last), into the warps' copies of its shared state.
// On return the copies are complete but for the sign flag, which thread 0 records after the
// last barrier: warp 0 sees it after a __syncwarp, the other warps after a block barrier.
// Every thread calls it; shared must be cleared.
template <cureduce_dtype IN, int BLOCK, int UNROLL>
__device__ __forceinline__ void exact_block_sum(const storage_t<IN> *__restrict__ in, const full_layout &L,
                                                unsigned b, unsigned blocks,
                                                exact_block<BLOCK / 32> &shared) {
  using V = vec16<storage_t<IN>>;
  exact_word *const block = shared.mine(); // this warp's copy
  const int tid = threadIdx.x;
  exact_thread<IN, BLOCK> th, other; // other: the second chain of f64 (exact_thread::tile_beside)
  th.reset_limbs();

  if (b == 0 && tid < (int)L.head)
    th.scalar(in[tid], block);

  const V *body = reinterpret_cast<const V *>(in + L.head);
  uint64_t tile = b;
  const V *p = body + tile * (uint64_t)(BLOCK * UNROLL) + tid;
  const uint64_t stride = (uint64_t)blocks * (BLOCK * UNROLL);
  for (; tile < L.full_tiles; tile += blocks, p += stride) {
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
        th.template tile<1>(x, block);
      }
    }
  }
  if (b == blocks - 1 && tid < (int)L.tail)
    th.scalar(in[L.head + L.vectors * V::N + tid], block);

  if constexpr (exact_thread<IN>::TWO_CHAINS)
    th.flush_beside(other, block);
  else
    th.flush(block);
}

template <cureduce_dtype IN, int BLOCK, int UNROLL>
__global__ void __launch_bounds__(BLOCK, sm_max_threads() / BLOCK / 2)
    exact_full(const storage_t<IN> *__restrict__ in, full_layout L, exact_word *__restrict__ state,
               unsigned int *__restrict__ ticket, exact_finish fin, uint64_t ld) {
  in += blockIdx.y * ld;
  state += blockIdx.y * (uint64_t)CUREDUCE_EXACT_STATE_WORDS;
  ticket += blockIdx.y;
  fin.out = static_cast<char *>(fin.out) + blockIdx.y * (uint64_t)fin.out_size;
  __shared__ exact_block<BLOCK / 32> shared;
  shared.clear();
  const int tid = threadIdx.x;
  exact_block_sum<IN, BLOCK, UNROLL>(in, L, blockIdx.x, gridDim.x, shared);
  __shared__ int64_t final_state[CR_EXACT_COUNT + 1];
  if (gridDim.x == 1 && fin.round) { // the only block of its row: its state is the whole sum
    // Warp 0 adds the copies itself and rounds them as they are, not carried: no barrier, and
    // each limb stays below 2^61 (a block takes below 2^28 elements, each adding below 2^32
    // to a limb), which every rounding path takes.
    if (tid < 32) {
      shared.gather_warp(final_state);
      if (tid == 0)
        final_state[CR_EXACT_COUNT] = (int64_t)L.n;
      __syncwarp();
      exact_write_result_warp(final_state, fin.mean, fin.out_dtype, fin.out);
    }
    return;
  }
  shared.publish(state);
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
  __syncthreads();
  if (tid < 32)
    exact_write_result_warp(final_state, fin.mean, fin.out_dtype, fin.out);
}

// Rows of a matrix (element (i, j) at in[i * ld + j]) added to states, row i to
// states[i * CUREDUCE_EXACT_STATE_WORDS ...], one block a row: each row laid out on its own (its
// start need not be aligned as the others'), summed as exact_full's one block would, added to
// its state and the state carried. A row is one block's alone, so no ticket.
template <cureduce_dtype IN, int BLOCK, int UNROLL>
__global__ void __launch_bounds__(BLOCK, sm_max_threads() / BLOCK / 2)
    exact_row_states(const storage_t<IN> *__restrict__ in, uint64_t rows, uint64_t cols, uint64_t ld,
                     exact_word *__restrict__ states) {
  __shared__ exact_block<BLOCK / 32> shared;
  for (uint64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const storage_t<IN> *row = in + r * ld;
    const full_layout L = make_full_layout<(int)sizeof(storage_t<IN>), BLOCK, UNROLL>(row, cols);
    shared.clear();
    exact_block_sum<IN, BLOCK, UNROLL>(row, L, 0u, 1u, shared);
    exact_word *const state = states + r * CUREDUCE_EXACT_STATE_WORDS;
    shared.publish(state);
    if (threadIdx.x == 0)
      atomicAdd(&state[CR_EXACT_COUNT], (exact_word)cols);
    __syncthreads(); // the block's additions to the state are seen by the carry, and shared is free
    exact_global_carry(state);
  }
}

// One carry step on each of `count` states, a block a state at a time (threads 0 ..
// CR_EXACT_LIMBS - 2), after the kernels adding to them (exact_chunked_states).
__global__ void exact_carry_states(exact_word *__restrict__ states, uint64_t count) {
  for (uint64_t s = blockIdx.x; s < count; s += gridDim.x)
    exact_global_carry(states + s * CUREDUCE_EXACT_STATE_WORDS);
}

// Add one state into another (dst += src), then carry: one block.
__global__ void exact_combine(exact_word *__restrict__ dst, const exact_word *__restrict__ src) {
  for (int i = threadIdx.x; i <= CR_EXACT_COUNT; i += blockDim.x)
    atomicAdd(&dst[i], src[i]);
  __syncthreads();
  __threadfence();
  exact_global_carry(dst);
}

// Round each of `count` states into out (out_size bytes apart): a warp a state.
__global__ void exact_round(const int64_t *__restrict__ states, uint64_t count, int mean,
                            cureduce_dtype out_dtype, void *out, int out_size) {
  const uint64_t warps = (uint64_t)gridDim.x * blockDim.x / 32;
  for (uint64_t i = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; i < count; i += warps)
    exact_write_result_warp(states + i * CUREDUCE_EXACT_STATE_WORDS, mean, out_dtype,
                            static_cast<char *>(out) + i * out_size);
}

} // namespace cr
