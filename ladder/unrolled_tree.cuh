// The completely unrolled block tree of rungs 7 and 8 (rung 7's file says why it is faster).
#pragma once

#include "rung.cuh"

namespace ladder {

// B values in s (plus 32 identity slots past the end, read only if B is 32); the result ends
// in s[0].
template <int B, class T, class Op> __device__ void unrolled_tree(volatile T *s, unsigned tid) {
  if (B >= 1024) {
    if (tid < 512)
      s[tid] = Op::combine(s[tid], s[tid + 512]);
    __syncthreads();
  }
  if (B >= 512) {
    if (tid < 256)
      s[tid] = Op::combine(s[tid], s[tid + 256]);
    __syncthreads();
  }
  if (B >= 256) {
    if (tid < 128)
      s[tid] = Op::combine(s[tid], s[tid + 128]);
    __syncthreads();
  }
  if (B >= 128) {
    if (tid < 64)
      s[tid] = Op::combine(s[tid], s[tid + 64]);
    __syncthreads();
  }
  if (tid < 32) { // one warp: read, wait for the warp, write (see rung 6)
    T v;
    v = Op::combine(s[tid], s[tid + 32]);
    __syncwarp();
    s[tid] = v;
    __syncwarp();
    v = Op::combine(s[tid], s[tid + 16]);
    __syncwarp();
    s[tid] = v;
    __syncwarp();
    v = Op::combine(s[tid], s[tid + 8]);
    __syncwarp();
    s[tid] = v;
    __syncwarp();
    v = Op::combine(s[tid], s[tid + 4]);
    __syncwarp();
    s[tid] = v;
    __syncwarp();
    v = Op::combine(s[tid], s[tid + 2]);
    __syncwarp();
    s[tid] = v;
    __syncwarp();
    v = Op::combine(s[tid], s[tid + 1]);
    __syncwarp();
    s[tid] = v;
    __syncwarp();
  }
}

} // namespace ladder
