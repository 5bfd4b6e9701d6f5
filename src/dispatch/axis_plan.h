// How a row, column or segment reduction is cut, computed on the host from the shape, the
// element size and a policy (axis_policy.h): which row kernel, lane groups, chunk counts,
// column tiles and slices, and the axis workspace they share. Layer: dispatch. Host C++ only:
// no kernels and no CUDA, so tests and tools can check the plans without compiling kernels.
#pragma once

#include "../kernels/chunk_size.h"
#include "axis_policy.h"

#include <stddef.h>
#include <stdint.h>

namespace cr {

// The axis workspace: partial slots (AXIS_SLOT_BYTES each: the widest partial, aligned), then
// tickets. The chunked kernel uses 2 * MAX_CHUNKS slots and MAX_CHUNKS tickets; the column
// kernel slices * cols slots and one ticket per column tile.
constexpr uint64_t AXIS_PARTIAL_SLOTS = 262144;
constexpr uint64_t AXIS_TICKETS = 8192;
constexpr size_t AXIS_SLOT_BYTES = 16;
constexpr size_t axis_tickets_offset() { return (size_t)AXIS_PARTIAL_SLOTS * AXIS_SLOT_BYTES; }
constexpr size_t axis_workspace_bytes() {
  return axis_tickets_offset() + (size_t)AXIS_TICKETS * sizeof(unsigned int);
}

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

// Every row of the matrix starts on a BYTES boundary and holds whole BYTES-wide packs of
// ELEM-byte elements: the kernels may then load rows pack by pack, with no head or tail.
template <uint64_t ELEM, uint64_t BYTES> bool rows_are_packs(const void *in, uint64_t cols, uint64_t ld) {
  return reinterpret_cast<uintptr_t>(in) % BYTES == 0 && (ld * ELEM) % BYTES == 0 &&
         cols % (BYTES / ELEM) == 0;
}
// ... of 16-byte vectors: the short-row kernel and the column kernel's widest packs.
template <uint64_t ELEM> bool rows_are_vectors(const void *in, uint64_t cols, uint64_t ld) {
  return rows_are_packs<ELEM, 16>(in, cols, ld);
}

// Lanes per row of the lane-group kernel for rows of `vectors` 16-byte vectors, `unroll` of
// them in flight a lane: about `unroll` vectors a lane, a power of two, at least 2 once the
// row has 2 vectors (so one load instruction of the group reads whole 32-byte sectors) and at
// most 32. It fixes the order within a row.
inline uint64_t lane_group(uint64_t vectors, uint64_t unroll) {
  const uint64_t g = pow2_ceil(div_up(vectors, unroll));
  return g < 2 && vectors >= 2 ? 2 : g > 32 ? 32 : g;
}

// The chunks of `total` elements of ELEM bytes (chunked_policy), cut as the chunked kernel
// cuts them (chunk_size.h).
template <class Chunked, uint64_t ELEM> uint64_t chunk_count(uint64_t total) {
  const uint64_t chunk =
      chunk_elements<uint64_t>(total, Chunked::MIN_CHUNK_BYTES / ELEM, Chunked::MAX_CHUNKS);
  return div_up(total, chunk);
}

// Which kernel reduces the rows, and how.
enum rows_kernel { ROWS_SHORT, ROWS_LANES, ROWS_CHUNKED, ROWS_FULL };
struct rows_plan {
  rows_kernel kernel;
  uint64_t group;         // ROWS_SHORT, ROWS_LANES: lanes per row
  uint64_t rows_per_warp; // ROWS_SHORT, ROWS_LANES: rows a warp takes per pass
  uint64_t waves;         // ROWS_LANES: grid cap in full waves of the GPU (0: SHORT_MAX_BLOCKS)
  uint64_t chunks;        // ROWS_CHUNKED: chunks of the rows laid end to end
};

// Rows of `cols` ELEM-byte elements (`vectors`: rows_are_vectors holds; `same_phase`: every
// row starts at the same offset from a 16-byte boundary, as one row does): one vector per lane for short rows
// of whole vectors, lane groups up to Rows::LANES_MAX_BYTES (or Rows::LONG_LANES_MAX_BYTES for
// Rows::LONG_LANES_MIN_ROWS rows or more); longer ones each as a full array when there are at
// most full_rows (the full-array grid cap: a block a row at least) with the same phase, else
// the chunked kernel.
template <class Rows, class Chunked, uint64_t ELEM>
rows_plan plan_rows(bool vectors, bool same_phase, uint64_t full_rows, uint64_t rows, uint64_t cols) {
  constexpr uint64_t N = 16 / ELEM; // elements a vector
  if (vectors && cols >= N && cols / N <= Rows::SHORT_MAX_VECTORS) {
    const uint64_t group = pow2_ceil(cols / N);
    return {ROWS_SHORT, group, (32 / group) * Rows::SHORT_UNROLL, 0, 0};
  }
  const uint64_t lanes_max =
      rows >= Rows::LONG_LANES_MIN_ROWS ? Rows::LONG_LANES_MAX_BYTES : Rows::LANES_MAX_BYTES;
  if (cols * ELEM <= lanes_max) {
    const uint64_t group = lane_group(div_up(cols * ELEM, 16), Rows::LANES_UNROLL);
    return {ROWS_LANES, group, 32 / group, Rows::LANES_WAVES, 0};
  }
  if (same_phase && rows <= full_rows)
    return {ROWS_FULL, 0, 0, 0, 0};
  return {ROWS_CHUNKED, 0, 0, 0, chunk_count<Chunked, ELEM>(rows * cols)};
}

// Blocks of BLOCK threads for one warp per rows_per_warp rows (before any cap).
inline uint64_t row_warp_blocks(uint64_t rows, uint64_t rows_per_warp, uint64_t block) {
  return div_up(div_up(rows, rows_per_warp), block / 32);
}

// How a column reduction of `batches` matrices is cut: tiles of tx threads across the columns
// (batch_tiles per matrix, `tiles` in all), ty threads down the rows, and `slices` row slices
// of slice_rows rows each. A function of the shape, the element size and the partial's size
// only: it fixes the order of combination.
struct cols_plan {
  uint64_t tx, ty, tiles, slices, slice_rows, batch_tiles;
  bool warps; // one warp per matrix: tiles blocks of BLOCK / 32 matrices, ty = 32 / tx
};

// The plan with tiles of at most max_tx threads across the columns (VEC columns a thread),
// each thread folding at least min_rows rows before the rows are cut into more slices.
template <class Cols, int VEC>
cols_plan plan_cols(uint64_t batches, uint64_t rows, uint64_t cols, uint64_t max_tx, uint64_t min_rows) {
  constexpr uint64_t BLOCK = Cols::BLOCK, UNROLL = Cols::UNROLL;
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
  const uint64_t batch_tiles = div_up(groups, tx);
  const uint64_t tiles = batches <= UINT64_MAX / batch_tiles ? batches * batch_tiles : UINT64_MAX;
  // Row slices: enough blocks, each thread still folding a fair number of rows, the partials
  // within the workspace, and a ticket for every tile.
  uint64_t slices = div_up(Cols::TARGET_BLOCKS, tiles);
  const uint64_t by_rows = rows / (ty * min_rows);
  const uint64_t by_slots = batches <= AXIS_PARTIAL_SLOTS / cols ? AXIS_PARTIAL_SLOTS / cols / batches : 0;
  if (slices > by_rows)
    slices = by_rows;
  if (slices > by_slots)
    slices = by_slots;
  if (slices > 65535)
    slices = 65535;
  if (slices < 1 || tiles > AXIS_TICKETS)
    slices = 1;
  const uint64_t slice_rows = div_up(rows, slices);
  return {tx, ty, tiles, div_up(rows, slice_rows), slice_rows, batch_tiles, false};
}

// The tile width, from Cols::MAX_TX threads down to Cols::MIN_TX: the widest with enough tiles
// to need no row slices at all; else the widest whose last block folds at most
// Cols::MAX_TAIL_BYTES of partials; else the narrowest.
template <class Cols, int VEC>
cols_plan choose_cols_width(uint64_t batches, uint64_t rows, uint64_t cols, uint64_t partial_bytes,
                            uint64_t min_rows) {
  const uint64_t widest = Cols::MAX_TX, narrowest = Cols::MIN_TX < widest ? Cols::MIN_TX : widest;
  cols_plan P{}, fits{};
  bool any_fits = false;
  for (uint64_t cap = widest;; cap /= 2) {
    P = plan_cols<Cols, VEC>(batches, rows, cols, cap, min_rows);
    if (P.tiles >= Cols::TARGET_BLOCKS)
      return P;
    if (!any_fits && P.slices * P.tx * VEC * partial_bytes <= Cols::MAX_TAIL_BYTES) {
      fits = P;
      any_fits = true;
    }
    if (cap / 2 < narrowest)
      return any_fits ? fits : P;
  }
}

// Whether a column reduction of `batches` matrices, vec columns a thread, takes a warp per
// matrix: Cols::WARP_MATRICES_MIN matrices or more whose columns fit one warp.
template <class Cols> bool warp_per_matrix(uint64_t batches, uint64_t cols, uint64_t vec) {
  const uint64_t groups = cols / vec;
  return batches >= Cols::WARP_MATRICES_MIN && groups >= 1 && groups <= 32;
}

// Columns a thread for ELEM-byte elements: a 16-byte pack where every row allows it
// (`vectors`: rows_are_vectors), else a 4-byte pack of 1- and 2-byte elements where every row
// allows that (`packs`), else one. With a warp per matrix, a pack that leaves each lane fewer
// than Cols::WARP_MIN_ROWS_PER_LANE rows gives way to the next narrower one that also takes a
// warp per matrix: the warp's shuffle tree over the pack's values then outweighs its loads
// (docs/design.md#columns).
template <class Cols, uint64_t ELEM>
uint64_t choose_cols_pack(bool vectors, bool packs, uint64_t batches, uint64_t rows, uint64_t cols) {
  constexpr uint64_t WIDE = 16 / ELEM, NARROW = ELEM < 4 ? 4 / ELEM : 1;
  uint64_t vec = vectors ? WIDE : packs ? NARROW : 1;
  while (vec > 1) {
    const uint64_t next = vec > NARROW ? NARROW : 1; // rows of 16-byte packs allow 4-byte ones
    if (!warp_per_matrix<Cols>(batches, cols, vec) || !warp_per_matrix<Cols>(batches, cols, next))
      return vec;
    const uint64_t lanes_down_rows = 32 / pow2_ceil(cols / vec);
    if (rows / lanes_down_rows >= Cols::WARP_MIN_ROWS_PER_LANE)
      return vec;
    vec = next;
  }
  return vec;
}

// The plan of a column reduction (of `batches` matrices) with partials of partial_bytes: a warp
// per matrix for Cols::WARP_MATRICES_MIN matrices or more whose columns fit one warp; else
// fewer, longer slices (Cols::MIN_ROWS_PER_THREAD rows a thread), unless that leaves fewer
// than Cols::MIN_BLOCKS blocks: then half as many rows a thread.
template <class Cols, int VEC>
cols_plan choose_cols_plan(uint64_t batches, uint64_t rows, uint64_t cols, uint64_t partial_bytes) {
  if (warp_per_matrix<Cols>(batches, cols, VEC)) {
    const uint64_t tx = pow2_ceil(cols / VEC);
    return {tx, 32 / tx, div_up(batches, Cols::BLOCK / 32), 1, rows, 1, true};
  }
  const cols_plan P =
      choose_cols_width<Cols, VEC>(batches, rows, cols, partial_bytes, Cols::MIN_ROWS_PER_THREAD);
  if (P.tiles * P.slices >= Cols::MIN_BLOCKS)
    return P;
  return choose_cols_width<Cols, VEC>(batches, rows, cols, partial_bytes, Cols::MIN_ROWS_PER_THREAD / 2);
}

} // namespace cr
