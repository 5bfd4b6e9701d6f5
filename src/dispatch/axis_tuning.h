/* Launch shapes of the row, column and segment kernels, as data. Layer: dispatch.
 *
 * Like the full-array table (tuning.h), nothing here is derived from the GPU: the choices
 * below fix the order of combination, so they may depend on the matrix shape and the element
 * size only. docs/performance.md records what these values measured. */
#ifndef CUREDUCE_AXIS_TUNING_H
#define CUREDUCE_AXIS_TUNING_H

#ifndef CUREDUCE_TUNING_VARIANT
#define CUREDUCE_TUNING_VARIANT 0
#endif
/* A lean tuning build (CMake -DCUREDUCE_TUNING_LEAN=1 with variant 99) compiles the release
   kernel templates only: the plan values read from the environment below still work, the
   template choices (unrolls, column block size, last-fold values) keep their release values.
   The full tuning build's arg-op file alone took over 10 minutes to compile on the device. */
#ifndef CUREDUCE_TUNING_LEAN
#define CUREDUCE_TUNING_LEAN 0
#endif

/* Threads per block of every axis kernel. */
#define CR_AXIS_BLOCK 256

/* Rows of at most CR_ROWS_LANES_MAX_BYTES are reduced by lane groups (reduce_rows_lanes.cuh),
   longer rows by the chunked kernel. A row of v 16-byte vectors gets a group of
   pow2_ceil(v / CR_ROWS_UNROLL) lanes, at least 2 once it has 2 vectors (so one load
   instruction of the group reads whole 32-byte sectors) and at most 32; each lane keeps
   CR_ROWS_UNROLL vectors in flight. */
#define CR_ROWS_UNROLL 4
/* Rows of at most CR_ROWS_SHORT_MAX_VECTORS (at most 32) whole 16-byte vectors, every row
   16-byte aligned, go to reduce_rows_short.cuh instead (one vector per lane,
   CR_ROWS_SHORT_UNROLL rows in flight per lane). Measured on an H100
   (tuning/axis_e_rows_short{0,8,32}): up to 8 vectors (128-byte rows) took bf16 1048576x32
   rows from 0.55 to 0.82 of the roofline and f32 from 0.89 to 0.93; up to 32 vectors made
   65536x128 rows slower (f32 0.76 -> 0.70, bf16 0.86 -> 0.60). 4 rows in flight per lane
   instead of 8 (tuning/rows_k_su{4,8}*, two runs each): bf16 1048576x32 rows 0.84/0.83 ->
   0.91/0.88, f32 0.92/0.92 -> 0.93/0.95; under Nsight Compute the bf16 kernel went from 116
   registers (2 blocks per SM) to 64 and from 30.7 to 26.2 us. */
#define CR_ROWS_SHORT_MAX_VECTORS 8
#define CR_ROWS_SHORT_UNROLL 4
/* Grids of the short-row and lane-group kernels (both loop beyond their grid; the grid does not
   change the order within a row). The short-row kernel takes at most CR_ROWS_SHORT_MAX_BLOCKS
   blocks; the lane-group kernel at most CR_ROWS_LANES_WAVES full waves of the GPU (its
   resident blocks, looked up once), so its warps each take several rows in turn instead of
   the GPU working through 4 to 6 waves of blocks that live for one pass each. Measured on an
   H100 (tuning/s4a_*, one tuning build, one run each; roofline fractions of the row sums, cap
   of 8192 blocks / one wave / two waves): bf16 32768x1024 0.884 / 0.931 / 0.916, f32 65536x128
   0.696 / 0.738 / 0.738, bf16 4096x4096 0.835 / 0.826 / 0.876, bf16 65536x128 0.734 / 0.713 /
   0.735, f32 32768x1024 0.995 / 0.972 / 0.969. Capping the short-row kernel too lost: f32
   1048576x32 rows 0.946 -> 0.877 / 0.897.
   One wave, not two, once the groups took fold_rounds: the warps then loop over their rows in
   blocks that stay resident. (Where the rows need less than a wave, the grid is every block
   they need either way, so the cap decides only shapes of more than one row set a warp.)
   Measured on an H100 (tuning/s7_rw_*, one lean tuning build, one and two waves for every
   lane-group shape, two runs each, roof fractions of the row sums): f32 65536x128 (3.1 sets a
   warp in one wave) 0.912/0.922 against 0.817/0.843; f32 32768x1024 (6.2) 0.977/0.978 against
   0.977/0.976; bf16 32768x1024 (6.2) 0.957/0.954 against 0.964/0.959; bf16 65536x128 (1.55)
   0.811/0.893 against 0.869/0.868, too noisy to tell, so from 9c2a8d8 to 3b97e5f that shape
   kept two waves (one wave only from two sets a warp). Timed at the GPU's pace in one process
   (scripts/rows_waves.cu, logs/rows_waves_s10.txt, three builds), its one wave took 5.200 /
   5.377 / 5.308 µs against 5.392 / 5.588 / 5.564 for every block (two waves). Before
   fold_rounds, one wave and two were level on f32 65536x128 (s4a, above). A grid of the fewest
   row sets a warp that one wave allows, spread evenly (the tuning build of commit a2d6a7e,
   CR_ROWS_BALANCED=1, since removed; tuning/s7_rb_*, three runs each against the rule) was
   level on f32 65536x128 (0.938/0.951/0.932 against 0.940/0.917/0.940) and slower on bf16
   65536x128 (0.790/0.780/0.699 against 0.822/0.786/0.825). */
#define CR_ROWS_SHORT_MAX_BLOCKS 8192
#define CR_ROWS_LANES_WAVES 1

/* Chunked kernel (long rows, segments): chunks are at least CR_CHUNK_MIN_BYTES, and there are
   at most CR_MAX_CHUNKS of them (larger inputs get larger chunks). */
#define CR_MAX_CHUNKS 8192
#define CR_CHUNK_UNROLL 4
/* Inside a chunk, pieces of at most 1/CR_CHUNK_SHORT of it (4 KiB in the smallest chunks: two
   rounds of 4 vectors a lane) are folded by one warp each; longer ones by every warp over its
   own contiguous slice of the chunk. */
#define CR_CHUNK_SHORT 64
/* The chunked kernel runs one full wave of blocks (the GPU's SMs times the blocks that fit on
   one: its result does not depend on the grid), each taking chunks in a grid-stride loop; this
   is the grid if that cannot be looked up. */
#define CR_CHUNK_GRID 1024

/* Candidates are built with -DCUREDUCE_TUNING_VARIANT=N (as for tuning.h) and compared with
   `cureduce bench --rows`; docs/history/rows.md records which won. */
#if CUREDUCE_TUNING_VARIANT == 2
/* Candidate: 8 vectors in flight per lane of the lane-group kernel (groups half as wide). */
#undef CR_ROWS_UNROLL
#define CR_ROWS_UNROLL 8
#endif

/* Measured on an H100 (bench/results/NVIDIA_H100_80GB_HBM3/tuning/, docs/history/rows.md): 8 vectors in
   flight per lane of the lane-group kernel instead of 4 was slower (1048576x32 f32 rows 0.63
   against 0.89 of the roofline). 256 KiB chunks against 64 KiB took long rows from 0.86 to
   0.96 of the roofline (f32 1024x65536) and 0.77 to 0.90 (bf16), and the segment mix from 0.75
   to 0.82 (f32); lane groups up to 32 KiB rows changed nothing measurable; 8 rows per column
   thread instead of 32 was slower. 4 rows in flight per column thread instead of 8 was faster
   for bf16 (1024x65536 columns 0.74 to 0.83: 46 registers a thread instead of 104) and slightly
   slower for f32, hence the unroll by element size. */
#define CR_ROWS_LANES_MAX_BYTES 16384
#define CR_CHUNK_MIN_BYTES 262144
/* Column threads fold at least CR_COLS_MIN_ROWS_PER_THREAD rows before the rows are cut into
   more slices, or half as many where that would leave fewer than CR_COLS_MIN_BLOCKS blocks
   (choose_cols_plan). Measured on an H100 (tuning/cols_p_slices, one tuning build, 32, 64 and
   128 rows, two runs each): 64 against 32 took f32 1048576x32 columns 0.857/0.853 ->
   0.909/0.906, f32 32768x1024 0.909/0.909 -> 0.942/0.935, f32 65536x128 0.694/0.704 ->
   0.725/0.721, bf16 32768x1024 0.848/0.854 -> 0.862/0.866; but bf16 65536x128 fell from
   0.561/0.517 to 0.455/0.453 with 64 blocks, hence the floor. 128 rows lost up to 0.2 (bf16
   4096x4096 0.68 -> 0.50). */
#define CR_COLS_MIN_ROWS_PER_THREAD 64
#define CR_COLS_MIN_BLOCKS 128
/* 8 rows in flight for 2-byte elements too since the one-barrier fold over ty (reduce_cols.cuh):
   measured on an H100 with scripts/cols_cost.cu (logs/cols_cost_s9_flat.txt, GPU-paced, roof
   fractions of bf16 sums, 4 against 8): 1048576x32 0.857 -> 0.874, 4096x4096 0.749 -> 0.772,
   32768x1024 0.906 and 65536x128 0.610 level, 16384x8192 0.961 -> 0.965, 1024x65536 0.956 ->
   0.953 (70 registers a thread instead of 48, and this shape has no slices). 1-byte elements
   (16 columns a thread) were not measured and keep 4. */
#define CR_COLS_UNROLL(ELEM) ((ELEM) >= 2 ? 8 : 4)

/* Columns: CR_COLS_UNROLL (above) is the vectors (rows) per thread in flight, by element size;
   CR_COLS_MIN_ROWS_PER_THREAD the least number of rows a thread folds before the rows are cut
   into more slices; here the number of blocks to aim for and the widest column tile in
   threads. Measured again on an H100 after the in-block tree and 16-byte partials
   (tuning/axis_f_cols_* to axis_i_cols_*): unroll 8 for 2-byte elements, 8 or 16 rows per
   thread, 2048 or 4096 target blocks and blocks of 512 or 1024 threads were all level or
   slower; more slices lengthen the last block's fold. */
#define CR_COLS_TARGET_BLOCKS 1024
#define CR_COLS_MAX_TX 32
/* Narrower column tiles, down to CR_COLS_MIN_TX threads, where that avoids row slices or keeps
   the partials each tile's last block folds within CR_COLS_MAX_TAIL_BYTES (choose_cols_plan in
   launch_axis.cuh). Measured on an H100 (tuning/cols_o_tx, one tuning build, tiles of at most
   8, 16, 32 and 64 threads, two runs each; roof fractions of the sums): f32 32768x1024 columns
   0.891 at 32 (64 KiB to fold) -> 0.925 at 16 (16 KiB); f32 65536x128 0.568 (128 KiB) -> 0.702
   at 8 (8 KiB); bf16 32768x1024 0.80 -> 0.845; bf16 1024x65536 0.883 (4 slices) -> 0.95 at 8
   (1024 tiles, no slices); f32 1024x65536 0.961 -> 0.988 at 16 (no slices). Narrower than needed
   costs: bf16 4096x4096 0.679 at 32 (16 KiB) against 0.629 at 8. */
#define CR_COLS_MIN_TX 8
#define CR_COLS_MAX_TAIL_BYTES 16384
/* Threads per block of the column kernel (a power of two, 256 to 1024). */
#define CR_COLS_BLOCK 256
/* Partial values each thread of a column tile's last block has in flight while it folds the
   tile's slices (loads issued before any is folded; compile time, it sizes registers). */
#ifndef CR_COLS_LAST_VALUES
#define CR_COLS_LAST_VALUES 16
#endif

#if CUREDUCE_TUNING_VARIANT == 99
/* Tuning build: CR_ROWS_SHORT_MAX_VECTORS comes from the environment (same name), so one build
   can measure several values; the column slicing, tile width, unroll and block size and the
   smallest chunk likewise (scripts/gpu-tune). Never the library's release values. */
#include <stdlib.h>
static inline unsigned long cr_tuning_env(const char *name, unsigned long fallback) {
  const char *v = getenv(name);
  return v && *v ? strtoul(v, NULL, 10) : fallback;
}
#undef CR_ROWS_SHORT_MAX_VECTORS
#define CR_ROWS_SHORT_MAX_VECTORS cr_tuning_env("CR_ROWS_SHORT_MAX_VECTORS", 8)
#undef CR_COLS_MIN_ROWS_PER_THREAD
#define CR_COLS_MIN_ROWS_PER_THREAD cr_tuning_env("CR_COLS_MIN_ROWS_PER_THREAD", 64)
#undef CR_COLS_TARGET_BLOCKS
#define CR_COLS_TARGET_BLOCKS cr_tuning_env("CR_COLS_TARGET_BLOCKS", 1024)
#undef CR_COLS_MAX_TX
#define CR_COLS_MAX_TX cr_tuning_env("CR_COLS_MAX_TX", 32)
#undef CR_COLS_MAX_TAIL_BYTES
#define CR_COLS_MAX_TAIL_BYTES cr_tuning_env("CR_COLS_MAX_TAIL_BYTES", 16384)
#undef CR_COLS_MIN_BLOCKS
#define CR_COLS_MIN_BLOCKS cr_tuning_env("CR_COLS_MIN_BLOCKS", 128)
/* The smallest chunk of the chunked kernel, in bytes (a multiple of 128: whole vectors in each
   warp's slice). */
#undef CR_CHUNK_MIN_BYTES
#define CR_CHUNK_MIN_BYTES cr_tuning_env("CR_CHUNK_MIN_BYTES", 262144)
/* The longest rows for the lane-group kernel; its unroll (4 or 8) and the row kernels' grids
   (CR_ROWS_WAVES full waves at most; 0: CR_ROWS_SHORT_MAX_BLOCKS blocks; unset: the release
   choice) are read in launch_axis.cuh. */
#undef CR_ROWS_LANES_MAX_BYTES
#define CR_ROWS_LANES_MAX_BYTES cr_tuning_env("CR_ROWS_LANES_MAX_BYTES", 16384)
/* The column unroll, block size and last-fold values in flight are template arguments:
   unrolls 4 and 8 with blocks of 256 and 512 threads (and 16 with 256) (1024 measured slower,
   tuning/axis_h_cols_*) and, with blocks of 256, 16, 32 or 64 values in flight are built; the
   environment picks one (unset: the release values). */
#define CR_COLS_UNROLL_TUNED(ELEM) cr_tuning_env("CR_COLS_UNROLL", CR_COLS_UNROLL(ELEM))
#define CR_COLS_BLOCK_TUNED cr_tuning_env("CR_COLS_BLOCK", CR_COLS_BLOCK)
#define CR_COLS_LAST_VALUES_TUNED cr_tuning_env("CR_COLS_LAST_VALUES", CR_COLS_LAST_VALUES)
#endif

/* Workspace of the axis kernels: partial slots (16 bytes each: the widest partial) and
   tickets. The chunked kernel uses 2 * CR_MAX_CHUNKS slots and CR_MAX_CHUNKS tickets; the
   column kernel slices * cols slots and one ticket per column tile. */
#define CR_AXIS_PARTIAL_SLOTS 262144
#define CR_AXIS_TICKETS 8192

#endif
