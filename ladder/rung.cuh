// What every rung of the ladder shares: how it is called, and the (dtype, op) dispatch.
// Layer: kernels (teaching). Each rung file holds one kernel and its launcher.
#pragma once

#include "../src/device/op_traits.cuh"

#include <cuda_runtime.h>
#include <stdint.h>

namespace ladder {

constexpr int BLOCK = 256; // threads per block in every rung (a classic choice; one to vary)

// Everything a rung's launcher may use. Scratch holds partials of the multi-pass rungs.
struct rung_ctx {
  cureduce_dtype dtype; // F32 or I32
  cureduce_op op;       // SUM, MIN or MAX
  const void *d_in;
  uint64_t n;
  void *d_out;         // one element of dtype, in device memory
  void *d_scratch;     // at least scratch_bytes(n)
  unsigned *d_counter; // one zeroed counter (rung 12a)
  cudaStream_t stream;
  int sms; // multiprocessors, for rungs that size a grid to the GPU
};

inline size_t scratch_bytes(uint64_t n) { return 2 * 8 * (n / 128 + 1024); }

// The accumulator semantics of the library: f32 adds round to nearest, i32 adds wrap.
template <class T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr cureduce_dtype value = CUREDUCE_F32; };
template <> struct dtype_of<int> { static constexpr cureduce_dtype value = CUREDUCE_I32; };
template <class T, cureduce_op OP> using op_for = cr::op<OP, cr::acc<dtype_of<T>::value>>;

// Call R::template run<T, Op>(ctx) for the context's dtype and op.
template <class R> void dispatch(const rung_ctx &c) {
  // The sum of nothing is +0.0, as the library gives it; a rung would leave its identity, -0.0
  // (op_traits.cuh). Min and max of nothing have no value: the library refuses them, and the
  // ladder's callers never ask (this writes 0; rung 13, integer only, does not come here).
  if (c.n == 0) {
    cudaMemsetAsync(c.d_out, 0, 4, c.stream);
    return;
  }
#define LADDER_CASE(T, OP)                                                                                   \
  if (c.dtype == dtype_of<T>::value && c.op == OP)                                                           \
    return R::template run<T, op_for<T, OP>>(c);
  // clang-format off: one case a line (the formatter does not settle on these macro lines)
  LADDER_CASE(float, CUREDUCE_SUM)
  LADDER_CASE(float, CUREDUCE_MIN)
  LADDER_CASE(float, CUREDUCE_MAX)
  LADDER_CASE(int, CUREDUCE_SUM)
  LADDER_CASE(int, CUREDUCE_MIN)
  LADDER_CASE(int, CUREDUCE_MAX)
  // clang-format on
#undef LADDER_CASE
}

// Rungs 2 to 9 and 11 write one partial per block; this driver launches them again on their own
// partials until one value is left (the classic two-or-more-pass scheme). `launch(in, n, out,
// blocks)` enqueues one pass of `blocks` blocks.
template <class T, class Launch>
void reduce_passes(const rung_ctx &c, uint64_t per_block, uint64_t max_blocks, Launch launch) {
  const T *src = static_cast<const T *>(c.d_in);
  uint64_t count = c.n;
  T *bufs[2] = {static_cast<T *>(c.d_scratch),
                static_cast<T *>(c.d_scratch) + scratch_bytes(c.n) / (2 * sizeof(T))};
  for (int k = 0;; k ^= 1) {
    uint64_t blocks = (count + per_block - 1) / per_block;
    blocks = blocks < 1 ? 1 : (blocks > max_blocks ? max_blocks : blocks);
    T *dst = blocks == 1 ? static_cast<T *>(c.d_out) : bufs[k];
    launch(src, count, dst, (unsigned)blocks);
    if (blocks == 1)
      return;
    src = dst;
    count = blocks;
  }
}

} // namespace ladder
