// Rung 1: naive atomics. Every thread adds its one element straight into the result with an
// atomic. It is the shortest correct kernel, and the slowest: all n atomics land on one
// address, so the L2 serializes them, one at a time. Float atomics also make the order of the
// additions, and so the rounded float result, change from run to run.
// Next: rung 2 reduces inside each block first, so only one value per block leaves the block.
#include "ladder.h"
#include "rung.cuh"

#include <type_traits>

namespace ladder {

template <class T> __device__ void atomic_combine(T *out, T v, cureduce_op op) {
  if (op == CUREDUCE_SUM)
    atomicAdd(out, v);
  else if constexpr (std::is_same<T, int>::value) { // no float atomicMin/Max in hardware
    if (op == CUREDUCE_MIN)
      atomicMin(out, v);
    else
      atomicMax(out, v);
  }
}

template <class T, cureduce_op OP> __global__ void atomic_naive(const T *in, uint64_t n, T *out) {
  const uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
  if (i < n)
    atomic_combine(out, in[i], OP);
}

template <class T, class Op> __global__ void set_identity(T *out) { *out = Op::identity(); }

struct rung01 {
  template <class T, class Op> static void run(const rung_ctx &c) {
    T *out = static_cast<T *>(c.d_out);
    set_identity<T, Op><<<1, 1, 0, c.stream>>>(out);
    const uint64_t blocks = (c.n + BLOCK - 1) / BLOCK; // n > 0 here (dispatch)
    if (c.op == CUREDUCE_SUM)
      atomic_naive<T, CUREDUCE_SUM><<<(unsigned)blocks, BLOCK, 0, c.stream>>>((const T *)c.d_in, c.n, out);
    else if (c.op == CUREDUCE_MIN)
      atomic_naive<T, CUREDUCE_MIN><<<(unsigned)blocks, BLOCK, 0, c.stream>>>((const T *)c.d_in, c.n, out);
    else
      atomic_naive<T, CUREDUCE_MAX><<<(unsigned)blocks, BLOCK, 0, c.stream>>>((const T *)c.d_in, c.n, out);
  }
};

void run_01(const rung_ctx &c) { dispatch<rung01>(c); }

} // namespace ladder
