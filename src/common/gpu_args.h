/* The argument checks every GPU call makes after its handle's, the library's matrix and segment
   calls and the multi-GPU calls alike, in cureduce.h's order: op and dtypes (DEFAULT resolved into
   *acc), NULL pointers, alignment, device memory. `reads_in` says whether d_in will be read,
   `writes_out` whether d_out will be written. Host code. */
#ifndef CUREDUCE_COMMON_GPU_ARGS_H
#define CUREDUCE_COMMON_GPU_ARGS_H

#include "cureduce.h"
#include "device_pointer.h"

#include <stdint.h>

static inline cureduce_status cr_check_gpu_args(cureduce_op op, cureduce_dtype in_dtype, const void *d_in,
                                                int reads_in, cureduce_dtype *acc, const void *d_out,
                                                int writes_out) {
  const cureduce_status st = cureduce_resolve_acc(op, in_dtype, *acc, acc);
  if (st != CUREDUCE_SUCCESS)
    return st;
  if ((writes_out && !d_out) || (reads_in && !d_in))
    return CUREDUCE_ERROR_NULL_POINTER;
  if ((uintptr_t)d_in % cureduce_dtype_size(in_dtype) != 0 ||
      (uintptr_t)d_out % cureduce_result_size(op, *acc) != 0)
    return CUREDUCE_ERROR_INVALID_VALUE;
  if ((reads_in && !cr_is_device_pointer(d_in)) || (writes_out && !cr_is_device_pointer(d_out)))
    return CUREDUCE_ERROR_HOST_POINTER;
  return CUREDUCE_SUCCESS;
}

#endif
