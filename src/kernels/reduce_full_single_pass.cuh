// Full-array reduction in one launch, deterministic. Layer: kernels.
//
// Partition. The input is split into a scalar head (the elements before the first 16-byte
// boundary), a body of 16-byte vectors, and a scalar tail (fewer than one vector). The body is
// cut into tiles of BLOCK * UNROLL vectors; block b takes tiles b, b + G, b + 2G, ... where the
// grid size G depends only on n and the launch policy (full_policy.h), never on the GPU, so
// the order in which values are combined, and the bits of a float result, are the same on
// every run and on every GPU (docs/design.md#determinism). Within a tile a thread loads its
// UNROLL vectors before using any, so UNROLL * 16 bytes per thread are in flight.
//
// Finish. Each block writes its partial result; the block that takes the last ticket of a
// device-scope counter reduces the G partials, in index order, and writes the result. One
// launch, no second kernel, no floating-point atomics. The last block resets the counter, so
// the workspace is ready for the next launch on the same stream.
#pragma once

#include "../device/block_reduce.cuh"
#include "../device/block_ticket.cuh"
#include "../device/dtype_traits.cuh"
#include "../device/op_traits.cuh"
#include "../device/vector_fold.cuh"

#include <stdint.h>
#include <string.h>

namespace cr {

// What the launcher computes once on the host and passes by value.
struct full_layout {
  uint64_t n;          // elements
  uint32_t head;       // scalar elements before the first 16-byte boundary
  uint32_t tail;       // scalar elements after the last whole vector
  uint64_t vectors;    // whole 16-byte vectors in the body
  uint64_t full_tiles; // tiles whose BLOCK * UNROLL vectors all exist
  uint64_t tiles;      // full tiles plus a partial one, if any
};

// The partition of n elements at address `in`: on the host for a launch, on the GPU for rows
// whose starts are not all alike (exact_full.cuh's row states).
template <int ELEM, int BLOCK, int UNROLL>
__host__ __device__ inline full_layout make_full_layout(const void *in, uint64_t n) {
  constexpr uint64_t per_vec = 16 / ELEM, per_tile = (uint64_t)BLOCK * UNROLL;
  const uint64_t misalign = reinterpret_cast<uintptr_t>(in) % 16;
  uint64_t head = misalign ? (16 - misalign) / ELEM : 0;
  head = head < n ? head : n;
  full_layout L;
  L.n = n;
  L.head = (uint32_t)head;
  L.vectors = (n - head) / per_vec;
  L.tail = (uint32_t)((n - head) % per_vec);
  L.full_tiles = L.vectors / per_tile;
  L.tiles = (L.vectors + per_tile - 1) / per_tile;
  return L;
}

// Index of the first element of body vector `vec` (used by the arg ops; dead code otherwise).
template <class V, class L_> __device__ __forceinline__ int64_t element_of(const L_ &L, uint64_t vec) {
  return (int64_t)(L.head + vec * V::N);
}

// Threads one SM holds, for the architecture this pass compiles: 2048 on sm_80, sm_90 and
// sm_100/103, 1536 on the others from sm_80 on (sm_86, 87, 89, 110, 120, and any newer target
// compiled from PTX, which may hold no more). Launch bounds asking for more fail to assemble.
constexpr int sm_max_threads() {
#if defined(__CUDA_ARCH__) &&                                                                                \
    (__CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 900 || __CUDA_ARCH__ == 1000 || __CUDA_ARCH__ == 1030)
  return 2048;
#elif defined(__CUDA_ARCH__)
  return 1536;
#else
  return 2048; // the host pass: launch bounds do not apply there
#endif
}

// Blocks of BLOCK threads that must fit on one SM at once (__launch_bounds__): a full SM, 8
// blocks of 256 on sm_90, so the grid cap of 1024 blocks is one wave on a 132-SM H100 or H200.
// That holds a kernel to 32 registers a thread; with a few more, 7 blocks would fit on an SM
// and the last blocks would run as a thin second wave. The arg ops keep their 40 to 48
// registers (0 = no demand): held to 32 they spill inside the main loop, so their grid has its
// own cap (full_policy.h). docs/design.md#full-array-kernel
template <class Op, int BLOCK> constexpr int full_min_blocks_per_sm() {
  if constexpr (is_arg_op<Op>)
    return 0;
  else
    return sm_max_threads() / BLOCK;
}

// The reduction of one array of layout L by the blocks along the grid's x dimension, into *out.
template <cureduce_dtype IN, cureduce_dtype ACC, cureduce_op OP, int BLOCK, int UNROLL>
__device__ __forceinline__ void full_single_pass(const storage_t<IN> *__restrict__ in, full_layout L,
                                                 typename full_op<IN, OP, ACC>::T *__restrict__ partials,
                                                 unsigned int *__restrict__ ticket,
                                                 typename full_op<IN, OP, ACC>::Out *__restrict__ out) {
  using Op = full_op<IN, OP, ACC>; // f32 sums carry their rounding errors (compensated_sum.cuh)
  using T = typename Op::T;
  using V = vec16<storage_t<IN>>;
  const int tid = threadIdx.x;

  vector_folder<IN, Op, UNROLL> f; // UNROLL independent chains

  // The scalar head (first block) before the body and the scalar tail (last block) after it,
  // so each thread meets its elements in increasing index order (the arg ops rely on it).
  if (blockIdx.x == 0 && tid < (int)L.head)
    f.scalar(0, widen<IN>(in[tid]), tid);

  const V *body = reinterpret_cast<const V *>(in + L.head);
  // Whole tiles through one pointer that steps by the grid's stride: fewer live registers than
  // a 64-bit tile index and its products, so the UNROLL loads can all be in flight. (Not
  // through fold_range.cuh's fold_round: ptxas schedules that form of the loop differently.)
  uint64_t tile = blockIdx.x;
  const V *p = body + tile * (uint64_t)(BLOCK * UNROLL) + tid;
  const uint64_t stride = (uint64_t)gridDim.x * (BLOCK * UNROLL);
  for (; tile < L.full_tiles; tile += gridDim.x, p += stride) {
    V x[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
      x[u] = p[u * BLOCK];
    f.vectors(x, [&](int u) { return element_of<V>(L, (uint64_t)(p - body) + (uint64_t)u * BLOCK); });
  }
  if (tile < L.tiles) { // the one partial tile, if any
    const uint64_t base = tile * (uint64_t)(BLOCK * UNROLL) + tid;
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const uint64_t i = base + (uint64_t)u * BLOCK;
      if (i < L.vectors) {
        const V x = body[i]; // one 16-byte load, not a load per word
        f.vector(u, x, element_of<V>(L, i));
      }
    }
  }

  if (blockIdx.x == gridDim.x - 1 && tid < (int)L.tail) {
    const int64_t i = (int64_t)(L.head + L.vectors * V::N) + tid;
    f.scalar(UNROLL - 1, widen<IN>(in[i]), i);
  }

  T v = f.result();
  v = block_reduce<Op, BLOCK>(v);

  if (gridDim.x == 1) {
    if (tid == 0)
      *out = Op::finish(v, L.n);
    return;
  }

  if (tid == 0)
    partials[blockIdx.x] = v; // released by thread 0's ticket
  if (!block_last_arrival(ticket, gridDim.x))
    return;

  v = Op::identity();
  for (unsigned int b = tid; b < gridDim.x; b += BLOCK)
    v = Op::combine(v, load_cg(&partials[b]));
  v = block_reduce<Op, BLOCK>(v);
  if (tid == 0)
    *out = Op::finish(v, L.n);
}

template <cureduce_dtype IN, cureduce_dtype ACC, cureduce_op OP, int BLOCK, int UNROLL>
__global__ void __launch_bounds__(BLOCK, (full_min_blocks_per_sm<full_op<IN, OP, ACC>, BLOCK>()))
    reduce_full_single_pass(const storage_t<IN> *__restrict__ in, full_layout L,
                            typename full_op<IN, OP, ACC>::T *__restrict__ partials,
                            unsigned int *__restrict__ ticket,
                            typename full_op<IN, OP, ACC>::Out *__restrict__ out) {
  full_single_pass<IN, ACC, OP, BLOCK, UNROLL>(in, L, partials, ticket, out);
}

// Long rows, each reduced as a full array: row blockIdx.y starts ld elements after the one
// before and has layout L (every row has row 0's head, body and tail: ld * element size is a
// multiple of 16 bytes, or there is one row), its own gridDim.x partials and ticket, and
// result out[row]. The grid along x depends only on the shape (full_blocks, full_policy.h),
// so the bits do too.
template <cureduce_dtype IN, cureduce_dtype ACC, cureduce_op OP, int BLOCK, int UNROLL>
__global__ void __launch_bounds__(BLOCK, (full_min_blocks_per_sm<full_op<IN, OP, ACC>, BLOCK>()))
    reduce_full_rows(const storage_t<IN> *__restrict__ in, full_layout L, uint64_t ld,
                     typename full_op<IN, OP, ACC>::T *__restrict__ partials,
                     unsigned int *__restrict__ tickets,
                     typename full_op<IN, OP, ACC>::Out *__restrict__ out) {
  const uint64_t row = blockIdx.y;
  full_single_pass<IN, ACC, OP, BLOCK, UNROLL>(in + row * ld, L, partials + row * gridDim.x, tickets + row,
                                               out + row);
}

} // namespace cr
