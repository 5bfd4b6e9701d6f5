// Rows up to a few thousand vectors: a group of `group` lanes (1, 2, 4 ... 32) per row.
// Layer: kernels.
//
// Each warp splits into 32 / group groups, and each group folds one row with fold_range (head,
// 16-byte vectors, tail; lane r of the group takes the row's vectors r, r + group, ..., UNROLL
// of them in flight), then reduces the group's lanes with shuffles. The group is sized so a
// lane gets about UNROLL vectors of a short row (lane_group, axis_plan.h): a 128-byte row then
// costs one shuffle step, not five, and a warp reads 16 short rows per load instruction; rows
// of more than 32 * UNROLL vectors get the whole warp. No barriers, no shared memory: a warp
// moves on to its next rows as soon as its loads return. When every row starts on a 16-byte
// boundary and is a whole number of rounds of UNROLL vectors a lane, the groups use
// fold_rounds instead: the same vectors in the same order, without fold_range's head,
// remainder and tail code.
//
// Determinism: the order within a row depends on `group` (chosen from cols and the element
// size) and on the row's alignment, never on the grid or the GPU.
#pragma once

#include "../device/warp_reduce.cuh"
#include "fold_range.cuh"

#include <stdint.h>

namespace cr {

template <cureduce_dtype IN, cureduce_dtype ACC, cureduce_op OP, int BLOCK, int UNROLL>
__global__ void __launch_bounds__(BLOCK)
    reduce_rows_lanes(const storage_t<IN> *__restrict__ in, uint64_t rows, uint64_t cols, uint64_t ld,
                      int group, typename compare_op<IN, OP, ACC>::Out *__restrict__ out) {
  using Op = compare_op<IN, OP, ACC>;
  using T = typename Op::T;
  const int lane = threadIdx.x % WARP_SIZE;
  const int rank = lane % group; // lane within its group
  const uint64_t rows_per_warp = WARP_SIZE / group;
  const uint64_t warp = (blockIdx.x * (uint64_t)BLOCK + threadIdx.x) / WARP_SIZE;
  const uint64_t warps = gridDim.x * (uint64_t)(BLOCK / WARP_SIZE);
  // Each warp's rows, one set of WARP_SIZE / group rows at a time, each row folded by fold(r).
  // The loop bound is the same for all lanes of a warp, so every lane reaches the shuffles.
  const auto rows_of_warp = [&](auto fold) {
    for (uint64_t base = warp * rows_per_warp; base < rows; base += warps * rows_per_warp) {
      const uint64_t r = base + lane / group;
      T a = r < rows ? fold(r) : Op::identity();
      a = group_reduce<Op>(a, group);
      if (r < rows && rank == 0)
        out[r] = Op::finish(a, cols);
    }
  };
  // Rows that start on 16-byte boundaries and are whole rounds of UNROLL vectors a lane (every
  // power-of-two width from 16 * group * UNROLL bytes) take fold_rounds: the same bits in
  // fewer instructions. Two loops, not a choice per row, so neither path's registers add to
  // the other's.
  constexpr uint64_t ELEM = sizeof(storage_t<IN>);
  const uint64_t round_bytes = 16ull * (uint64_t)group * UNROLL;
  if (reinterpret_cast<uintptr_t>(in) % 16 == 0 && (ld * ELEM) % 16 == 0 &&
      (cols * ELEM) % round_bytes == 0) {
    const int rounds = (int)(cols * ELEM / round_bytes);
    rows_of_warp([&](uint64_t r) { return fold_rounds<IN, Op, UNROLL>(in + r * ld, rounds, rank, group); });
  } else {
    rows_of_warp([&](uint64_t r) {
      const int64_t begin = (int64_t)(r * ld);
      return fold_range<IN, Op, UNROLL>(in, begin, begin + (int64_t)cols, begin, rank, group);
    });
  }
}

} // namespace cr
