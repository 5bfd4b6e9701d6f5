// How an exact column sum is cut, computed on the host from the shape: a thread a column (few
// rows and many columns), a warp a matrix (many small matrices), or groups of 32 columns cut
// into slices of rows, whose pairs are added in sets of slices. Layer: dispatch. Host C++ only
// (no kernels, no CUDA), so tests can check the plans without compiling kernels.
#pragma once

#include <stdint.h>

namespace cr {

// Columns of at most EXACT_THIN_ROWS rows, EXACT_THIN_GROUPS_MIN groups of 32 or more
// (16353 columns or more), take a thread a column (exact_cols_thin).
constexpr uint64_t EXACT_THIN_ROWS = 128, EXACT_THIN_GROUPS_MIN = 512;

// Groups of 32 columns are cut into row slices when the groups alone are fewer than
// EXACT_COLS_ITEMS_TARGET, so that there are EXACT_COLS_ITEMS_TARGET (group, slice) items or
// more (fewer than EXACT_COLS_ITEMS_TARGET + groups, so below EXACT_COLS_ITEMS_MAX, the
// workspace's slots), and at most one slice per EXACT_COLS_SLICE_ROWS rows (rounded up).
// About one wave of 4 blocks an SM on an H100: with twice as many, the slices' combine cost
// more than the wave it filled. Slices are added in sets of EXACT_COLS_SET_SLICES.
constexpr uint64_t EXACT_COLS_ITEMS_MAX = 1024, EXACT_COLS_ITEMS_TARGET = 512, EXACT_COLS_SLICES_MAX = 512;
constexpr uint64_t EXACT_COLS_SLICE_ROWS = 64, EXACT_COLS_SET_SLICES = 16;

struct exact_cols_cut {
  bool thin;                                 // a thread a column: the rest is unused
  uint64_t groups, slices, slice_rows, sets; // sets of EXACT_COLS_SET_SLICES slices
};

// The cut of `columns` columns (of all matrices of a batch) of `rows` rows.
inline exact_cols_cut choose_exact_cols(uint64_t columns, uint64_t rows) {
  exact_cols_cut c{};
  c.groups = (columns + 31) / 32;
  c.thin = rows <= EXACT_THIN_ROWS && c.groups >= EXACT_THIN_GROUPS_MIN;
  uint64_t slices = 1;
  if (c.groups < EXACT_COLS_ITEMS_TARGET) {
    slices = (EXACT_COLS_ITEMS_TARGET + c.groups - 1) / c.groups;
    slices = slices < EXACT_COLS_SLICES_MAX ? slices : EXACT_COLS_SLICES_MAX;
    const uint64_t most = (rows + EXACT_COLS_SLICE_ROWS - 1) / EXACT_COLS_SLICE_ROWS;
    slices = slices < most ? slices : most;
    slices = slices > 0 ? slices : 1;
  }
  c.slice_rows = slices > 1 ? (rows + slices - 1) / slices : rows;
  c.slices = slices > 1 ? (rows + c.slice_rows - 1) / c.slice_rows : 1;
  c.sets = (c.slices + EXACT_COLS_SET_SLICES - 1) / EXACT_COLS_SET_SLICES;
  return c;
}

// Batches of at least EXACT_MATRIX_BATCHES_MIN matrices of 2 to EXACT_MATRIX_COLS_MAX columns
// held without gaps (ld == cols: the middle axis of an N-d array with a small inner extent),
// of at most EXACT_MATRIX_ROWS_MAX rows (the one-warp slow path's bound, EXACT_CHUNK), take a
// warp a matrix (exact_cols_matrix) where they do not take a thread a column (checked first):
// exact_cols' lanes, a column apart across the batch, would read a few bytes of each 32-byte
// sector. 2048 warps fill half of an H100 at 4 blocks of 8 warps an SM.
constexpr uint64_t EXACT_MATRIX_COLS_MAX = 16, EXACT_MATRIX_BATCHES_MIN = 2048,
                   EXACT_MATRIX_ROWS_MAX = 1ull << 27;

inline bool exact_cols_by_matrix(uint64_t batches, uint64_t rows, uint64_t cols, uint64_t ld) {
  return cols >= 2 && cols <= EXACT_MATRIX_COLS_MAX && ld == cols && batches >= EXACT_MATRIX_BATCHES_MIN &&
         rows >= 1 && rows <= EXACT_MATRIX_ROWS_MAX;
}

} // namespace cr
