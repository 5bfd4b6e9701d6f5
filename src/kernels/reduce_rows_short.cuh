// Short rows that are whole 16-byte vectors (at most 32 of them) and 16-byte aligned: one
// vector per lane. Layer: kernels.
//
// A row of v vectors gets a group of pow2_ceil(v) lanes; lane r of the group loads vector r of
// the row (lanes past v load nothing), so a warp reads 32 / group whole rows with one load
// instruction. Each lane loads its vector of UNROLL rows (rows_per_warp apart: one contiguous
// stretch per load instruction when ld == cols) before folding any, then each row's group
// reduces by shuffles. Unlike reduce_rows_lanes (fold_range per row: head, vectors, tail), a
// 64-byte bf16 row does not leave a lane only 2 loads in flight, nor pay a row's setup for 32
// bytes of data.
//
// Determinism: the order within a row depends only on `group` (from cols and the element
// size), never on the grid or the GPU.
#pragma once

#include "../device/vector_fold.cuh"
#include "../device/warp_reduce.cuh"

#include <stdint.h>

namespace cr {

template <cureduce_dtype IN, cureduce_dtype ACC, cureduce_op OP, int BLOCK, int UNROLL>
__global__ void __launch_bounds__(BLOCK)
    reduce_rows_short(const storage_t<IN> *__restrict__ in, uint64_t rows, uint64_t cols, uint64_t ld,
                      int group, typename compare_op<IN, OP, ACC>::Out *__restrict__ out) {
  using Op = compare_op<IN, OP, ACC>;
  using T = typename Op::T;
  using V = vec16<storage_t<IN>>;
  const V *__restrict__ vin = reinterpret_cast<const V *>(in);
  const uint64_t vectors = cols / V::N, ld_vectors = ld / V::N;
  const int lane = threadIdx.x % WARP_SIZE;
  const int rank = lane % group; // the vector of its row this lane reads
  const uint64_t rows_per_warp = WARP_SIZE / group, rows_per_pass = rows_per_warp * UNROLL;
  const uint64_t warp = (blockIdx.x * (uint64_t)BLOCK + threadIdx.x) / WARP_SIZE;
  const uint64_t warps = gridDim.x * (uint64_t)(BLOCK / WARP_SIZE);
  const bool reads = (uint64_t)rank < vectors;

  // The loop bound is the same for all lanes of a warp, so every lane reaches the shuffles.
  for (uint64_t start = warp * rows_per_pass; start < rows; start += warps * rows_per_pass) {
    const uint64_t first = start + lane / group; // this lane's row of the pass's first step
    V x[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const uint64_t r = first + u * rows_per_warp;
      if (reads && r < rows)
        x[u] = vin[r * ld_vectors + rank];
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const uint64_t r = first + u * rows_per_warp;
      T a = reads && r < rows ? fold_vector<IN, Op>(Op::identity(), x[u], (int64_t)rank * V::N)
                              : Op::identity();
      a = group_reduce<Op>(a, group);
      if (rank == 0 && r < rows)
        out[r] = Op::finish(a, cols);
    }
  }
}

} // namespace cr
