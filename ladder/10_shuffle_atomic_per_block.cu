// Rung 10: one atomic per block. The grid-stride loop and the shuffle tree of rung 9, then
// thread 0 of each block adds the block's result into the output with an atomic: no partials
// array and no second pass over them (a one-thread kernel still runs first, to set the output
// to the identity). 1024 atomics instead of n barely load the L2.
// Slow: the blocks' atomics arrive in a different order on every run, so a float sum changes
// in its last bits from run to run (not deterministic); and loads are still 4 bytes wide.
// Next: rung 11 widens the loads to 16 bytes; rung 12 gets one launch back deterministically.
#include "ladder.h"
#include "rung.cuh"

#include "../src/device/block_reduce.cuh"

#include <type_traits>

namespace ladder {

template <class T, class Op> __global__ void shuffle_atomic(const T *in, uint64_t n, T *out, cureduce_op op) {
  T v = Op::identity();
  for (uint64_t i = blockIdx.x * (uint64_t)BLOCK + threadIdx.x; i < n; i += (uint64_t)gridDim.x * BLOCK)
    v = Op::combine(v, in[i]);
  v = cr::block_reduce<Op, BLOCK>(v);
  if (threadIdx.x == 0) {
    if (op == CUREDUCE_SUM)
      atomicAdd(out, v);
    else if constexpr (std::is_same<T, int>::value)
      op == CUREDUCE_MIN ? atomicMin(out, v) : atomicMax(out, v);
  }
}

template <class T, class Op> __global__ void set_identity_10(T *out) { *out = Op::identity(); }

struct rung10 {
  template <class T, class Op> static void run(const rung_ctx &c) {
    uint64_t blocks = (c.n + 8 * BLOCK - 1) / (8 * BLOCK);
    blocks = blocks < 1 ? 1 : (blocks > 1024 ? 1024 : blocks);
    set_identity_10<T, Op><<<1, 1, 0, c.stream>>>((T *)c.d_out);
    shuffle_atomic<T, Op>
        <<<(unsigned)blocks, BLOCK, 0, c.stream>>>((const T *)c.d_in, c.n, (T *)c.d_out, c.op);
  }
};

void run_10(const rung_ctx &c) { dispatch<rung10>(c); }

} // namespace ladder
