// Exact sums of rows, segments and columns. Layer: kernels.
//
// A block owns a whole row or segment (rows and segments) or 32 whole columns (columns), so
// its state in shared memory is the output's whole state: the block rounds it itself, with no
// workspace and no second launch. Elements are summed one by one through exact_pair
// (device/exact_accumulate.cuh); the order does not matter, as in every exact sum.
#pragma once

#include "../device/exact_accumulate.cuh"
#include "../device/exact_round.cuh"

namespace cr {

// Where segment s lies: rows (offsets NULL: s * ld, length cols) or explicit offsets.
struct exact_segments_layout {
  const int64_t *offsets; // count + 1 offsets, or NULL for rows
  uint64_t count, ld, cols;
};

template <cureduce_dtype IN, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    exact_segments(const storage_t<IN> *__restrict__ in, exact_segments_layout S, int mean,
                   cureduce_dtype out_dtype, int out_size, char *__restrict__ out) {
  __shared__ exact_block<BLOCK / 32> shared;
  __shared__ int64_t final_state[CR_EXACT_COUNT + 1];
  exact_word *const block = shared.mine(); // this warp's copy
  for (uint64_t s = blockIdx.x; s < S.count; s += gridDim.x) {
    const uint64_t begin = S.offsets ? (uint64_t)S.offsets[s] : s * S.ld;
    const uint64_t end = S.offsets ? (uint64_t)S.offsets[s + 1] : begin + S.cols;
    shared.clear();
    exact_thread<IN> th;
    for (uint64_t i = begin + threadIdx.x; i < end; i += BLOCK)
      th.scalar(in[i], block);
    th.flush(block);
    exact_word *const merged = shared.merge();
    exact_block_carry(merged);
    for (int i = threadIdx.x; i < CR_EXACT_COUNT; i += BLOCK)
      final_state[i] = (int64_t)merged[i];
    if (threadIdx.x == 0)
      final_state[CR_EXACT_COUNT] = (int64_t)(end - begin);
    __syncthreads();
    if (threadIdx.x < 32 && (end > begin || !mean)) // an empty segment's mean is left untouched
      exact_write_result_warp(final_state, mean, out_dtype, out + s * out_size);
    __syncthreads();
  }
}

// Columns of `batches` matrices of rows x cols (leading dimension ld, batch_stride elements
// apart), numbered across the batch: column v is column v % cols of matrix v / cols.
struct exact_cols_layout {
  uint64_t batches, rows, cols, ld, batch_stride;
};

// Lane l of every warp sums column v0 + l over the rows w, w + WARPS, ...; the 32 columns'
// states live side by side in shared memory.
template <cureduce_dtype IN, int WARPS>
__global__ void __launch_bounds__(WARPS * 32)
    exact_cols(const storage_t<IN> *__restrict__ in, exact_cols_layout C, int mean, cureduce_dtype out_dtype,
               int out_size, char *__restrict__ out) {
  __shared__ exact_word block[32][EXACT_BLOCK_WORDS];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const uint64_t columns = C.batches * C.cols;
  for (uint64_t v0 = (uint64_t)blockIdx.x * 32; v0 < columns; v0 += (uint64_t)gridDim.x * 32) {
    for (int i = threadIdx.x; i < 32 * EXACT_BLOCK_WORDS; i += WARPS * 32)
      (&block[0][0])[i] = 0;
    __syncthreads();
    const uint64_t v = v0 + lane;
    exact_pair pair;
    bool not_neg_zero = false;
    if (v < columns) {
      const uint64_t b = v / C.cols;
      const storage_t<IN> *col = in + b * C.batch_stride + (v - b * C.cols);
      for (uint64_t r = warp; r < C.rows; r += WARPS) {
        const double x = (double)widen<IN>(col[r * C.ld]);
        not_neg_zero |= !(x == 0.0 && signbit(x));
        pair.add(x, block[lane]);
      }
      exact_push(block[lane], pair.a0); // one state per lane: no warp-wide flush
      exact_push(block[lane], pair.a1);
      if (not_neg_zero)
        atomicOr(&block[lane][CR_EXACT_NOT_NEG_ZERO], 1ull);
    }
    __syncthreads();
    if (warp == 0 && v < columns) {
      int64_t s[CR_EXACT_COUNT + 1];
      for (int i = 0; i < CR_EXACT_COUNT; ++i)
        s[i] = (int64_t)block[lane][i];
      s[CR_EXACT_COUNT] = (int64_t)C.rows;
      exact_write_result(s, mean, out_dtype, out + v * out_size);
    }
    __syncthreads();
  }
}

} // namespace cr
