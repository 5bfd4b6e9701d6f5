// Rung 8: many elements per thread. A fixed grid (at most 1024 blocks) walks the whole array
// with a grid-stride loop: each thread combines n / (1024 * 256) elements in registers before
// the block tree runs once. Far fewer blocks, so the tree and the launch are paid once per
// thousands of elements, and each thread has many independent loads to issue.
// Slow: the block tree still goes through shared memory with barriers between steps.
// Next: rung 9 does the tree in registers with warp shuffles.
#include "ladder.h"
#include "rung.cuh"
#include "unrolled_tree.cuh"

namespace ladder {

template <int B, class T, class Op> __global__ void grid_stride(const T *in, uint64_t n, T *out) {
  __shared__ T s[B + 32];
  const unsigned tid = threadIdx.x;
  T v = Op::identity();
  for (uint64_t i = blockIdx.x * (uint64_t)B + tid; i < n; i += (uint64_t)gridDim.x * B)
    v = Op::combine(v, in[i]);
  s[tid] = v;
  if (tid < 32)
    s[B + tid] = Op::identity();
  __syncthreads();
  unrolled_tree<B, T, Op>(s, tid);
  if (tid == 0)
    out[blockIdx.x] = s[0];
}

struct rung08 {
  template <class T, class Op> static void run(const rung_ctx &c) {
    // 8 elements per thread at least, at most 1024 blocks: the second pass is one block.
    reduce_passes<T>(c, 8 * BLOCK, 1024, [&](const T *in, uint64_t n, T *out, unsigned blocks) {
      grid_stride<BLOCK, T, Op><<<blocks, BLOCK, 0, c.stream>>>(in, n, out);
    });
  }
};

void run_08(const rung_ctx &c) { dispatch<rung08>(c); }

} // namespace ladder
