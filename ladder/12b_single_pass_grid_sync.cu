// Rung 12b: single pass with a cooperative-groups grid barrier. The grid is exactly as large as
// can be resident at once (a cooperative launch refuses more), so every block can wait at
// grid.sync() for all the others; after it, block 0 reduces the partials. Simpler to read
// than 12a's ticket, but the grid size now depends on the GPU (its SM count), so results are
// reproducible on one GPU model, not across models; and every block waits at the barrier.
#include "ladder.h"
#include "rung.cuh"
#include "vec4_load.cuh"

#include "../src/device/block_reduce.cuh"

#include <cooperative_groups.h>

namespace ladder {

template <class T, class Op>
__global__ void single_pass_grid_sync(const T *in, uint64_t n, T *partials, T *out) {
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  T v = cr::block_reduce<Op, BLOCK>(thread_share_vec4<T, Op>(in, n));
  if (threadIdx.x == 0)
    partials[blockIdx.x] = v;
  grid.sync(); // all partials written and visible
  if (blockIdx.x != 0)
    return;
  v = Op::identity();
  for (unsigned b = threadIdx.x; b < gridDim.x; b += BLOCK)
    v = Op::combine(v, partials[b]);
  v = cr::block_reduce<Op, BLOCK>(v);
  if (threadIdx.x == 0)
    *out = v;
}

struct rung12b {
  template <class T, class Op> static void run(const rung_ctx &c) {
    int per_sm = 0;
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, single_pass_grid_sync<T, Op>, BLOCK, 0);
    unsigned blocks = vec4_blocks(c.n);
    const unsigned resident = (unsigned)(per_sm * c.sms);
    blocks = blocks < resident ? blocks : resident;
    const T *in = (const T *)c.d_in;
    uint64_t n = c.n;
    T *partials = (T *)c.d_scratch, *out = (T *)c.d_out;
    void *args[] = {&in, &n, &partials, &out};
    cudaLaunchCooperativeKernel((void *)single_pass_grid_sync<T, Op>, blocks, BLOCK, args, 0, c.stream);
  }
};

void run_12b(const rung_ctx &c) { dispatch<rung12b>(c); }

} // namespace ladder
