// Segments of any lengths, and long rows, load-balanced by cutting the elements into equal
// chunks. Layer: kernels.
//
// The segments laid end to end form one sequence of `total` elements (for rows, row s is
// segment s; the gaps of a leading dimension are skipped). That sequence is cut into chunks of
// `chunk` elements, the same work for every chunk whatever the segment lengths are, and blocks
// take chunks in a grid-stride loop. Inside a chunk lie pieces of segments:
//   - a segment that starts and ends in the chunk is reduced and written right away;
//   - a segment that crosses chunk boundaries leaves one partial per chunk it touches: the
//     chunk where it starts writes `opening[chunk]`, every later one `closing[chunk]`. Each
//     writer then takes a ticket from the counter of the segment's first chunk; the one that
//     takes the last ticket combines the partials in chunk order and writes the result, and
//     resets the counter for the next launch. No block ever waits for another.
// Within a chunk:
//   - a short piece (at most 1/SHORT of the chunk) is folded by one warp, warp w taking the
//     short pieces w, w + WARPS, ... ;
//   - the chunk is cut into one equal slice per warp, and each warp folds the parts of the
//     longer pieces that lie in its slice, keeping one value per piece; after a barrier, a warp
//     per long piece combines the warps' values in warp order.
// So every warp reads the same share of the long pieces, and at most one short piece more than
// another: no warp reads a long piece alone while the others wait at a barrier
// (docs/design.md#segments).
//
// Determinism: chunk size, slices and piece boundaries, and so which warp folds what, depend
// only on the segment lengths, never on the grid or the GPU; warps' values combine in warp
// order and partials in chunk order. So the bits depend only on the input, its alignment and
// the segment lengths.
#pragma once

#include "../device/warp_reduce.cuh"
#include "chunk_size.h"
#include "fold_range.cuh"

#include <cuda/atomic>
#include <stdint.h>

namespace cr {

// Where the segments are. Either offsets (num_segments + 1 non-decreasing element offsets from
// `in`; segment s is [offsets[s], offsets[s + 1])) or, when offsets is null, a matrix: segment s
// is row s, [s * ld, s * ld + cols).
struct segment_layout {
  const int64_t *offsets;
  uint64_t count; // segments
  uint64_t cols, ld;
};

// Start of segment s in the end-to-end sequence (s may be count: the end).
__device__ __forceinline__ int64_t seq_begin(const segment_layout &S, uint64_t s) {
  return S.offsets ? S.offsets[s] - S.offsets[0] : (int64_t)(s * S.cols);
}
// Element offset (from `in`) of the segment's first element.
__device__ __forceinline__ int64_t mem_begin(const segment_layout &S, uint64_t s) {
  return S.offsets ? S.offsets[s] : (int64_t)(s * S.ld);
}

// The first segment s in [0, count] whose start in the sequence is >= x: a 32-way search by one
// warp (each step probes 32 positions at once, so a million segments take four steps of
// dependent loads, not twenty). All lanes get the answer.
__device__ __forceinline__ uint64_t warp_lower_bound(const segment_layout &S, int64_t x) {
  if (!S.offsets) { // rows: row s starts at s * cols
    const uint64_t s = S.cols ? (uint64_t)((x + (int64_t)S.cols - 1) / (int64_t)S.cols) : 0;
    return s < S.count ? s : S.count;
  }
  const int lane = threadIdx.x % WARP_SIZE;
  // The answer is in [lo, hi]; hi is count + 1 ("none") or a position known to be >= x.
  uint64_t lo = 0, hi = S.count + 1;
  while (lo < hi) {
    const uint64_t step = (hi - lo + WARP_SIZE - 1) / WARP_SIZE;
    const uint64_t p = lo + lane * step;
    const unsigned hits = __ballot_sync(FULL_MASK, p < hi && seq_begin(S, p) >= x);
    if (hits == 0) {
      const uint64_t probes = (hi - 1 - lo) / step; // index of the last probe below hi
      lo = lo + (probes < WARP_SIZE - 1 ? probes : WARP_SIZE - 1) * step + 1;
    } else {
      const int f = __ffs(hits) - 1;
      hi = lo + f * step;
      if (f > 0)
        lo = lo + (f - 1) * step + 1;
    }
  }
  return lo;
}

// The segments with a piece in chunk k of `chunks` (chunk elements each), into lo and hi: the
// first that starts in it (or count), and the first that starts in the next (for the last
// chunk, count: it also takes the empty segments that start at the very end). One full warp;
// every lane gets both.
__device__ __forceinline__ void chunk_segments(const segment_layout &S, int64_t k, int64_t chunk,
                                               int64_t chunks, uint64_t &lo, uint64_t &hi) {
  lo = warp_lower_bound(S, k * chunk);
  hi = k + 1 == chunks ? S.count : warp_lower_bound(S, k * chunk + chunk);
  lo = lo < S.count ? lo : S.count;
  hi = hi < S.count ? hi : S.count;
}

// One segment's piece inside a chunk, and what to do with its result.
struct piece {
  uint64_t seg;
  int64_t begin, end; // element offsets from `in`
  int64_t origin;     // element offset of the segment's first element (its index 0)
  int64_t at;         // where the piece starts in the end-to-end sequence
  int role;           // WHOLE, OPENING or CLOSING
};
enum { PIECE_WHOLE = 0, PIECE_OPENING = 1, PIECE_CLOSING = 2 };

template <class Op> struct chunk_ctx {
  segment_layout S; // a copy: a reference to the kernel parameter would put it in local memory
  int64_t total, chunk;
  typename Op::T *opening, *closing; // one partial per chunk
  unsigned int *counters;            // one per chunk
  typename Op::Out *out;
};

// Piece i of chunk k: i = 0 is the segment crossing into the chunk (if `crossing`), then the
// segments that start in the chunk, from s_lo.
__device__ __forceinline__ piece piece_of(const segment_layout &S, int64_t total, int64_t chunk, int64_t k,
                                          bool crossing, uint64_t s_lo, uint64_t i) {
  const int64_t cb = k * chunk, ce = cb + chunk < total ? cb + chunk : total;
  piece p;
  p.seg = crossing ? s_lo - 1 + i : s_lo + i;
  const int64_t sb = seq_begin(S, p.seg), seq_end = seq_begin(S, p.seg + 1);
  p.origin = mem_begin(S, p.seg);
  const int64_t from = sb > cb ? sb : cb, to = seq_end < ce ? seq_end : ce;
  p.begin = p.origin + (from - sb);
  p.end = p.origin + (to > from ? to - sb : from - sb);
  p.at = from;
  p.role = sb < cb ? PIECE_CLOSING : (seq_end > ce ? PIECE_OPENING : PIECE_WHOLE);
  return p;
}

// Called by one full warp with the piece's reduced value in lane 0: write it or its partial,
// and if this warp completes a crossing segment, combine its partials and write the result.
template <class Op>
__device__ __forceinline__ void finish_piece(const chunk_ctx<Op> &C, const piece &p, int64_t k,
                                             typename Op::T v) {
  using T = typename Op::T;
  const int lane = threadIdx.x % WARP_SIZE;
  const int64_t sb = seq_begin(C.S, p.seg), len = seq_begin(C.S, p.seg + 1) - sb;
  if (p.role == PIECE_WHOLE) {
    // An empty segment: sums write 0; the other ops leave the output alone (as the full
    // reduction's EMPTY does).
    if (lane == 0 && (len > 0 || (Op::is_sum && Op::kind != CUREDUCE_MEAN)))
      C.out[p.seg] = Op::finish(v, (uint64_t)len);
    return;
  }
  const int64_t first = sb / C.chunk, last = (sb + len - 1) / C.chunk;
  bool done = false;
  if (lane == 0) {
    (p.role == PIECE_OPENING ? C.opening : C.closing)[k] = v;
    cuda::atomic_ref<unsigned int, cuda::thread_scope_device> count(C.counters[first]);
    // Release our partial, acquire the others': the last writer sees every partial.
    done = count.fetch_add(1u, cuda::memory_order_acq_rel) == (unsigned)(last - first);
  }
  done = __shfl_sync(FULL_MASK, done, 0);
  __syncwarp(); // orders lane 0's acquire before the other lanes' loads
  if (!done)
    return;
  // Partials in chunk order: opening[first], closing[first + 1 .. last]. Lane l folds entries
  // l, l + 32, ... in order, then the warp's tree: a fixed order.
  T a = Op::identity();
  for (int64_t j = first + lane; j <= last; j += WARP_SIZE)
    a = Op::combine(a, load_cg(j == first ? &C.opening[j] : &C.closing[j]));
  a = warp_reduce<Op>(a);
  if (lane == 0) {
    C.out[p.seg] = Op::finish(a, (uint64_t)len);
    C.counters[first] = 0u; // every writer has counted: ready for the next launch
  }
}

// Fold in[lo, hi) (element offsets) with one warp; lane 0 gets the value.
template <cureduce_dtype IN, class Op, int UNROLL>
__device__ __forceinline__ typename Op::T warp_fold(const storage_t<IN> *__restrict__ in, int64_t lo,
                                                    int64_t hi, int64_t origin) {
  return warp_reduce<Op>(fold_range<IN, Op, UNROLL>(in, lo, hi, origin, threadIdx.x % WARP_SIZE, WARP_SIZE));
}

template <cureduce_dtype IN, cureduce_dtype ACC, cureduce_op OP, int BLOCK, int UNROLL, int SHORT>
__global__ void __launch_bounds__(BLOCK)
    reduce_chunked(const storage_t<IN> *__restrict__ in, segment_layout S, int64_t min_chunk,
                   int64_t max_chunks, typename compare_op<IN, OP, ACC>::T *__restrict__ opening,
                   typename compare_op<IN, OP, ACC>::T *__restrict__ closing,
                   unsigned int *__restrict__ counters,
                   typename compare_op<IN, OP, ACC>::Out *__restrict__ out) {
  using Op = compare_op<IN, OP, ACC>;
  using T = typename Op::T;
  constexpr int WARPS = BLOCK / WARP_SIZE;
  const int warp = threadIdx.x / WARP_SIZE, lane = threadIdx.x % WARP_SIZE;

  // The chunk size depends only on the total: at least min_chunk, and at most max_chunks
  // chunks (the workspace holds that many partials). min_chunk is a multiple of WARPS vectors,
  // so the warps' slices are equal and start on the same 16-byte phase.
  const int64_t total = seq_begin(S, S.count);
  const int64_t chunk = chunk_elements<int64_t>(total, min_chunk, max_chunks);
  const int64_t chunks = total > 0 ? (total + chunk - 1) / chunk : 1;
  const int64_t short_max = chunk / SHORT;
  const int64_t slice_lo = warp * (chunk / WARPS), slice_hi = slice_lo + chunk / WARPS; // this warp's slice
  const chunk_ctx<Op> C{S, total, chunk, opening, closing, counters, out};

  __shared__ uint64_t s_lo_shared, s_hi_shared;
  // The chunk's long pieces (fewer than SHORT: they are disjoint and each longer than
  // chunk / SHORT), and one value per (long piece, warp).
  __shared__ piece long_pieces[SHORT];
  __shared__ unsigned long_count;
  __shared__ T warp_values[SHORT * WARPS];
  for (int64_t k = blockIdx.x; k < chunks; k += gridDim.x) {
    const int64_t cb = k * chunk;
    if (warp == 0) {
      uint64_t lo, hi;
      chunk_segments(S, k, chunk, chunks, lo, hi);
      if (lane == 0) {
        s_lo_shared = lo;
        s_hi_shared = hi;
        long_count = 0;
      }
    }
    __syncthreads();
    const uint64_t s_lo = s_lo_shared, s_hi = s_hi_shared;
    // Does the segment before s_lo reach into this chunk?
    const bool crossing = s_lo > 0 && seq_begin(S, s_lo) > cb;
    const uint64_t pieces = (s_hi - s_lo) + (crossing ? 1 : 0);

    // Short pieces, a warp each; the long ones are listed (in any order: each is folded and
    // written on its own).
    for (uint64_t i = warp; i < pieces; i += WARPS) {
      const piece p = piece_of(S, total, chunk, k, crossing, s_lo, i);
      if (p.end - p.begin > short_max) {
        if (lane == 0)
          long_pieces[atomicAdd(&long_count, 1u)] = p;
        continue;
      }
      finish_piece<Op>(C, p, k, warp_fold<IN, Op, UNROLL>(in, p.begin, p.end, p.origin));
    }
    __syncthreads(); // the list is complete
    const unsigned long_n = long_count;

    // Long pieces: each warp folds the part of each that lies in its slice of the chunk. Which
    // warp folds what follows the slices, not the list order, so the bits do not depend on the
    // order of the list.
    for (unsigned e = 0; e < long_n; ++e) {
      const piece &p = long_pieces[e];
      const int64_t from = p.at - cb; // where the piece starts within the chunk
      const int64_t lo = slice_lo > from ? slice_lo : from;
      const int64_t hi = slice_hi < from + (p.end - p.begin) ? slice_hi : from + (p.end - p.begin);
      T v = Op::identity();
      if (lo < hi)
        v = fold_range<IN, Op, UNROLL>(in, p.begin + (lo - from), p.begin + (hi - from), p.origin, lane,
                                       WARP_SIZE);
      v = warp_reduce<Op>(v);
      if (lane == 0)
        warp_values[e * WARPS + warp] = v;
    }
    __syncthreads(); // every warp's values are in

    // A warp per long piece: the warps' values in warp order, then the piece's result or partial.
    for (unsigned e = warp; e < long_n; e += WARPS) {
      const T a = lane < WARPS ? warp_values[e * WARPS + lane] : Op::identity();
      finish_piece<Op>(C, long_pieces[e], k, warp_reduce<Op>(a));
    }
    __syncthreads(); // everyone has read this chunk's shared values before the next overwrites them
  }
}

} // namespace cr
