// Column reductions: one value per column of a rows x cols matrix. Layer: kernels.
//
// A block is TX x TY threads over a tile of columns and a slice of rows. Thread (tx, ty) owns
// VEC neighbouring columns (VEC = 16 bytes' worth when every row is 16-byte aligned and cols is
// a multiple of it, else 1) and folds rows ty, ty + TY, ... of the slice, loading UNROLL rows
// before folding any; the TX threads of a row step read one contiguous stretch of the row.
// The TY values of a column then meet in shared memory and are folded in ty order.
//
// Long columns are cut into `slices` row slices (gridDim.y) so that there are enough blocks.
// Each slice writes its column values to the partials; the last block of a column tile (a
// device-scope ticket per tile, block_ticket.cuh) folds the slices in slice order and writes
// the result. Slice count and tile shape depend only on the matrix shape, so the order of
// combination, and the bits, do not depend on the GPU.
#pragma once

#include "../device/block_ticket.cuh"
#include "../device/vector_fold.cuh"
#include "../device/warp_reduce.cuh"

#include <stdint.h>
#include <string.h>

namespace cr {

struct cols_layout {
  uint64_t rows, cols, ld;
  uint64_t slice_rows; // rows per slice (gridDim.y slices)
  int tx;              // threads across the columns of a tile; ty = BLOCK / tx
};

// Fold over ty in shared memory: thread (tx, 0) gets the fold of v over ty = 0 .. TY - 1 in
// order. Every thread of the block must call it.
template <class Op, int BLOCK>
__device__ __forceinline__ typename Op::T fold_over_ty(typename Op::T v, int tx, int ty, int TX) {
  using T = typename Op::T;
  __shared__ T column_values[BLOCK];
  column_values[threadIdx.x] = v;
  __syncthreads();
  if (ty == 0)
    for (int t = 1; t < BLOCK / TX; ++t)
      v = Op::combine(v, column_values[t * TX + tx]);
  __syncthreads();
  return v;
}

// Write the finished results of VEC neighbouring columns: as 16-byte stores when they fill
// whole 16-byte words and dst is aligned (a warp's scalar stores would each touch 32 sectors,
// as many as its loads move data), else one by one.
template <class Op, int VEC>
__device__ __forceinline__ void store_results(typename Op::Out *dst, const typename Op::T (&v)[VEC],
                                              uint64_t n) {
  using Out = typename Op::Out;
  constexpr int BYTES = VEC * (int)sizeof(Out);
  if constexpr (BYTES % 16 == 0) {
    if (reinterpret_cast<uintptr_t>(dst) % 16 == 0) {
      Out r[VEC];
#pragma unroll
      for (int c = 0; c < VEC; ++c)
        r[c] = Op::finish(v[c], n);
      int4 w[BYTES / 16];
      memcpy(w, r, BYTES);
#pragma unroll
      for (int k = 0; k < BYTES / 16; ++k)
        reinterpret_cast<int4 *>(dst)[k] = w[k];
      return;
    }
  }
#pragma unroll
  for (int c = 0; c < VEC; ++c)
    dst[c] = Op::finish(v[c], n);
}

template <cureduce_dtype IN, cureduce_dtype ACC, cureduce_op OP, int BLOCK, int VEC, int UNROLL>
__global__ void __launch_bounds__(BLOCK)
    reduce_cols(const storage_t<IN> *__restrict__ in, cols_layout L,
                typename op<OP, acc<ACC>>::T *__restrict__ partials,
                unsigned int *__restrict__ tickets, typename op<OP, acc<ACC>>::Out *__restrict__ out) {
  using Op = op<OP, acc<ACC>>;
  using T = typename Op::T;
  using E = storage_t<IN>;
  struct alignas(VEC * sizeof(E)) pack { E v[VEC]; };

  const int TX = L.tx, TY = BLOCK / L.tx;
  const int tx = threadIdx.x % TX, ty = threadIdx.x / TX;
  const uint64_t col = ((uint64_t)blockIdx.x * TX + tx) * VEC;
  const bool has_col = col < L.cols; // cols is a multiple of VEC when VEC > 1
  const uint64_t row_begin = blockIdx.y * L.slice_rows;
  const uint64_t row_end = row_begin + L.slice_rows < L.rows ? row_begin + L.slice_rows : L.rows;

  T acc_c[VEC];
#pragma unroll
  for (int c = 0; c < VEC; ++c)
    acc_c[c] = Op::identity();

  if (has_col) {
    for (uint64_t r = row_begin + ty; r < row_end; r += (uint64_t)TY * UNROLL) {
      pack x[UNROLL];
#pragma unroll
      for (int u = 0; u < UNROLL; ++u)
        if (r + (uint64_t)u * TY < row_end)
          x[u] = *reinterpret_cast<const pack *>(in + (r + (uint64_t)u * TY) * L.ld + col);
#pragma unroll
      for (int u = 0; u < UNROLL; ++u)
        if (r + (uint64_t)u * TY < row_end)
#pragma unroll
          for (int c = 0; c < VEC; ++c)
            acc_c[c] = Op::fold(acc_c[c], widen<IN>(x[u].v[c]), (int64_t)(r + (uint64_t)u * TY));
    }
  }
#pragma unroll
  for (int c = 0; c < VEC; ++c)
    acc_c[c] = fold_over_ty<Op, BLOCK>(acc_c[c], tx, ty, TX);

  if (gridDim.y == 1) {
    if (ty == 0 && has_col)
      store_results<Op, VEC>(out + col, acc_c, L.rows);
    return;
  }

  // Several slices: publish this slice's values, and let the tile's last block fold them.
  if (ty == 0 && has_col) {
#pragma unroll
    for (int c = 0; c < VEC; ++c)
      partials[blockIdx.y * L.cols + col + c] = acc_c[c];
    __threadfence(); // our partials are visible device-wide before the ticket is taken
  }
  if (!block_last_arrival(&tickets[blockIdx.x], gridDim.y))
    return;

  // Slices ty, ty + TY, ... in order per thread, then over ty: a fixed order. The loads of
  // BATCH slices are issued before any is folded: with hundreds of slices, one L2 round trip
  // per slice would make this block the kernel's long tail.
  constexpr int BATCH = VEC >= 16 ? 1 : 16 / VEC; // 16 partials in flight per thread
#pragma unroll
  for (int c = 0; c < VEC; ++c)
    acc_c[c] = Op::identity();
  if (has_col)
    for (unsigned q = ty; q < gridDim.y; q += TY * BATCH) {
      T p[BATCH][VEC];
#pragma unroll
      for (int b = 0; b < BATCH; ++b)
        if (q + b * TY < gridDim.y)
#pragma unroll
          for (int c = 0; c < VEC; ++c)
            p[b][c] = load_cg(&partials[(q + b * TY) * L.cols + col + c]);
#pragma unroll
      for (int b = 0; b < BATCH; ++b)
        if (q + b * TY < gridDim.y)
#pragma unroll
          for (int c = 0; c < VEC; ++c)
            acc_c[c] = Op::combine(acc_c[c], p[b][c]);
    }
#pragma unroll
  for (int c = 0; c < VEC; ++c)
    acc_c[c] = fold_over_ty<Op, BLOCK>(acc_c[c], tx, ty, TX);
  if (ty == 0 && has_col)
    store_results<Op, VEC>(out + col, acc_c, L.rows);
}

} // namespace cr
