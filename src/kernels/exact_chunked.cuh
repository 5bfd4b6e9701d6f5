// Exact sums of segments of any lengths, load-balanced as reduce_chunked.cuh cuts them. Layer:
// kernels.
//
// The segments laid end to end are cut into equal chunks, a few a block, and blocks take
// chunks in turn, so one long segment is read by many blocks. In a chunk, each segment's
// piece is summed into an exact pair (exact_output.cuh): pieces of at most a chunk / 8 by a warp
// each, longer ones (fewer than 8) by the whole block. A segment inside the chunk is rounded
// from its pair. A segment that crosses chunks leaves its pair and flags for each chunk it
// touches; the warp that leaves the last one (a ticket counted on the segment's first chunk)
// adds the pairs and rounds them. The sum of exact pairs is exact whatever their order, so
// neither the chunks nor the grid change a bit. An output whose pairs could not hold it (a
// pair pushed, or a mean too close to a rounding boundary) is summed again from its elements
// into a full state, by the warp when a whole segment in one chunk, else by the block.
#pragma once

#include "exact_output.cuh"
#include "reduce_chunked.cuh"

namespace cr {

// Pieces longer than a chunk / EXACT_LONG_PIECE are summed by the whole block.
constexpr int EXACT_LONG_PIECE = 8;
// Segments a chunk may hold, on average, before a warp takes each segment instead.
constexpr uint64_t EXACT_SPREAD_SEGMENTS = 64;
// Outputs a chunk can hand to the block's slow path: its long whole segments and the (at most
// two) crossing segments whose last pair it left.
constexpr int EXACT_REDO_MAX = EXACT_LONG_PIECE + 2;

// How the elements are cut, and where crossing pieces leave their pairs: an opening entry (a
// segment's first chunk) and a closing one (each later chunk) a chunk, and a ticket on each
// segment's first chunk (zero on entry, reset by the warp that takes the last).
struct exact_chunk_plan {
  int64_t min_chunk;        // elements
  int64_t max_chunks;       // entries the workspace holds
  int64_t chunks_per_block; // chunks a block of the grid takes, at least
  double2 *opening, *closing;
  unsigned *opening_flags, *closing_flags; // 1 a state was used, 2 an element was not -0.0
  unsigned *tickets;
};

struct exact_chunk_shared {
  exact_word states[EXACT_AXIS_WARPS][EXACT_STATE_WORDS]; // a warp's; clear between outputs
  double pairs[EXACT_AXIS_WARPS][2];
  piece long_pieces[EXACT_LONG_PIECE];
  uint64_t redo[EXACT_REDO_MAX];
  uint64_t s_lo, s_hi;
  unsigned long_count, redo_count;
};

// Long piece e of the chunk's list summed by the whole block into th's pair (warp 0's holds it,
// exact_block_pair); whether anything was pushed into the warps' states. Every thread calls it.
template <cureduce_dtype IN>
__device__ __forceinline__ bool exact_long_piece_pair(const storage_t<IN> *in, const piece &p,
                                                      exact_thread<IN> &th, exact_chunk_shared &sh,
                                                      exact_word *mine, bool &not_neg_zero) {
  exact_add_range<IN, 4>(th, in, (uint64_t)p.begin, (uint64_t)p.end, threadIdx.x, EXACT_AXIS_BLOCK, mine);
  return exact_block_pair(th, sh.pairs, not_neg_zero, mine);
}

// The slow paths, out of line: inlined, they took registers from the pieces' loops.
template <cureduce_dtype IN>
__device__ __noinline__ void exact_chunked_output_warp(const storage_t<IN> *in, uint64_t begin, uint64_t end,
                                                       const exact_outputs &O, uint64_t o, exact_word *s) {
  exact_output_warp<IN>(in, begin, end, O, o, s);
}
template <cureduce_dtype IN>
__device__ __noinline__ void exact_chunked_output_block(const storage_t<IN> *in, uint64_t begin, uint64_t end,
                                                        const exact_outputs &O, uint64_t o,
                                                        exact_word (*s)[EXACT_STATE_WORDS]) {
  exact_output_block<IN>(in, begin, end, O, o, s);
}

// A piece's pair (lane 0's) taken to its end by a full warp. `used`: a lane of the piece's team
// pushed, so this warp's state is cleared first and the output takes the slow path. A whole
// segment is rounded, or summed again by this warp (by the block, through sh.redo, when
// `block_redo` or when longer than EXACT_CHUNK). A crossing piece leaves its pair; the warp
// that leaves the segment's last one adds them all and rounds, or lists the segment in sh.redo.
template <cureduce_dtype IN, int PLAIN>
__device__ void exact_piece_end(const storage_t<IN> *in, const exact_pair<PLAIN> &pair, bool used,
                                bool not_neg_zero, const piece &p, int64_t k, int64_t chunk,
                                const segment_layout &S, const exact_chunk_plan &P, const exact_outputs &O,
                                bool block_redo, exact_word *mine, exact_chunk_shared &sh) {
  const int lane = threadIdx.x & 31;
  if (used)
    exact_clear_warp_state(mine);
  const int64_t sb = seq_begin(S, p.seg), len = seq_begin(S, p.seg + 1) - sb;
  if (p.role == PIECE_WHOLE) {
    bool done = lane == 0 && !used && exact_write_pair(pair, (uint64_t)len, not_neg_zero, O, p.seg);
    if (__shfl_sync(0xffffffffu, done, 0))
      return;
    if (!block_redo && (uint64_t)len <= EXACT_CHUNK)
      exact_chunked_output_warp<IN>(in, (uint64_t)p.begin, (uint64_t)p.end, O, p.seg, mine);
    else if (lane == 0)
      sh.redo[atomicAdd(&sh.redo_count, 1u)] = p.seg;
    return;
  }
  const int64_t first = sb / chunk, last = (sb + len - 1) / chunk;
  bool finish = false;
  if (lane == 0) {
    const bool opening = p.role == PIECE_OPENING;
    (opening ? P.opening : P.closing)[k] = make_double2(pair.a0, pair.a1);
    (opening ? P.opening_flags : P.closing_flags)[k] = (used ? 1u : 0u) | (not_neg_zero ? 2u : 0u);
    cuda::atomic_ref<unsigned int, cuda::thread_scope_device> ticket(P.tickets[first]);
    // Release this pair, acquire the others': the last to count sees every pair.
    finish = ticket.fetch_add(1u, cuda::memory_order_acq_rel) == (unsigned)(last - first);
  }
  finish = __shfl_sync(0xffffffffu, finish, 0);
  __syncwarp(); // orders lane 0's acquire before the other lanes' loads
  if (!finish)
    return;
  exact_pair<PLAIN> q;
  unsigned flags = 0;
  for (int64_t j = first + lane; j <= last; j += 32) {
    const double2 v = __ldcg(j == first ? &P.opening[j] : &P.closing[j]);
    flags |= __ldcg(j == first ? &P.opening_flags[j] : &P.closing_flags[j]);
    q.add(v.x, mine);
    q.add(v.y, mine);
  }
  exact_pair_reduce<32>(q, mine);
  flags = __reduce_or_sync(0xffffffffu, flags);
  const bool pushed = __any_sync(0xffffffffu, q.pushed);
  if (pushed)
    exact_clear_warp_state(mine);
  if (lane == 0) {
    P.tickets[first] = 0u; // every piece has counted: ready for the next launch
    const bool done =
        !pushed && !(flags & 1u) && exact_write_pair(q, (uint64_t)len, (flags & 2u) != 0, O, p.seg);
    if (!done)
      sh.redo[atomicAdd(&sh.redo_count, 1u)] = p.seg;
  }
}

template <cureduce_dtype IN>
__global__ void __launch_bounds__(EXACT_AXIS_BLOCK, exact_rows_blocks_per_sm(IN, EXACT_AXIS_BLOCK))
    exact_chunked(const storage_t<IN> *__restrict__ in, segment_layout S, exact_chunk_plan P,
                  exact_outputs O) {
  constexpr int WARPS = EXACT_AXIS_WARPS;
  __shared__ exact_chunk_shared sh;
  exact_clear_states(sh.states);
  __syncthreads();
  const int lane = threadIdx.x & 31, warp = threadIdx.x / 32;
  exact_word *const mine = sh.states[warp];

  // The chunk: at least min_chunk elements, about chunks_per_block a block of this grid but at
  // most 8 EXACT_CHUNK (so a chunk has fewer than 8 long pieces, and short ones take the
  // warp's slow path), and at most max_chunks of them (that alone makes chunks longer, beyond
  // 2^42 elements: more than a GPU holds).
  const int64_t total = seq_begin(S, S.count);
  const int64_t spread = (int64_t)gridDim.x * P.chunks_per_block,
                longest = EXACT_LONG_PIECE * (int64_t)EXACT_CHUNK;
  const int64_t by_workspace = (total + P.max_chunks - 1) / P.max_chunks;
  int64_t chunk = (total + spread - 1) / spread;
  chunk = chunk < longest ? chunk : longest;
  chunk = chunk > P.min_chunk ? chunk : P.min_chunk;
  chunk = chunk > by_workspace ? chunk : by_workspace;
  const int64_t chunks = total > 0 ? (total + chunk - 1) / chunk : 1;
  const int64_t short_max = chunk / EXACT_LONG_PIECE;

  // Many segments over few elements (more than EXACT_SPREAD_SEGMENTS a chunk: chunks cannot
  // split empty segments, so a few blocks would take them all): a warp a segment instead, by
  // the slow path, which needs no team. Every segment is then shorter than EXACT_CHUNK.
  if ((uint64_t)chunks * EXACT_SPREAD_SEGMENTS < S.count && total <= (int64_t)EXACT_CHUNK) {
    for (uint64_t s = (uint64_t)blockIdx.x * WARPS + warp; s < S.count; s += (uint64_t)gridDim.x * WARPS)
      exact_chunked_output_warp<IN>(in, (uint64_t)mem_begin(S, s), (uint64_t)mem_begin(S, s + 1), O, s, mine);
    return;
  }

  for (int64_t k = blockIdx.x; k < chunks; k += gridDim.x) {
    const int64_t cb = k * chunk;
    if (warp == 0) {
      uint64_t lo, hi;
      chunk_segments(S, k, chunk, chunks, lo, hi);
      if (lane == 0) {
        sh.s_lo = lo;
        sh.s_hi = hi;
        sh.long_count = 0;
        sh.redo_count = 0;
      }
    }
    __syncthreads();
    const uint64_t s_lo = sh.s_lo, s_hi = sh.s_hi;
    const bool crossing = s_lo > 0 && seq_begin(S, s_lo) > cb; // the segment before reaches in
    const uint64_t pieces = (s_hi - s_lo) + (crossing ? 1 : 0);

    // Short pieces, a warp each; the long ones are listed for the block.
    for (uint64_t i = warp; i < pieces; i += WARPS) {
      const piece p = piece_of(S, total, chunk, k, crossing, s_lo, i);
      if (p.end - p.begin > short_max) {
        if (lane == 0)
          sh.long_pieces[atomicAdd(&sh.long_count, 1u)] = p;
        continue;
      }
      exact_thread<IN> th;
      exact_add_range<IN, 4>(th, in, (uint64_t)p.begin, (uint64_t)p.end, lane, 32, mine);
      exact_pair_reduce<32>(th.pair, mine);
      const bool not_neg_zero = __any_sync(0xffffffffu, th.not_neg_zero);
      const bool used = __any_sync(0xffffffffu, th.pair.pushed);
      exact_piece_end<IN>(in, th.pair, used, not_neg_zero, p, k, chunk, S, P, O, false, mine, sh);
    }
    __syncthreads(); // the list is complete
    const unsigned long_n = sh.long_count;

    // Long pieces, the whole block each: the warps' pairs added into warp 0's.
    for (unsigned e = 0; e < long_n; ++e) {
      const piece p = sh.long_pieces[e];
      exact_thread<IN> th;
      bool not_neg_zero;
      const bool used = exact_long_piece_pair<IN>(in, p, th, sh, mine, not_neg_zero);
      if (used) { // every warp's state may hold pushes
        exact_clear_states(sh.states);
        __syncthreads();
      }
      if (warp == 0)
        exact_piece_end<IN>(in, th.pair, used, not_neg_zero, p, k, chunk, S, P, O, true, mine, sh);
      __syncthreads(); // pairs free again
    }

    // The slow path of the outputs listed: the whole block each, states clear.
    const unsigned redo_n = sh.redo_count;
    for (unsigned r = 0; r < redo_n; ++r) {
      const uint64_t s = sh.redo[r];
      exact_chunked_output_block<IN>(in, (uint64_t)mem_begin(S, s), (uint64_t)mem_begin(S, s + 1), O, s,
                                     sh.states);
    }
    __syncthreads(); // everyone has read this chunk's shared values before the next overwrites them
  }
}

// A piece's exact pair (a0 + a1, one thread's) added to its segment's state, with the sign
// flag and, from the segment's first piece, the segment's length.
template <int PLAIN>
__device__ __forceinline__ void exact_piece_to_state(const exact_pair<PLAIN> &pair, bool not_neg_zero,
                                                     const piece &p, const segment_layout &S,
                                                     exact_word *state) {
  exact_global_add(state, pair.a0);
  exact_global_add(state, pair.a1);
  if (not_neg_zero)
    atomicAdd(&state[CR_EXACT_NOT_NEG_ZERO], 1ull);
  if (p.role != PIECE_CLOSING)
    atomicAdd(&state[CR_EXACT_COUNT], (exact_word)(seq_begin(S, p.seg + 1) - seq_begin(S, p.seg)));
}

// Chunks for exact_chunked_states: about chunks_per_block a block of the grid, but fewer than
// about EXACT_SPREAD_SEGMENTS segments a chunk on average (a chunk's short pieces are its
// warps' alone) unless that would take chunks below min_chunk elements, and at most
// EXACT_LONG_PIECE * EXACT_CHUNK (so a warp's piece stays within EXACT_CHUNK). States need no
// workspace a chunk, so chunks may be many.
__device__ __forceinline__ int64_t exact_states_chunk(int64_t total, uint64_t count, int64_t spread,
                                                      int64_t min_chunk) {
  const int64_t longest = EXACT_LONG_PIECE * (int64_t)EXACT_CHUNK;
  int64_t chunk = (total + spread - 1) / spread;
  const uint64_t by_count = (uint64_t)total / (count / EXACT_SPREAD_SEGMENTS + 1);
  chunk = (uint64_t)chunk < by_count ? chunk : (int64_t)by_count;
  chunk = chunk > min_chunk ? chunk : min_chunk;
  return chunk < longest ? chunk : longest;
}

// Lane `src`'s piece, in every lane of the warp (the fields exact_short_piece_to_state reads).
__device__ __forceinline__ piece shfl_piece(const piece &q, int src) {
  piece p{};
  p.seg = __shfl_sync(0xffffffffu, q.seg, src);
  p.begin = __shfl_sync(0xffffffffu, q.begin, src);
  p.end = __shfl_sync(0xffffffffu, q.end, src);
  p.role = __shfl_sync(0xffffffffu, q.role, src);
  return p;
}

// A short piece summed by one full warp and added to its segment's state: the lanes' pairs
// added into lane 0's, whose digits go to the state, then what they pushed into the warp's
// state s (cleared again).
template <cureduce_dtype IN>
__device__ __forceinline__ void exact_short_piece_to_state(const storage_t<IN> *in, const piece &p,
                                                           const segment_layout &S, exact_word *s,
                                                           exact_word *states) {
  const int lane = threadIdx.x & 31;
  exact_thread<IN> th;
  exact_add_range<IN, 4>(th, in, (uint64_t)p.begin, (uint64_t)p.end, lane, 32, s);
  exact_pair_reduce<32>(th.pair, s);
  const bool not_neg_zero = __any_sync(0xffffffffu, th.not_neg_zero);
  const bool used = __any_sync(0xffffffffu, th.pair.pushed);
  exact_word *const state = states + p.seg * CUREDUCE_EXACT_STATE_WORDS;
  if (lane == 0)
    exact_piece_to_state(th.pair, not_neg_zero, p, S, state);
  if (used) {
    __syncwarp(); // the lanes' pushes are in
    exact_publish_split(s, state, lane, 32);
    __syncwarp();
  }
}

// Segments added to states (segment s to states[s * CUREDUCE_EXACT_STATE_WORDS ...]), cut
// into chunks as exact_chunked cuts them, so a long segment among many is read by many blocks.
// Each piece's pair (a warp's, or the block's for a long piece) adds its digits to the
// segment's state, and what the pairs pushed into the warps' states in shared memory follows
// (exact_publish_split). Every addition to a state is below 2^32 a limb and integer additions
// commute, so neither the chunks nor the grid change a state's value; exact_carry_states
// carries the states after. Empty segments are left alone.
template <cureduce_dtype IN>
__global__ void __launch_bounds__(EXACT_AXIS_BLOCK, exact_rows_blocks_per_sm(IN, EXACT_AXIS_BLOCK))
    exact_chunked_states(const storage_t<IN> *__restrict__ in, segment_layout S, int64_t min_chunk,
                         int64_t chunks_per_block, exact_word *__restrict__ states) {
  constexpr int WARPS = EXACT_AXIS_WARPS;
  __shared__ exact_chunk_shared sh;
  exact_clear_states(sh.states);
  __syncthreads();
  const int lane = threadIdx.x & 31, warp = threadIdx.x / 32;
  exact_word *const mine = sh.states[warp];
  const int64_t total = seq_begin(S, S.count);
  if (total <= 0)
    return;
  const int64_t chunk = exact_states_chunk(total, S.count, (int64_t)gridDim.x * chunks_per_block, min_chunk);
  const int64_t chunks = (total + chunk - 1) / chunk, short_max = chunk / EXACT_LONG_PIECE;

  for (int64_t k = blockIdx.x; k < chunks; k += gridDim.x) {
    if (warp == 0) {
      uint64_t lo, hi;
      chunk_segments(S, k, chunk, chunks, lo, hi);
      if (lane == 0) {
        sh.s_lo = lo;
        sh.s_hi = hi;
        sh.long_count = 0;
      }
    }
    __syncthreads();
    const uint64_t s_lo = sh.s_lo, s_hi = sh.s_hi;
    const bool crossing = s_lo > 0 && seq_begin(S, s_lo) > k * chunk; // the segment before reaches in
    const uint64_t pieces = (s_hi - s_lo) + (crossing ? 1 : 0);

    // Short pieces, a warp each: warp w takes pieces w, w + WARPS, ..., found 32 at a time (lane
    // l looks at piece base + l WARPS + w, so a run of empty segments costs a load a lane, not
    // a round each); the long ones are listed for the block.
    for (uint64_t base = 0; base < pieces; base += WARPS * 32) {
      const uint64_t i = base + (uint64_t)lane * WARPS + warp;
      piece q{};
      bool take = false;
      if (i < pieces) {
        q = piece_of(S, total, chunk, k, crossing, s_lo, i);
        if (q.end - q.begin > short_max)
          sh.long_pieces[atomicAdd(&sh.long_count, 1u)] = q;
        take = q.end > q.begin && q.end - q.begin <= short_max;
      }
      for (unsigned todo = __ballot_sync(0xffffffffu, take); todo; todo &= todo - 1)
        exact_short_piece_to_state<IN>(in, shfl_piece(q, __ffs(todo) - 1), S, mine, states);
    }
    __syncthreads(); // the list is complete
    const unsigned long_n = sh.long_count;

    // Long pieces, the whole block each: the warps' pairs added into warp 0's.
    for (unsigned e = 0; e < long_n; ++e) {
      const piece p = sh.long_pieces[e];
      exact_thread<IN> th;
      bool not_neg_zero;
      const bool used = exact_long_piece_pair<IN>(in, p, th, sh, mine, not_neg_zero);
      exact_word *const state = states + p.seg * CUREDUCE_EXACT_STATE_WORDS;
      if (threadIdx.x == 0)
        exact_piece_to_state(th.pair, not_neg_zero, p, S, state);
      if (used) // every warp's state may hold pushes (exact_block_pair ends at a barrier)
#pragma unroll 1
        for (int w = 0; w < WARPS; ++w)
          exact_publish_split(sh.states[w], state, threadIdx.x, EXACT_AXIS_BLOCK);
      __syncthreads(); // pairs and states free again
    }
    __syncthreads(); // everyone has read this chunk's shared values before the next overwrites them
  }
}

} // namespace cr
