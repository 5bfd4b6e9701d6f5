// Warp-level reduction with register shuffles. Layer: device primitives.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <string.h>
#include <type_traits>

namespace cr {

constexpr unsigned FULL_MASK = 0xffffffffu;
constexpr int WARP_SIZE = 32;

// __shfl_down_sync for any trivially copyable T: the hardware shuffles 32-bit words, so types
// the intrinsic does not take (the (value, index) pairs of argmin/argmax) go word by word.
// `width` splits the warp into independent groups of that many lanes (a power of two).
template <class T> __device__ __forceinline__ T shfl_down(T v, int offset, int width = WARP_SIZE) {
  if constexpr (std::is_arithmetic<T>::value || std::is_same<T, __half>::value ||
                std::is_same<T, __nv_bfloat16>::value) {
    return __shfl_down_sync(FULL_MASK, v, offset, width);
  } else {
    constexpr int WORDS = (sizeof(T) + 3) / 4;
    unsigned w[WORDS];
    memcpy(w, &v, sizeof(T));
#pragma unroll
    for (int k = 0; k < WORDS; ++k)
      w[k] = __shfl_down_sync(FULL_MASK, w[k], offset, width);
    memcpy(&v, w, sizeof(T));
    return v;
  }
}

// Reduce v over the 32 lanes of a full warp with Op::combine; lane 0 gets the result. The
// shuffle tree (offsets 16, 8, 4, 2, 1) fixes the order of combination, so the result is the
// same bits on every run.
template <class Op, class T> __device__ __forceinline__ T warp_reduce(T v) {
#pragma unroll
  for (int offset = WARP_SIZE / 2; offset > 0; offset /= 2)
    v = Op::combine(v, shfl_down(v, offset));
  return v;
}

// The same tree within each group of `width` consecutive lanes (width a power of two, at most
// 32); the group's first lane gets its result. All 32 lanes must call it (the shuffles use the
// full mask), also lanes whose group has nothing to reduce.
template <class Op, class T> __device__ __forceinline__ T group_reduce(T v, int width) {
  for (int offset = width / 2; offset > 0; offset /= 2)
    v = Op::combine(v, shfl_down(v, offset, width));
  return v;
}

// Fold the lanes that are `stride` apart (stride a power of two, at most 32): lane l < stride
// gets the fold of lanes l, l + stride, l + 2 * stride, ... by the shuffle tree with offsets
// 16, 8, ... stride. This is how a warp whose lanes hold `stride` different columns folds over
// its rows. All 32 lanes must call it.
template <class Op, class T> __device__ __forceinline__ T strided_reduce(T v, int stride) {
  for (int offset = WARP_SIZE / 2; offset >= stride; offset /= 2)
    v = Op::combine(v, shfl_down(v, offset));
  return v;
}

} // namespace cr
