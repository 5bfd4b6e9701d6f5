// The column kernels' plans (choose_cols_plan in axis_plan.h, choose_exact_cols in
// exact_plan.h) stay within what the kernels and the workspace allow. The plain sums' plan,
// for every shape and batch of matrices: the tiles cover each matrix's columns and the slices
// the rows, none empty; tickets and partial slots fit in the axis workspace; a warp per
// matrix covers the columns with its lanes and the batch with its blocks; few rows a lane
// take narrower packs. On the shapes of `bench --rows` the tile's last block folds at most
// cols_policy::MAX_TAIL_BYTES of partials, or the tile is already the narrowest. The exact
// sums' cut and the long rows taken as full arrays: below. Host code only: no GPU needed.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" { // cmocka 1.1's header has no C++ guards
#include <cmocka.h>
}

#include "../bench/rows_shapes.h"
#include "../src/dispatch/axis_plan.h"
#include "../src/dispatch/exact_plan.h"
#include "../src/dispatch/full_policy.h"

#include <stdio.h>

namespace {

// The invariants of one plan. VEC columns a thread, Cols::BLOCK threads a block, pb bytes a
// partial.
template <class Cols, int VEC> void check_plan(uint64_t batches, uint64_t rows, uint64_t cols, uint64_t pb) {
  constexpr uint64_t BLOCK = Cols::BLOCK;
  const cr::cols_plan P = cr::choose_cols_plan<Cols, VEC>(batches, rows, cols, pb);
  const uint64_t vecs = cols / VEC;
  char what[200];
  snprintf(what, sizeof what,
           "batches %llu rows %llu cols %llu VEC %d partial %llu: tx %llu ty %llu tiles %llu slices %llu",
           (unsigned long long)batches, (unsigned long long)rows, (unsigned long long)cols, VEC,
           (unsigned long long)pb, (unsigned long long)P.tx, (unsigned long long)P.ty,
           (unsigned long long)P.tiles, (unsigned long long)P.slices);
  if (P.warps) {
    // A warp per matrix: the warp's lanes cover the columns, the blocks the matrices.
    const uint64_t per_block = BLOCK / 32;
    if (!(batches >= Cols::WARP_MATRICES_MIN && P.tx * P.ty == 32 && P.tx >= vecs && P.tx < 2 * vecs &&
          P.tiles * per_block >= batches && (P.tiles - 1) * per_block < batches && P.tiles <= 0x7fffffffu &&
          P.slices == 1 && P.slice_rows >= rows))
      fail_msg("warp per matrix: %s", what);
    return;
  }
  if (!(P.tx * P.ty == BLOCK && P.tx >= 1 && P.ty >= 1))
    fail_msg("block shape: %s", what);
  // Each matrix's tiles cover its column vectors, no tile is empty, and the grid holds them.
  if (!(P.batch_tiles * P.tx >= vecs && (P.batch_tiles - 1) * P.tx < vecs &&
        P.tiles == batches * P.batch_tiles && P.tiles <= 0x7fffffffu))
    fail_msg("tiles: %s", what);
  // Slices cover the rows, none empty; the grid's y dimension holds them.
  if (!(P.slices >= 1 && P.slices <= 65535 && P.slices * P.slice_rows >= rows &&
        (P.slices - 1) * P.slice_rows < rows))
    fail_msg("slices: %s", what);
  if (P.slices > 1) {
    // One ticket per tile; one partial per slice and column.
    if (P.tiles > cr::AXIS_TICKETS)
      fail_msg("tickets: %s", what);
    const uint64_t slots = P.slices * batches * cols;
    if (slots * pb > cr::AXIS_PARTIAL_SLOTS * cr::AXIS_SLOT_BYTES)
      fail_msg("partial slots %llu: %s", (unsigned long long)slots, what);
  }
}

template <class Cols, int VEC> void sweep(uint64_t pb) {
  const uint64_t row_counts[] = {1,    2,    3,    7,    8,     31,    33,    64,      100,     520,     1024,
                                 1040, 4096, 4097, 8192, 32768, 65536, 98304, 1048576, 3000017, 16777216};
  const uint64_t col_counts[] = {1,  2,  3,   5,   8,    16,   17,   32,   33,    39,
                                 64, 96, 128, 256, 1000, 1024, 4096, 8192, 65536, 16777216};
  for (uint64_t b : {1, 2, 7, 4096, 8192, 100000})
    for (uint64_t r : row_counts)
      for (uint64_t c : col_counts)
        if ((c % VEC) == 0 && b * r * c <= (1ull << 33))
          check_plan<Cols, VEC>(b, r, c, pb);
}

void every_plan_fits_the_kernel_and_workspace(void **) {
  // VEC = 16 bytes of 1-, 2-, 4- and 8-byte elements, and one column a thread; partials of
  // 4, 8 and 16 bytes (f32, f64, an f64 value with its index).
  for (uint64_t pb : {4, 8, 16}) {
    sweep<cr::cols_policy<1>, 16>(pb);
    sweep<cr::cols_policy<2>, 8>(pb);
    sweep<cr::cols_policy<4>, 4>(pb);
    sweep<cr::cols_policy<8>, 2>(pb);
    sweep<cr::cols_policy<4>, 1>(pb);
  }
}

// The column and middle-axis shapes of `bench --rows`, f32 (VEC 4, and one column a thread) and
// bf16 (VEC 8) into f32 partials: the last block's fold stays within the tail budget unless the
// tile is the narrowest allowed. Prints the plans.
template <class Cols, int VEC> void bench_shapes_fold_within_budget(const char *name) {
  for (const bench::rows_shape &s : bench::ROWS_SHAPES) {
    if (s.rows == 0 || s.cols % VEC != 0)
      continue; // the segment mix; shapes the kernel runs one column a thread
    const cr::cols_plan P = cr::choose_cols_plan<Cols, VEC>(s.outer ? s.outer : 1, s.rows, s.cols, 4);
    const uint64_t fold_bytes = P.slices > 1 ? P.slices * P.tx * VEC * 4 : 0;
    printf("%s %llux%llux%llu: tx %llu ty %llu tiles %llu slices %llu (rows %llu), last fold %llu B\n", name,
           (unsigned long long)(s.outer ? s.outer : 1), (unsigned long long)s.rows,
           (unsigned long long)s.cols, (unsigned long long)P.tx, (unsigned long long)P.ty,
           (unsigned long long)P.tiles, (unsigned long long)P.slices, (unsigned long long)P.slice_rows,
           (unsigned long long)fold_bytes);
    if (fold_bytes > Cols::MAX_TAIL_BYTES && P.tx > Cols::MIN_TX)
      fail_msg("%s %llux%llu folds %llu bytes in one block", name, (unsigned long long)s.rows,
               (unsigned long long)s.cols, (unsigned long long)fold_bytes);
  }
}

void bench_shapes(void **) {
  bench_shapes_fold_within_budget<cr::cols_policy<4>, 4>("f32");
  bench_shapes_fold_within_budget<cr::cols_policy<2>, 8>("bf16");
  bench_shapes_fold_within_budget<cr::cols_policy<4>, 1>("f32, one column a thread");
}

// The pack width of a warp per matrix with few rows (choose_cols_pack), on the shapes that
// decided WARP_MIN_ROWS_PER_LANE (docs/design.md#columns): outer x rows x inner, with 16-byte
// and 4-byte packs allowed.
template <class Cols, uint64_t ELEM>
void expect_pack(uint64_t outer, uint64_t rows, uint64_t inner, bool vectors, bool packs, uint64_t want) {
  const uint64_t got = cr::choose_cols_pack<Cols, ELEM>(vectors, packs, outer, rows, inner);
  if (got != want)
    fail_msg("%llu-byte %llux%llux%llu: %llu columns a thread, want %llu", (unsigned long long)ELEM,
             (unsigned long long)outer, (unsigned long long)rows, (unsigned long long)inner,
             (unsigned long long)got, (unsigned long long)want);
}

void few_rows_take_narrower_packs(void **) {
  using B = cr::cols_policy<2>;
  using F = cr::cols_policy<4>;
  using E = cr::cols_policy<1>;
  using D = cr::cols_policy<8>;
  expect_pack<B, 2>(65536, 64, 8, true, true, 2);   // 16-byte packs: 2 rows a lane
  expect_pack<B, 2>(65536, 128, 8, true, true, 2);  // 4 rows a lane
  expect_pack<B, 2>(32768, 256, 8, true, true, 8);  // 8 rows a lane: the widest
  expect_pack<B, 2>(65536, 16, 8, true, true, 1);   // 4-byte packs would leave 2 rows a lane too
  expect_pack<B, 2>(65536, 64, 16, true, true, 2);  // 4 rows a lane with 16-byte packs
  expect_pack<B, 2>(65536, 64, 4, false, true, 1);  // 4-byte packs only: 4 rows a lane
  expect_pack<B, 2>(65536, 128, 4, false, true, 2); // 8 rows a lane
  expect_pack<B, 2>(4096, 64, 8, true, true, 8);    // too few matrices for a warp each
  expect_pack<B, 2>(65536, 4, 128, true, true, 8);  // one column a thread takes no warp per matrix
  expect_pack<F, 4>(65536, 64, 8, true, false, 1);
  expect_pack<F, 4>(65536, 128, 8, true, false, 4);
  expect_pack<F, 4>(65536, 128, 4, true, false, 1);
  expect_pack<F, 4>(65536, 64, 16, true, false, 4);
  expect_pack<E, 1>(65536, 64, 8, false, true, 1);
  expect_pack<E, 1>(65536, 64, 32, true, true, 4);
  expect_pack<D, 8>(65536, 64, 8, true, false, 2);
  expect_pack<D, 8>(65536, 32, 8, true, false, 1);
  expect_pack<D, 8>(65536, 128, 4, true, false, 2);
  // Never a pack the rows do not allow.
  for (uint64_t r : {1, 8, 64, 100, 1000})
    for (uint64_t c : {1, 2, 4, 8, 12, 16, 32, 64, 256}) {
      expect_pack<B, 2>(9000, r, c, false, false, 1);
      const uint64_t v = cr::choose_cols_pack<B, 2>(false, c % 2 == 0, 9000, r, c);
      if (v != 1 && v != 2)
        fail_msg("bf16 9000x%llux%llu: %llu columns a thread with 4-byte packs only", (unsigned long long)r,
                 (unsigned long long)c, (unsigned long long)v);
    }
}

// The exact sums' column cut (choose_exact_cols in exact_plan.h): a thread a column exactly
// for few rows and many columns; otherwise slices that cover the rows, none empty, at most
// one per EXACT_COLS_SLICE_ROWS rows, and, once sliced, no more (group, slice) items than the
// workspace has pairs, flags and set tickets for (set ticket group * sets + set, set < sets),
// sets of EXACT_COLS_SET_SLICES that cover the slices, and a group's sets fitting one
// block's gather (at most EXACT_COLS_SET_SLICES entries a set).
void exact_plans_fit_the_kernel_and_workspace(void **) {
  const uint64_t row_counts[] = {0,     1,      2,       64,      65,       128,       129,
                                 1000,  1024,   1088,    1100,    4000,     8192,      65536,
                                 98304, 131072, 1048576, 3000017, 16777216, 1ull << 32};
  const uint64_t column_counts[] = {1,     2,      31,         32,         33,        64,
                                    128,   1000,   1028,       16352,      16353,     16384,
                                    65536, 100000, 1ull << 20, 1ull << 24, 1ull << 31};
  for (uint64_t r : row_counts)
    for (uint64_t c : column_counts) {
      const cr::exact_cols_cut cut = cr::choose_exact_cols(c, r);
      char what[160];
      snprintf(what, sizeof what, "%llu columns of %llu rows: groups %llu slices %llu (%llu rows) sets %llu",
               (unsigned long long)c, (unsigned long long)r, (unsigned long long)cut.groups,
               (unsigned long long)cut.slices, (unsigned long long)cut.slice_rows,
               (unsigned long long)cut.sets);
      if (cut.groups != (c + 31) / 32)
        fail_msg("groups: %s", what);
      if (cut.thin != (r <= cr::EXACT_THIN_ROWS && cut.groups >= cr::EXACT_THIN_GROUPS_MIN))
        fail_msg("thin: %s", what);
      if (cut.thin)
        continue;
      if (!(cut.slices >= 1 && cut.slices * cut.slice_rows >= r &&
            (cut.slices - 1) * cut.slice_rows < r + (r == 0)))
        fail_msg("slices do not cover the rows: %s", what);
      if (cut.slices > 1 &&
          !(cut.slices <= (r + cr::EXACT_COLS_SLICE_ROWS - 1) / cr::EXACT_COLS_SLICE_ROWS &&
            cut.slices <= cr::EXACT_COLS_SLICES_MAX && cut.groups * cut.slices <= cr::EXACT_COLS_ITEMS_MAX &&
            cut.groups * cut.sets <= cr::EXACT_COLS_ITEMS_MAX))
        fail_msg("slices beyond the workspace or the rows: %s", what);
      if (!(cut.sets >= 1 && cut.sets * cr::EXACT_COLS_SET_SLICES >= cut.slices &&
            (cut.sets - 1) * cr::EXACT_COLS_SET_SLICES < cut.slices))
        fail_msg("sets: %s", what);
    }
}

// Long rows as full arrays (plan_rows' ROWS_FULL, full_blocks): taken exactly for rows at
// one 16-byte phase too long for a lane group, no more of them than the full-array grid cap
// (MAX_BLOCKS, or ARG_BLOCKS for the arg ops); then every row gets at least one block and no
// more than its tiles, and the rows' partials and tickets fit the axis workspace.
template <int ELEM> void check_full_rows() {
  using Rows = cr::rows_policy;
  using Full = cr::full_policy_for<ELEM>;
  constexpr uint64_t PER_TILE = (uint64_t)Full::BLOCK * Full::UNROLL * (16 / ELEM);
  const uint64_t lane_max = Rows::LANES_MAX_BYTES / ELEM; // the longest lane-group row
  const uint64_t row_counts[] = {1, 2, 8, 63, 64, 65, 383, 384, 385, 511, 512, 513, 1023, 1024, 1025, 2047};
  const uint64_t column_counts[] = {1, 1000, lane_max, lane_max + 1, 100000, 1ull << 24, 1ull << 31};
  const uint64_t caps[] = {(uint64_t)Full::MAX_BLOCKS, (uint64_t)Full::ARG_BLOCKS};
  for (uint64_t cap : caps)
    for (uint64_t r : row_counts)
      for (uint64_t c : column_counts)
        for (bool phase : {false, true}) {
          const cr::rows_plan P = cr::plan_rows<Rows, cr::chunked_policy, ELEM>(false, phase, cap, r, c);
          const bool full = phase && r <= cap && c * ELEM > Rows::LANES_MAX_BYTES;
          char what[120];
          snprintf(what, sizeof what, "%d-byte %llux%llu, phase %d, cap %llu: kernel %d", ELEM,
                   (unsigned long long)r, (unsigned long long)c, (int)phase, (unsigned long long)cap,
                   (int)P.kernel);
          if ((P.kernel == cr::ROWS_FULL) != full)
            fail_msg("ROWS_FULL taken or not as the rule says: %s", what);
          if (!full)
            continue;
          const uint64_t tiles = (c + PER_TILE - 1) / PER_TILE;
          const uint64_t b = cr::full_blocks(tiles, r, cap, Full::ONE_BLOCK_TILES);
          if (!(b >= 1 && b <= tiles && (tiles > (uint64_t)Full::ONE_BLOCK_TILES || b == 1) && r * b <= cap &&
                r * b <= cr::AXIS_PARTIAL_SLOTS && r <= cr::AXIS_TICKETS))
            fail_msg("%llu blocks a row of %llu tiles: %s", (unsigned long long)b, (unsigned long long)tiles,
                     what);
        }
}

void long_rows_as_full_arrays_fit_the_workspace(void **) {
  check_full_rows<1>();
  check_full_rows<2>();
  check_full_rows<4>();
  check_full_rows<8>();
}

} // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_plan_fits_the_kernel_and_workspace),
      cmocka_unit_test(bench_shapes),
      cmocka_unit_test(few_rows_take_narrower_packs),
      cmocka_unit_test(exact_plans_fit_the_kernel_and_workspace),
      cmocka_unit_test(long_rows_as_full_arrays_fit_the_workspace),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
