/*
 * cureduce_nccl.h - one reduction over an array spread across GPUs, through NCCL.
 *
 * Part of the optional library cureduce_nccl (CMake: find_package(cureduce COMPONENTS nccl),
 * target cureduce::nccl or cureduce::nccl_static), built only where NCCL was found. It sits on
 * cureduce.h: the same ops, dtypes, accumulators and semantics, with the elements of one array
 * (or the columns of one matrix) split over the ranks of an NCCL communicator, one GPU each.
 *
 * How a result is made (docs/multi_gpu.md):
 *   - each rank reduces its own shard with the single-GPU call (cureduce_reduce or
 *     cureduce_reduce_rows) into a small fixed-size partial;
 *   - the partials of all ranks are all-gathered, and every rank combines them on its GPU in
 *     rank order, so every rank writes the same bits, and the same sharding gives the same bits
 *     on every run. Rank r's shard is taken to follow rank r - 1's: the global order of the
 *     elements is rank 0's, then rank 1's, and so on;
 *   - SUM_EXACT and MEAN_EXACT instead all-reduce the ranks' exact states (ncclInt64 sums) and
 *     round once: the same bits for any number of ranks and any sharding, the same as
 *     cureduce_reduce over the whole array on one GPU.
 * Per op: MIN, MAX and ABSMAX give the value cureduce_reduce gives over the whole array (NaN
 * and -0.0 rules included), and integer sums too (they wrap alike). ARGMIN and ARGMAX give the
 * global index (the elements of lower ranks plus the local index) of the first winner over the
 * whole array: a NaN wins and the first NaN's index is returned; ties go to the lowest global
 * index. Float SUM and SUMSQ add the ranks' partial sums (each in the accumulator) in double in
 * rank order (each addition rounds to double, as any) and round the total once into the
 * accumulator; MEAN adds the ranks' sums alike (into f32, f16 and bf16, each rank's local mean
 * times its count) and divides by the global count before its one rounding. With one rank every result is
 * cureduce_reduce's, bit for bit.
 *
 * Collective calls. cureduce_dist_reduce, _reduce_rows, _reduce_segments and _count are NCCL
 * collectives: every rank of the communicator must make the same calls in the same order,
 * with the same op, dtypes and global sizes (only the local pointers and sizes differ). The
 * arguments are checked before anything is launched; an error that only some ranks see (a NULL
 * or host pointer on one rank, say) returns there before the collective and leaves the other
 * ranks waiting in NCCL, as any NCCL collective does (ncclCommAbort ends the wait); so do
 * ranks that pass different ops or sizes. A failed NCCL call returns CUREDUCE_ERROR_CUDA
 * (ncclGetLastError says why). The communicator must be a blocking one (NCCL's default): a
 * collective that answers ncclInProgress is reported as CUREDUCE_ERROR_CUDA too.
 *
 * Empty shards and empty arrays. A rank may hold no elements (n_local == 0; d_in may then be
 * NULL). The status must be the same on every rank, so the global element count is an
 * argument, known on the host: an all-empty array (n_global == 0) then follows cureduce.h's
 * rule on every rank without any communication (SUM, SUMSQ and SUM_EXACT write zero, the
 * other ops return CUREDUCE_EMPTY and write nothing). A program that does not know the global
 * count calls cureduce_dist_count once, when it shards its data (that call waits for the GPU).
 *
 * Streams. The reductions are asynchronous on stream, allocate nothing and never synchronize
 * the host. One dist object serves one stream at a time, like a handle.
 *
 * NVLink SHARP (multicast): the library sets no NCCL variable. Where the GPUs are shared, or
 * as on the machines this library is tested on, start programs with NCCL_NVLS_ENABLE=0.
 */
#ifndef CUREDUCE_NCCL_H
#define CUREDUCE_NCCL_H

#include "cureduce.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Opaque: a communicator, a handle, and the device buffers for the partials. */
typedef struct cureduce_dist_s *cureduce_dist;

/* Create a distributed reducer over the NCCL communicator nccl_comm (an ncclComm_t, passed as a
   pointer so this header needs no NCCL header) on the current CUDA device, which must be the
   communicator's (else INVALID_VALUE). handle is a cureduce handle of that device, used for
   the local reductions: both stay the caller's, and must outlive the dist object. Allocates
   the partials for full arrays and for one row; not a collective. *dist is NULL on failure.
   Every later call on the dist object (destroy and cureduce_dist_reserve_rows included, which
   allocate and free on the current device) is made with that device current. */
CUREDUCE_API cureduce_status cureduce_dist_create(cureduce_dist *dist, void *nccl_comm,
                                                  cureduce_handle handle);

/* Free the dist object's device buffers (waits for the device). NULL is a no-op. The
   communicator and the handle are left alone. */
CUREDUCE_API cureduce_status cureduce_dist_destroy(cureduce_dist dist);

/* This rank's number and the number of ranks of the dist object's communicator. */
CUREDUCE_API cureduce_status cureduce_dist_rank(cureduce_dist dist, int *rank, int *world);

/* Collective, synchronous: the sum of n_local over all ranks, written to *n_global (host
   memory) on every rank. Waits for stream: call it when sharding, not per reduction. A total
   of 2^64 or more is INVALID_VALUE on every rank, with *n_global left alone. */
CUREDUCE_API cureduce_status cureduce_dist_count(cureduce_dist dist, uint64_t n_local, uint64_t *n_global,
                                                 void *stream);

/* Collective: op over the concatenation, in rank order, of every rank's n_local elements of
   in_dtype at its device pointer d_in, accumulating in acc_dtype; every rank gets the result
   at its device pointer d_out, as cureduce_reduce writes it (one acc_dtype value, or an
   int64 global index for ARGMIN/ARGMAX). n_global is the sum of n_local over all ranks, the
   same on every rank: it decides the empty status (see above) and is checked only against
   n_local (n_local > n_global is INVALID_VALUE); a wrong n_global is undefined behaviour.
   Every op, dtype and accumulator of cureduce_reduce is offered. */
CUREDUCE_API cureduce_status cureduce_dist_reduce(cureduce_dist dist, cureduce_op op, cureduce_dtype in_dtype,
                                                  const void *d_in, uint64_t n_local, uint64_t n_global,
                                                  cureduce_dtype acc_dtype, void *d_out, void *stream);

/* --- Matrices whose columns are split over the ranks ------------------------------------ */
/*
 * Each rank holds rows x cols_local elements of one rows x cols_global matrix (cureduce.h's
 * layout: element (i, j) at d_in[i * ld + j], ld >= cols_local); rank r's columns follow rank
 * r - 1's. One result per row over all the columns, on every rank: out[i] as
 * cureduce_reduce_rows writes it, arg ops giving the global column. The partials take
 * 24 bytes per row per rank, and an exact state of 640 bytes per row, on every GPU, sized once
 * by cureduce_dist_reserve_rows. The exact sums all-reduce one state per row: each row's bits
 * are those of cureduce_reduce_rows over the whole matrix on one GPU, for any split.
 */

/* Make room for reductions of up to max_rows rows, or segments (allocates; waits for the
   device). Not a collective, but every rank needs it before its first
   cureduce_dist_reduce_rows or cureduce_dist_reduce_segments of more than one row. */
CUREDUCE_API cureduce_status cureduce_dist_reserve_rows(cureduce_dist dist, uint64_t max_rows);

/* Collective: out[i] = op over row i of the whole matrix, for i < rows (rows results at the
   device pointer d_out). rows and cols_global (the sum of cols_local over the ranks) must be
   the same on every rank. rows beyond the reserved rows, ld < cols_local, or cols_local >
   cols_global is INVALID_VALUE, and so is a d_out that overlaps this rank's matrix, as in
   cureduce_reduce_rows, with any number of ranks. rows == 0 writes nothing; cols_global == 0 makes every row
   empty, as cureduce_reduce_rows does with cols == 0. */
CUREDUCE_API cureduce_status cureduce_dist_reduce_rows(cureduce_dist dist, cureduce_op op,
                                                       cureduce_dtype in_dtype, const void *d_in,
                                                       uint64_t rows, uint64_t cols_local, uint64_t ld,
                                                       uint64_t cols_global, cureduce_dtype acc_dtype,
                                                       void *d_out, void *stream);

/* --- Segments whose elements are split over the ranks ------------------------------------ */
/*
 * Each rank holds a piece of each of num_segments segments, described as cureduce_reduce_segments
 * describes segments: num_segments + 1 non-decreasing int64 offsets at the device pointer
 * d_offsets, this rank's own, into this rank's d_in. Segment s of the whole array is the
 * concatenation of the ranks' pieces of it in rank order (a piece may be empty). One result per
 * segment, on every rank: out[s] as cureduce_reduce_segments writes it over the whole segment,
 * arg ops giving the index within the whole segment. The exact sums all-reduce one state per
 * segment: each segment's bits are those of cureduce_reduce_segments on one GPU, for any split.
 * A segment with no elements on any rank gets 0 for SUM, SUMSQ and SUM_EXACT, NaN for
 * MEAN_EXACT with any number of ranks (its state is rounded as cureduce_exact_finish_rows rounds
 * an empty one; cureduce_reduce_segments leaves it untouched), and is left untouched by the
 * other ops. The buffers are those of the rows: num_segments beyond the rows reserved by
 * cureduce_dist_reserve_rows is INVALID_VALUE, and so is a d_out that overlaps d_offsets. num_segments must
 * be the same on every rank, and d_in a device pointer even on a rank whose pieces are all empty (it is then
 * not read). The offsets are not checked (decreasing or negative ones are undefined behaviour).
 */
CUREDUCE_API cureduce_status cureduce_dist_reduce_segments(cureduce_dist dist, cureduce_op op,
                                                           cureduce_dtype in_dtype, const void *d_in,
                                                           uint64_t num_segments, const int64_t *d_offsets,
                                                           cureduce_dtype acc_dtype, void *d_out,
                                                           void *stream);

#ifdef __cplusplus
}
#endif

#endif /* CUREDUCE_NCCL_H */
