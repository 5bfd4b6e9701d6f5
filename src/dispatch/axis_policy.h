// Launch shapes of the row, column and segment kernels, as data handed to their launchers
// (launch_axis.cuh); the plans computed from them are in axis_plan.h. Layer: dispatch.
//
// Every value here that decides the order of combination (lane groups, chunk sizes, column
// tiles and slices) is combined with the shape and the element size only, never with the GPU
// (docs/design.md#determinism). Only grids that leave that order alone are sized from the GPU.
#pragma once

#include <stdint.h>

namespace cr {

// Rows: short rows of whole, aligned 16-byte vectors get one vector per lane
// (reduce_rows_short.cuh); rows up to LANES_MAX_BYTES a group of lanes each
// (reduce_rows_lanes.cuh), and so do rows up to LONG_LANES_MAX_BYTES when there are at least
// LONG_LANES_MIN_ROWS of them (a warp each: fewer long rows would leave SMs idle); other rows
// go to the chunked kernel (chunked_policy), except rows with the same 16-byte phase, no more
// of them than the full-array grid has blocks (full_policy.h): each of those is reduced as a
// full array, the grid's blocks shared among the rows, a block a row at least. Both warp
// kernels loop beyond their grid, so the grid only decides which warp takes which rows.
// Tuned on an H100 (SXM, 132 SMs): docs/design.md#rows
struct rows_policy {
  static constexpr int BLOCK = 256;                       // threads per block, both kernels
  static constexpr uint64_t SHORT_MAX_VECTORS = 8;        // longest short row, in 16-byte vectors
  static constexpr int SHORT_UNROLL = 4;                  // rows in flight per lane
  static constexpr uint64_t SHORT_MAX_BLOCKS = 8192;      // grid cap of the short-row kernel
  static constexpr uint64_t LANES_MAX_BYTES = 16384;      // longest row for a lane group
  static constexpr uint64_t LONG_LANES_MAX_BYTES = 65536; // ... when there are many rows
  static constexpr uint64_t LONG_LANES_MIN_ROWS = 2048;
  static constexpr int LANES_UNROLL = 4;          // vectors in flight per lane
  static constexpr uint64_t LANES_WAVES = 1;      // lane-group grid cap, in full waves of the GPU
  static constexpr unsigned WAVE_FALLBACK = 1024; // a wave where the GPU cannot be asked
  static_assert(SHORT_MAX_VECTORS <= 32, "a short row is at most one vector per lane of a warp");
};

// Segments, and rows longer than rows_policy::LANES_MAX_BYTES (reduce_chunked.cuh): the
// elements laid end to end are cut into chunks of at least MIN_CHUNK_BYTES, at most
// MAX_CHUNKS of them (larger inputs get larger chunks). Inside a chunk, pieces of at most
// 1 / SHORT of it are folded by one warp each. The grid is one full wave of the GPU, each
// block taking chunks in turn: the chunks, not the grid, fix the order.
// Tuned on an H100 (SXM, 132 SMs): docs/design.md#segments
struct chunked_policy {
  static constexpr int BLOCK = 256;
  static constexpr int UNROLL = 4; // vectors in flight per lane
  static constexpr int SHORT = 64;
  static constexpr uint64_t MIN_CHUNK_BYTES = 262144;
  static constexpr uint64_t MAX_CHUNKS = 8192;
  static constexpr unsigned WAVE_FALLBACK = 1024; // a wave where the GPU cannot be asked
  static_assert(MIN_CHUNK_BYTES % (16 * (BLOCK / 32)) == 0,
                "a warp's slice of a chunk must be whole 16-byte vectors");
};

// Columns of ELEM-byte elements (reduce_cols.cuh): tiles of MIN_TX to MAX_TX threads across
// the columns, the rest of the block down the rows (choose_cols_plan, axis_plan.h). Long
// columns are cut into row slices, aiming at TARGET_BLOCKS blocks, each thread folding at least
// MIN_ROWS_PER_THREAD rows (half as many where that leaves fewer than MIN_BLOCKS blocks);
// each tile's last block folds the slices' partials, which should stay within MAX_TAIL_BYTES:
// that fold runs on one SM while the rest of the GPU waits. A batch of WARP_MATRICES_MIN or
// more matrices (about a full GPU of warps) whose columns fit one warp gives each warp a
// matrix, in packs narrow enough to leave each lane WARP_MIN_ROWS_PER_LANE rows or more.
// Tuned on an H100 (SXM, 132 SMs): docs/design.md#columns
template <int ELEM> struct cols_policy {
  static constexpr int BLOCK = 256;                // threads per block (a power of two, 256 to 1024)
  static constexpr int UNROLL = ELEM >= 2 ? 8 : 4; // rows in flight per thread
  static constexpr int LAST_VALUES = 16;           // partials in flight per thread in the last fold
  static constexpr uint64_t TARGET_BLOCKS = 1024;
  static constexpr uint64_t MIN_ROWS_PER_THREAD = 64;
  static constexpr uint64_t MIN_BLOCKS = 128;
  static constexpr uint64_t MAX_TX = 32;
  static constexpr uint64_t MIN_TX = 8;
  static constexpr uint64_t MAX_TAIL_BYTES = 16384;
  static constexpr uint64_t WARP_MATRICES_MIN = 8192;   // batches from which a warp takes a matrix
  static constexpr uint64_t WARP_MIN_ROWS_PER_LANE = 8; // else a narrower pack (choose_cols_pack)
};

} // namespace cr
