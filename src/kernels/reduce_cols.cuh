// Column reductions: one value per column of a rows x cols matrix. Layer: kernels.
//
// A block is TX x TY threads over a tile of columns and a slice of rows. Thread (tx, ty) owns
// VEC neighbouring columns (VEC = 16 bytes' worth when every row is 16-byte aligned and cols is
// a multiple of it, else 1) and folds rows ty, ty + TY, ... of the slice, loading UNROLL rows
// before folding any; the TX threads of a row step read one contiguous stretch of the row.
// The TY values of a column then meet in a tree (shuffles, then shared memory).
//
// A batch of such matrices (an axis of an N-d array: outer x length x inner) is laid out along
// gridDim.x: batch_tiles column tiles per matrix, matrices batch_stride elements apart, results
// and partials in batch order, so a tile never straddles two matrices. A batch of many
// matrices whose columns fit one warp takes a warp per matrix instead (warp_matrices).
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
  uint64_t slice_rows;    // rows per slice (gridDim.y slices)
  int tx;                 // threads across the columns of a tile; ty = BLOCK / tx
  unsigned batch_tiles;   // column tiles per matrix of the batch (gridDim.x / batch_tiles matrices)
  uint64_t batch_stride;  // elements from one matrix of the batch to the next
  uint64_t warp_matrices; // 0; or the batch's matrix count, one warp per matrix (see below)
};

// A thread's rows r, r + TY, ... below row_end of VEC neighbouring columns, from p (row r's
// first column), folded into acc. Whole passes load UNROLL rows with no bounds test between
// them (the tests kept the loads from being issued back to back); the one partial pass at the
// end tests each row.
template <cureduce_dtype IN, class Op, int VEC, int UNROLL>
__device__ __forceinline__ void fold_column_rows(typename Op::T (&acc)[VEC], const storage_t<IN> *p,
                                                 uint64_t r, uint64_t row_end, uint64_t TY, uint64_t ld) {
  using E = storage_t<IN>;
  struct alignas(VEC * sizeof(E)) pack {
    E v[VEC];
  };
  const uint64_t step = TY * ld;
  auto fold_pass = [&](const pack(&x)[UNROLL], int valid) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
      if (u < valid)
#pragma unroll
        for (int c = 0; c < VEC; ++c)
          acc[c] = Op::fold(acc[c], widen<IN>(x[u].v[c]), (int64_t)(r + (uint64_t)u * TY));
  };
  for (; r + (uint64_t)(UNROLL - 1) * TY < row_end; r += TY * UNROLL, p += step * UNROLL) {
    pack x[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
      x[u] = *reinterpret_cast<const pack *>(p + u * step);
    fold_pass(x, UNROLL);
  }
  if (r < row_end) {
    const int valid = (int)((row_end - r + TY - 1) / TY); // 1 .. UNROLL - 1
    pack x[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
      if (u < valid)
        x[u] = *reinterpret_cast<const pack *>(p + u * step);
    fold_pass(x, valid);
  }
}

// Fold over ty: thread (tx, 0) gets, for each of its VEC columns, the fold of the values of
// ty = 0 .. TY - 1. Within a warp the lanes of one column are TX apart and meet by shuffles;
// each warp's survivors then go to shared memory once, and thread tx < TX combines its
// column's R values (R = BLOCK / 32 warps when TX <= 32) one after another, in warp order. The
// order is fixed by TX and TY, so by the shape. One barrier, not one per halving step: the fold
// runs twice on the critical path of sliced shapes, at the end of the last slice and in the
// last block (docs/design.md#columns). Every thread of the block must call it.
template <class Op, int BLOCK, int VEC>
__device__ __forceinline__ void fold_over_ty(typename Op::T (&v)[VEC], int TX) {
  using T = typename Op::T;
  // Columns per round through shared memory: at most 16 KiB of slots.
  constexpr int FIT = 16384 / (BLOCK * (int)sizeof(T));
  constexpr int G = FIT < 1 ? 1 : FIT < VEC ? FIT : VEC;
  constexpr int WARPS = BLOCK / WARP_SIZE;
  __shared__ T slots[G][BLOCK];
  const int lane = threadIdx.x % WARP_SIZE, warp = threadIdx.x / WARP_SIZE;
  if (TX < WARP_SIZE)
#pragma unroll
    for (int c = 0; c < VEC; ++c)
      v[c] = strided_reduce<Op>(v[c], TX);
  // Survivors: lanes < W of each warp; slot warp * W + lane holds column tx = slot % TX.
  const int W = TX < WARP_SIZE ? TX : WARP_SIZE, M = WARPS * W;
  if (M == TX)
    return;             // one row of threads: nothing left to fold
  const int R = M / TX; // values per column left: slot k * TX + tx, k = 0 .. R - 1
#pragma unroll
  for (int c0 = 0; c0 < VEC; c0 += G) {
    if (lane < W)
#pragma unroll
      for (int g = 0; g < G; ++g)
        slots[g][warp * W + lane] = v[c0 + g];
    __syncthreads();
    if ((int)threadIdx.x < TX)
#pragma unroll
      for (int g = 0; g < G; ++g) {
        T a = slots[g][threadIdx.x];
#pragma unroll
        for (int k = 1; k < WARPS; ++k) // R = WARPS unless TX > 32
          if (k < R)
            a = Op::combine(a, slots[g][k * TX + threadIdx.x]);
        v[c0 + g] = a;
      }
    __syncthreads(); // the slots are written again by the next round or call
  }
}

// A thread's VEC neighbouring values move as 16-byte words when they fill whole words and p
// is 16-byte aligned, else one by one. A warp's scalar accesses at a stride of VEC values would
// each touch a sector per lane: for the partials, folded by one block at the end, that made
// the block's L2 traffic VEC times the data and the kernel's tail several microseconds long.
template <int VEC, class T> constexpr bool whole_words = (VEC * sizeof(T)) % 16 == 0;

template <int VEC, class T> __device__ __forceinline__ void store_values(T *p, const T (&v)[VEC]) {
  constexpr int WORDS = VEC * (int)sizeof(T) / 16;
  if constexpr (whole_words<VEC, T>) {
    if (reinterpret_cast<uintptr_t>(p) % 16 == 0) {
      int4 w[WORDS];
      memcpy(w, v, sizeof(w));
#pragma unroll
      for (int k = 0; k < WORDS; ++k)
        reinterpret_cast<int4 *>(p)[k] = w[k];
      return;
    }
  }
#pragma unroll
  for (int c = 0; c < VEC; ++c)
    p[c] = v[c];
}

// The same for loads through L2 only (load_cg): partials written by other SMs.
template <int VEC, class T> __device__ __forceinline__ void load_values_cg(const T *p, T (&v)[VEC]) {
  constexpr int WORDS = VEC * (int)sizeof(T) / 16;
  if constexpr (whole_words<VEC, T>) {
    if (reinterpret_cast<uintptr_t>(p) % 16 == 0) {
      int4 w[WORDS];
#pragma unroll
      for (int k = 0; k < WORDS; ++k)
        w[k] = load_cg(reinterpret_cast<const int4 *>(p) + k);
      memcpy(v, w, sizeof(w));
      return;
    }
  }
#pragma unroll
  for (int c = 0; c < VEC; ++c)
    v[c] = load_cg(p + c);
}

// Write the finished results of VEC neighbouring columns.
template <class Op, int VEC>
__device__ __forceinline__ void store_results(typename Op::Out *dst, const typename Op::T (&v)[VEC],
                                              uint64_t n) {
  typename Op::Out r[VEC];
#pragma unroll
  for (int c = 0; c < VEC; ++c)
    r[c] = Op::finish(v[c], n);
  store_values(dst, r);
}

// LAST: values each thread has in flight in the last block's fold of the partials.
template <cureduce_dtype IN, cureduce_dtype ACC, cureduce_op OP, int BLOCK, int VEC, int UNROLL, int LAST>
__global__ void __launch_bounds__(BLOCK)
    reduce_cols(const storage_t<IN> *__restrict__ in, cols_layout L,
                typename compare_op<IN, OP, ACC>::T *__restrict__ partials,
                unsigned int *__restrict__ tickets, typename compare_op<IN, OP, ACC>::Out *__restrict__ out) {
  using Op = compare_op<IN, OP, ACC>;
  using T = typename Op::T;

  if (L.warp_matrices) {
    // Many small matrices whose columns fit one warp: warp w of block b takes matrix
    // b * BLOCK / 32 + w whole, its lanes tx across the columns and 32 / tx down the rows,
    // and folds over its rows by shuffles alone. A block per matrix left most of each block
    // idle and paid a block's start and barriers for a few rows (docs/design.md#columns).
    const uint64_t m = (uint64_t)blockIdx.x * (BLOCK / WARP_SIZE) + threadIdx.x / WARP_SIZE;
    if (m >= L.warp_matrices)
      return; // the whole warp
    const int lane = threadIdx.x % WARP_SIZE, TX = L.tx, tx = lane % TX, ty = lane / TX;
    const uint64_t col = (uint64_t)tx * VEC;
    T acc_w[VEC];
#pragma unroll
    for (int c = 0; c < VEC; ++c)
      acc_w[c] = Op::identity();
    if (col < L.cols)
      fold_column_rows<IN, Op, VEC, UNROLL>(acc_w, in + m * L.batch_stride + ty * L.ld + col, ty, L.rows,
                                            WARP_SIZE / TX, L.ld);
    if (TX < WARP_SIZE)
#pragma unroll
      for (int c = 0; c < VEC; ++c)
        acc_w[c] = strided_reduce<Op>(acc_w[c], TX);
    if (ty == 0 && col < L.cols)
      store_results<Op, VEC>(out + m * L.cols + col, acc_w, L.rows);
    return;
  }

  const int TX = L.tx, TY = BLOCK / L.tx;
  const int tx = threadIdx.x % TX, ty = threadIdx.x / TX;
  const unsigned batch = blockIdx.x / L.batch_tiles, tile = blockIdx.x - batch * L.batch_tiles;
  in += batch * L.batch_stride;
  out += (uint64_t)batch * L.cols;
  // The partials of slice q are a row of every matrix's columns: q * slice_stride + base.
  const uint64_t slice_stride = (uint64_t)(gridDim.x / L.batch_tiles) * L.cols;
  const uint64_t col = ((uint64_t)tile * TX + tx) * VEC, base = (uint64_t)batch * L.cols + col;
  const bool has_col = col < L.cols; // cols is a multiple of VEC when VEC > 1
  const uint64_t row_begin = blockIdx.y * L.slice_rows;
  const uint64_t row_end = row_begin + L.slice_rows < L.rows ? row_begin + L.slice_rows : L.rows;

  T acc_c[VEC];
#pragma unroll
  for (int c = 0; c < VEC; ++c)
    acc_c[c] = Op::identity();

  if (has_col)
    fold_column_rows<IN, Op, VEC, UNROLL>(acc_c, in + (row_begin + ty) * L.ld + col, row_begin + ty, row_end,
                                          (uint64_t)TY, L.ld);
  fold_over_ty<Op, BLOCK, VEC>(acc_c, TX);

  if (gridDim.y == 1) {
    if (ty == 0 && has_col)
      store_results<Op, VEC>(out + col, acc_c, L.rows);
    return;
  }

  // Several slices: publish this slice's values, and let the tile's last block fold them. No
  // fence per writer: the barrier at the start of block_last_arrival orders these stores
  // before thread 0's release (block_ticket.cuh); a __threadfence here would put a second
  // fence on the tile's finish.
  if (ty == 0 && has_col)
    store_values(&partials[blockIdx.y * slice_stride + base], acc_c);
  if (!block_last_arrival(&tickets[blockIdx.x], gridDim.y))
    return;

  // Slices ty, ty + TY, ... in order per thread, then over ty: a fixed order. The loads of
  // BATCH slices are issued before any is folded: with hundreds of slices, one L2 round trip
  // per slice would make this block the kernel's long tail.
  constexpr int BATCH = VEC >= LAST ? 1 : LAST / VEC; // LAST values in flight per thread
#pragma unroll
  for (int c = 0; c < VEC; ++c)
    acc_c[c] = Op::identity();
  if (has_col)
    for (unsigned q = ty; q < gridDim.y; q += TY * BATCH) {
      T p[BATCH][VEC];
#pragma unroll
      for (int b = 0; b < BATCH; ++b)
        if (q + b * TY < gridDim.y)
          load_values_cg(&partials[(q + b * TY) * slice_stride + base], p[b]);
#pragma unroll
      for (int b = 0; b < BATCH; ++b)
        if (q + b * TY < gridDim.y)
#pragma unroll
          for (int c = 0; c < VEC; ++c)
            acc_c[c] = Op::combine(acc_c[c], p[b][c]);
    }
  fold_over_ty<Op, BLOCK, VEC>(acc_c, TX);
  if (ty == 0 && has_col)
    store_results<Op, VEC>(out + col, acc_c, L.rows);
}

} // namespace cr
