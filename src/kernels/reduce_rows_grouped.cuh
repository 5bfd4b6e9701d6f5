// Short rows: a group of `group` lanes (1, 2, 4, ... 32) per row. Layer: kernels.
//
// For rows of at most 32 vectors (512 bytes), a warp or a whole block per row would leave most
// lanes idle. Instead each warp splits into 32 / group groups and each group reduces a row:
// lane r of the group loads the row's vectors r, r + group, ... . A warp takes ROWS_IN_FLIGHT
// rows per group at once and loads the first vector of all of them before folding any, so
// several loads per lane are in flight even when a row is a single vector per lane. With
// ld == cols the warp's loads for one step are consecutive rows: contiguous memory.
//
// Determinism: the order within a row depends on `group` (chosen from cols and the element
// size, see axis_tuning.h) and on the row's alignment, never on the grid or the GPU.
#pragma once

#include "../device/vector_fold.cuh"
#include "../device/warp_reduce.cuh"

#include <stdint.h>

namespace cr {

template <cureduce_dtype IN, cureduce_dtype ACC, cureduce_op OP, int BLOCK, int ROWS_IN_FLIGHT>
__global__ void __launch_bounds__(BLOCK)
    reduce_rows_grouped(const storage_t<IN> *__restrict__ in, uint64_t rows, uint64_t cols,
                        uint64_t ld, int group, typename op<OP, acc<ACC>>::Out *__restrict__ out) {
  using Op = op<OP, acc<ACC>>;
  using T = typename Op::T;
  using V = vec16<storage_t<IN>>;
  constexpr int ELEM = (int)sizeof(storage_t<IN>);

  const int lane = threadIdx.x % WARP_SIZE;
  const int rank = lane % group;                    // lane within its group
  const uint64_t groups_per_warp = WARP_SIZE / group;
  const uint64_t rows_per_step = groups_per_warp * ROWS_IN_FLIGHT;
  const uint64_t warp = (blockIdx.x * (uint64_t)BLOCK + threadIdx.x) / WARP_SIZE;
  const uint64_t warps = gridDim.x * (uint64_t)(BLOCK / WARP_SIZE);

  // The loop bound is the same for all lanes of a warp, so every lane reaches the shuffles.
  for (uint64_t base = warp * rows_per_step; base < rows; base += warps * rows_per_step) {
    // Step u of the warp covers rows base + u * groups_per_warp + (group index).
    auto row_of = [&](int u) { return base + u * groups_per_warp + lane / group; };
    V first[ROWS_IN_FLIGHT];
#pragma unroll
    for (int u = 0; u < ROWS_IN_FLIGHT; ++u) {
      const uint64_t r = row_of(u);
      if (r < rows) {
        const storage_t<IN> *row = in + r * ld;
        const unsigned misalign = (unsigned)(reinterpret_cast<uintptr_t>(row) % 16);
        uint64_t head = misalign ? (16 - misalign) / ELEM : 0;
        head = head < cols ? head : cols;
        if ((uint64_t)rank < (cols - head) / V::N)
          first[u] = reinterpret_cast<const V *>(row + head)[rank];
      }
    }
#pragma unroll
    for (int u = 0; u < ROWS_IN_FLIGHT; ++u) {
      const uint64_t r = row_of(u);
      T a = Op::identity();
      if (r < rows) {
        const storage_t<IN> *row = in + r * ld;
        const unsigned misalign = (unsigned)(reinterpret_cast<uintptr_t>(row) % 16);
        uint64_t head = misalign ? (16 - misalign) / ELEM : 0;
        head = head < cols ? head : cols;
        const uint64_t vectors = (cols - head) / V::N;
        const V *body = reinterpret_cast<const V *>(row + head);
        for (uint64_t e = rank; e < head; e += group) // head, then vectors, then tail:
          a = Op::fold(a, widen<IN>(row[e]), (int64_t)e); // increasing index order
        if ((uint64_t)rank < vectors)
          a = fold_vector<IN, Op>(a, first[u], (int64_t)(head + rank * V::N));
        for (uint64_t v = rank + group; v < vectors; v += group)
          a = fold_vector<IN, Op>(a, body[v], (int64_t)(head + v * V::N));
        for (uint64_t e = head + vectors * V::N + rank; e < cols; e += group)
          a = Op::fold(a, widen<IN>(row[e]), (int64_t)e);
      }
      a = group_reduce<Op>(a, group);
      if (r < rows && rank == 0)
        out[r] = Op::finish(a, cols);
    }
  }
}

} // namespace cr
