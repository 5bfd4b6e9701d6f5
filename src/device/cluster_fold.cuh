// Folding a value per column across the blocks of a thread-block cluster, through distributed
// shared memory (sm_90 and newer). Layer: device primitives.
//
// Why: a column reduction cut into many row slices must fold every slice's values somewhere.
// Through global memory that costs a store, a device-scope ticket and a reload per slice, and
// the one block that folds them runs while the rest of the GPU waits. A cluster's blocks can
// read each other's shared memory after a cluster barrier instead, so K slices leave one
// partial row, not K, and the global fold is K times shorter.
#pragma once

#include <cooperative_groups.h>
#include <stdint.h>

namespace cr {

// The largest cluster the launcher asks for: 8 blocks, the portable limit of sm_90.
constexpr unsigned MAX_CLUSTER_BLOCKS = 8;

// Blocks in this block's cluster along y (1 when launched without clusters, or on a GPU
// before sm_90, which has none).
__device__ __forceinline__ unsigned cluster_blocks_y() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  return cooperative_groups::this_cluster().dim_blocks().y;
#else
  return 1;
#endif
}

// The cluster's blocks each hold COUNT values in `stage` (their own shared memory, written
// before the call). Block rank 0 combines, for each i < COUNT, the values of ranks 0, 1, ...,
// K - 1 in that order and hands them to write(i, value); the other ranks do nothing but wait.
// With cluster dimensions (1, K, 1) the rank is the block's y index within the cluster, so
// the order is the order of blockIdx.y: fixed by the launch shape, never by the GPU.
// Every thread of every block of the cluster calls it; it returns true in rank 0's threads.
// The second barrier keeps each block, and so its shared memory, alive until rank 0 has read
// it.
template <class Op, int BLOCK, class T, class Write>
__device__ __forceinline__ bool fold_across_cluster(const T *stage, int count, Write write) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned K = cluster.num_blocks();
  cluster.sync(); // release of every block's stage, acquire for rank 0's reads
  const bool root = cluster.block_rank() == 0;
  if (root)
    for (int i = threadIdx.x; i < count; i += BLOCK) {
      // The K remote loads are issued before any is combined: one trip, not K.
      T x[MAX_CLUSTER_BLOCKS];
#pragma unroll
      for (unsigned r = 0; r < MAX_CLUSTER_BLOCKS; ++r)
        if (r < K)
          x[r] = cluster.map_shared_rank(stage, r)[i];
      T v = x[0];
#pragma unroll
      for (unsigned r = 1; r < MAX_CLUSTER_BLOCKS; ++r)
        if (r < K)
          v = Op::combine(v, x[r]);
      write(i, v);
    }
  cluster.sync();
  return root;
#else
  // No clusters before sm_90: the launcher never asks for them there (one block per cluster).
  for (int i = threadIdx.x; i < count; i += BLOCK)
    write(i, stage[i]);
  return true;
#endif
}

} // namespace cr
