/* The dispatch layer's C interface: choose and launch a kernel for (op, dtype, accumulator,
 * size). Called by the C API after it has validated every argument. Layer: dispatch. */
#ifndef CUREDUCE_DISPATCH_H
#define CUREDUCE_DISPATCH_H

#include "cureduce.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Device workspace a handle must own for the full-array kernels, in bytes. */
size_t cr_full_workspace_bytes(void);

/* Launch the full-array reduction. Arguments are already validated (supported combination,
   device pointers, acc not DEFAULT). The workspace's counter must be zero on entry and is
   zero again when the kernel ends. Returns SUCCESS or CUDA (launch failure). */
cureduce_status cr_launch_full(cureduce_op op, cureduce_dtype in, cureduce_dtype acc, const void *d_in,
                               uint64_t n, void *d_out, void *d_workspace, void *stream);

/* Device workspace a handle must own for the row, column and segment kernels, in bytes; its
   tickets must be zero on entry and are zero again when a kernel ends. */
size_t cr_axis_workspace_bytes(void);

/* Row reductions (rows >= 1, cols >= 1, ld >= cols; validated by the caller): one result per
   row at d_out. */
cureduce_status cr_launch_rows(cureduce_op op, cureduce_dtype in, cureduce_dtype acc, const void *d_in,
                               uint64_t rows, uint64_t cols, uint64_t ld, void *d_out, void *d_workspace,
                               void *stream);

/* Column reductions (rows >= 1, cols >= 1, ld >= cols): one result per column at d_out. */
cureduce_status cr_launch_cols(cureduce_op op, cureduce_dtype in, cureduce_dtype acc, const void *d_in,
                               uint64_t rows, uint64_t cols, uint64_t ld, void *d_out, void *d_workspace,
                               void *stream);

/* outer x length x inner (outer, length, inner >= 1, validated): one result per (o, i) at d_out,
   a batch of outer column reductions of length x inner matrices. cr_launch_cols is the batch
   of one. */
cureduce_status cr_launch_axis(cureduce_op op, cureduce_dtype in, cureduce_dtype acc, const void *d_in,
                               uint64_t outer, uint64_t length, uint64_t inner, void *d_out,
                               void *d_workspace, void *stream);

/* Segment reductions (count >= 1): one result per segment at d_out; d_offsets holds count + 1
   non-decreasing element offsets on the device. */
cureduce_status cr_launch_segments(cureduce_op op, cureduce_dtype in, cureduce_dtype acc, const void *d_in,
                                   uint64_t count, const int64_t *d_offsets, void *d_out, void *d_workspace,
                                   void *stream);

/* --- Exact sums (SUM_EXACT, MEAN_EXACT; out is the output dtype) ---------------------------- */

/* Device workspace of the exact sums, a region of the full-array workspace (which
   cr_full_workspace_bytes counts it in): a state and a ticket, zero on entry and again when a
   launch ends. */
size_t cr_exact_workspace_bytes(void);

/* The one-call exact sum or mean of n elements into d_out. d_workspace: the full-array
   workspace, whose exact region holds the state. */
cureduce_status cr_launch_exact_full(cureduce_op op, cureduce_dtype in, cureduce_dtype out, const void *d_in,
                                     uint64_t n, void *d_out, void *d_workspace, void *stream);

/* Add n elements to a caller's state (the ticket is in the exact region of d_workspace, the
   full-array workspace). */
cureduce_status cr_launch_exact_accumulate(cureduce_dtype in, const void *d_in, uint64_t n, int64_t *d_state,
                                           void *d_workspace, void *stream);

/* d_state += d_other, word by word, then one carry step. */
cureduce_status cr_launch_exact_combine(int64_t *d_state, const int64_t *d_other, void *stream);

/* Add row i of the rows x cols matrix at d_in (leading dimension ld) to the i-th of rows
   states at d_states (the ticket, for rows that take a grid each, as in
   cr_launch_exact_accumulate). */
cureduce_status cr_launch_exact_accumulate_rows(cureduce_dtype in, const void *d_in, uint64_t rows,
                                                uint64_t cols, uint64_t ld, int64_t *d_states,
                                                void *d_workspace, void *stream);

/* Add segment s (d_in[d_offsets[s] .. d_offsets[s + 1]), offsets on the device) to the s-th of
   count states at d_states, for s < count (> 0). */
cureduce_status cr_launch_exact_accumulate_segments(cureduce_dtype in, const void *d_in, uint64_t count,
                                                    const int64_t *d_offsets, int64_t *d_states,
                                                    void *stream);

/* Round each of count states (op SUM_EXACT or MEAN_EXACT) into one element of out at d_out. */
cureduce_status cr_launch_exact_finish(cureduce_op op, const int64_t *d_states, uint64_t count,
                                       cureduce_dtype out, void *d_out, void *stream);

/* The bytes of the exact region of the axis workspace, at its end (its tickets zero when the
   handle is made; every launch leaves them so). */
size_t cr_exact_axis_workspace_bytes(void);

/* Rows, columns, axes and segments (arguments as cr_launch_rows, _cols, _axis and _segments;
   d_exact_workspace: the axis workspace's exact region). */
cureduce_status cr_launch_exact_rows(cureduce_op op, cureduce_dtype in, cureduce_dtype out, const void *d_in,
                                     uint64_t rows, uint64_t cols, uint64_t ld, void *d_out,
                                     void *d_exact_workspace, void *stream);
cureduce_status cr_launch_exact_cols(cureduce_op op, cureduce_dtype in, cureduce_dtype out, const void *d_in,
                                     uint64_t rows, uint64_t cols, uint64_t ld, void *d_out,
                                     void *d_exact_workspace, void *stream);
cureduce_status cr_launch_exact_axis(cureduce_op op, cureduce_dtype in, cureduce_dtype out, const void *d_in,
                                     uint64_t outer, uint64_t length, uint64_t inner, void *d_out,
                                     void *d_exact_workspace, void *stream);
cureduce_status cr_launch_exact_segments(cureduce_op op, cureduce_dtype in, cureduce_dtype out,
                                         const void *d_in, uint64_t count, const int64_t *d_offsets,
                                         void *d_out, void *d_exact_workspace, void *stream);

#ifdef __cplusplus
}
#endif

#endif
