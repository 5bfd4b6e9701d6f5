// Rung 5: first add during the global load. Each block covers 2 * BLOCK elements and every
// thread combines two of them (BLOCK apart, so both loads stay coalesced) before the tree:
// half the blocks, and no thread idle after the load.
// Slow: the tree still runs __syncthreads() after every step, also in the last steps where
// only one warp is working and the barrier is pure overhead.
// Next: rung 6 runs the last 6 steps inside one warp without block barriers.
#include "ladder.h"
#include "rung.cuh"

namespace ladder {

template <class T, class Op> __global__ void first_add_on_load(const T *in, uint64_t n, T *out) {
  __shared__ T s[BLOCK];
  const unsigned tid = threadIdx.x;
  const uint64_t i = blockIdx.x * (uint64_t)(2 * BLOCK) + tid;
  T v = i < n ? in[i] : Op::identity();
  if (i + BLOCK < n)
    v = Op::combine(v, in[i + BLOCK]);
  s[tid] = v;
  __syncthreads();
  for (unsigned stride = BLOCK / 2; stride > 0; stride /= 2) {
    if (tid < stride)
      s[tid] = Op::combine(s[tid], s[tid + stride]);
    __syncthreads();
  }
  if (tid == 0)
    out[blockIdx.x] = s[0];
}

struct rung05 {
  template <class T, class Op> static void run(const rung_ctx &c) {
    reduce_passes<T>(c, 2 * BLOCK, UINT32_MAX, [&](const T *in, uint64_t n, T *out, unsigned blocks) {
      first_add_on_load<T, Op><<<blocks, BLOCK, 0, c.stream>>>(in, n, out);
    });
  }
};

void run_05(const rung_ctx &c) { dispatch<rung05>(c); }

} // namespace ladder
