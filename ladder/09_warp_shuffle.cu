// Rung 9: warp shuffle. Inside a warp, __shfl_down_sync hands a register of lane t + offset
// to lane t directly: five shuffles reduce 32 values with no shared memory and no barrier.
// Only one value per warp goes through shared memory, and one warp finishes the block.
// (This spells out what src/device/warp_reduce.cuh and block_reduce.cuh do; later rungs call
// those helpers.)
// Slow: still two launches (partials, then one block); and every load is 4 bytes wide, so the
// memory system handles four times more requests than it needs to.
// Next: rung 10 drops the second launch with one atomic per block; rung 11 widens the loads.
#include "ladder.h"
#include "rung.cuh"

namespace ladder {

template <class T, class Op> __device__ T warp_reduce_shfl(T v) {
  for (int offset = 16; offset > 0; offset /= 2)
    v = Op::combine(v, __shfl_down_sync(0xffffffffu, v, offset));
  return v; // lane 0 holds the warp's result
}

template <class T, class Op> __global__ void warp_shuffle(const T *in, uint64_t n, T *out) {
  __shared__ T warp_results[BLOCK / 32];
  const unsigned tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  T v = Op::identity();
  for (uint64_t i = blockIdx.x * (uint64_t)BLOCK + tid; i < n; i += (uint64_t)gridDim.x * BLOCK)
    v = Op::combine(v, in[i]);
  v = warp_reduce_shfl<T, Op>(v);
  if (lane == 0)
    warp_results[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < BLOCK / 32 ? warp_results[lane] : Op::identity();
    v = warp_reduce_shfl<T, Op>(v);
    if (lane == 0)
      out[blockIdx.x] = v;
  }
}

struct rung09 {
  template <class T, class Op> static void run(const rung_ctx &c) {
    reduce_passes<T>(c, 8 * BLOCK, 1024, [&](const T *in, uint64_t n, T *out, unsigned blocks) {
      warp_shuffle<T, Op><<<blocks, BLOCK, 0, c.stream>>>(in, n, out);
    });
  }
};

void run_09(const rung_ctx &c) { dispatch<rung09>(c); }

} // namespace ladder
