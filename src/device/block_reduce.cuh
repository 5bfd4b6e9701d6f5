// Block-level reduction built on warp_reduce. Layer: device primitives.
#pragma once

#include "warp_reduce.cuh"

namespace cr {

// Reduce v over all BLOCK threads of the block; thread 0 gets the result. Every thread must
// call it. Each warp reduces its lanes, warp leaders publish to shared memory, and warp 0
// reduces those. The trailing barrier lets a caller use the function again right away.
template <class Op, int BLOCK, class T> __device__ __forceinline__ T block_reduce(T v) {
  static_assert(BLOCK % WARP_SIZE == 0 && BLOCK / WARP_SIZE <= WARP_SIZE, "bad block size");
  constexpr int WARPS = BLOCK / WARP_SIZE;
  __shared__ T warp_results[WARPS];
  const int lane = threadIdx.x % WARP_SIZE, warp = threadIdx.x / WARP_SIZE;
  v = warp_reduce<Op>(v);
  if (lane == 0)
    warp_results[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < WARPS ? warp_results[lane] : Op::identity();
    v = warp_reduce<Op>(v);
  }
  __syncthreads();
  return v;
}

} // namespace cr
