// Rung 12a: single pass, deterministic, with a "last block" finish. Each block writes its
// partial, makes it visible to the whole GPU (__threadfence), and takes a ticket from a
// counter; the block that takes the last ticket knows every partial is written, reduces them
// in index order and writes the result. One launch, no float atomics: the grid size depends
// only on n, so the order of every combination, and the bits of a float sum, are the same on
// every run.
// Slow: nothing big is left for f32 at large n (this is the production kernel's shape, see
// src/kernels/); for i32, the warp step can be one instruction: rung 13.
#include "ladder.h"
#include "rung.cuh"
#include "vec4_load.cuh"

#include "../src/device/block_reduce.cuh"

namespace ladder {

template <class T, class Op>
__global__ void single_pass_last_block(const T *in, uint64_t n, T *partials, unsigned *counter, T *out) {
  __shared__ bool am_last;
  T v = cr::block_reduce<Op, BLOCK>(thread_share_vec4<T, Op>(in, n));
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = v;
    __threadfence(); // the partial is visible to every block before the ticket is
    const unsigned ticket = atomicInc(counter, gridDim.x - 1); // back to 0 after the last
    am_last = ticket == gridDim.x - 1;
  }
  __syncthreads();
  if (!am_last)
    return;
  __threadfence(); // and we see every partial after seeing the last ticket
  v = Op::identity();
  for (unsigned b = threadIdx.x; b < gridDim.x; b += BLOCK)
    v = Op::combine(v, ((volatile T *)partials)[b]); // volatile: past our own L1
  v = cr::block_reduce<Op, BLOCK>(v);
  if (threadIdx.x == 0)
    *out = v;
}

struct rung12a {
  template <class T, class Op> static void run(const rung_ctx &c) {
    // atomicInc(counter, gridDim.x - 1) leaves the counter at 0 for the next launch.
    single_pass_last_block<T, Op><<<vec4_blocks(c.n), BLOCK, 0, c.stream>>>(
        (const T *)c.d_in, c.n, (T *)c.d_scratch, c.d_counter, (T *)c.d_out);
  }
};

void run_12a(const rung_ctx &c) { dispatch<rung12a>(c); }

} // namespace ladder
