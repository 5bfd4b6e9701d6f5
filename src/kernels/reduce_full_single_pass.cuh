// Full-array reduction in one launch, deterministic. Layer: kernels.
//
// Partition. The input is split into a scalar head (the elements before the first 16-byte
// boundary), a body of 16-byte vectors, and a scalar tail (fewer than one vector). The body is
// cut into tiles of BLOCK * UNROLL vectors; block b takes tiles b, b + G, b + 2G, ... where the
// grid size G depends only on n and the tuning table, never on the GPU, so the order in which
// values are combined, and the bits of a float result, are the same on every run and on every
// GPU. Within a tile a thread loads its UNROLL vectors before using any, so UNROLL * 16 bytes
// per thread are in flight.
//
// Finish. Each block writes its partial result; the block that takes the last ticket of a
// device-scope counter reduces the G partials, in index order, and writes the result. One
// launch, no second kernel, no floating-point atomics. The last block resets the counter, so
// the workspace is ready for the next launch on the same stream.
#pragma once

#include "../device/block_reduce.cuh"
#include "../device/dtype_traits.cuh"
#include "../device/op_traits.cuh"

#include <cuda/atomic>
#include <stdint.h>

namespace cr {

template <class T> struct alignas(16) vec16 {
  static constexpr int N = 16 / sizeof(T);
  T v[N];
};

// Fold one vector's elements into acc, in element order.
template <cureduce_dtype IN, class A, class Op>
__device__ __forceinline__ typename A::type fold_vector(typename A::type acc,
                                                        const vec16<storage_t<IN>> &x) {
#pragma unroll
  for (int i = 0; i < vec16<storage_t<IN>>::N; ++i)
    acc = Op::combine(acc, A::from(widen<IN>(x.v[i])));
  return acc;
}

// What the launcher computes once on the host and passes by value.
struct full_layout {
  uint64_t n;          // elements
  uint32_t head;       // scalar elements before the first 16-byte boundary
  uint32_t tail;       // scalar elements after the last whole vector
  uint64_t vectors;    // whole 16-byte vectors in the body
  uint64_t full_tiles; // tiles whose BLOCK * UNROLL vectors all exist
  uint64_t tiles;      // full tiles plus a partial one, if any
};

template <cureduce_dtype IN, cureduce_dtype ACC, cureduce_op OP, int BLOCK, int UNROLL>
__global__ void __launch_bounds__(BLOCK)
    reduce_full_single_pass(const storage_t<IN> *__restrict__ in, full_layout L,
                            typename acc<ACC>::type *__restrict__ partials,
                            unsigned int *__restrict__ ticket,
                            typename acc<ACC>::type *__restrict__ out) {
  using A = acc<ACC>;
  using Op = op<OP, A>;
  using T = typename A::type;
  using V = vec16<storage_t<IN>>;
  const int tid = threadIdx.x;

  T acc_u[UNROLL]; // independent chains: the adds of one slot don't wait on another's
#pragma unroll
  for (int u = 0; u < UNROLL; ++u)
    acc_u[u] = Op::identity();

  // Scalar head and tail, taken by the first and the last block.
  if (blockIdx.x == 0 && tid < (int)L.head)
    acc_u[0] = Op::combine(acc_u[0], A::from(widen<IN>(in[tid])));
  if (blockIdx.x == gridDim.x - 1 && tid < (int)L.tail)
    acc_u[0] = Op::combine(acc_u[0], A::from(widen<IN>(in[L.head + L.vectors * V::N + tid])));

  const V *body = reinterpret_cast<const V *>(in + L.head);
  for (uint64_t tile = blockIdx.x; tile < L.tiles; tile += gridDim.x) {
    const uint64_t base = tile * (uint64_t)(BLOCK * UNROLL) + tid;
    V x[UNROLL];
    if (tile < L.full_tiles) {
#pragma unroll
      for (int u = 0; u < UNROLL; ++u)
        x[u] = body[base + (uint64_t)u * BLOCK];
#pragma unroll
      for (int u = 0; u < UNROLL; ++u)
        acc_u[u] = fold_vector<IN, A, Op>(acc_u[u], x[u]);
    } else {
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
        const uint64_t i = base + (uint64_t)u * BLOCK;
        if (i < L.vectors)
          acc_u[u] = fold_vector<IN, A, Op>(acc_u[u], body[i]);
      }
    }
  }

  T v = acc_u[0];
#pragma unroll
  for (int u = 1; u < UNROLL; ++u)
    v = Op::combine(v, acc_u[u]);
  v = block_reduce<Op, BLOCK>(v);

  if (gridDim.x == 1) {
    if (tid == 0)
      *out = Op::finish(v, L.n);
    return;
  }

  __shared__ bool is_last;
  if (tid == 0) {
    partials[blockIdx.x] = v;
    // Release our partial, acquire everyone's: the last block sees all partials.
    cuda::atomic_ref<unsigned int, cuda::thread_scope_device> count(*ticket);
    is_last = count.fetch_add(1u, cuda::memory_order_acq_rel) == gridDim.x - 1;
  }
  __syncthreads();
  if (!is_last)
    return;

  v = Op::identity();
  for (unsigned int b = tid; b < gridDim.x; b += BLOCK)
    v = Op::combine(v, __ldcg(&partials[b])); // L2: other SMs' writes never sit in our L1
  v = block_reduce<Op, BLOCK>(v);
  if (tid == 0) {
    *out = Op::finish(v, L.n);
    *ticket = 0u; // ready for the next launch on this stream
  }
}

} // namespace cr
