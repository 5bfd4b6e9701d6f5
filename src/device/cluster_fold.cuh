// Folding values across the blocks of a thread-block cluster through distributed shared memory
// (Hopper, sm_90 and later). Layer: device primitives.
#pragma once

#include <cooperative_groups.h>

namespace cr {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// Some threads of every block of the cluster ("holders") each hold N values, in their block's
// slot `slot` (0 .. SLOTS - 1; each slot held by one thread per block). Afterwards a holder of
// the cluster's block rank 0 has, for each of its N values, the fold of that slot over the
// blocks in rank order: ((rank 0 combine rank 1) combine rank 2) ... . Returns true in rank 0's
// threads, false in the other blocks, whose work is then done: their values have been read.
//
// Why: with the values of a cluster's blocks met on chip, only one block per cluster goes on to
// publish through global memory, so the last block of a grid-wide fold reads the cluster count,
// not the block count, of partials (one L2 round trip each batch, on the kernel's tail).
//
// Every thread of every block of the cluster must call it (two cluster barriers).
template <class Op, int N, int SLOTS>
__device__ __forceinline__ bool cluster_fold_to_first(typename Op::T (&v)[N], bool holder, int slot) {
  using T = typename Op::T;
  struct alignas(16) values {
    T v[N];
  };
  __shared__ values mine[SLOTS];
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  if (holder)
#pragma unroll
    for (int c = 0; c < N; ++c)
      mine[slot].v[c] = v[c];
  cluster.sync(); // release our slots, acquire the others'
  const unsigned rank = cluster.block_rank(), blocks = cluster.num_blocks();
  if (rank == 0 && holder) {
    if constexpr (sizeof(values) <= 64) {
      // Loads of BATCH blocks are issued before any is folded (at most 64 bytes in flight a
      // thread: these registers count against the whole kernel's occupancy).
      constexpr unsigned BATCH = 64 / sizeof(values);
      for (unsigned r0 = 1; r0 < blocks; r0 += BATCH) {
        values got[BATCH];
#pragma unroll
        for (unsigned b = 0; b < BATCH; ++b)
          if (r0 + b < blocks)
            got[b] = *cluster.map_shared_rank(&mine[slot], r0 + b);
#pragma unroll
        for (unsigned b = 0; b < BATCH; ++b)
          if (r0 + b < blocks)
#pragma unroll
            for (int c = 0; c < N; ++c)
              v[c] = Op::combine(v[c], got[b].v[c]);
      }
    } else { // wide values (argmin/argmax pairs of 16 columns): one at a time
      for (unsigned r = 1; r < blocks; ++r) {
        const values *theirs = cluster.map_shared_rank(&mine[slot], r);
#pragma unroll
        for (int c = 0; c < N; ++c)
          v[c] = Op::combine(v[c], theirs->v[c]);
      }
    }
  }
  cluster.sync(); // a block's shared memory must outlive the reads of it
  return rank == 0;
}
#endif

} // namespace cr
