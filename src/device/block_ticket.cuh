// "Am I the last block to get here?": a device-scope ticket counted by whole blocks. Layer:
// device primitives.
#pragma once

#include <cuda/atomic>

namespace cr {

// Every thread of the block calls this after its global writes that other blocks will read.
// One ticket per call from each of `arrivals` blocks; the block that takes the last one gets
// true in all its threads, sees every other block's writes, and has reset the ticket to 0 for
// the next launch (every arrival has counted by then). The barrier in front orders every
// thread's writes before thread 0's release (the fence of an acq_rel atomic is cumulative:
// it covers what the barrier ordered before it, as in cooperative groups' grid sync, where
// only thread 0 fences), so writers need no fence of their own. Thread 0's acquire is passed
// to the block by the barrier behind, and the readers load with ld.cg (L2).
__device__ __forceinline__ bool block_last_arrival(unsigned int *ticket, unsigned int arrivals) {
  __shared__ bool is_last;
  __syncthreads();
  if (threadIdx.x == 0) {
    cuda::atomic_ref<unsigned int, cuda::thread_scope_device> count(*ticket);
    is_last = count.fetch_add(1u, cuda::memory_order_acq_rel) == arrivals - 1;
    if (is_last)
      count.store(0u, cuda::memory_order_relaxed);
  }
  __syncthreads();
  return is_last;
}

} // namespace cr
