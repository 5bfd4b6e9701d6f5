// Rung 4: sequential addressing. The stride starts at half the block and halves: thread t
// combines s[t] with s[t + stride]. Consecutive threads read consecutive words, one per bank:
// no bank conflicts.
// Slow: half the threads are idle from the first step, right after the load; each thread moved
// one element from memory, so the kernel spends more of its time on the tree than on loading.
// Next: rung 5 lets every thread add two elements while loading.
#include "ladder.h"
#include "rung.cuh"

namespace ladder {

template <class T, class Op> __global__ void sequential(const T *in, uint64_t n, T *out) {
  __shared__ T s[BLOCK];
  const unsigned tid = threadIdx.x;
  const uint64_t i = blockIdx.x * (uint64_t)BLOCK + tid;
  s[tid] = i < n ? in[i] : Op::identity();
  __syncthreads();
  for (unsigned stride = BLOCK / 2; stride > 0; stride /= 2) {
    if (tid < stride)
      s[tid] = Op::combine(s[tid], s[tid + stride]);
    __syncthreads();
  }
  if (tid == 0)
    out[blockIdx.x] = s[0];
}

struct rung04 {
  template <class T, class Op> static void run(const rung_ctx &c) {
    reduce_passes<T>(c, BLOCK, UINT32_MAX, [&](const T *in, uint64_t n, T *out, unsigned blocks) {
      sequential<T, Op><<<blocks, BLOCK, 0, c.stream>>>(in, n, out);
    });
  }
};

void run_04(const rung_ctx &c) { dispatch<rung04>(c); }

} // namespace ladder
