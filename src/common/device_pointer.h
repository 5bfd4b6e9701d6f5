/* Whether a pointer is device (or managed) memory that a kernel may read and write: the one
   check of every GPU entry point, the library's and the multi-GPU component's. Host code. */
#ifndef CUREDUCE_DEVICE_POINTER_H
#define CUREDUCE_DEVICE_POINTER_H

#include <cuda_runtime_api.h>

static inline int cr_is_device_pointer(const void *p) {
  struct cudaPointerAttributes attr;
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged;
}

#endif
