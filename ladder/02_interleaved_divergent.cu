// Rung 2: interleaved addressing with %. Each block loads one element per thread into shared
// memory and halves the number of live values each step: at stride s, the threads whose index
// is a multiple of 2s combine their value with the one s places away. One partial per block
// leaves the block; a second pass (and more) reduces the partials.
// Slow: `tid % (2 * s) == 0` picks threads scattered over every warp, so all warps stay busy
// doing almost nothing (divergence), and % is an expensive instruction.
// Next: rung 3 computes the index so that the working threads are packed into few warps.
#include "ladder.h"
#include "rung.cuh"

namespace ladder {

template <class T, class Op> __global__ void interleaved_divergent(const T *in, uint64_t n, T *out) {
  __shared__ T s[BLOCK];
  const unsigned tid = threadIdx.x;
  const uint64_t i = blockIdx.x * (uint64_t)BLOCK + tid;
  s[tid] = i < n ? in[i] : Op::identity();
  __syncthreads();
  for (unsigned stride = 1; stride < BLOCK; stride *= 2) {
    if (tid % (2 * stride) == 0)
      s[tid] = Op::combine(s[tid], s[tid + stride]);
    __syncthreads();
  }
  if (tid == 0)
    out[blockIdx.x] = s[0];
}

struct rung02 {
  template <class T, class Op> static void run(const rung_ctx &c) {
    reduce_passes<T>(c, BLOCK, UINT32_MAX, [&](const T *in, uint64_t n, T *out, unsigned blocks) {
      interleaved_divergent<T, Op><<<blocks, BLOCK, 0, c.stream>>>(in, n, out);
    });
  }
};

void run_02(const rung_ctx &c) { dispatch<rung02>(c); }

} // namespace ladder
