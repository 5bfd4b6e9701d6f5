/* The dist layer's kernels, as the C API (dist.c) calls them: each launches on stream and
 * returns CUDA when the launch failed. Defined in kernels.cu. */
#ifndef CUREDUCE_DIST_LAUNCH_H
#define CUREDUCE_DIST_LAUNCH_H

#include "combine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* This rank's partials, one per row, at d_mine[0 .. rows): count elements per row (or, where
   d_offsets is not NULL, d_offsets[i + 1] - d_offsets[i] for segment i, offsets on the device),
   and from the local results d_local (rows results of cr_dist_local_op(op, acc), as the
   single-GPU call wrote them; unread for an empty row) the value, or for arg ops the index and
   the key read from the input row i at d_in + i * ld elements (segment i at d_in +
   d_offsets[i]). */
cureduce_status cr_dist_launch_pack(cureduce_op op, cureduce_dtype in_dtype, cureduce_dtype acc,
                                    const void *d_in, uint64_t rows, uint64_t ld, int64_t count,
                                    const int64_t *d_offsets, const void *d_local, cr_dist_partial *d_mine,
                                    void *stream);

/* out[i] = cr_dist_combine over the world partials of row i (rank r's at d_all[r * rows + i]). */
cureduce_status cr_dist_launch_combine(cureduce_op op, cureduce_dtype acc, const cr_dist_partial *d_all,
                                       int world, uint64_t rows, void *d_out, void *stream);

/* *d_word = value, on stream. */
cureduce_status cr_dist_launch_store_u64(uint64_t *d_word, uint64_t value, void *stream);

#ifdef __cplusplus
}
#endif

#endif
