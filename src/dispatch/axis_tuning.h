/* Launch shapes of the row, column and segment kernels, as data. Layer: dispatch.
 *
 * Like the full-array table (tuning.h), nothing here is derived from the GPU: the choices
 * below fix the order of combination, so they may depend on the matrix shape and the element
 * size only. docs/performance.md records what these values measured. */
#ifndef CUREDUCE_AXIS_TUNING_H
#define CUREDUCE_AXIS_TUNING_H

/* Threads per block of every axis kernel. */
#define CR_AXIS_BLOCK 256

/* Rows: a row of at most this many 16-byte vectors is reduced by a group of lanes (the
   smallest power of two >= its vector count), longer rows by the chunked kernel. */
#define CR_ROWS_GROUPED_MAX_VECTORS 32
/* Rows whose first vector a lane loads before folding any (reduce_rows_grouped.cuh). */
#define CR_ROWS_IN_FLIGHT 4
/* Grid cap of the grouped kernel (it loops beyond). */
#define CR_ROWS_GROUPED_MAX_BLOCKS 8192

/* Chunked kernel (long rows, segments): chunks are at least this many bytes, and there are at
   most CR_MAX_CHUNKS of them (larger inputs get larger chunks). */
#define CR_CHUNK_MIN_BYTES 65536
#define CR_MAX_CHUNKS 8192
#define CR_CHUNK_UNROLL 4
/* Blocks of the chunked kernel; each takes chunks in a grid-stride loop. */
#define CR_CHUNK_GRID 1024

/* Columns: vectors (rows) per thread in flight, the number of blocks to aim for, the least
   number of rows a thread folds before the rows are cut into more slices, and the widest
   column tile in threads. */
#define CR_COLS_UNROLL 8
#define CR_COLS_TARGET_BLOCKS 1024
#define CR_COLS_MIN_ROWS_PER_THREAD 32
#define CR_COLS_MAX_TX 32

/* Workspace of the axis kernels: partial slots (16 bytes each: the widest partial) and
   tickets. The chunked kernel uses 2 * CR_MAX_CHUNKS slots and CR_MAX_CHUNKS tickets; the
   column kernel slices * cols slots and one ticket per column tile. */
#define CR_AXIS_PARTIAL_SLOTS 262144
#define CR_AXIS_TICKETS 8192

#endif
