// The 16-byte loading loop of rungs 11, 12 and 13 (rung 11's file says why it is faster).
#pragma once

#include "rung.cuh"

namespace ladder {

template <class T> struct alignas(16) quad { T x, y, z, w; };

// This thread's share of in[0..n), combined into one value: a scalar head up to the first
// 16-byte boundary, 16-byte vectors in a grid-stride loop, then a scalar tail. A 16-byte load
// from an address that is not a multiple of 16 is illegal, so the head cannot be skipped
// (cudaMalloc returns aligned memory, but a caller may pass in + 1).
template <class T, class Op> __device__ T thread_share_vec4(const T *in, uint64_t n) {
  static_assert(sizeof(T) == 4, "four elements per 16-byte vector");
  const uint64_t g = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
  const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
  const uint64_t misalign = (reinterpret_cast<uintptr_t>(in) % 16) / sizeof(T);
  const uint64_t head = misalign == 0 ? 0 : (4 - misalign < n ? 4 - misalign : n);
  T v = Op::identity();
  if (g < head)
    v = Op::combine(v, in[g]);
  const uint64_t vectors = (n - head) / 4;
  const quad<T> *body = reinterpret_cast<const quad<T> *>(in + head);
  for (uint64_t i = g; i < vectors; i += stride) {
    const quad<T> q = body[i];
    v = Op::combine(Op::combine(v, q.x), Op::combine(q.y, Op::combine(q.z, q.w)));
  }
  const uint64_t tail = head + vectors * 4;
  if (g < n - tail)
    v = Op::combine(v, in[tail + g]);
  return v;
}

// Blocks for the vectorized rungs: 16 elements per thread at least, 1024 blocks at most.
inline unsigned vec4_blocks(uint64_t n) {
  const uint64_t b = (n + 16 * BLOCK - 1) / (16 * BLOCK);
  return (unsigned)(b < 1 ? 1 : (b > 1024 ? 1024 : b));
}

} // namespace ladder
