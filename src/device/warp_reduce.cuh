// Warp-level reduction with register shuffles. Layer: device primitives.
#pragma once

namespace cr {

constexpr unsigned FULL_MASK = 0xffffffffu;
constexpr int WARP_SIZE = 32;

// Reduce v over the 32 lanes of a full warp with Op::combine; lane 0 gets the result. The
// shuffle tree (offsets 16, 8, 4, 2, 1) fixes the order of combination, so the result is the
// same bits on every run.
template <class Op, class T> __device__ __forceinline__ T warp_reduce(T v) {
#pragma unroll
  for (int offset = WARP_SIZE / 2; offset > 0; offset /= 2)
    v = Op::combine(v, __shfl_down_sync(FULL_MASK, v, offset));
  return v;
}

} // namespace cr
