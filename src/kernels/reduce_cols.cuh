// Column reductions: one value per column of a rows x cols matrix. Layer: kernels.
//
// A block is TX x TY threads over a tile of columns and a slice of rows. Thread (tx, ty) owns
// VEC neighbouring columns (VEC = 16 bytes' worth when every row is 16-byte aligned and cols is
// a multiple of it, else 1) and folds rows ty, ty + TY, ... of the slice, loading UNROLL rows
// before folding any; the TX threads of a row step read one contiguous stretch of the row.
// Where each thread has many rows, the loads go through shared memory instead (cp.async,
// DEPTH passes in flight), in the same order: more bytes in flight for no registers. The TY
// values of a column then meet in a tree (shuffles, then shared memory).
//
// Long columns are cut into `slices` row slices (gridDim.y) so that there are enough blocks.
// Each slice writes its column values to the partials; the last block of a column tile (a
// device-scope ticket per tile, block_ticket.cuh) folds the slices in slice order and writes
// the result. Slice count and tile shape depend only on the matrix shape, so the order of
// combination, and the bits, do not depend on the GPU.
#pragma once

#include "../device/async_copy.cuh"
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

// Fold over ty: thread (tx, 0) gets, for each of its VEC columns, the fold of the values of
// ty = 0 .. TY - 1. A tree, in log2(TY) steps: within a warp the lanes of one column are TX
// apart and meet by shuffles; the warps' results (all threads' when TX >= 32) then meet in
// shared memory, halving each step. The order is fixed by TX and TY, so by the shape. (A loop
// in which thread (tx, 0) combined the TY values one after another kept the whole block
// waiting on one thread: 63 dependent shared loads per column for TY = 64.) Every thread of
// the block must call it.
template <class Op, int BLOCK, int VEC>
__device__ __forceinline__ void fold_over_ty(typename Op::T (&v)[VEC], int TX) {
  using T = typename Op::T;
  // Columns per round through shared memory: at most 16 KiB of slots.
  constexpr int FIT = 16384 / (BLOCK * (int)sizeof(T));
  constexpr int G = FIT < 1 ? 1 : FIT < VEC ? FIT : VEC;
  __shared__ T slots[G][BLOCK];
  const int lane = threadIdx.x % WARP_SIZE, warp = threadIdx.x / WARP_SIZE;
  if (TX < WARP_SIZE)
#pragma unroll
    for (int c = 0; c < VEC; ++c)
      v[c] = strided_reduce<Op>(v[c], TX);
  // Survivors: lanes < W of each warp; slot warp * W + lane holds column tx = slot % TX.
  const int W = TX < WARP_SIZE ? TX : WARP_SIZE, M = BLOCK / WARP_SIZE * W;
  if (M == TX)
    return; // one row of threads: nothing left to fold
#pragma unroll
  for (int c0 = 0; c0 < VEC; c0 += G) {
    if (lane < W)
#pragma unroll
      for (int g = 0; g < G; ++g)
        slots[g][warp * W + lane] = v[c0 + g];
    __syncthreads();
    for (int h = M / 2; h >= TX; h /= 2) {
      if ((int)threadIdx.x < h)
#pragma unroll
        for (int g = 0; g < G; ++g)
          slots[g][threadIdx.x] = Op::combine(slots[g][threadIdx.x], slots[g][threadIdx.x + h]);
      __syncthreads();
    }
    if ((int)threadIdx.x < TX)
#pragma unroll
      for (int g = 0; g < G; ++g)
        v[c0 + g] = slots[g][threadIdx.x];
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

// The rows of one thread in its slice: first, first + TY, ... below row_end, `mine` of them.
struct thread_rows {
  uint64_t first, mine, step; // step: packs between two of the thread's rows (TY * ld / VEC)
};

// Fold `valid` packs of a thread, rows row, row + TY, ..., into its VEC column values.
template <class Op, cureduce_dtype IN, int VEC, int UNROLL, class Pack>
__device__ __forceinline__ void fold_packs(const Pack (&x)[UNROLL], int valid, uint64_t row, int TY,
                                           typename Op::T (&acc)[VEC]) {
#pragma unroll
  for (int u = 0; u < UNROLL; ++u)
    if (u < valid)
#pragma unroll
      for (int c = 0; c < VEC; ++c)
        acc[c] = Op::fold(acc[c], widen<IN>(x[u].v[c]), (int64_t)(row + (uint64_t)u * TY));
}

// Fold a thread's rows with loads into registers: UNROLL rows are loaded before any is folded.
// Whole passes load with no bounds test between them (the tests kept the loads from being
// issued back to back); the one partial pass at the end tests each row.
template <class Op, cureduce_dtype IN, int VEC, int UNROLL, class Pack>
__device__ __forceinline__ void fold_rows_in_registers(const Pack *p, const thread_rows &R, int TY,
                                                       typename Op::T (&acc)[VEC]) {
  uint64_t i = 0;
  for (; i + UNROLL <= R.mine; i += UNROLL, p += R.step * UNROLL) {
    Pack x[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
      x[u] = p[u * R.step];
    fold_packs<Op, IN, VEC, UNROLL>(x, UNROLL, R.first + i * TY, TY, acc);
  }
  if (i < R.mine) {
    const int valid = (int)(R.mine - i); // 1 .. UNROLL - 1
    Pack x[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
      if (u < valid)
        x[u] = p[u * R.step];
    fold_packs<Op, IN, VEC, UNROLL>(x, valid, R.first + i * TY, TY, acc);
  }
}

// The same rows in the same order, staged through shared memory: DEPTH passes of UNROLL rows
// are in flight at once (cp.async), and none of them holds a register while it travels. The
// pipeline: passes 0 .. DEPTH - 2 are issued up front; then each step issues pass k + DEPTH - 1
// into the slots that pass k - 1 has just freed, waits for pass k, and folds it.
template <class Op, cureduce_dtype IN, int VEC, int UNROLL, int DEPTH, int BLOCK, class Pack>
__device__ __forceinline__ void fold_rows_staged(const Pack *p, const thread_rows &R, int TY,
                                                 thread_slots<BLOCK> slots, typename Op::T (&acc)[VEC]) {
  static_assert(sizeof(Pack) == 16, "one 16-byte copy per row");
  const Pack *src = p;     // the next pass to issue
  uint64_t unissued = R.mine; // rows not yet issued
  int stage = 0;           // the stage the next pass to issue goes to
  const auto issue = [&]() {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
      if (u < unissued)
        copy_async_16(slots[stage * UNROLL + u], src + u * R.step);
    async_commit(); // possibly empty: the wait below counts groups, not passes
    src += UNROLL * R.step;
    unissued = unissued > UNROLL ? unissued - UNROLL : 0;
    stage = stage == DEPTH - 1 ? 0 : stage + 1;
  };
#pragma unroll
  for (int k = 0; k < DEPTH - 1; ++k)
    issue();
  int ready = 0; // the stage of the pass to fold next
  for (uint64_t i = 0; i < R.mine; i += UNROLL) {
    issue();                 // into the stage pass i - 1 freed
    async_wait<DEPTH - 1>(); // the oldest pass in flight, this one, has landed
    const int valid = R.mine - i < UNROLL ? (int)(R.mine - i) : UNROLL;
    Pack x[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
      if (u < valid)
        x[u] = *reinterpret_cast<const Pack *>(slots[ready * UNROLL + u]);
    fold_packs<Op, IN, VEC, UNROLL>(x, valid, R.first + i * TY, TY, acc);
    ready = ready == DEPTH - 1 ? 0 : ready + 1;
  }
  async_wait<0>(); // the slots are free for the last block's fold of the partials
}

// The last block of a tile folds the slices' partials: slices ty, ty + TY, ... in order per
// thread. BATCH slices are loaded before any is folded: with hundreds of slices, one L2 round
// trip per slice would make this block the kernel's long tail.
template <class Op, int VEC, int BATCH>
__device__ __forceinline__ void fold_partials_in_registers(const typename Op::T *partials, uint64_t cols,
                                                           unsigned first, unsigned count, int TY,
                                                           typename Op::T (&acc)[VEC]) {
  using T = typename Op::T;
  for (unsigned q = first; q < count; q += TY * BATCH) {
    T v[BATCH][VEC];
#pragma unroll
    for (int b = 0; b < BATCH; ++b)
      if (q + b * TY < count)
        load_values_cg(&partials[(q + b * TY) * cols], v[b]);
#pragma unroll
    for (int b = 0; b < BATCH; ++b)
      if (q + b * TY < count)
#pragma unroll
        for (int c = 0; c < VEC; ++c)
          acc[c] = Op::combine(acc[c], v[b][c]);
  }
}

// The same through the thread's shared-memory slots: a batch fills all of them, so a staged
// kernel's last block has as many bytes in flight per round trip as its main loop had.
template <class Op, int VEC, int SLOTS, int BLOCK>
__device__ __forceinline__ void fold_partials_staged(const typename Op::T *partials, uint64_t cols,
                                                     unsigned first, unsigned count, int TY,
                                                     thread_slots<BLOCK> slots, typename Op::T (&acc)[VEC]) {
  using T = typename Op::T;
  constexpr int WORDS = VEC * (int)sizeof(T) / 16, BATCH = SLOTS / WORDS;
  static_assert(whole_words<VEC, T> && BATCH >= 1, "a slice's values must fill whole slots");
  const uint64_t stride = (uint64_t)TY * cols * sizeof(T) / 16; // words from one of our slices to the next
  const int4 *src = reinterpret_cast<const int4 *>(&partials[first * cols]);
  for (unsigned q = first; q < count; q += TY * BATCH) {
#pragma unroll
    for (int b = 0; b < BATCH; ++b, src += stride)
      if (q + b * TY < count)
#pragma unroll
        for (int w = 0; w < WORDS; ++w)
          copy_async_16(slots[b * WORDS + w], src + w);
    async_commit();
    async_wait<0>();
#pragma unroll 1 // one slice's words in registers at a time, not the whole batch
    for (int b = 0; b < BATCH; ++b)
      if (q + b * TY < count) {
        int4 w[WORDS]; // this thread's slots b * WORDS ... (WORDS - 1): not contiguous
#pragma unroll
        for (int k = 0; k < WORDS; ++k)
          w[k] = *slots[b * WORDS + k];
        T v[VEC];
        memcpy(v, w, sizeof(v));
#pragma unroll
        for (int c = 0; c < VEC; ++c)
          acc[c] = Op::combine(acc[c], v[c]);
      }
  }
}

// LAST: values each thread has in flight in the last block's fold of the partials (register
// path). DEPTH: passes of UNROLL rows in flight through shared memory (fold_rows_staged), or 0
// to load into registers; a staged kernel needs DEPTH * UNROLL * BLOCK * 16 bytes of dynamic
// shared memory and 16-byte packs (VEC > 1).
template <cureduce_dtype IN, cureduce_dtype ACC, cureduce_op OP, int BLOCK, int VEC, int UNROLL, int LAST,
          int DEPTH>
__global__ void __launch_bounds__(BLOCK)
    reduce_cols(const storage_t<IN> *__restrict__ in, cols_layout L,
                typename compare_op<IN, OP, ACC>::T *__restrict__ partials,
                unsigned int *__restrict__ tickets, typename compare_op<IN, OP, ACC>::Out *__restrict__ out) {
  using Op = compare_op<IN, OP, ACC>;
  using T = typename Op::T;
  using E = storage_t<IN>;
  struct alignas(VEC * sizeof(E)) pack { E v[VEC]; };
  static_assert(DEPTH == 0 || VEC * sizeof(E) == 16, "staged loads move whole 16-byte packs");
  extern __shared__ int4 staged_words[];
  const thread_slots<BLOCK> slots{staged_words};
  constexpr int SLOTS = DEPTH * UNROLL;

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
    const uint64_t first = row_begin + ty;
    const thread_rows R{first, first < row_end ? (row_end - first + TY - 1) / TY : 0,
                        (uint64_t)TY * (L.ld / VEC)}; // ld is a multiple of VEC when VEC > 1
    const pack *p = reinterpret_cast<const pack *>(in + first * L.ld + col);
    if constexpr (DEPTH > 0)
      fold_rows_staged<Op, IN, VEC, UNROLL, DEPTH, BLOCK>(p, R, TY, slots, acc_c);
    else
      fold_rows_in_registers<Op, IN, VEC, UNROLL>(p, R, TY, acc_c);
  }
  fold_over_ty<Op, BLOCK, VEC>(acc_c, TX);

  if (gridDim.y == 1) {
    if (ty == 0 && has_col)
      store_results<Op, VEC>(out + col, acc_c, L.rows);
    return;
  }

  // Several slices: publish this slice's values, and let the tile's last block fold them.
  if (ty == 0 && has_col) {
    store_values(&partials[blockIdx.y * L.cols + col], acc_c);
    __threadfence(); // our partials are visible device-wide before the ticket is taken
  }
  if (!block_last_arrival(&tickets[blockIdx.x], gridDim.y))
    return;

  // Slices in a fixed order per thread, then over ty.
#pragma unroll
  for (int c = 0; c < VEC; ++c)
    acc_c[c] = Op::identity();
  if (has_col) {
    if constexpr (DEPTH > 0 && whole_words<VEC, T> && SLOTS * 16 >= VEC * (int)sizeof(T))
      fold_partials_staged<Op, VEC, SLOTS, BLOCK>(partials + col, L.cols, ty, gridDim.y, TY, slots, acc_c);
    else
      fold_partials_in_registers<Op, VEC, VEC >= LAST ? 1 : LAST / VEC>(partials + col, L.cols, ty,
                                                                      gridDim.y, TY, acc_c);
  }
  fold_over_ty<Op, BLOCK, VEC>(acc_c, TX);
  if (ty == 0 && has_col)
    store_results<Op, VEC>(out + col, acc_c, L.rows);
}

} // namespace cr
