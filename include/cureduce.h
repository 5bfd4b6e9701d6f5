/*
 * cureduce.h - GPU reductions (sum, min, max, ...) over device arrays.
 *
 * This header is the whole public surface and its reference manual. It is plain C: enums,
 * an opaque handle and functions that return a cureduce_status. The library never prints,
 * never exits and never aborts; every failure is a status, and on failure nothing is written
 * to the caller's output.
 *
 * Semantics shared by every reduction:
 *   - n = 0: SUM, SUMSQ and SUM_EXACT write 0 (+0.0 for floats). MIN, MAX, ABSMAX, ARGMIN,
 *     ARGMAX, MEAN and MEAN_EXACT return CUREDUCE_EMPTY and leave the output untouched.
 *   - NaN: MIN and MAX propagate NaN (as NumPy and PyTorch do). SUM follows IEEE 754: any NaN,
 *     or +inf together with -inf, gives NaN.
 *   - -0.0, +-inf and subnormals behave as IEEE 754 says: the sum of only -0.0 values is -0.0;
 *     MIN(-0.0, +0.0) is -0.0 and MAX(-0.0, +0.0) is +0.0; subnormals are not flushed. ARGMIN
 *     and ARGMAX compare by value, so -0.0 and +0.0 tie and the first of them is chosen.
 *   - Integer sums wrap modulo 2^bits of the accumulator (two's complement).
 *   - Sizes: an input whose elements span 2^63 bytes or more (n elements, a matrix's extent,
 *     an axis's shape, a segment's end on the CPU), or outputs that would (2^60 or more results
 *     of a matrix, an axis or segments), is INVALID_VALUE: no memory holds it, and its byte
 *     offsets would wrap.
 *   - The result is written in the accumulator dtype, except ARGMIN and ARGMAX, which write
 *     an int64_t index (the accumulator then only sets the precision of the comparison).
 *     Floating-point GPU results are deterministic: the same input, n and dtype at the same
 *     alignment (address mod 16) give the same bits on every run and on every GPU.
 *
 * Default accumulators (pass CUREDUCE_ACC_DEFAULT to use them):
 *   f16, bf16, fp8 -> f32;  f32 -> f32;  f64 -> f64;  i8, i32, i64 -> i64;
 *   except MEAN of integers -> f64 (an integer mean would truncate; MEAN refuses integer
 *   accumulators).
 * Other accepted accumulators: f16 with f16, bf16 with bf16, fp8 with f16, i8 with i32, and any
 * input with f64. cureduce_supported() tells whether a combination is accepted.
 *
 * Exact sums. CUREDUCE_SUM_EXACT and CUREDUCE_MEAN_EXACT take float inputs (f32, f64, f16,
 * bf16, e4m3, e5m2) and compute the exact sum of the elements (for MEAN_EXACT, the exact sum
 * divided by n), rounded once, to nearest with ties to even, into the accumulator dtype, which
 * is here the output dtype: F64, F32 or the input's own dtype (by default the input's default
 * accumulator). Nothing is lost before that one rounding, so the result does not depend on
 * the order of the elements, how they were split, the launch shape or the GPU, and the GPU
 * gives the same bits as the CPU. NaN and infinities follow IEEE 754 as if the sum had
 * unbounded range and precision: any NaN, or +inf with -inf, gives NaN; otherwise an infinity
 * gives itself; a finite sum beyond the output's range rounds to an infinity (to NaN for e4m3,
 * which has none). An exact zero is -0.0 only when every element was -0.0. Integer inputs are
 * UNSUPPORTED (their sums are exact already). Every function that takes an op takes them.
 */
#ifndef CUREDUCE_H
#define CUREDUCE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Marks the public functions: the shared library is built with every other symbol hidden, so
   it exports these and nothing else. Consumers need not define anything. */
#if defined(CUREDUCE_BUILDING) && defined(__GNUC__)
#define CUREDUCE_API __attribute__((visibility("default")))
#else
#define CUREDUCE_API
#endif

#define CUREDUCE_VERSION_MAJOR 0
#define CUREDUCE_VERSION_MINOR 1
#define CUREDUCE_VERSION_PATCH 0
/* One integer that grows with every release: 10000 * major + 100 * minor + patch. */
#define CUREDUCE_VERSION                                                                                     \
  (CUREDUCE_VERSION_MAJOR * 10000 + CUREDUCE_VERSION_MINOR * 100 + CUREDUCE_VERSION_PATCH)

/* Status codes. The values are fixed and will not change between releases. */
typedef enum cureduce_status {
  CUREDUCE_SUCCESS = 0,
  CUREDUCE_EMPTY = 1,                 /* zero elements, an op without a value for them: untouched */
  CUREDUCE_ERROR_NULL_POINTER = 2,    /* a required pointer argument is NULL */
  CUREDUCE_ERROR_INVALID_DTYPE = 3,   /* a dtype value outside the enum */
  CUREDUCE_ERROR_INVALID_OP = 4,      /* an op value outside the enum */
  CUREDUCE_ERROR_UNSUPPORTED = 5,     /* a valid (op, dtype, accumulator) not offered */
  CUREDUCE_ERROR_HOST_POINTER = 6,    /* host memory passed where device memory is required */
  CUREDUCE_ERROR_NO_DEVICE = 7,       /* no CUDA device, or no usable driver */
  CUREDUCE_ERROR_CUDA = 8,            /* a CUDA runtime call failed (kernel launch included) */
  CUREDUCE_ERROR_OUT_OF_MEMORY = 9,   /* a device or host allocation failed */
  CUREDUCE_ERROR_INVALID_HANDLE = 10, /* NULL or destroyed handle */
  CUREDUCE_ERROR_INVALID_VALUE = 11   /* another argument out of range, or outputs overlap inputs */
} cureduce_status;

/* Element types. The values are fixed; new types get new values at the end. */
typedef enum cureduce_dtype {
  CUREDUCE_F32 = 0,
  CUREDUCE_F64 = 1,
  CUREDUCE_F16 = 2,     /* IEEE binary16 */
  CUREDUCE_BF16 = 3,    /* bfloat16 */
  CUREDUCE_F8_E4M3 = 4, /* OCP fp8 e4m3 (finite only: no inf, one NaN pattern per sign) */
  CUREDUCE_F8_E5M2 = 5, /* OCP fp8 e5m2 (IEEE-like: inf and NaN) */
  CUREDUCE_I8 = 6,
  CUREDUCE_I32 = 7,
  CUREDUCE_I64 = 8,
  CUREDUCE_DTYPE_COUNT = 9, /* not a dtype: the number of dtypes */
  CUREDUCE_ACC_DEFAULT = -1 /* as an accumulator: the input dtype's default accumulator */
} cureduce_dtype;

/* Reduction operations. The values are fixed; new ops get new values at the end. */
typedef enum cureduce_op {
  CUREDUCE_SUM = 0,
  CUREDUCE_MIN = 1,
  CUREDUCE_MAX = 2,
  CUREDUCE_ABSMAX = 3,     /* max |x| (fp8 scaling); NaN propagates; |INT64_MIN| wraps to itself */
  CUREDUCE_SUMSQ = 4,      /* sum of x*x, each square rounded in the accumulator (norms) */
  CUREDUCE_ARGMIN = 5,     /* index of the first minimum, written as int64_t; a NaN wins, and the
                              first NaN's index is returned */
  CUREDUCE_ARGMAX = 6,     /* index of the first maximum, written as int64_t; NaN as for ARGMIN */
  CUREDUCE_MEAN = 7,       /* sum / n, the division rounded once in the accumulator */
  CUREDUCE_SUM_EXACT = 8,  /* the exact sum rounded once: see "Exact sums" below */
  CUREDUCE_MEAN_EXACT = 9, /* the exact sum divided by n, rounded once: see "Exact sums" */
  CUREDUCE_OP_COUNT = 10   /* not an op: the number of ops */
} cureduce_op;

/* Opaque handle: owns the device workspace of one CUDA device. */
typedef struct cureduce_handle_s *cureduce_handle;

/* --- Library information ---------------------------------------------------------------- */

/* The library's CUREDUCE_VERSION, which may differ from the header's when linked dynamically. */
CUREDUCE_API int cureduce_version(void);

/* A constant sentence describing the status; never NULL, also for unknown values. */
CUREDUCE_API const char *cureduce_status_string(cureduce_status status);

/* A constant short name ("f32", "bf16", ...) or NULL when dtype is not a cureduce_dtype. */
CUREDUCE_API const char *cureduce_dtype_name(cureduce_dtype dtype);

/* A constant short name ("sum", "min", "argmax", ...) or NULL when op is not a cureduce_op. */
CUREDUCE_API const char *cureduce_op_name(cureduce_op op);

/* Size in bytes of one element of dtype, or 0 when dtype is not a cureduce_dtype. */
CUREDUCE_API size_t cureduce_dtype_size(cureduce_dtype dtype);

/* The value of one element of dtype at value (host memory), exactly as a double; integers
   beyond 2^53 in magnitude are rounded. */
CUREDUCE_API cureduce_status cureduce_to_double(cureduce_dtype dtype, const void *value, double *out);

/* x rounded to nearest even, once, into one element of dtype at value (host memory); fp8
   saturates to its largest finite value, f16 and bf16 overflow to infinity. Integers truncate
   toward zero and saturate; NaN into an integer is INVALID_VALUE. */
CUREDUCE_API cureduce_status cureduce_from_double(cureduce_dtype dtype, double x, void *value);

/* Parse a dtype name as cureduce_dtype_name() prints it; INVALID_DTYPE when unknown. */
CUREDUCE_API cureduce_status cureduce_dtype_from_name(const char *name, cureduce_dtype *dtype);

/* Parse an op name as cureduce_op_name() prints it; INVALID_OP when unknown. */
CUREDUCE_API cureduce_status cureduce_op_from_name(const char *name, cureduce_op *op);

/* The default accumulator of in_dtype written to *acc; INVALID_DTYPE when unknown. */
CUREDUCE_API cureduce_status cureduce_default_acc(cureduce_dtype in_dtype, cureduce_dtype *acc);

/* The accumulator op uses for in_dtype when given acc_dtype (which may be DEFAULT): *acc is
   acc_dtype itself, or the default for (op, in_dtype). Any status cureduce_supported gives. */
CUREDUCE_API cureduce_status cureduce_resolve_acc(cureduce_op op, cureduce_dtype in_dtype,
                                                  cureduce_dtype acc_dtype, cureduce_dtype *acc);

/* Size in bytes of the result op writes with accumulator acc_dtype (8 for ARGMIN/ARGMAX); 0 for
   an unknown op or dtype (CUREDUCE_ACC_DEFAULT included), as cureduce_dtype_size. */
CUREDUCE_API size_t cureduce_result_size(cureduce_op op, cureduce_dtype acc_dtype);

/* SUCCESS when (op, in_dtype, acc_dtype) is offered, else the status a reduce would return.
   acc_dtype may be CUREDUCE_ACC_DEFAULT. */
CUREDUCE_API cureduce_status cureduce_supported(cureduce_op op, cureduce_dtype in_dtype,
                                                cureduce_dtype acc_dtype);

/* --- GPU reductions ------------------------------------------------------------------------ */

/* Create a handle on the current CUDA device and allocate its workspace there.
   NO_DEVICE when there is no usable GPU; *handle is NULL on failure. */
CUREDUCE_API cureduce_status cureduce_create(cureduce_handle *handle);

/* Free the handle and its workspace (synchronizes the device first). NULL is a no-op. */
CUREDUCE_API cureduce_status cureduce_destroy(cureduce_handle handle);

/* Reduce n elements of in_dtype at device pointer d_in with op, accumulating in acc_dtype, and
   write one acc_dtype value to device pointer d_out. Asynchronous on stream (0 = legacy default
   stream); allocates nothing and never synchronizes, so it can be captured in a CUDA graph.
   One handle serves one stream at a time: calls on different streams need different handles.
   d_in may have any alignment of its element size. Errors are returned before anything is
   launched; a failed launch returns CUDA. */
CUREDUCE_API cureduce_status cureduce_reduce(cureduce_handle handle, cureduce_op op, cureduce_dtype in_dtype,
                                             const void *d_in, uint64_t n, cureduce_dtype acc_dtype,
                                             void *d_out, void *stream);

/* As cureduce_reduce, then wait for stream and copy the result to host memory h_out
   (cureduce_result_size bytes). Convenience only: it synchronizes the stream. */
CUREDUCE_API cureduce_status cureduce_reduce_to_host(cureduce_handle handle, cureduce_op op,
                                                     cureduce_dtype in_dtype, const void *d_in, uint64_t n,
                                                     cureduce_dtype acc_dtype, void *h_out, void *stream);

/* --- Reductions along one axis, and over segments ----------------------------------------- */
/*
 * A matrix is rows x cols elements in row-major order with a leading dimension: element (i, j)
 * is d_in[i * ld + j], ld >= cols (in elements). Rows of a C array have ld == cols; a view of
 * columns out of a wider array has ld > cols. d_in needs only its element size's alignment,
 * and rows may start at any alignment. Results are written next to each other at d_out
 * (cureduce_result_size bytes each). Outputs that overlap the input (its extent, gaps between
 * rows included) or a segmented call's offsets are INVALID_VALUE, on the CPU and the GPU; the
 * GPU's segmented call cannot see the input's extent (its offsets are in device memory), so
 * there an output inside the segments' elements is the caller's to avoid.
 *
 * Every op and accumulator of cureduce_reduce is offered, with its semantics applied to each
 * row, column or segment: NaN, -0.0 and integer wrapping alike; ARGMIN/ARGMAX give the index
 * within the row (the column number), the column (the row number) or the segment. Results
 * are deterministic: the same input, shape and alignment give the same bits on every run and
 * every GPU. Asynchronous on stream, no allocation, capturable in a CUDA graph; one handle
 * serves one stream at a time.
 *
 * Empty rows or columns: with cols == 0 (rows) or rows == 0 (columns) every reduction is empty:
 * SUM, SUMSQ and SUM_EXACT write zeros, the other ops return CUREDUCE_EMPTY and write nothing. No rows
 * (rows == 0 for cureduce_reduce_rows, cols == 0 for cureduce_reduce_cols) writes nothing and
 * returns SUCCESS. ld < cols, or an extent ((rows - 1) * ld + cols elements) of 2^63 bytes or
 * more, is INVALID_VALUE.
 */

/* One result per row: out[i] = op over d_in[i * ld + 0 .. i * ld + cols - 1] (rows results;
   numpy's axis=1). */
CUREDUCE_API cureduce_status cureduce_reduce_rows(cureduce_handle handle, cureduce_op op,
                                                  cureduce_dtype in_dtype, const void *d_in, uint64_t rows,
                                                  uint64_t cols, uint64_t ld, cureduce_dtype acc_dtype,
                                                  void *d_out, void *stream);

/* One result per column: out[j] = op over d_in[0 * ld + j], d_in[1 * ld + j], ...
   (cols results; numpy's axis=0). */
CUREDUCE_API cureduce_status cureduce_reduce_cols(cureduce_handle handle, cureduce_op op,
                                                  cureduce_dtype in_dtype, const void *d_in, uint64_t rows,
                                                  uint64_t cols, uint64_t ld, cureduce_dtype acc_dtype,
                                                  void *d_out, void *stream);

/* One result per segment, as CUB's DeviceSegmentedReduce: d_offsets (device memory) holds
   num_segments + 1 non-decreasing int64 element offsets from d_in, and segment s is
   d_in[d_offsets[s] .. d_offsets[s + 1] - 1]. Segments of any mix of lengths are balanced over
   the GPU. An empty segment gets 0 for SUM, SUMSQ and SUM_EXACT; for the other ops its output is left
   untouched (the status cannot say which segments were empty: the offsets live on the
   device). The offsets are not checked (that would need a synchronization): decreasing or
   negative offsets are undefined behaviour. num_segments == 0 reads and writes nothing, and
   any pointer may then be NULL; otherwise d_in, d_offsets and d_out are needed, even when
   every segment is empty. */
CUREDUCE_API cureduce_status cureduce_reduce_segments(cureduce_handle handle, cureduce_op op,
                                                      cureduce_dtype in_dtype, const void *d_in,
                                                      uint64_t num_segments, const int64_t *d_offsets,
                                                      cureduce_dtype acc_dtype, void *d_out, void *stream);

/* One axis of an N-d array: the C-order array at d_in seen as outer x length x inner elements
   (the dimensions before the axis multiplied together, the axis, the dimensions after it), and
   one result per (o, i): out[o * inner + i] = op over d_in[(o * length + k) * inner + i],
   k = 0 .. length - 1 (arg ops give k). Results are in C order, outer x inner: the array's
   shape without the axis. A batch of column reductions; inner == 1 is cureduce_reduce_rows and
   outer == 1 cureduce_reduce_cols, with the same bits. outer * inner == 0 writes nothing and
   returns SUCCESS; length == 0 makes every reduction empty, as for rows and columns; a shape
   of 2^63 bytes or more is INVALID_VALUE. */
CUREDUCE_API cureduce_status cureduce_reduce_axis(cureduce_handle handle, cureduce_op op,
                                                  cureduce_dtype in_dtype, const void *d_in, uint64_t outer,
                                                  uint64_t length, uint64_t inner, cureduce_dtype acc_dtype,
                                                  void *d_out, void *stream);

/* --- CPU reductions (the reference and the no-GPU fallback) ------------------------------ */

/* The same contract as cureduce_reduce, on host memory, synchronous. Float sums use pairwise
   summation in the accumulator's precision; min, max and the arg ops are exact. */
CUREDUCE_API cureduce_status cureduce_cpu_reduce(cureduce_op op, cureduce_dtype in_dtype, const void *h_in,
                                                 uint64_t n, cureduce_dtype acc_dtype, void *h_out);

/* The row, column and segment reductions on host memory (same contracts, synchronous; the
   CPU's rows and segments use cureduce_cpu_reduce's order, so float sums may differ from the
   GPU's in the last bits). For segments, h_offsets is host memory; offsets that decrease or are
   negative are INVALID_VALUE here. */
CUREDUCE_API cureduce_status cureduce_cpu_reduce_rows(cureduce_op op, cureduce_dtype in_dtype,
                                                      const void *h_in, uint64_t rows, uint64_t cols,
                                                      uint64_t ld, cureduce_dtype acc_dtype, void *h_out);
CUREDUCE_API cureduce_status cureduce_cpu_reduce_cols(cureduce_op op, cureduce_dtype in_dtype,
                                                      const void *h_in, uint64_t rows, uint64_t cols,
                                                      uint64_t ld, cureduce_dtype acc_dtype, void *h_out);
CUREDUCE_API cureduce_status cureduce_cpu_reduce_segments(cureduce_op op, cureduce_dtype in_dtype,
                                                          const void *h_in, uint64_t num_segments,
                                                          const int64_t *h_offsets, cureduce_dtype acc_dtype,
                                                          void *h_out);

CUREDUCE_API cureduce_status cureduce_cpu_reduce_axis(cureduce_op op, cureduce_dtype in_dtype,
                                                      const void *h_in, uint64_t outer, uint64_t length,
                                                      uint64_t inner, cureduce_dtype acc_dtype, void *h_out);

/* cureduce_cpu_reduce with CUREDUCE_SUM_EXACT: the exact sum of n float elements rounded
   once into out_dtype (F64, F32 or in_dtype). */
CUREDUCE_API cureduce_status cureduce_cpu_sum_exact(cureduce_dtype in_dtype, const void *h_in, uint64_t n,
                                                    cureduce_dtype out_dtype, void *h_out);

/* --- Exact sums in parts ------------------------------------------------------------------- */
/*
 * An exact sum can be kept as a running state, added to chunk by chunk, on several streams or
 * devices, and rounded once at the end: the result is the same bits as one SUM_EXACT (or
 * MEAN_EXACT) call over all the elements. A state is CUREDUCE_EXACT_STATE_WORDS int64 words;
 * all-zero words are the state of no elements (cudaMemset to 0 makes one). The words hold the
 * sum as a fixed-point integer plus flags and the element count, and two states combine by
 * adding them word by word as integers: cureduce_exact_combine does that, and so does an
 * integer all-reduce (for example NCCL's ncclInt64 sum) of up to 2^29 states, before the sum
 * is rounded or added to again. The same state on the CPU and the GPU has the same value.
 *
 * The GPU calls are asynchronous on stream, allocate nothing and can be captured in a CUDA
 * graph. States that overlap the input, the offsets or the outputs of finish are INVALID_VALUE
 * (the GPU's accumulate_segments cannot see the input's extent: the segments' elements are the
 * caller's to keep apart from the states). Several streams may add into one state at once (the additions are
 * atomic), each stream with a handle of its own, as for every call; combine and finish must be ordered after
 * them. A refused call changes no state; a call whose launch fails (CUREDUCE_ERROR_CUDA) may have added part
 * of its input (rows and segments take several launches), so its states are then to be rebuilt.
 */
#define CUREDUCE_EXACT_STATE_WORDS 80

/* Add the n float elements of in_dtype at device pointer d_in to the state at device pointer
   d_state (8-byte aligned). */
CUREDUCE_API cureduce_status cureduce_exact_accumulate(cureduce_handle handle, cureduce_dtype in_dtype,
                                                       const void *d_in, uint64_t n, int64_t *d_state,
                                                       void *stream);

/* The same for each row of a rows x cols matrix (element (i, j) at d_in[i * ld + j], ld >= cols):
   row i is added to the i-th of rows states at d_states, which holds rows *
   CUREDUCE_EXACT_STATE_WORDS int64 words (8-byte aligned). rows or cols == 0 adds nothing. */
CUREDUCE_API cureduce_status cureduce_exact_accumulate_rows(cureduce_handle handle, cureduce_dtype in_dtype,
                                                            const void *d_in, uint64_t rows, uint64_t cols,
                                                            uint64_t ld, int64_t *d_states, void *stream);

/* The same for each segment (as cureduce_reduce_segments: num_segments + 1 non-decreasing int64
   offsets at device pointer d_offsets, segment s being d_in[d_offsets[s] .. d_offsets[s + 1] -
   1]): segment s is added to the s-th of num_segments states at d_states. An empty segment
   leaves its state as it was; num_segments == 0 adds nothing (any pointer may then be NULL;
   otherwise d_in, d_offsets and d_states are needed, as for cureduce_reduce_segments). The
   offsets are not checked (decreasing or negative offsets are undefined behaviour). */
CUREDUCE_API cureduce_status cureduce_exact_accumulate_segments(cureduce_handle handle,
                                                                cureduce_dtype in_dtype, const void *d_in,
                                                                uint64_t num_segments,
                                                                const int64_t *d_offsets, int64_t *d_states,
                                                                void *stream);

/* d_state += d_other: afterwards d_state holds the elements of both. The two states must not
   overlap (INVALID_VALUE): to count a state twice, combine it with a copy. */
CUREDUCE_API cureduce_status cureduce_exact_combine(cureduce_handle handle, int64_t *d_state,
                                                    const int64_t *d_other, void *stream);

/* Round the state once into one element of out_dtype (any float dtype) at device pointer d_out:
   op CUREDUCE_SUM_EXACT for the sum, CUREDUCE_MEAN_EXACT for the sum divided by the number
   of elements added. The mean of a state with no elements is NaN (the status cannot say: the
   state lives on the device). The state is left as it was. */
CUREDUCE_API cureduce_status cureduce_exact_finish(cureduce_handle handle, cureduce_op op,
                                                   const int64_t *d_state, cureduce_dtype out_dtype,
                                                   void *d_out, void *stream);

/* Each of rows states at d_states (rows * CUREDUCE_EXACT_STATE_WORDS words) rounded as
   cureduce_exact_finish rounds one, into d_out[i] (rows elements of out_dtype). */
CUREDUCE_API cureduce_status cureduce_exact_finish_rows(cureduce_handle handle, cureduce_op op,
                                                        const int64_t *d_states, uint64_t rows,
                                                        cureduce_dtype out_dtype, void *d_out, void *stream);

/* The same on host memory, synchronous. cureduce_cpu_exact_finish returns EMPTY for the mean of
   a state with no elements, and writes nothing; cureduce_cpu_exact_finish_rows writes NaN
   there, as the GPU call does. Segment offsets (host memory here) that decrease or are
   negative are INVALID_VALUE, and then no state is changed. */
CUREDUCE_API cureduce_status cureduce_cpu_exact_accumulate(cureduce_dtype in_dtype, const void *h_in,
                                                           uint64_t n, int64_t *h_state);
CUREDUCE_API cureduce_status cureduce_cpu_exact_accumulate_rows(cureduce_dtype in_dtype, const void *h_in,
                                                                uint64_t rows, uint64_t cols, uint64_t ld,
                                                                int64_t *h_states);
CUREDUCE_API cureduce_status cureduce_cpu_exact_accumulate_segments(cureduce_dtype in_dtype, const void *h_in,
                                                                    uint64_t num_segments,
                                                                    const int64_t *h_offsets,
                                                                    int64_t *h_states);
CUREDUCE_API cureduce_status cureduce_cpu_exact_combine(int64_t *h_state, const int64_t *h_other);
CUREDUCE_API cureduce_status cureduce_cpu_exact_finish(cureduce_op op, const int64_t *h_state,
                                                       cureduce_dtype out_dtype, void *h_out);
CUREDUCE_API cureduce_status cureduce_cpu_exact_finish_rows(cureduce_op op, const int64_t *h_states,
                                                            uint64_t rows, cureduce_dtype out_dtype,
                                                            void *h_out);

#ifdef __cplusplus
}
#endif

#endif /* CUREDUCE_H */
