// Launch shape of the full-array kernel, as data handed to its launcher (launch_full.cuh).
// Layer: dispatch.
//
// Nothing here is derived from the GPU: the grid size fixes the order in which partials are
// combined, and so the bits of a float result, which must be the same on every GPU
// (docs/design.md#determinism).
#pragma once

#include <stdint.h>

namespace cr {

// BLOCK threads a block, each with UNROLL 16-byte vectors in flight per tile; a grid of at most
// MAX_BLOCKS blocks, ARG_BLOCKS for ARGMIN and ARGMAX. The arg ops' kernels need 40 to 48
// registers a thread, so fewer of their blocks fit on an SM: a smaller grid keeps them to
// about one wave. Inputs of at most ONE_BLOCK_TILES tiles take one block, which walks them all
// and skips the last-block finish: a few more rounds of loads cost less than the finish, except
// where one block would convert many elements (1-byte inputs: 2 tiles, not 4).
template <int BLOCK_, int UNROLL_, int MAX_BLOCKS_, int ARG_BLOCKS_, int ONE_BLOCK_TILES_>
struct full_policy {
  static constexpr int BLOCK = BLOCK_;
  static constexpr int UNROLL = UNROLL_;
  static constexpr int MAX_BLOCKS = MAX_BLOCKS_;
  static constexpr int ARG_BLOCKS = ARG_BLOCKS_;
  static constexpr int ONE_BLOCK_TILES = ONE_BLOCK_TILES_;
  static_assert(ARG_BLOCKS > 0 && ARG_BLOCKS <= MAX_BLOCKS, "arg ops' grid cap out of range");
  static_assert(ONE_BLOCK_TILES >= 1, "one tile always takes one block");
};

// The largest MAX_BLOCKS below: the handle's partials workspace holds one partial per block.
constexpr int FULL_MAX_BLOCKS = 1024;

// Blocks for each of `arrays` arrays of `tiles` tiles (a full array, or the rows that are each
// reduced as one) under the grid cap `cap` (MAX_BLOCKS or ARG_BLOCKS): one up to
// one_block_tiles tiles, else the cap shared among the arrays, at least one each and never more
// than the tiles. A function of the shape only: it fixes the order of combination.
constexpr uint64_t full_blocks(uint64_t tiles, uint64_t arrays, uint64_t cap, uint64_t one_block_tiles) {
  if (tiles <= one_block_tiles)
    return 1;
  const uint64_t share = arrays > 0 && cap / arrays > 0 ? cap / arrays : 1;
  return share < tiles ? share : tiles;
}

// The policy for ELEM-byte input elements (a 16-byte vector holds 16 / ELEM of them). 1024
// blocks of 256 threads are one wave on a 132-SM H100 or H200: 8 blocks on each SM.
template <int ELEM> struct full_policy_for;
// Tuned on an H100 (SXM, 132 SMs): docs/design.md#full-array-launch-shape
//                                          BLOCK UNROLL MAX_BLOCKS ARG_BLOCKS ONE_BLOCK_TILES
template <> struct full_policy_for<1> : full_policy<256, 4, 1024, 384, 2> {};
template <> struct full_policy_for<2> : full_policy<256, 4, 1024, 384, 4> {};
template <> struct full_policy_for<4> : full_policy<256, 4, 1024, 384, 4> {};
template <> struct full_policy_for<8> : full_policy<256, 4, 1024, 512, 4> {};

} // namespace cr
