// Rung 13: the hardware warp reduction (sm_80 and later). For 32-bit integers,
// __reduce_add_sync / __reduce_min_sync / __reduce_max_sync reduce a whole warp in one
// instruction (REDUX), replacing rung 9's five shuffles and five combines. Otherwise rung 12a:
// 16-byte loads, one launch, last-block finish. Integers only: there is no float REDUX, and
// integer sums are exact, so the order does not matter anyway.
#include "ladder.h"
#include "rung.cuh"
#include "vec4_load.cuh"

namespace ladder {

__device__ inline int warp_redux(int v, cureduce_op op) {
  if (op == CUREDUCE_SUM)
    return __reduce_add_sync(0xffffffffu, v);
  return op == CUREDUCE_MIN ? __reduce_min_sync(0xffffffffu, v) : __reduce_max_sync(0xffffffffu, v);
}

// Every lane gets the block's result... in warp 0; other warps return garbage.
template <class Op> __device__ int block_redux(int v, cureduce_op op) {
  __shared__ int warp_results[BLOCK / 32];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = warp_redux(v, op);
  if (lane == 0)
    warp_results[warp] = v;
  __syncthreads();
  v = lane < BLOCK / 32 ? warp_results[lane] : Op::identity();
  v = warp_redux(v, op);
  __syncthreads(); // warp_results may be reused by the next call
  return v;
}

template <class Op>
__global__ void i32_redux_single_pass(const int *in, uint64_t n, int *partials, unsigned *counter, int *out,
                                      cureduce_op op) {
  __shared__ bool am_last;
  int v = block_redux<Op>(thread_share_vec4<int, Op>(in, n), op);
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = v;
    __threadfence();
    am_last = atomicInc(counter, gridDim.x - 1) == gridDim.x - 1;
  }
  __syncthreads();
  if (!am_last)
    return;
  __threadfence();
  v = Op::identity();
  for (unsigned b = threadIdx.x; b < gridDim.x; b += BLOCK)
    v = Op::combine(v, ((volatile int *)partials)[b]);
  v = block_redux<Op>(v, op);
  if (threadIdx.x == 0)
    *out = v;
}

void run_13(const rung_ctx &c) {
  const int *in = (const int *)c.d_in;
  int *partials = (int *)c.d_scratch, *out = (int *)c.d_out;
  const unsigned blocks = vec4_blocks(c.n);
  if (c.op == CUREDUCE_SUM)
    i32_redux_single_pass<op_for<int, CUREDUCE_SUM>>
        <<<blocks, BLOCK, 0, c.stream>>>(in, c.n, partials, c.d_counter, out, c.op);
  else if (c.op == CUREDUCE_MIN)
    i32_redux_single_pass<op_for<int, CUREDUCE_MIN>>
        <<<blocks, BLOCK, 0, c.stream>>>(in, c.n, partials, c.d_counter, out, c.op);
  else
    i32_redux_single_pass<op_for<int, CUREDUCE_MAX>>
        <<<blocks, BLOCK, 0, c.stream>>>(in, c.n, partials, c.d_counter, out, c.op);
}

} // namespace ladder
