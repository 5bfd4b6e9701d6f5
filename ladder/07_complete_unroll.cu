// Rung 7: complete unroll. With the block size a template parameter, every `if (B >= ...)`
// below is decided at compile time: the tree becomes straight-line code, with no loop counter,
// no loop branch and only the barriers that are needed. That is the classic step, for code
// whose block size is chosen at run time; here BLOCK is already a constant, nvcc unrolls rung
// 6's loops by itself, and the two measure the same (docs/ladder.md).
// Slow: every thread still loads only two elements, so the GPU runs n / 512 blocks, each paying
// the whole tree and a launch share for very little memory traffic.
// Next: rung 8 gives each thread many elements with a grid-stride loop.
#include "ladder.h"
#include "rung.cuh"
#include "unrolled_tree.cuh"

namespace ladder {

template <int B, class T, class Op> __global__ void complete_unroll(const T *in, uint64_t n, T *out) {
  __shared__ T s[B + 32];
  const unsigned tid = threadIdx.x;
  const uint64_t i = blockIdx.x * (uint64_t)(2 * B) + tid;
  T v = i < n ? in[i] : Op::identity();
  if (i + B < n)
    v = Op::combine(v, in[i + B]);
  s[tid] = v;
  if (tid < 32)
    s[B + tid] = Op::identity();
  __syncthreads();
  unrolled_tree<B, T, Op>(s, tid);
  if (tid == 0)
    out[blockIdx.x] = s[0];
}

struct rung07 {
  template <class T, class Op> static void run(const rung_ctx &c) {
    reduce_passes<T>(c, 2 * BLOCK, UINT32_MAX, [&](const T *in, uint64_t n, T *out, unsigned blocks) {
      complete_unroll<BLOCK, T, Op><<<blocks, BLOCK, 0, c.stream>>>(in, n, out);
    });
  }
};

void run_07(const rung_ctx &c) { dispatch<rung07>(c); }

} // namespace ladder
