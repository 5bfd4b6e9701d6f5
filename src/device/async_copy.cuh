// Copies from global to shared memory that complete in the background (cp.async, sm_80 and
// later), for a ring of slots that each thread owns. Layer: device primitives.
//
// Why: a load into registers ties up its registers until the data arrives, so the bytes a
// thread can have in flight are bounded by its register budget (and more registers mean fewer
// resident warps). A cp.async lands in shared memory instead; the thread keeps issuing and
// only waits when it needs the oldest group. Each thread reads back only the slots it filled
// itself, so no barrier is needed between the copy and the read.
#pragma once

#include <stdint.h>

namespace cr {

// 16 bytes from global `src` (16-byte aligned) into shared `dst` (16-byte aligned). .cg: the
// bytes go through L2 only, never L1, which also makes it safe for data other SMs wrote during
// this launch.
__device__ __forceinline__ void copy_async_16(void *dst, const void *src) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(src) : "memory");
}

// Close the group of copies issued since the last commit. Empty groups are allowed and
// complete at once, which keeps a pipeline's counting uniform at its end.
__device__ __forceinline__ void async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

// Wait until at most PENDING of this thread's committed groups are still in flight.
template <int PENDING> __device__ __forceinline__ void async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING) : "memory");
}

// A thread's SLOTS 16-byte slots in dynamic shared memory, interleaved with the other
// threads' (slot k of thread t at word k * BLOCK + t), so a warp's 32 accesses to the same
// slot are 512 consecutive bytes: no bank conflicts.
template <int BLOCK> struct thread_slots {
  int4 *base;
  __device__ __forceinline__ int4 *operator[](int k) const { return base + k * BLOCK + threadIdx.x; }
};

} // namespace cr
