// Exact sums of columns, and of the middle axis of an N-d array as a batch of them: a lane a
// column, the warps of a block over a slice of rows, then the slices' pairs added by the last
// block to arrive; or a thread a column for columns of few rows; or a warp a matrix for many
// small matrices. The pairs are rounded as in exact_output.cuh. Layer: kernels.
#pragma once

#include "../device/block_ticket.cuh"
#include "exact_output.cuh"

namespace cr {

// The slow path of one column of at most EXACT_CHUNK rows, by one warp, as exact_output_warp.
template <cureduce_dtype IN>
__device__ void exact_column_warp(const storage_t<IN> *col, uint64_t ld, uint64_t rows,
                                  const exact_outputs &O, uint64_t o, exact_word *s) {
  exact_thread<IN> th;
  for (uint64_t r = threadIdx.x & 31; r < rows; r += 32)
    th.scalar(col[r * ld], s);
  exact_round_warp<IN>(th, rows, O, o, s);
}

// Columns of `batches` matrices of rows x cols (leading dimension ld, batch_stride elements
// apart), numbered across the batch: column v is column v % cols of matrix v / cols.
struct exact_cols_layout {
  uint64_t batches, rows, cols, ld, batch_stride;

  // The first element of column v (< batches * cols).
  template <class T> __device__ __forceinline__ const T *column(const T *in, uint64_t v) const {
    const uint64_t b = v / cols;
    return in + b * batch_stride + (v - b * cols);
  }
};

// How columns are cut: groups of 32 (a lane each), each in `slices` slices of slice_rows rows
// (a block each). With more than one slice, each block leaves its 32 pairs and flags in the
// workspace (item = group * slices + slice), the last block of each set of set_slices
// neighbouring slices adds that set's up and leaves the sum in its first slice's place, and
// with more than one set, the last of those blocks adds the sets' sums. Two levels keep each
// warp's chain of dependent loads and pair additions short: a group's 512 slices added by one
// block's warps were 64 each.
struct exact_cols_plan {
  uint64_t groups, slices, slice_rows, set_slices, sets;
  double2 *partials;     // [item][32]
  unsigned *flags;       // [item][32]: 1 a state was used, 2 an element was not -0.0
  unsigned *tickets;     // [group]: its slices, or with several sets its sets
  unsigned *set_tickets; // [group * sets + set]: the slices of the set
};

// Rows a column tile gathers for exact_tile: U vectors' worth (f64 is added element by element).
// f32 takes two vectors (8 rows), the others one. SLICED: exact_cols' loop, where bf16 takes
// two as well (16 rows); exact_pack's packs are 8 rows, so there bf16 keeps one.
template <cureduce_dtype IN, bool SLICED = false> struct exact_column_tile {
  static constexpr int U = IN == CUREDUCE_F32 || (SLICED && IN == CUREDUCE_BF16) ? 2 : 1;
  static constexpr int N = U * vec16<storage_t<IN>>::N;
};

// Add rows r, r + step, ... below end of one column to th: for all but f64, N rows at a time,
// gathered into vectors for exact_tile, the last ones padded with -0.0.
template <cureduce_dtype IN>
__device__ __forceinline__ void exact_add_column(exact_thread<IN> &th, const storage_t<IN> *col, uint64_t ld,
                                                 uint64_t r, uint64_t end, uint64_t step, exact_word *s) {
  using T = storage_t<IN>;
  using V = vec16<T>;
  if constexpr (IN != CUREDUCE_F64) {
    constexpr int U = exact_column_tile<IN, true>::U, N = exact_column_tile<IN, true>::N;
    for (; r + (N - 1) * step < end; r += N * step) {
      T e[N];
#pragma unroll
      for (int i = 0; i < N; ++i)
        e[i] = col[(r + i * step) * ld];
      V x[U];
      memcpy(x, e, sizeof x);
      th.template tile<U>(x, s);
    }
    if (r < end) {
      T e[N];
#pragma unroll
      for (int i = 0; i < N; ++i)
        e[i] = r + i * step < end ? col[(r + i * step) * ld] : negative_zero<IN>();
      V x[U];
      memcpy(x, e, sizeof x);
      th.template tile<U>(x, s);
    }
  } else {
#pragma unroll 4
    for (; r < end; r += step)
      th.scalar(col[r * ld], s);
  }
}

// EXACT_PACK_ROWS rows of K neighbouring columns, one word of K elements a row (one column, or
// a 4-byte word of a narrow type), rows past the end padded with -0.0.
constexpr int EXACT_PACK_ROWS = 8;
template <cureduce_dtype IN, int K> struct exact_pack {
  using T = storage_t<IN>;
  using word = uint_bytes<K * sizeof(T)>;
  static_assert(K * sizeof(T) == sizeof(word), "a pack is one word");
  word w[EXACT_PACK_ROWS];

  // Rows r .. r + EXACT_PACK_ROWS - 1 below rows, of the columns at col.
  __device__ __forceinline__ void load(const T *col, uint64_t ld, uint64_t r, uint64_t rows) {
    T pad[K];
#pragma unroll
    for (int j = 0; j < K; ++j)
      pad[j] = negative_zero<IN>();
    word padding;
    memcpy(&padding, pad, sizeof padding);
#pragma unroll
    for (int i = 0; i < EXACT_PACK_ROWS; ++i)
      w[i] = r + i < rows ? *reinterpret_cast<const word *>(col + (r + i) * ld) : padding;
  }

  // Column j's rows into th[j]: through exact_tile (a tile of U vectors, filled up with -0.0),
  // or element by element for f64.
  __device__ __forceinline__ void add(exact_thread<IN> (&th)[K], exact_word *s) const {
    if constexpr (IN == CUREDUCE_F64) {
#pragma unroll
      for (int i = 0; i < EXACT_PACK_ROWS; ++i) {
        double x;
        memcpy(&x, &w[i], 8);
        th[0].scalar(x, s);
      }
    } else {
      using V = vec16<T>;
      constexpr int U = exact_column_tile<IN>::U, N = exact_column_tile<IN>::N;
      static_assert(N >= EXACT_PACK_ROWS, "a tile holds a pack's rows");
#pragma unroll
      for (int j = 0; j < K; ++j) {
        T e[N];
#pragma unroll
        for (int i = 0; i < N; ++i)
          if (i < EXACT_PACK_ROWS)
            memcpy(&e[i], reinterpret_cast<const char *>(&w[i]) + j * sizeof(T), sizeof(T));
          else
            e[i] = negative_zero<IN>();
        V x[U];
        memcpy(x, e, sizeof x);
        th[j].template tile<U>(x, s);
      }
    }
  }
};

// The pairs of the block's warps for each lane's column, added into warp 0's (p and
// not_neg_zero there). Every thread calls it; returns whether any warp's state was used.
template <int PLAIN>
__device__ __forceinline__ bool exact_cols_combine(exact_pair<PLAIN> &p, bool &not_neg_zero, bool used,
                                                   double2 (*pairs)[32], unsigned *nnz, exact_word *mine) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x / 32;
  pairs[warp][lane] = make_double2(p.a0, p.a1);
  const unsigned bits = __ballot_sync(0xffffffffu, not_neg_zero);
  if (lane == 0)
    nnz[warp] = bits;
  used = __syncthreads_or(used || p.pushed);
  if (warp == 0) {
    unsigned all = bits;
#pragma unroll
    for (int w = 1; w < EXACT_AXIS_WARPS; ++w) {
      p.add(pairs[w][lane].x, mine);
      p.add(pairs[w][lane].y, mine);
      all |= nnz[w];
    }
    not_neg_zero = (all >> lane) & 1u;
    used = __any_sync(0xffffffffu, p.pushed) || used;
  }
  __syncthreads(); // pairs and nnz free again
  return used;
}

// Warp 0's pair and flags for its 32 columns, left at entry `at` of the plan's partials and
// flags for a block that adds them up later (exact_cols_gather).
template <int PLAIN>
__device__ __forceinline__ void exact_cols_leave(const exact_cols_plan &P, uint64_t at,
                                                 const exact_pair<PLAIN> &p, bool used, bool not_neg_zero) {
  const int lane = threadIdx.x & 31;
  P.partials[at * 32 + lane] = make_double2(p.a0, p.a1);
  P.flags[at * 32 + lane] = (used ? 1u : 0u) | (not_neg_zero ? 2u : 0u);
}

// The pairs and flags that `count` blocks left at entries first, first + stride, ... of
// partials and flags (32 each: a column a lane), added in warp w's pair from entries w, w + 8,
// ..., then combined into warp 0's pair as exact_cols_combine does (its return value). One
// entry at a time: loading several at once slowed exact_cols' column loop
// (docs/design.md#exact-rows-columns-and-segments).
template <int PLAIN>
__device__ __forceinline__ bool exact_cols_gather(exact_pair<PLAIN> &p, bool &not_neg_zero,
                                                  const double2 *partials, const unsigned *flags,
                                                  uint64_t first, uint64_t count, uint64_t stride,
                                                  double2 (*pairs)[32], unsigned *nnz, exact_word *mine) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x / 32;
  exact_pair<PLAIN> q;
  unsigned f = 0;
  for (uint64_t k = warp; k < count; k += EXACT_AXIS_WARPS) {
    const uint64_t at = (first + k * stride) * 32 + lane;
    const double2 v = __ldcg(&partials[at]);
    f |= __ldcg(&flags[at]);
    q.add(v.x, mine);
    q.add(v.y, mine);
  }
  p = q;
  not_neg_zero = (f & 2u) != 0;
  return exact_cols_combine(p, not_neg_zero, __syncthreads_or(f & 1u), pairs, nnz, mine);
}

// The slow path of one group of 32 columns, by the whole block: lane l's elements into column
// l's state in shared memory (clear on entry, cleared again on exit), carried after each chunk
// of rows, rounded by one thread a column.
template <cureduce_dtype IN>
__device__ void exact_cols_slow(const storage_t<IN> *in, const exact_cols_layout &C, uint64_t group,
                                const exact_outputs &O, exact_word (*cs)[EXACT_STATE_WORDS]) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x / 32;
  const uint64_t v = group * 32 + lane;
  const bool valid = v < C.batches * C.cols;
  const storage_t<IN> *col = C.column(in, valid ? v : 0);
  const uint64_t chunk_rows = EXACT_CHUNK / 32;
  for (uint64_t c = 0; c < C.rows; c += chunk_rows) {
    const uint64_t end = C.rows - c < chunk_rows ? C.rows : c + chunk_rows;
    if (valid) {
      exact_thread<IN> th;
      for (uint64_t r = c + warp; r < end; r += EXACT_AXIS_WARPS)
        th.scalar(col[r * C.ld], cs[lane]);
      exact_push(cs[lane], th.pair.a0); // one state a lane: no warp-wide flush
      exact_push(cs[lane], th.pair.a1);
      if (th.not_neg_zero)
        atomicOr(&cs[lane][CR_EXACT_NOT_NEG_ZERO], 1ull);
    }
    __syncthreads();
    if (warp == 0 && valid)
      cr_exact_carry(reinterpret_cast<int64_t *>(cs[lane]), 0, CR_EXACT_LIMBS - 1);
    __syncthreads();
  }
  if (warp == 0 && valid) {
    cs[lane][CR_EXACT_COUNT] = C.rows;
    exact_write_result(reinterpret_cast<const int64_t *>(cs[lane]), O.mean, O.dtype, O.out + v * O.size);
  }
  __syncthreads();
  for (int i = threadIdx.x; i < 32 * EXACT_STATE_WORDS; i += EXACT_AXIS_BLOCK)
    (&cs[0][0])[i] = 0;
  __syncthreads();
}

// Columns: lane l of every warp sums column 32 g + l over rows w, w + 8, ... of its slice; the
// warps' pairs are added in warp 0, and (with several slices) the slices' pairs by the last
// block of their set, and the sets' by the last block of the group (exact_cols_plan). The
// warps' states only take what pairs push (never read: the slow path has its own). SETS: the
// plan has more than one set (a kernel of its own: the second level's code, compiled in,
// made the column loop of shapes that do not need it up to 13% slower).
template <cureduce_dtype IN, bool SETS>
__global__ void __launch_bounds__(EXACT_AXIS_BLOCK, 4)
    exact_cols(const storage_t<IN> *__restrict__ in, exact_cols_layout C, exact_cols_plan P,
               exact_outputs O) {
  constexpr int WARPS = EXACT_AXIS_WARPS;
  __shared__ exact_word states[WARPS][EXACT_STATE_WORDS];     // the fast path's, one a warp
  __shared__ exact_word column_states[32][EXACT_STATE_WORDS]; // the slow path's
  __shared__ double2 pairs[WARPS][32];
  __shared__ unsigned nnz[WARPS];
  for (int i = threadIdx.x; i < WARPS * EXACT_STATE_WORDS; i += EXACT_AXIS_BLOCK)
    (&states[0][0])[i] = 0;
  for (int i = threadIdx.x; i < 32 * EXACT_STATE_WORDS; i += EXACT_AXIS_BLOCK)
    (&column_states[0][0])[i] = 0;
  __syncthreads();
  const int lane = threadIdx.x & 31, warp = threadIdx.x / 32;
  exact_word *const mine = states[warp];
  const uint64_t columns = C.batches * C.cols, items = P.groups * P.slices;

  for (uint64_t item = blockIdx.x; item < items; item += gridDim.x) {
    const uint64_t group = item / P.slices, slice = item - group * P.slices;
    const uint64_t v = group * 32 + lane;
    const bool valid = v < columns;
    const storage_t<IN> *col = C.column(in, valid ? v : 0);
    const uint64_t r0 = slice * P.slice_rows, r1 = C.rows - r0 < P.slice_rows ? C.rows : r0 + P.slice_rows;
    exact_thread<IN> th;
    if (valid)
      exact_add_column<IN>(th, col, C.ld, r0 + warp, r1, WARPS, mine);
    bool not_neg_zero = th.not_neg_zero;
    bool used = exact_cols_combine(th.pair, not_neg_zero, false, pairs, nnz, mine);
    if (P.slices > 1) {
      if (warp == 0)
        exact_cols_leave(P, item, th.pair, used, not_neg_zero);
      if constexpr (!SETS) {
        if (!block_last_arrival(&P.tickets[group], (unsigned)P.slices))
          continue;
        used = exact_cols_gather(th.pair, not_neg_zero, P.partials, P.flags, group * P.slices, P.slices, 1,
                                 pairs, nnz, mine);
      } else {
        const uint64_t set = slice / P.set_slices, first = group * P.slices + set * P.set_slices;
        const uint64_t in_set =
            P.slices - set * P.set_slices < P.set_slices ? P.slices - set * P.set_slices : P.set_slices;
        if (!block_last_arrival(&P.set_tickets[group * P.sets + set], (unsigned)in_set))
          continue;
        used =
            exact_cols_gather(th.pair, not_neg_zero, P.partials, P.flags, first, in_set, 1, pairs, nnz, mine);
        if (warp == 0) // the set's sum, in its first slice's place (whose pair only this block read)
          exact_cols_leave(P, first, th.pair, used, not_neg_zero);
        if (!block_last_arrival(&P.tickets[group], (unsigned)P.sets))
          continue;
        used = exact_cols_gather(th.pair, not_neg_zero, P.partials, P.flags, group * P.slices, P.sets,
                                 P.set_slices, pairs, nnz, mine);
      }
    }
    const bool done = warp != 0 || !valid || (!used && exact_write_pair(th.pair, C.rows, not_neg_zero, O, v));
    if (__syncthreads_or(!done))
      exact_cols_slow<IN>(in, C, group, O, column_states);
  }
}

// The shared states of kernels whose warps work alone (exact_cols_thin, exact_cols_matrix), one
// a warp for what its pairs push and one for its slow path, cleared, then a block barrier.
// Every thread calls it.
__device__ __forceinline__ void exact_clear_lone_warps(exact_word (*states)[EXACT_STATE_WORDS],
                                                       exact_word (*slow)[EXACT_STATE_WORDS]) {
  for (int i = threadIdx.x; i < EXACT_AXIS_WARPS * EXACT_STATE_WORDS; i += EXACT_AXIS_BLOCK) {
    (&states[0][0])[i] = 0;
    (&slow[0][0])[i] = 0;
  }
  __syncthreads();
}

// exact_cols_thin's blocks an SM: registers enough (80, or 128 for several columns a thread)
// to keep the next rows in registers; local memory would make each load wait.
constexpr int exact_thin_blocks_per_sm(int K) { return K >= 2 ? 2 : 3; }

// Few rows and many columns: a thread sums K neighbouring columns (K > 1: a 4-byte word of a
// narrow type a row) over all rows and rounds them, with no team to combine (exact_cols pays a
// block's combine for every 32 columns, which with few rows costs more than their reads). Each
// thread loads its next EXACT_PACK_ROWS rows (of this pack or the next) before adding the
// current ones, so that its loads wait behind its arithmetic, not the other way round. Warps
// work alone: a column whose pair pushed, or whose mean cannot be rounded from it, is summed
// again by its warp (exact_column_warp).
template <cureduce_dtype IN, int K>
__global__ void __launch_bounds__(EXACT_AXIS_BLOCK, exact_thin_blocks_per_sm(K))
    exact_cols_thin(const storage_t<IN> *__restrict__ in, exact_cols_layout C, exact_outputs O) {
  constexpr int WARPS = EXACT_AXIS_WARPS;
  __shared__ exact_word states[WARPS][EXACT_STATE_WORDS]; // what pairs push (never read)
  __shared__ exact_word slow[WARPS][EXACT_STATE_WORDS];   // the slow path's
  exact_clear_lone_warps(states, slow);
  const int lane = threadIdx.x & 31, warp = threadIdx.x / 32;
  const uint64_t packs = C.batches * C.cols / K; // K divides cols
  const uint64_t step = (uint64_t)gridDim.x * EXACT_AXIS_BLOCK;
  uint64_t first = ((uint64_t)blockIdx.x * WARPS + warp) * 32;
  const storage_t<IN> *col = C.column(in, first + lane < packs ? (first + lane) * K : 0);
  exact_pack<IN, K> next;
  if (first + lane < packs)
    next.load(col, C.ld, 0, C.rows);

  for (; first < packs; first += step) {
    const uint64_t pack = first + lane, following = pack + step;
    const storage_t<IN> *const after = C.column(in, following < packs ? following * K : 0);
    exact_thread<IN> th[K];
    for (uint64_t r = 0; r < C.rows; r += EXACT_PACK_ROWS) {
      const exact_pack<IN, K> now = next;
      if (r + EXACT_PACK_ROWS < C.rows) {
        if (pack < packs)
          next.load(col, C.ld, r + EXACT_PACK_ROWS, C.rows);
      } else if (following < packs) {
        next.load(after, C.ld, 0, C.rows);
      }
      if (pack < packs)
        now.add(th, states[warp]);
    }
    unsigned failed = 0; // bit j: column j of the pack
    if (pack < packs) {
#pragma unroll
      for (int j = 0; j < K; ++j)
        if (th[j].pair.pushed || !exact_write_pair(th[j].pair, C.rows, th[j].not_neg_zero, O, pack * K + j))
          failed |= 1u << j;
    }
    for (unsigned redo = __ballot_sync(0xffffffffu, failed != 0); redo; redo &= redo - 1) {
      const int l = __ffs(redo) - 1;
      const unsigned bits = __shfl_sync(0xffffffffu, failed, l);
      for (int j = 0; j < K; ++j)
        if ((bits >> j) & 1u) {
          const uint64_t v = (first + l) * K + j;
          exact_column_warp<IN>(C.column(in, v), C.ld, C.rows, O, v, slow[warp]);
        }
    }
    col = after;
  }
}

// Batches of small matrices held without gaps (ld == cols, 2 to 16 columns: the middle axis of
// an N-d array with a small inner extent), a warp a matrix. Its first A = cols * (32 / cols)
// lanes read the matrix's elements in order, lane l elements l, l + A, ..., which all lie in
// column l % cols, so each load of the warp reads A neighbouring elements (lanes a column
// apart across the batch would read a few bytes of each 32-byte sector). The lanes of a column
// add their pairs in a tree, and lane j < cols rounds column j. Warps work alone: a column
// whose pairs pushed, or whose mean cannot be rounded from its pair, is summed again by its
// warp (exact_column_warp, at most EXACT_CHUNK rows: exact_plan.h keeps to that).
template <cureduce_dtype IN>
__global__ void __launch_bounds__(EXACT_AXIS_BLOCK, 4)
    exact_cols_matrix(const storage_t<IN> *__restrict__ in, exact_cols_layout C, exact_outputs O) {
  constexpr int WARPS = EXACT_AXIS_WARPS;
  __shared__ exact_word states[WARPS][EXACT_STATE_WORDS]; // what pairs push (never read)
  __shared__ exact_word slow[WARPS][EXACT_STATE_WORDS];   // the slow path's
  exact_clear_lone_warps(states, slow);
  const int lane = threadIdx.x & 31, warp = threadIdx.x / 32;
  const int cols = (int)C.cols, team = 32 / cols, active = cols * team;
  const uint64_t elements = C.rows * C.cols;
  for (uint64_t m = (uint64_t)blockIdx.x * WARPS + warp; m < C.batches; m += (uint64_t)gridDim.x * WARPS) {
    exact_thread<IN> th;
    if (lane < active && (uint64_t)lane < elements)
      exact_add_column<IN>(th, in + m * C.batch_stride + lane, 1, 0, elements - lane, active, states[warp]);
    // Lane t * cols + j (member t of column j's team) adds member t + step's pair.
    for (int step = 1; step < team; step *= 2) {
      const int off = step * cols;
      const double b0 = __shfl_down_sync(0xffffffffu, th.pair.a0, off);
      const double b1 = __shfl_down_sync(0xffffffffu, th.pair.a1, off);
      if ((lane / cols) % (2 * step) == 0 && lane + off < active) {
        th.pair.add(b0, states[warp]);
        th.pair.add(b1, states[warp]);
      }
    }
    const unsigned pushed = __ballot_sync(0xffffffffu, th.pair.pushed);
    const unsigned nnz = __ballot_sync(0xffffffffu, th.not_neg_zero);
    bool failed = false;
    if (lane < cols) {
      bool column_pushed = false, not_neg_zero = false;
      for (int l = lane; l < active; l += cols) {
        column_pushed = column_pushed || ((pushed >> l) & 1u);
        not_neg_zero = not_neg_zero || ((nnz >> l) & 1u);
      }
      failed = column_pushed || !exact_write_pair(th.pair, C.rows, not_neg_zero, O, m * C.cols + lane);
    }
    for (unsigned redo = __ballot_sync(0xffffffffu, failed); redo; redo &= redo - 1) {
      const uint64_t v = m * C.cols + (uint64_t)(__ffs(redo) - 1);
      exact_column_warp<IN>(C.column(in, v), C.ld, C.rows, O, v, slow[warp]);
    }
  }
}

} // namespace cr
