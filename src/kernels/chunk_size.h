// The chunk length of the chunked kernel, computed the same way by the kernel (on the device,
// in int64) and by the host's plans (axis_plan.h, in uint64). Layer: kernels.
#pragma once

#if defined(__CUDACC__)
#define CR_HOST_DEVICE __host__ __device__
#else
#define CR_HOST_DEVICE
#endif

namespace cr {

// Elements per chunk for `total` elements: at least min_chunk, a multiple of it, and at most
// max_chunks chunks (the workspace holds that many partials).
template <class I> CR_HOST_DEVICE inline I chunk_elements(I total, I min_chunk, I max_chunks) {
  const I per = (total + max_chunks - 1) / max_chunks;
  return ((per > min_chunk ? per : min_chunk) + min_chunk - 1) / min_chunk * min_chunk;
}

} // namespace cr
