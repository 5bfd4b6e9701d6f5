// Launching the row, column and segment kernels: the strategy chosen by shape (axis_tuning.h)
// and the (dtype, accumulator) switch for one op. Layer: dispatch. Instantiated once per op
// (launch_axis_<op>.cu) so the kernels compile in parallel.
#pragma once

#include "../common/combos.h"
#include "../kernels/reduce_chunked.cuh"
#include "../kernels/reduce_cols.cuh"
#include "../kernels/reduce_rows_lanes.cuh"
#include "../kernels/reduce_rows_short.cuh"
#include "axis_tuning.h"
#include "dispatch.h"
#include "launch_status.cuh"

#include <atomic>
#include <cuda_runtime.h>

namespace cr {

constexpr size_t AXIS_SLOT_BYTES = 16; // the widest partial, aligned
constexpr size_t axis_tickets_offset() { return (size_t)CR_AXIS_PARTIAL_SLOTS * AXIS_SLOT_BYTES; }

inline uint64_t pow2_ceil(uint64_t x) {
  uint64_t p = 1;
  while (p < x)
    p *= 2;
  return p;
}
inline uint64_t pow2_floor(uint64_t x) {
  uint64_t p = 1;
  while (p * 2 <= x)
    p *= 2;
  return p;
}
inline uint64_t div_up(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// Lanes per row of the lane-group kernel for rows of `vectors` 16-byte vectors, `unroll` of
// them in flight a lane: about `unroll` vectors a lane, a power of two, at least 2 once the
// row has 2 vectors (so one load instruction of the group reads whole 32-byte sectors) and at
// most 32. It fixes the order within a row.
inline uint64_t lane_group(uint64_t vectors, uint64_t unroll) {
  const uint64_t g = pow2_ceil(div_up(vectors, unroll));
  return g < 2 && vectors >= 2 ? 2 : g > 32 ? 32 : g;
}

// Every row of the matrix starts on a 16-byte boundary and holds whole 16-byte vectors of
// ELEM-byte elements: the short-row kernel and the column kernel's packs may then load rows as
// vectors, with no head or tail.
template <uint64_t ELEM> bool rows_are_vectors(const void *in, uint64_t cols, uint64_t ld) {
  return reinterpret_cast<uintptr_t>(in) % 16 == 0 && (ld * ELEM) % 16 == 0 &&
         cols % (16 / ELEM) == 0;
}

// The arguments every axis launch shares.
struct axis_call {
  const void *in;
  void *out;
  char *workspace;
  cudaStream_t stream;
};

// How many blocks of `kernel` (BLOCK threads) the current GPU holds at once, looked up once per
// kernel and device. Only for a kernel whose result does not depend on its grid: the chunked
// kernel's chunks are fixed by the data, and any block may take any chunk; the lane-group row
// kernel's order within a row is fixed by the shape. A grid of exactly
// one full wave matters: these kernels use 48 to 64 registers a thread, so 4 to 5 blocks fit on
// an SM, and a fixed grid of 1024 blocks left its last ~40% running as a second, mostly empty
// wave (measured with ncu on an H100: 48% achieved occupancy for the segment mix).
// (A template on the kernel itself: kernels of the same signature, such as the f32 SUM and
// SUMSQ instantiations, may differ in registers and so in blocks per SM.)
template <int BLOCK, auto KERNEL> unsigned resident_blocks(unsigned fallback) {
  static std::atomic<unsigned> cached[64]; // by device ordinal; 0: not looked up yet
  int dev = 0, sms = 0, per_sm = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= 64)
    return fallback;
  if (const unsigned known = cached[dev].load(std::memory_order_relaxed))
    return known;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, KERNEL, BLOCK, 0) != cudaSuccess ||
      sms < 1 || per_sm < 1)
    return fallback;
  cached[dev].store((unsigned)(sms * per_sm), std::memory_order_relaxed);
  return (unsigned)(sms * per_sm);
}

// The chunked kernel over at most `chunks` chunks (0: not known on the host), one block per
// chunk up to one full wave of the GPU.
template <cureduce_dtype IN, cureduce_dtype ACC, cureduce_op OP>
cureduce_status launch_chunked(const axis_call &a, const segment_layout &S, uint64_t chunks) {
  using Op = compare_op<IN, OP, ACC>;
  static_assert(sizeof(typename Op::T) <= AXIS_SLOT_BYTES, "partial too wide");
  static_assert(2 * CR_MAX_CHUNKS <= CR_AXIS_PARTIAL_SLOTS && CR_MAX_CHUNKS <= CR_AXIS_TICKETS,
                "axis workspace too small for the chunked kernel");
#if CUREDUCE_TUNING_VARIANT != 99 // there the value comes from the environment
  static_assert(CR_CHUNK_MIN_BYTES % (16 * (CR_AXIS_BLOCK / 32)) == 0,
                "a warp's slice of a chunk must be whole 16-byte vectors");
#endif
  constexpr auto kernel = reduce_chunked<IN, ACC, OP, CR_AXIS_BLOCK, CR_CHUNK_UNROLL, CR_CHUNK_SHORT>;
  const unsigned wave = resident_blocks<CR_AXIS_BLOCK, kernel>(CR_CHUNK_GRID);
  const unsigned grid = chunks > 0 && chunks < wave ? (unsigned)chunks : wave;
  constexpr int64_t ELEM = sizeof(storage_t<IN>);
  auto *slots = reinterpret_cast<typename Op::T *>(a.workspace);
  kernel<<<grid, CR_AXIS_BLOCK, 0, a.stream>>>(
      static_cast<const storage_t<IN> *>(a.in), S, CR_CHUNK_MIN_BYTES / ELEM, CR_MAX_CHUNKS, slots,
      slots + CR_MAX_CHUNKS, reinterpret_cast<unsigned int *>(a.workspace + axis_tickets_offset()),
      static_cast<typename Op::Out *>(a.out));
  return launch_status();
}

// One of the two warp-based row kernels (both take (in, rows, cols, ld, group, out) and loop
// beyond their grid): a warp per rows_per_warp rows, with at most `waves` full waves of the GPU
// (0: at most CR_ROWS_SHORT_MAX_BLOCKS blocks). The grid only decides which warp takes which
// rows, never the order within a row, so the bits do not depend on it.
template <cureduce_dtype IN, cureduce_dtype ACC, cureduce_op OP, auto KERNEL>
cureduce_status launch_row_warps(const axis_call &a, uint64_t rows, uint64_t cols, uint64_t ld,
                                 uint64_t group, uint64_t rows_per_warp, uint64_t waves) {
  using Op = compare_op<IN, OP, ACC>;
#if CUREDUCE_TUNING_VARIANT == 99 // CR_ROWS_WAVES from the environment, for both kernels
  waves = cr_tuning_env("CR_ROWS_WAVES", waves);
#endif
  const uint64_t blocks = div_up(div_up(rows, rows_per_warp), CR_AXIS_BLOCK / 32);
  const uint64_t cap = waves ? waves * resident_blocks<CR_AXIS_BLOCK, KERNEL>(CR_CHUNK_GRID)
                             : (uint64_t)CR_ROWS_SHORT_MAX_BLOCKS;
  const unsigned grid = (unsigned)(blocks < cap ? blocks : cap);
  KERNEL<<<grid, CR_AXIS_BLOCK, 0, a.stream>>>(static_cast<const storage_t<IN> *>(a.in), rows, cols,
                                               ld, (int)group, static_cast<typename Op::Out *>(a.out));
  return launch_status();
}

// Rows: one vector per lane for short aligned rows, lane groups up to CR_ROWS_LANES_MAX_BYTES,
// the chunked kernel for longer ones.
template <cureduce_dtype IN, cureduce_dtype ACC, cureduce_op OP>
cureduce_status launch_rows(const axis_call &a, uint64_t rows, uint64_t cols, uint64_t ld) {
  constexpr uint64_t ELEM = sizeof(storage_t<IN>), N = 16 / ELEM;
  if (rows_are_vectors<ELEM>(a.in, cols, ld) && cols >= N && cols / N <= CR_ROWS_SHORT_MAX_VECTORS &&
      cols / N <= 32) {
    // Whole aligned vectors, a few a row: one vector per lane (reduce_rows_short.cuh).
    const uint64_t group = pow2_ceil(cols / N);
#if CUREDUCE_TUNING_VARIANT == 99 && !CUREDUCE_TUNING_LEAN // rows in flight per lane from the environment: 4 or 8
    const unsigned long unroll = cr_tuning_env("CR_ROWS_SHORT_UNROLL", CR_ROWS_SHORT_UNROLL);
    if (unroll == 4)
      return launch_row_warps<IN, ACC, OP, reduce_rows_short<IN, ACC, OP, CR_AXIS_BLOCK, 4>>(
          a, rows, cols, ld, group, (32 / group) * 4, 0);
    if (unroll == 8)
      return launch_row_warps<IN, ACC, OP, reduce_rows_short<IN, ACC, OP, CR_AXIS_BLOCK, 8>>(
          a, rows, cols, ld, group, (32 / group) * 8, 0);
#endif
    return launch_row_warps<IN, ACC, OP, reduce_rows_short<IN, ACC, OP, CR_AXIS_BLOCK, CR_ROWS_SHORT_UNROLL>>(
        a, rows, cols, ld, group, (32 / group) * CR_ROWS_SHORT_UNROLL, 0);
  }
  if (cols * ELEM <= CR_ROWS_LANES_MAX_BYTES) {
    const uint64_t vectors = div_up(cols * ELEM, 16);
#if CUREDUCE_TUNING_VARIANT == 99 && !CUREDUCE_TUNING_LEAN // vectors in flight per lane from the environment: 4 or 8
    if (cr_tuning_env("CR_ROWS_UNROLL", CR_ROWS_UNROLL) == 8) {
      const uint64_t group = lane_group(vectors, 8);
      return launch_row_warps<IN, ACC, OP, reduce_rows_lanes<IN, ACC, OP, CR_AXIS_BLOCK, 8>>(
          a, rows, cols, ld, group, 32 / group, CR_ROWS_LANES_WAVES);
    }
#endif
    const uint64_t group = lane_group(vectors, CR_ROWS_UNROLL);
    constexpr auto kernel = reduce_rows_lanes<IN, ACC, OP, CR_AXIS_BLOCK, CR_ROWS_UNROLL>;
    return launch_row_warps<IN, ACC, OP, kernel>(a, rows, cols, ld, group, 32 / group, CR_ROWS_LANES_WAVES);
  }
  // The same chunk arithmetic as the kernel, for the grid only.
  const uint64_t total = rows * cols, min_chunk = CR_CHUNK_MIN_BYTES / ELEM;
  const uint64_t per = div_up(total, CR_MAX_CHUNKS);
  const uint64_t chunk = div_up(per > min_chunk ? per : min_chunk, min_chunk) * min_chunk;
  const uint64_t chunks = div_up(total, chunk);
  const segment_layout S{nullptr, rows, cols, ld};
  return launch_chunked<IN, ACC, OP>(a, S, chunks);
}

template <cureduce_dtype IN, cureduce_dtype ACC, cureduce_op OP>
cureduce_status launch_segments(const axis_call &a, uint64_t count, const int64_t *offsets) {
  // The total length is on the device: a full wave of blocks, each takes chunks until none
  // is left.
  const segment_layout S{offsets, count, 0, 0};
  return launch_chunked<IN, ACC, OP>(a, S, 0);
}

// How a column reduction is cut: tiles of tx threads across the columns, ty threads down the
// rows, and `slices` row slices of slice_rows rows each. A function of the shape, the element
// size and the partial's size only: it fixes the order of combination.
struct cols_plan {
  uint64_t tx, ty, tiles, slices, slice_rows;
};

// The plan with tiles of at most max_tx threads across the columns, each thread folding at
// least min_rows rows before the rows are cut into more slices.
template <int VEC, int UNROLL, int BLOCK>
cols_plan plan_cols(uint64_t rows, uint64_t cols, uint64_t max_tx, uint64_t min_rows) {
  // Tile: up to max_tx threads across the columns; fewer rows per block when there are few
  // rows, more columns instead.
  const uint64_t groups = cols / VEC;
  uint64_t tx = pow2_ceil(groups) < max_tx ? pow2_ceil(groups) : max_tx;
  uint64_t ty = BLOCK / tx;
  const uint64_t ty_rows = pow2_floor(rows / UNROLL > 0 ? rows / UNROLL : 1);
  if (ty > ty_rows) {
    ty = ty_rows;
    tx = BLOCK / ty;
  }
  const uint64_t tiles = div_up(groups, tx);
  // Row slices: enough blocks, each thread still folding a fair number of rows, the partials
  // within the workspace, and a ticket for every tile.
  uint64_t slices = div_up(CR_COLS_TARGET_BLOCKS, tiles);
  const uint64_t by_rows = rows / (ty * min_rows);
  const uint64_t by_slots = CR_AXIS_PARTIAL_SLOTS / cols;
  if (slices > by_rows)
    slices = by_rows;
  if (slices > by_slots)
    slices = by_slots;
  if (slices > 65535)
    slices = 65535;
  if (slices < 1 || tiles > CR_AXIS_TICKETS)
    slices = 1;
  const uint64_t slice_rows = div_up(rows, slices);
  return {tx, ty, tiles, div_up(rows, slice_rows), slice_rows};
}

// The tile width, from CR_COLS_MAX_TX threads down to CR_COLS_MIN_TX (axis_tuning.h): the
// widest with enough tiles to need no row slices at all; else the widest whose last block
// folds at most CR_COLS_MAX_TAIL_BYTES of partials (that fold runs on one SM while the rest of
// the GPU waits); else the narrowest.
template <int VEC, int UNROLL, int BLOCK>
cols_plan choose_cols_width(uint64_t rows, uint64_t cols, uint64_t partial_bytes, uint64_t min_rows) {
  const uint64_t widest = CR_COLS_MAX_TX, narrowest = CR_COLS_MIN_TX < widest ? CR_COLS_MIN_TX : widest;
  cols_plan P{}, fits{};
  bool any_fits = false;
  for (uint64_t cap = widest;; cap /= 2) {
    P = plan_cols<VEC, UNROLL, BLOCK>(rows, cols, cap, min_rows);
    if (P.tiles >= CR_COLS_TARGET_BLOCKS)
      return P;
    if (!any_fits && P.slices * P.tx * VEC * partial_bytes <= CR_COLS_MAX_TAIL_BYTES) {
      fits = P;
      any_fits = true;
    }
    if (cap / 2 < narrowest)
      return any_fits ? fits : P;
  }
}

// Fewer, longer slices (CR_COLS_MIN_ROWS_PER_THREAD rows a thread), unless that leaves fewer
// than CR_COLS_MIN_BLOCKS blocks: then half as many rows a thread.
template <int VEC, int UNROLL, int BLOCK>
cols_plan choose_cols_plan(uint64_t rows, uint64_t cols, uint64_t partial_bytes) {
  const cols_plan P = choose_cols_width<VEC, UNROLL, BLOCK>(rows, cols, partial_bytes, CR_COLS_MIN_ROWS_PER_THREAD);
  if (P.tiles * P.slices >= CR_COLS_MIN_BLOCKS)
    return P;
  return choose_cols_width<VEC, UNROLL, BLOCK>(rows, cols, partial_bytes, CR_COLS_MIN_ROWS_PER_THREAD / 2);
}

template <cureduce_dtype IN, cureduce_dtype ACC, cureduce_op OP, int VEC, int UNROLL, int BLOCK, int LAST>
cureduce_status launch_cols_vec(const axis_call &a, uint64_t rows, uint64_t cols, uint64_t ld) {
  using Op = compare_op<IN, OP, ACC>;
  static_assert(sizeof(typename Op::T) <= AXIS_SLOT_BYTES, "partial too wide");
  const cols_plan P = choose_cols_plan<VEC, UNROLL, BLOCK>(rows, cols, sizeof(typename Op::T));
  if (P.tiles > 0x7fffffffu)
    return CUREDUCE_ERROR_INVALID_VALUE;

  const cols_layout L{rows, cols, ld, P.slice_rows, (int)P.tx};
  const dim3 grid((unsigned)P.tiles, (unsigned)P.slices);
  reduce_cols<IN, ACC, OP, BLOCK, VEC, UNROLL, LAST><<<grid, BLOCK, 0, a.stream>>>(
      static_cast<const storage_t<IN> *>(a.in), L, reinterpret_cast<typename Op::T *>(a.workspace),
      reinterpret_cast<unsigned int *>(a.workspace + axis_tickets_offset()),
      static_cast<typename Op::Out *>(a.out));
  return launch_status();
}

// Columns: 16-byte packs of columns when every row allows them, else one column per thread.
template <cureduce_dtype IN, cureduce_dtype ACC, cureduce_op OP>
cureduce_status launch_cols(const axis_call &a, uint64_t rows, uint64_t cols, uint64_t ld) {
  constexpr uint64_t ELEM = sizeof(storage_t<IN>), PACK = 16 / ELEM;
  constexpr int UNROLL = CR_COLS_UNROLL(ELEM);
  const bool packs = rows_are_vectors<ELEM>(a.in, cols, ld);
#if CUREDUCE_TUNING_VARIANT == 99 && !CUREDUCE_TUNING_LEAN
  const unsigned long unroll = CR_COLS_UNROLL_TUNED(ELEM), block = CR_COLS_BLOCK_TUNED,
                      last = CR_COLS_LAST_VALUES_TUNED;
#define CR_COLS_TRY(U, B, L)                                                                   \
  if (unroll == U && block == B && last == L)                                                  \
    return packs ? launch_cols_vec<IN, ACC, OP, (int)PACK, U, B, L>(a, rows, cols, ld)         \
                 : launch_cols_vec<IN, ACC, OP, 1, U, B, L>(a, rows, cols, ld);
  CR_COLS_TRY(4, 256, 16) CR_COLS_TRY(8, 256, 16) CR_COLS_TRY(4, 512, 16) CR_COLS_TRY(8, 512, 16)
  CR_COLS_TRY(4, 256, 32) CR_COLS_TRY(8, 256, 32) CR_COLS_TRY(4, 256, 64) CR_COLS_TRY(8, 256, 64)
  CR_COLS_TRY(16, 256, 16)
#undef CR_COLS_TRY
#endif
  constexpr int LAST = CR_COLS_LAST_VALUES;
  return packs ? launch_cols_vec<IN, ACC, OP, (int)PACK, UNROLL, CR_COLS_BLOCK, LAST>(a, rows, cols, ld)
               : launch_cols_vec<IN, ACC, OP, 1, UNROLL, CR_COLS_BLOCK, LAST>(a, rows, cols, ld);
}

enum axis_kind { AXIS_ROWS, AXIS_COLS, AXIS_SEGMENTS };

// The (dtype, accumulator) switch for one op, over the one list of supported pairs.
template <cureduce_op OP>
cureduce_status select_axis(axis_kind kind, cureduce_dtype in, cureduce_dtype acc_dtype,
                            const axis_call &a, uint64_t rows, uint64_t cols, uint64_t ld,
                            const int64_t *offsets) {
// An op that has no meaning in an accumulator (offered<>) is refused here, once, so the launch
// functions above are only instantiated for pairs they can run.
#define CR_CASE(IN, ACC)                                                                        \
  if (in == CUREDUCE_##IN && acc_dtype == CUREDUCE_##ACC) {                                     \
    if constexpr (!offered<OP, CUREDUCE_##ACC>()) {                                             \
      return CUREDUCE_ERROR_UNSUPPORTED;                                                        \
    } else {                                                                                    \
      switch (kind) {                                                                           \
      case AXIS_ROWS: return launch_rows<CUREDUCE_##IN, CUREDUCE_##ACC, OP>(a, rows, cols, ld);  \
      case AXIS_COLS: return launch_cols<CUREDUCE_##IN, CUREDUCE_##ACC, OP>(a, rows, cols, ld);  \
      default: return launch_segments<CUREDUCE_##IN, CUREDUCE_##ACC, OP>(a, rows, offsets);      \
      }                                                                                         \
    }                                                                                           \
  }
  CUREDUCE_FOR_EACH_PAIR(CR_CASE)
#undef CR_CASE
  return CUREDUCE_ERROR_UNSUPPORTED;
}

#define CR_DECLARE_SELECT_AXIS(OPNAME)                                                          \
  extern template cureduce_status select_axis<CUREDUCE_##OPNAME>(                               \
      axis_kind, cureduce_dtype, cureduce_dtype, const axis_call &, uint64_t, uint64_t,         \
      uint64_t, const int64_t *);
CUREDUCE_FOR_EACH_OP(CR_DECLARE_SELECT_AXIS)
#undef CR_DECLARE_SELECT_AXIS

} // namespace cr
