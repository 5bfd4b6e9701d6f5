/* Launch shapes of the full-array kernel, as data. Layer: dispatch.
 *
 * One row per input element size (the 16-byte vector holds 16 / size elements, so rows differ
 * mainly in how much arithmetic a vector costs). max_blocks caps the grid: it is a constant,
 * never derived from the GPU, because the grid size fixes the order of combination and so the
 * bits of a float result (the same on every GPU).
 *
 * 1024 blocks of 256 threads fit in one wave on a 132-SM H100/H200 (8 blocks of 256 per SM:
 * 100 SMs get 8 and 32 get 7).
 * Candidate tables are built with -DCUREDUCE_TUNING_VARIANT=N (CMake cache variable of the same
 * name) and compared with `cureduce-bench`; docs/performance.md records which one won. */
#ifndef CUREDUCE_TUNING_H
#define CUREDUCE_TUNING_H

typedef struct cr_full_tuning {
  int elem_size;  /* input element size in bytes */
  int block;      /* threads per block */
  int unroll;     /* 16-byte vectors per thread per tile */
  int max_blocks; /* grid cap; also sizes the handle's partials workspace */
  int arg_blocks; /* grid cap of ARGMIN/ARGMAX (at most max_blocks) */
} cr_full_tuning;

#ifndef CUREDUCE_TUNING_VARIANT
#define CUREDUCE_TUNING_VARIANT 0
#endif

#if CUREDUCE_TUNING_VARIANT == 1
/* Candidate: 8 vectors (128 bytes) in flight per thread for 2-, 4- and 8-byte elements. */
#define CR_FULL_TUNING_TABLE(X)                                                                 \
  X(1, 256, 4, 1024, 1024)                                                                      \
  X(2, 256, 8, 1024, 1024)                                                                      \
  X(4, 256, 8, 1024, 1024)                                                                      \
  X(8, 256, 8, 1024, 1024)
#elif CUREDUCE_TUNING_VARIANT == 2
/* Candidate: 1056 blocks, 8 on each of the 132 SMs of an H100/H200 (1024 leaves 32 SMs with 7).
   Measured level with 1024 on the H100 (tuning/full_grid_1024_vs_1056: two alternating runs
   each, every n >= 2^26 within 0.015 of the roofline), so 1024 stays. */
#define CR_FULL_TUNING_TABLE(X)                                                                 \
  X(1, 256, 4, 1056, 1056)                                                                      \
  X(2, 256, 4, 1056, 1056)                                                                      \
  X(4, 256, 4, 1056, 1056)                                                                      \
  X(8, 256, 4, 1056, 1056)
#else
/* arg_blocks: the arg ops' kernels need 40 to 48 registers a thread, so 5 or 6 blocks fit on
   an SM, not 8, and 1024 blocks ran as one and a half waves. Measured on the H100 with
   argmax at 2^26, two runs each (tuning/full_arg_grid*, tuning build variant 3):
   cap 1024 -> 512 -> 384 -> 256: e4m3 0.79 -> 0.84 -> 0.86 -> 0.86, i8 0.82 -> 0.86 -> 0.87 ->
   0.87, f16 0.90 -> 0.92 -> 0.92 -> 0.91, f32 0.95 -> 0.96 -> 0.96 -> 0.95, f64 0.97 -> 0.99
   -> 0.98 -> 0.95 of the read roofline (2^28: e4m3 0.94 -> 0.95 -> 0.96 -> 0.94). */
#define CR_FULL_TUNING_TABLE(X)                                                                 \
  X(1, 256, 4, 1024, 384)                                                                       \
  X(2, 256, 4, 1024, 384)                                                                       \
  X(4, 256, 4, 1024, 384)                                                                       \
  X(8, 256, 4, 1024, 512)
#endif

#if CUREDUCE_TUNING_VARIANT == 3
/* Tuning build: the arg ops' grid cap from the environment (CR_FULL_ARG_BLOCKS; unset: the
   table's). */
#include <stdlib.h>
static inline int cr_full_arg_blocks(int table_value) {
  const char *v = getenv("CR_FULL_ARG_BLOCKS");
  return v && *v ? atoi(v) : table_value;
}
#else
#define cr_full_arg_blocks(table_value) (table_value)
#endif

/* The largest max_blocks of the table: the partials workspace the handle allocates. */
#if CUREDUCE_TUNING_VARIANT == 2
#define CR_FULL_MAX_BLOCKS 1056
#else
#define CR_FULL_MAX_BLOCKS 1024
#endif

#endif
