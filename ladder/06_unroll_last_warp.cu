// Rung 6: unrolled last warp. Once 64 values are left, one warp finishes the tree on its own:
// no __syncthreads() for the last 6 steps.
// The classic version relied on the 32 threads of a warp running in lockstep, with `volatile`
// shared memory so every step re-reads what the others wrote. Since Volta (sm_70) the threads
// of a warp may run independently, so that code has a race; here each step reads, waits for the
// warp (__syncwarp), then writes, which is what the hardware now requires. `volatile` still
// keeps the compiler from holding shared values in registers across steps.
// Slow: every thread still loads only two elements (rung 7 changes the tree, not that).
// Next: rung 7 writes the whole tree out for a block size given as a template parameter.
#include "ladder.h"
#include "rung.cuh"

namespace ladder {

template <class T, class Op> __device__ void warp_tail(volatile T *s, unsigned tid) {
  for (unsigned stride = 32; stride > 0; stride /= 2) {
    const T v = Op::combine(s[tid], s[tid + stride]);
    __syncwarp();
    s[tid] = v;
    __syncwarp();
  }
}

template <class T, class Op> __global__ void unroll_last_warp(const T *in, uint64_t n, T *out) {
  __shared__ T s[BLOCK + 32]; // 32 identity slots: the warp's first step reads s[tid + 32], past
                              // the values if BLOCK were 32
  const unsigned tid = threadIdx.x;
  const uint64_t i = blockIdx.x * (uint64_t)(2 * BLOCK) + tid;
  T v = i < n ? in[i] : Op::identity();
  if (i + BLOCK < n)
    v = Op::combine(v, in[i + BLOCK]);
  s[tid] = v;
  if (tid < 32)
    s[BLOCK + tid] = Op::identity();
  __syncthreads();
  for (unsigned stride = BLOCK / 2; stride > 32; stride /= 2) {
    if (tid < stride)
      s[tid] = Op::combine(s[tid], s[tid + stride]);
    __syncthreads();
  }
  if (tid < 32)
    warp_tail<T, Op>(s, tid);
  if (tid == 0)
    out[blockIdx.x] = s[0];
}

struct rung06 {
  template <class T, class Op> static void run(const rung_ctx &c) {
    reduce_passes<T>(c, 2 * BLOCK, UINT32_MAX, [&](const T *in, uint64_t n, T *out, unsigned blocks) {
      unroll_last_warp<T, Op><<<blocks, BLOCK, 0, c.stream>>>(in, n, out);
    });
  }
};

void run_06(const rung_ctx &c) { dispatch<rung06>(c); }

} // namespace ladder
