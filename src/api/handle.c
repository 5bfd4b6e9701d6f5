/* The C API of the GPU reductions: argument validation and the handle's workspace.
 * Layer: C API. Nothing here launches a kernel directly; dispatch.h does.
 *
 * Validation happens before anything is launched or written, in this order: handle, op and
 * dtypes, the combination, NULL pointers, alignment, device-ness of the pointers, n = 0. */
#include "cureduce.h"

#include "../common/device_pointer.h"
#include "../common/dtype_facts.h"
#include "../common/gpu_args.h"
#include "../common/matrix_shape.h"
#include "../dispatch/dispatch.h"

#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdlib.h>

struct cureduce_handle_s {
  int device;
  void *workspace;      /* cr_full_workspace_bytes() for the full-array kernels ... */
  void *axis_workspace; /* ... then cr_axis_workspace_bytes() for rows, columns, segments ... */
  void *result_slot;    /* ... then RESULT_SLOT_BYTES for cureduce_reduce_to_host's result */
};

#define RESULT_SLOT_BYTES 256

cureduce_status cureduce_create(cureduce_handle *handle) {
  if (!handle)
    return CUREDUCE_ERROR_NULL_POINTER;
  *handle = NULL;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    (void)cudaGetLastError(); /* "no device" is our status, not a sticky error for the caller */
    return CUREDUCE_ERROR_NO_DEVICE;
  }
  struct cureduce_handle_s *h = calloc(1, sizeof *h);
  if (!h)
    return CUREDUCE_ERROR_OUT_OF_MEMORY;
  const size_t bytes = cr_full_workspace_bytes() + cr_axis_workspace_bytes() + RESULT_SLOT_BYTES;
  if (cudaGetDevice(&h->device) != cudaSuccess) {
    free(h);
    return CUREDUCE_ERROR_CUDA;
  }
  if (cudaMalloc(&h->workspace, bytes) != cudaSuccess) {
    (void)cudaGetLastError();
    free(h);
    return CUREDUCE_ERROR_OUT_OF_MEMORY;
  }
  /* The kernels expect the ticket counter at zero; zeroing all of it also keeps initcheck
     quiet about the partials. Once, here rather than in any reduce call, on a stream of our
     own that does not wait for the legacy default stream: a plain cudaMemset would join the
     legacy stream, which breaks a graph capture under way on a blocking stream. */
  cudaStream_t zeroing;
  cudaError_t err = cudaStreamCreateWithFlags(&zeroing, cudaStreamNonBlocking);
  if (err == cudaSuccess) {
    err = cudaMemsetAsync(h->workspace, 0, bytes, zeroing);
    const cudaError_t synced = cudaStreamSynchronize(zeroing);
    const cudaError_t destroyed = cudaStreamDestroy(zeroing);
    err = err != cudaSuccess ? err : synced != cudaSuccess ? synced : destroyed;
  }
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    (void)cudaFree(h->workspace);
    free(h);
    return CUREDUCE_ERROR_CUDA;
  }
  h->axis_workspace = (char *)h->workspace + cr_full_workspace_bytes();
  h->result_slot = (char *)h->axis_workspace + cr_axis_workspace_bytes();
  *handle = h;
  return CUREDUCE_SUCCESS;
}

cureduce_status cureduce_destroy(cureduce_handle handle) {
  if (!handle)
    return CUREDUCE_SUCCESS;
  const cudaError_t sync = cudaDeviceSynchronize();
  const cudaError_t freed = cudaFree(handle->workspace);
  free(handle);
  return (sync == cudaSuccess && freed == cudaSuccess) ? CUREDUCE_SUCCESS : CUREDUCE_ERROR_CUDA;
}

/* Everything cureduce_reduce checks, with acc resolved from DEFAULT into *acc. */
static cureduce_status validate(cureduce_handle handle, cureduce_op op, cureduce_dtype in_dtype,
                                const void *d_in, uint64_t n, cureduce_dtype *acc, const void *out,
                                int out_on_device) {
  if (!handle)
    return CUREDUCE_ERROR_INVALID_HANDLE;
  const cureduce_status st = cureduce_resolve_acc(op, in_dtype, *acc, acc);
  if (st != CUREDUCE_SUCCESS)
    return st;
  if (!out || (n > 0 && !d_in))
    return CUREDUCE_ERROR_NULL_POINTER;
  if ((uintptr_t)d_in % cureduce_dtype_size(in_dtype) != 0 ||
      !cr_extent_ok(n, cureduce_dtype_size(in_dtype)) ||
      (out_on_device && (uintptr_t)out % cureduce_result_size(op, *acc) != 0))
    return CUREDUCE_ERROR_INVALID_VALUE;
  if ((n > 0 && !cr_is_device_pointer(d_in)) || (out_on_device && !cr_is_device_pointer(out)))
    return CUREDUCE_ERROR_HOST_POINTER;
  if (n == 0 && !cr_op_empty_is_zero(op))
    return CUREDUCE_EMPTY;
  return CUREDUCE_SUCCESS;
}

cureduce_status cureduce_reduce(cureduce_handle handle, cureduce_op op, cureduce_dtype in_dtype,
                                const void *d_in, uint64_t n, cureduce_dtype acc_dtype, void *d_out,
                                void *stream) {
  const cureduce_status st = validate(handle, op, in_dtype, d_in, n, &acc_dtype, d_out, 1);
  if (st != CUREDUCE_SUCCESS)
    return st;
  return cr_launch_full(op, in_dtype, acc_dtype, d_in, n, d_out, handle->workspace, stream);
}

cureduce_status cureduce_reduce_to_host(cureduce_handle handle, cureduce_op op, cureduce_dtype in_dtype,
                                        const void *d_in, uint64_t n, cureduce_dtype acc_dtype, void *h_out,
                                        void *stream) {
  cureduce_status st = validate(handle, op, in_dtype, d_in, n, &acc_dtype, h_out, 0);
  if (st != CUREDUCE_SUCCESS)
    return st;
  st = cr_launch_full(op, in_dtype, acc_dtype, d_in, n, handle->result_slot, handle->workspace, stream);
  if (st != CUREDUCE_SUCCESS)
    return st;
  const cudaStream_t s = (cudaStream_t)stream;
  if (cudaMemcpyAsync(h_out, handle->result_slot, cureduce_result_size(op, acc_dtype), cudaMemcpyDeviceToHost,
                      s) != cudaSuccess ||
      cudaStreamSynchronize(s) != cudaSuccess)
    return CUREDUCE_ERROR_CUDA;
  return CUREDUCE_SUCCESS;
}

/* --- Rows, columns, segments --------------------------------------------------------------- */

/* Checks shared by the matrix and segment calls, in the same order as validate(): the handle,
   then cr_check_gpu_args. `elements` says whether d_in will be read, `outputs` how many results
   d_out receives. */
static cureduce_status validate_many(cureduce_handle handle, cureduce_op op, cureduce_dtype in_dtype,
                                     const void *d_in, int elements, cureduce_dtype *acc, const void *d_out,
                                     uint64_t outputs) {
  if (!handle)
    return CUREDUCE_ERROR_INVALID_HANDLE;
  return cr_check_gpu_args(op, in_dtype, d_in, elements, acc, d_out, outputs > 0);
}

/* `outputs` reductions of no elements: zeros for the sums, EMPTY for the other ops. */
static cureduce_status write_empty(cureduce_op op, cureduce_dtype acc, void *d_out, uint64_t outputs,
                                   void *stream) {
  if (!cr_op_empty_is_zero(op))
    return CUREDUCE_EMPTY;
  /* all-zero bytes are +0.0 and integer 0 in every accumulator */
  return cudaMemsetAsync(d_out, 0, outputs * cureduce_result_size(op, acc), (cudaStream_t)stream) ==
                 cudaSuccess
             ? CUREDUCE_SUCCESS
             : CUREDUCE_ERROR_CUDA;
}

typedef cureduce_status (*matrix_launcher)(cureduce_op, cureduce_dtype, cureduce_dtype, const void *,
                                           uint64_t, uint64_t, uint64_t, void *, void *, void *);

/* Rows and columns: `outputs` results of `length` elements each. */
static cureduce_status reduce_matrix(cureduce_handle handle, cureduce_op op, cureduce_dtype in_dtype,
                                     const void *d_in, uint64_t rows, uint64_t cols, uint64_t ld,
                                     cureduce_dtype acc, void *d_out, void *stream, uint64_t outputs,
                                     uint64_t length, matrix_launcher launch) {
  const int elements = rows > 0 && cols > 0;
  cureduce_status st = validate_many(handle, op, in_dtype, d_in, elements, &acc, d_out, outputs);
  if (st != CUREDUCE_SUCCESS)
    return st;
  const uint64_t size = cureduce_dtype_size(in_dtype);
  if (!cr_matrix_shape_ok(rows, cols, ld, size) || !cr_results_ok(outputs) ||
      cr_overlaps_matrix(d_out, outputs * cureduce_result_size(op, acc), d_in, rows, cols, ld, size))
    return CUREDUCE_ERROR_INVALID_VALUE;
  if (outputs == 0)
    return CUREDUCE_SUCCESS;
  if (length == 0)
    return write_empty(op, acc, d_out, outputs, stream);
  return launch(op, in_dtype, acc, d_in, rows, cols, ld, d_out, handle->axis_workspace, stream);
}

cureduce_status cureduce_reduce_rows(cureduce_handle handle, cureduce_op op, cureduce_dtype in_dtype,
                                     const void *d_in, uint64_t rows, uint64_t cols, uint64_t ld,
                                     cureduce_dtype acc_dtype, void *d_out, void *stream) {
  return reduce_matrix(handle, op, in_dtype, d_in, rows, cols, ld, acc_dtype, d_out, stream, rows, cols,
                       cr_launch_rows);
}

cureduce_status cureduce_reduce_cols(cureduce_handle handle, cureduce_op op, cureduce_dtype in_dtype,
                                     const void *d_in, uint64_t rows, uint64_t cols, uint64_t ld,
                                     cureduce_dtype acc_dtype, void *d_out, void *stream) {
  return reduce_matrix(handle, op, in_dtype, d_in, rows, cols, ld, acc_dtype, d_out, stream, cols, rows,
                       cr_launch_cols);
}

cureduce_status cureduce_reduce_axis(cureduce_handle handle, cureduce_op op, cureduce_dtype in_dtype,
                                     const void *d_in, uint64_t outer, uint64_t length, uint64_t inner,
                                     cureduce_dtype acc_dtype, void *d_out, void *stream) {
  const int outputs = outer > 0 && inner > 0;
  cureduce_status st =
      validate_many(handle, op, in_dtype, d_in, outputs && length > 0, &acc_dtype, d_out, (uint64_t)outputs);
  if (st != CUREDUCE_SUCCESS)
    return st;
  if (!cr_axis_shape_ok(outer, length, inner, cureduce_dtype_size(in_dtype)))
    return CUREDUCE_ERROR_INVALID_VALUE;
  if (!outputs)
    return CUREDUCE_SUCCESS;
  if (cr_ranges_overlap(d_out, outer * inner * cureduce_result_size(op, acc_dtype), d_in,
                        outer * length * inner * cureduce_dtype_size(in_dtype)))
    return CUREDUCE_ERROR_INVALID_VALUE;
  if (length == 0)
    return write_empty(op, acc_dtype, d_out, outer * inner, stream);
  if (inner == 1)
    return cr_launch_rows(op, in_dtype, acc_dtype, d_in, outer, length, length, d_out, handle->axis_workspace,
                          stream);
  return cr_launch_axis(op, in_dtype, acc_dtype, d_in, outer, length, inner, d_out, handle->axis_workspace,
                        stream);
}

cureduce_status cureduce_reduce_segments(cureduce_handle handle, cureduce_op op, cureduce_dtype in_dtype,
                                         const void *d_in, uint64_t num_segments, const int64_t *d_offsets,
                                         cureduce_dtype acc_dtype, void *d_out, void *stream) {
  const int any = num_segments > 0;
  cureduce_status st = validate_many(handle, op, in_dtype, d_in, any, &acc_dtype, d_out, num_segments);
  if (st != CUREDUCE_SUCCESS)
    return st;
  if (any && !d_offsets) /* validate_many has checked d_in and d_out */
    return CUREDUCE_ERROR_NULL_POINTER;
  if ((uintptr_t)d_offsets % sizeof(int64_t) != 0 || !cr_results_ok(num_segments) ||
      cr_overlaps_offsets(d_out, num_segments * cureduce_result_size(op, acc_dtype), d_offsets, num_segments))
    return CUREDUCE_ERROR_INVALID_VALUE;
  if (!any)
    return CUREDUCE_SUCCESS;
  if (!cr_is_device_pointer(d_offsets))
    return CUREDUCE_ERROR_HOST_POINTER;
  return cr_launch_segments(op, in_dtype, acc_dtype, d_in, num_segments, d_offsets, d_out,
                            handle->axis_workspace, stream);
}

/* --- Exact sums in parts ------------------------------------------------------------------- */

/* A state pointer: not NULL, 8-byte aligned, device memory. */
static cureduce_status check_state(const int64_t *d_state) {
  if (!d_state)
    return CUREDUCE_ERROR_NULL_POINTER;
  if ((uintptr_t)d_state % sizeof(int64_t) != 0)
    return CUREDUCE_ERROR_INVALID_VALUE;
  return cr_is_device_pointer(d_state) ? CUREDUCE_SUCCESS : CUREDUCE_ERROR_HOST_POINTER;
}

cureduce_status cureduce_exact_accumulate(cureduce_handle handle, cureduce_dtype in_dtype, const void *d_in,
                                          uint64_t n, int64_t *d_state, void *stream) {
  if (!handle)
    return CUREDUCE_ERROR_INVALID_HANDLE;
  const cureduce_status st = cureduce_supported(CUREDUCE_SUM_EXACT, in_dtype, CUREDUCE_ACC_DEFAULT);
  if (st != CUREDUCE_SUCCESS)
    return st;
  if (!d_state || (n > 0 && !d_in))
    return CUREDUCE_ERROR_NULL_POINTER;
  if ((uintptr_t)d_in % cureduce_dtype_size(in_dtype) != 0 ||
      !cr_extent_ok(n, cureduce_dtype_size(in_dtype)) ||
      cr_ranges_overlap(d_state, cr_exact_states_bytes(1), d_in, n * cureduce_dtype_size(in_dtype)))
    return CUREDUCE_ERROR_INVALID_VALUE;
  const cureduce_status sst = check_state(d_state);
  if (sst != CUREDUCE_SUCCESS)
    return sst;
  if (n > 0 && !cr_is_device_pointer(d_in))
    return CUREDUCE_ERROR_HOST_POINTER;
  if (n == 0)
    return CUREDUCE_SUCCESS;
  return cr_launch_exact_accumulate(in_dtype, d_in, n, d_state, handle->workspace, stream);
}

cureduce_status cureduce_exact_accumulate_rows(cureduce_handle handle, cureduce_dtype in_dtype,
                                               const void *d_in, uint64_t rows, uint64_t cols, uint64_t ld,
                                               int64_t *d_states, void *stream) {
  if (!handle)
    return CUREDUCE_ERROR_INVALID_HANDLE;
  const cureduce_status st = cureduce_supported(CUREDUCE_SUM_EXACT, in_dtype, CUREDUCE_ACC_DEFAULT);
  if (st != CUREDUCE_SUCCESS)
    return st;
  const int reads = rows > 0 && cols > 0;
  if ((rows > 0 && !d_states) || (reads && !d_in))
    return CUREDUCE_ERROR_NULL_POINTER;
  const uint64_t size = cureduce_dtype_size(in_dtype);
  if ((uintptr_t)d_in % size != 0 || !cr_matrix_shape_ok(rows, cols, ld, size) || !cr_exact_states_ok(rows) ||
      cr_overlaps_matrix(d_states, cr_exact_states_bytes(rows), d_in, rows, cols, ld, size))
    return CUREDUCE_ERROR_INVALID_VALUE;
  if (rows == 0)
    return CUREDUCE_SUCCESS;
  const cureduce_status sst = check_state(d_states);
  if (sst != CUREDUCE_SUCCESS)
    return sst;
  if (reads && !cr_is_device_pointer(d_in))
    return CUREDUCE_ERROR_HOST_POINTER;
  if (cols == 0) /* no elements: every state stays as it is */
    return CUREDUCE_SUCCESS;
  return cr_launch_exact_accumulate_rows(in_dtype, d_in, rows, cols, ld, d_states, handle->workspace, stream);
}

cureduce_status cureduce_exact_accumulate_segments(cureduce_handle handle, cureduce_dtype in_dtype,
                                                   const void *d_in, uint64_t num_segments,
                                                   const int64_t *d_offsets, int64_t *d_states,
                                                   void *stream) {
  if (!handle)
    return CUREDUCE_ERROR_INVALID_HANDLE;
  const cureduce_status st = cureduce_supported(CUREDUCE_SUM_EXACT, in_dtype, CUREDUCE_ACC_DEFAULT);
  if (st != CUREDUCE_SUCCESS)
    return st;
  if (cr_segments_lack_pointer(num_segments, d_in, d_offsets, d_states))
    return CUREDUCE_ERROR_NULL_POINTER;
  if ((uintptr_t)d_in % cureduce_dtype_size(in_dtype) != 0 || (uintptr_t)d_offsets % sizeof(int64_t) != 0 ||
      !cr_exact_states_ok(num_segments) ||
      cr_overlaps_offsets(d_states, cr_exact_states_bytes(num_segments), d_offsets, num_segments))
    return CUREDUCE_ERROR_INVALID_VALUE;
  if (num_segments == 0)
    return CUREDUCE_SUCCESS;
  const cureduce_status sst = check_state(d_states);
  if (sst != CUREDUCE_SUCCESS)
    return sst;
  if (!cr_is_device_pointer(d_in) || !cr_is_device_pointer(d_offsets))
    return CUREDUCE_ERROR_HOST_POINTER;
  return cr_launch_exact_accumulate_segments(in_dtype, d_in, num_segments, d_offsets, d_states, stream);
}

cureduce_status cureduce_exact_combine(cureduce_handle handle, int64_t *d_state, const int64_t *d_other,
                                       void *stream) {
  if (!handle)
    return CUREDUCE_ERROR_INVALID_HANDLE;
  if (!d_state || !d_other)
    return CUREDUCE_ERROR_NULL_POINTER;
  if (cr_exact_states_overlap(d_state, d_other))
    return CUREDUCE_ERROR_INVALID_VALUE;
  cureduce_status st = check_state(d_state);
  if (st == CUREDUCE_SUCCESS)
    st = check_state(d_other);
  if (st != CUREDUCE_SUCCESS)
    return st;
  return cr_launch_exact_combine(d_state, d_other, stream);
}

cureduce_status cureduce_exact_finish(cureduce_handle handle, cureduce_op op, const int64_t *d_state,
                                      cureduce_dtype out_dtype, void *d_out, void *stream) {
  if (!handle)
    return CUREDUCE_ERROR_INVALID_HANDLE;
  const cureduce_status fst = cr_exact_finish_supported(op, out_dtype);
  if (fst != CUREDUCE_SUCCESS)
    return fst;
  if (!d_state || !d_out)
    return CUREDUCE_ERROR_NULL_POINTER;
  if ((uintptr_t)d_out % cureduce_dtype_size(out_dtype) != 0 ||
      cr_ranges_overlap(d_out, cureduce_dtype_size(out_dtype), d_state, cr_exact_states_bytes(1)))
    return CUREDUCE_ERROR_INVALID_VALUE;
  const cureduce_status st = check_state(d_state);
  if (st != CUREDUCE_SUCCESS)
    return st;
  if (!cr_is_device_pointer(d_out))
    return CUREDUCE_ERROR_HOST_POINTER;
  return cr_launch_exact_finish(op, d_state, 1, out_dtype, d_out, stream);
}

cureduce_status cureduce_exact_finish_rows(cureduce_handle handle, cureduce_op op, const int64_t *d_states,
                                           uint64_t rows, cureduce_dtype out_dtype, void *d_out,
                                           void *stream) {
  if (!handle)
    return CUREDUCE_ERROR_INVALID_HANDLE;
  const cureduce_status fst = cr_exact_finish_supported(op, out_dtype);
  if (fst != CUREDUCE_SUCCESS)
    return fst;
  if (rows > 0 && (!d_states || !d_out))
    return CUREDUCE_ERROR_NULL_POINTER;
  if ((uintptr_t)d_out % cureduce_dtype_size(out_dtype) != 0 || !cr_exact_states_ok(rows) ||
      cr_ranges_overlap(d_out, rows * cureduce_dtype_size(out_dtype), d_states, cr_exact_states_bytes(rows)))
    return CUREDUCE_ERROR_INVALID_VALUE;
  if (rows == 0)
    return CUREDUCE_SUCCESS;
  const cureduce_status st = check_state(d_states);
  if (st != CUREDUCE_SUCCESS)
    return st;
  if (!cr_is_device_pointer(d_out))
    return CUREDUCE_ERROR_HOST_POINTER;
  return cr_launch_exact_finish(op, d_states, rows, out_dtype, d_out, stream);
}
