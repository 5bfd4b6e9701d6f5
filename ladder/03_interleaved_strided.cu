// Rung 3: interleaved addressing with a strided index. Thread t works on index 2 * s * t, so the
// working threads are the first ones of the block and whole warps retire early: no divergence,
// and no %.
// Slow: at stride s the active threads touch shared memory 2s words apart; with 32 banks of 4
// bytes, a warp's 32 addresses then fall into only 32 / 2s banks, so its access is split into
// serialized ones (bank conflicts: 2-way at s = 1, 4-way at s = 2, 8-way from s = 4 on, where
// fewer threads are left active in this block of 256).
// Next: rung 4 makes consecutive threads touch consecutive words.
#include "ladder.h"
#include "rung.cuh"

namespace ladder {

template <class T, class Op> __global__ void interleaved_strided(const T *in, uint64_t n, T *out) {
  __shared__ T s[BLOCK];
  const unsigned tid = threadIdx.x;
  const uint64_t i = blockIdx.x * (uint64_t)BLOCK + tid;
  s[tid] = i < n ? in[i] : Op::identity();
  __syncthreads();
  for (unsigned stride = 1; stride < BLOCK; stride *= 2) {
    const unsigned index = 2 * stride * tid;
    if (index < BLOCK)
      s[index] = Op::combine(s[index], s[index + stride]);
    __syncthreads();
  }
  if (tid == 0)
    out[blockIdx.x] = s[0];
}

struct rung03 {
  template <class T, class Op> static void run(const rung_ctx &c) {
    reduce_passes<T>(c, BLOCK, UINT32_MAX, [&](const T *in, uint64_t n, T *out, unsigned blocks) {
      interleaved_strided<T, Op><<<blocks, BLOCK, 0, c.stream>>>(in, n, out);
    });
  }
};

void run_03(const rung_ctx &c) { dispatch<rung03>(c); }

} // namespace ladder
