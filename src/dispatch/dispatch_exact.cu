// The dispatch layer's C entry points for exact sums: launch shapes and the input-dtype
// switch. Layer: dispatch.
//
// The grids follow the GPU's SM count: an exact result does not depend on the launch shape,
// so nothing here needs to be the same on every GPU (docs/exact.md).
#include "../kernels/exact_chunked.cuh"
#include "../kernels/exact_cols.cuh"
#include "../kernels/exact_full.cuh"
#include "../kernels/exact_rows.cuh"
#include "dispatch.h"
#include "exact_plan.h"
#include "launch_full.cuh"
#include "launch_status.cuh"

#include <cuda_runtime.h>

namespace {

using cr::exact_word;

// 256 threads, 4 vectors each in flight per tile: tiles of 16 (f32) to 64 (fp8) elements a
// thread, within exact_tile's limits. 4 blocks an SM (the launch bounds' 64 registers).
constexpr int BLOCK = 256, UNROLL = 4, BLOCKS_PER_SM = 4;
// Up to this many tiles take one block, which rounds its own state: a second block's publish,
// ticket and gather cost more than walking a second tile (docs/design.md#exact-sums-finish).
constexpr uint64_t ONE_BLOCK_TILES = 2;
// A block takes at most 2^28 elements, so its shared limbs (each addition below 2^32) cannot
// overflow an int64.
constexpr int MAX_ELEMENTS_LOG2 = 28;

// The exact sums' region of the handle's workspace (from cr::full_exact_offset()): the
// one-call state, then the ticket.
constexpr size_t STATE_BYTES = CUREDUCE_EXACT_STATE_WORDS * sizeof(int64_t);

char *exact_region(void *d_workspace) { return static_cast<char *>(d_workspace) + cr::full_exact_offset(); }

// The exact region of the axis workspace (d_exact_workspace): few long rows take a grid of
// blocks each (exact_full, one row a blockIdx.y), with a state and a ticket per row (a block a
// row would leave most SMs idle); columns cut into row slices leave a pair and flags per column
// and slice, and take a ticket per set of slices and per group of 32 columns.
constexpr uint64_t SPLIT_ROWS_MAX = 64;
constexpr size_t SPLIT_STATES_BYTES = SPLIT_ROWS_MAX * STATE_BYTES;
constexpr size_t SPLIT_TICKETS_BYTES = SPLIT_ROWS_MAX * sizeof(unsigned);
constexpr size_t COLS_TICKETS_OFFSET = SPLIT_STATES_BYTES + SPLIT_TICKETS_BYTES;
constexpr size_t COLS_SET_TICKETS_OFFSET = COLS_TICKETS_OFFSET + cr::EXACT_COLS_ITEMS_MAX * sizeof(unsigned);
constexpr size_t COLS_FLAGS_OFFSET = COLS_SET_TICKETS_OFFSET + cr::EXACT_COLS_ITEMS_MAX * sizeof(unsigned);
constexpr size_t COLS_PARTIALS_OFFSET = COLS_FLAGS_OFFSET + cr::EXACT_COLS_ITEMS_MAX * 32 * sizeof(unsigned);
constexpr size_t COLS_END = COLS_PARTIALS_OFFSET + 16 + cr::EXACT_COLS_ITEMS_MAX * 32 * sizeof(double2);
// Segments cut into chunks (exact_chunked.cuh): an opening and a closing pair a chunk, their
// flags, and a ticket a chunk. At least SEGMENT_CHUNK_MIN elements a chunk, and about
// segment_chunks_per_block(IN) a block of the grid (a long segment is then read by many blocks).
constexpr int64_t SEGMENT_CHUNKS_MAX = 4096, SEGMENT_CHUNK_MIN = 8192;
// A chunk's search, barriers and block sums cost several µs, so one chunk a block, but for f64,
// whose slower pair additions make blocks with more pieces finish later: 4.
constexpr int64_t segment_chunks_per_block(cureduce_dtype IN) { return IN == CUREDUCE_F64 ? 4 : 1; }
constexpr size_t CHUNK_PAIRS_OFFSET = (COLS_END + 15) / 16 * 16;
constexpr size_t CHUNK_FLAGS_OFFSET = CHUNK_PAIRS_OFFSET + 2 * SEGMENT_CHUNKS_MAX * sizeof(double2);
constexpr size_t CHUNK_TICKETS_OFFSET = CHUNK_FLAGS_OFFSET + 2 * SEGMENT_CHUNKS_MAX * sizeof(unsigned);
constexpr size_t EXACT_AXIS_BYTES = CHUNK_TICKETS_OFFSET + SEGMENT_CHUNKS_MAX * sizeof(unsigned);

// A grid of `blocks` blocks, at least 1 and at most cap (the kernels loop over the rest).
unsigned grid_of(uint64_t blocks, uint64_t cap) {
  return (unsigned)(blocks < cap ? (blocks > 0 ? blocks : 1) : cap);
}

int sm_count() {
  int dev = 0, sms = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || sms < 1) {
    (void)cudaGetLastError();
    return 1;
  }
  return sms;
}

// exact_full over `rows` rows laid out as L, ld elements apart (one row: a full array): the
// GPU's share of blocks per row, at least one per 2^MAX_ELEMENTS_LOG2 elements (one for up to
// ONE_BLOCK_TILES tiles).
template <cureduce_dtype IN>
cureduce_status launch_full_rows(const void *d_in, const cr::full_layout &L, uint64_t rows, uint64_t ld,
                                 uint64_t sms, exact_word *state, unsigned *ticket, cr::exact_finish fin,
                                 cudaStream_t stream) {
  const uint64_t share = sms * BLOCKS_PER_SM / rows;
  const uint64_t need = (L.n >> MAX_ELEMENTS_LOG2) + 1;
  const uint64_t cap = share > need ? share : need;
  const uint64_t blocks = L.tiles <= ONE_BLOCK_TILES ? 1 : L.tiles < cap ? L.tiles : cap;
  const dim3 grid(blocks > 0 ? (unsigned)blocks : 1u, (unsigned)rows);
  cr::exact_full<IN, BLOCK, UNROLL>
      <<<grid, BLOCK, 0, stream>>>(static_cast<const cr::storage_t<IN> *>(d_in), L, state, ticket, fin, ld);
  return cr::launch_status();
}

template <cureduce_dtype IN>
cureduce_status launch_full(const void *d_in, uint64_t n, exact_word *state, unsigned *ticket,
                            cr::exact_finish fin, cudaStream_t stream) {
  constexpr int ELEM = (int)sizeof(cr::storage_t<IN>);
  return launch_full_rows<IN>(d_in, cr::make_full_layout<ELEM, BLOCK, UNROLL>(d_in, n), 1, 0,
                              (uint64_t)sm_count(), state, ticket, fin, stream);
}

// TEAM threads an output: a block takes EXACT_AXIS_BLOCK / TEAM outputs at a time.
template <cureduce_dtype IN, int TEAM>
cureduce_status launch_row_teams(const void *d_in, const cr::exact_rows_layout &S, const cr::exact_outputs &O,
                                 cudaStream_t stream) {
  constexpr uint64_t per_block = cr::EXACT_AXIS_BLOCK / TEAM;
  const uint64_t blocks = (S.count + per_block - 1) / per_block, cap = (uint64_t)sm_count() * 8;
  const unsigned grid = grid_of(blocks, cap);
  cr::exact_rows<IN, TEAM>
      <<<grid, cr::EXACT_AXIS_BLOCK, 0, stream>>>(static_cast<const cr::storage_t<IN> *>(d_in), S, O);
  return cr::launch_status();
}

// The chunked kernel over the workspace's chunk region (ws: the axis workspace's exact region).
template <cureduce_dtype IN>
cureduce_status launch_chunked(const void *d_in, const cr::segment_layout &S, char *ws,
                               const cr::exact_outputs &O, cudaStream_t stream) {
  double2 *pairs = reinterpret_cast<double2 *>(ws + CHUNK_PAIRS_OFFSET);
  unsigned *flags = reinterpret_cast<unsigned *>(ws + CHUNK_FLAGS_OFFSET);
  const cr::exact_chunk_plan P{SEGMENT_CHUNK_MIN,
                               SEGMENT_CHUNKS_MAX,
                               segment_chunks_per_block(IN),
                               pairs,
                               pairs + SEGMENT_CHUNKS_MAX,
                               flags,
                               flags + SEGMENT_CHUNKS_MAX,
                               reinterpret_cast<unsigned *>(ws + CHUNK_TICKETS_OFFSET)};
  const unsigned grid = (unsigned)sm_count() * cr::exact_rows_blocks_per_sm(IN, cr::EXACT_AXIS_BLOCK);
  cr::exact_chunked<IN>
      <<<grid, cr::EXACT_AXIS_BLOCK, 0, stream>>>(static_cast<const cr::storage_t<IN> *>(d_in), S, P, O);
  return cr::launch_status();
}

// Rows: few enough for their states, fewer than half the grid (two blocks or more each), at
// least two tiles long and each laid out as the first take exact_full's grid. The others take
// a team of threads each, by their number of 16-byte vectors:
// - a lane up to 8 vectors (a team's combine and a rounding by one lane in four cost more than
//   such a row's reads);
// - 4 lanes up to 32, or up to 512 when there are rows for half the threads of the blocks an SM
//   (a warp sums and rounds 8 rows at once, so its combine and rounding do not hold up the
//   loads of the next rows);
// - otherwise a warp up to 512, or longer when there are rows for half the warps of the
//   blocks an SM (that many keep enough loads in flight, and a block's combine per row costs
//   more) and the rows fit a warp's slow path (EXACT_CHUNK);
// - else a block.
template <cureduce_dtype IN>
cureduce_status launch_rows(const void *d_in, uint64_t rows, uint64_t cols, uint64_t ld, char *ws,
                            cr::exact_finish fin, cudaStream_t stream) {
  constexpr int ELEM = (int)sizeof(cr::storage_t<IN>);
  const cr::full_layout L = cr::make_full_layout<ELEM, BLOCK, UNROLL>(d_in, cols);
  const uint64_t sms = (uint64_t)sm_count();
  if (rows <= SPLIT_ROWS_MAX && 2 * rows <= sms * BLOCKS_PER_SM && L.full_tiles >= 2 && (ld * ELEM) % 16 == 0)
    return launch_full_rows<IN>(d_in, L, rows, ld, sms, reinterpret_cast<exact_word *>(ws),
                                reinterpret_cast<unsigned *>(ws + SPLIT_STATES_BYTES), fin, stream);
  const cr::exact_rows_layout S{rows, ld, cols};
  const cr::exact_outputs O{fin.mean, fin.out_dtype, fin.out_size, static_cast<char *>(fin.out)};
  const uint64_t vectors = cols * ELEM / 16;
  if (vectors <= 8)
    return launch_row_teams<IN, 1>(d_in, S, O, stream);
  if (vectors <= 32 ||
      (vectors <= 512 && 4 * rows >= sms * cr::exact_rows_blocks_per_sm(IN, 4) * cr::EXACT_AXIS_BLOCK / 2))
    return launch_row_teams<IN, 4>(d_in, S, O, stream);
  if (vectors <= 512 || (2 * rows >= sms * cr::exact_rows_blocks_per_sm(IN, 32) * cr::EXACT_AXIS_WARPS &&
                         cols <= cr::EXACT_CHUNK))
    return launch_row_teams<IN, 32>(d_in, S, O, stream);
  return launch_row_teams<IN, cr::EXACT_AXIS_BLOCK>(d_in, S, O, stream);
}

// Few rows and many columns (cr::choose_exact_cols): a thread a column, or a 4-byte word of
// columns when the narrow type's rows and matrices keep such words aligned.
template <cureduce_dtype IN, int K>
cureduce_status launch_cols_thin(const void *d_in, const cr::exact_cols_layout &C, const cr::exact_outputs &O,
                                 cudaStream_t stream) {
  const uint64_t blocks = (C.batches * C.cols / K + cr::EXACT_AXIS_BLOCK - 1) / cr::EXACT_AXIS_BLOCK;
  const uint64_t cap = (uint64_t)sm_count() * cr::exact_thin_blocks_per_sm(K);
  const unsigned grid = grid_of(blocks, cap);
  cr::exact_cols_thin<IN, K>
      <<<grid, cr::EXACT_AXIS_BLOCK, 0, stream>>>(static_cast<const cr::storage_t<IN> *>(d_in), C, O);
  return cr::launch_status();
}

template <cureduce_dtype IN>
cureduce_status launch_cols_thin(const void *d_in, const cr::exact_cols_layout &C, const cr::exact_outputs &O,
                                 cudaStream_t stream) {
  constexpr int ELEM = (int)sizeof(cr::storage_t<IN>);
  if constexpr (ELEM < 4) {
    constexpr int K = 4 / ELEM;
    const bool words = reinterpret_cast<uintptr_t>(d_in) % 4 == 0 && C.cols % K == 0 && C.ld % K == 0 &&
                       C.batch_stride % K == 0;
    if (words)
      return launch_cols_thin<IN, K>(d_in, C, O, stream);
  }
  return launch_cols_thin<IN, 1>(d_in, C, O, stream);
}

// Many small matrices (cr::exact_cols_by_matrix): a warp a matrix.
template <cureduce_dtype IN>
cureduce_status launch_cols_matrix(const void *d_in, const cr::exact_cols_layout &C,
                                   const cr::exact_outputs &O, cudaStream_t stream) {
  static_assert(cr::EXACT_MATRIX_ROWS_MAX <= cr::EXACT_CHUNK, "the slow path's warp takes every column");
  const unsigned grid = grid_of((C.batches + cr::EXACT_AXIS_WARPS - 1) / cr::EXACT_AXIS_WARPS,
                                (uint64_t)sm_count() * BLOCKS_PER_SM);
  cr::exact_cols_matrix<IN>
      <<<grid, cr::EXACT_AXIS_BLOCK, 0, stream>>>(static_cast<const cr::storage_t<IN> *>(d_in), C, O);
  return cr::launch_status();
}

// Columns, cut as cr::choose_exact_cols and cr::exact_cols_by_matrix say.
template <cureduce_dtype IN>
cureduce_status launch_cols(const void *d_in, const cr::exact_cols_layout &C, const cr::exact_outputs &O,
                            char *ws, cudaStream_t stream) {
  const cr::exact_cols_cut cut = cr::choose_exact_cols(C.batches * C.cols, C.rows);
  if (cut.thin)
    return launch_cols_thin<IN>(d_in, C, O, stream);
  if (cr::exact_cols_by_matrix(C.batches, C.rows, C.cols, C.ld))
    return launch_cols_matrix<IN>(d_in, C, O, stream);
  const uintptr_t partials = (reinterpret_cast<uintptr_t>(ws + COLS_PARTIALS_OFFSET) + 15) & ~(uintptr_t)15;
  const cr::exact_cols_plan P{cut.groups,
                              cut.slices,
                              cut.slice_rows,
                              cr::EXACT_COLS_SET_SLICES,
                              cut.sets,
                              reinterpret_cast<double2 *>(partials),
                              reinterpret_cast<unsigned *>(ws + COLS_FLAGS_OFFSET),
                              reinterpret_cast<unsigned *>(ws + COLS_TICKETS_OFFSET),
                              reinterpret_cast<unsigned *>(ws + COLS_SET_TICKETS_OFFSET)};
  const uint64_t items = cut.groups * cut.slices, cap = (uint64_t)sm_count() * BLOCKS_PER_SM;
  const unsigned grid = grid_of(items, cap);
  const auto *x = static_cast<const cr::storage_t<IN> *>(d_in);
  if (cut.sets > 1)
    cr::exact_cols<IN, true><<<grid, cr::EXACT_AXIS_BLOCK, 0, stream>>>(x, C, P, O);
  else
    cr::exact_cols<IN, false><<<grid, cr::EXACT_AXIS_BLOCK, 0, stream>>>(x, C, P, O);
  return cr::launch_status();
}

} // namespace

// The input dtypes with exact sums: the float dtypes.
#define CR_EXACT_SWITCH(CALL)                                                                                \
  switch (in) {                                                                                              \
  case CUREDUCE_F32: return CALL(CUREDUCE_F32);                                                              \
  case CUREDUCE_F64: return CALL(CUREDUCE_F64);                                                              \
  case CUREDUCE_F16: return CALL(CUREDUCE_F16);                                                              \
  case CUREDUCE_BF16: return CALL(CUREDUCE_BF16);                                                            \
  case CUREDUCE_F8_E4M3: return CALL(CUREDUCE_F8_E4M3);                                                      \
  case CUREDUCE_F8_E5M2: return CALL(CUREDUCE_F8_E5M2);                                                      \
  default: return CUREDUCE_ERROR_UNSUPPORTED;                                                                \
  }

extern "C" size_t cr_exact_workspace_bytes(void) { return STATE_BYTES + 256; }

extern "C" size_t cr_exact_axis_workspace_bytes(void) { return EXACT_AXIS_BYTES; }

extern "C" cureduce_status cr_launch_exact_full(cureduce_op op, cureduce_dtype in, cureduce_dtype out,
                                                const void *d_in, uint64_t n, void *d_out, void *d_workspace,
                                                void *stream) {
  char *ws = exact_region(d_workspace);
  const cr::exact_finish fin{1, op == CUREDUCE_MEAN_EXACT, out, d_out, 0};
  auto *state = reinterpret_cast<exact_word *>(ws);
  auto *ticket = reinterpret_cast<unsigned *>(ws + STATE_BYTES);
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
#define CALL(D) launch_full<D>(d_in, n, state, ticket, fin, s)
  CR_EXACT_SWITCH(CALL)
#undef CALL
}

extern "C" cureduce_status cr_launch_exact_accumulate(cureduce_dtype in, const void *d_in, uint64_t n,
                                                      int64_t *d_state, void *d_workspace, void *stream) {
  const cr::exact_finish fin{0, 0, CUREDUCE_F64, nullptr, 0};
  auto *state = reinterpret_cast<exact_word *>(d_state);
  auto *ticket = reinterpret_cast<unsigned *>(exact_region(d_workspace) + STATE_BYTES);
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
#define CALL(D) launch_full<D>(d_in, n, state, ticket, fin, s)
  CR_EXACT_SWITCH(CALL)
#undef CALL
}

// Row states: a grid a row, one launch after the other, for one row (one launch either way), a
// row long enough for its launch to cost less than one block walking it (a block reads about
// 20 GB/s, the GPU about 3 TB/s, and a launch costs about 5 us) or longer than one block may
// take; else one launch, a block a row (exact_row_states).
constexpr uint64_t GRID_ROW_BYTES_PER_ROW = 128 << 10;

template <cureduce_dtype IN>
cureduce_status launch_row_states(const void *d_in, uint64_t rows, uint64_t cols, uint64_t ld,
                                  exact_word *states, unsigned *ticket, cudaStream_t stream) {
  constexpr int ELEM = (int)sizeof(cr::storage_t<IN>);
  const auto *x = static_cast<const cr::storage_t<IN> *>(d_in);
  if (rows == 1 || cols * ELEM / rows >= GRID_ROW_BYTES_PER_ROW || cols >> MAX_ELEMENTS_LOG2 != 0) {
    const cr::exact_finish fin{0, 0, CUREDUCE_F64, nullptr, 0};
    for (uint64_t r = 0; r < rows; ++r) {
      const cureduce_status st =
          launch_full<IN>(x + r * ld, cols, states + r * CUREDUCE_EXACT_STATE_WORDS, ticket, fin, stream);
      if (st != CUREDUCE_SUCCESS)
        return st;
    }
    return CUREDUCE_SUCCESS;
  }
  const unsigned grid = grid_of(rows, (uint64_t)sm_count() * BLOCKS_PER_SM);
  cr::exact_row_states<IN, BLOCK, UNROLL><<<grid, BLOCK, 0, stream>>>(x, rows, cols, ld, states);
  return cr::launch_status();
}

// Segment states: the segments cut into chunks (exact_chunked_states), so long and short
// segments alike are read by the whole grid; then one carry a state. Chunks need no workspace
// there, so they may be small: at least STATES_CHUNK_MIN elements.
constexpr int64_t STATES_CHUNK_MIN = 256;

template <cureduce_dtype IN>
cureduce_status launch_segment_states(const void *d_in, uint64_t count, const int64_t *d_offsets,
                                      exact_word *states, cudaStream_t stream) {
  const uint64_t sms = (uint64_t)sm_count();
  const unsigned grid = (unsigned)sms * cr::exact_rows_blocks_per_sm(IN, cr::EXACT_AXIS_BLOCK);
  const cr::segment_layout S{d_offsets, count, 0, 0};
  cr::exact_chunked_states<IN>
      <<<grid, cr::EXACT_AXIS_BLOCK, 0, stream>>>(static_cast<const cr::storage_t<IN> *>(d_in), S,
                                                  STATES_CHUNK_MIN, segment_chunks_per_block(IN), states);
  const cureduce_status st = cr::launch_status();
  if (st != CUREDUCE_SUCCESS)
    return st;
  cr::exact_carry_states<<<grid_of(count, sms * 16), 128, 0, stream>>>(states, count);
  return cr::launch_status();
}

extern "C" cureduce_status cr_launch_exact_accumulate_segments(cureduce_dtype in, const void *d_in,
                                                               uint64_t count, const int64_t *d_offsets,
                                                               int64_t *d_states, void *stream) {
  auto *states = reinterpret_cast<exact_word *>(d_states);
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
#define CALL(D) launch_segment_states<D>(d_in, count, d_offsets, states, s)
  CR_EXACT_SWITCH(CALL)
#undef CALL
}

extern "C" cureduce_status cr_launch_exact_accumulate_rows(cureduce_dtype in, const void *d_in, uint64_t rows,
                                                           uint64_t cols, uint64_t ld, int64_t *d_states,
                                                           void *d_workspace, void *stream) {
  auto *states = reinterpret_cast<exact_word *>(d_states);
  auto *ticket = reinterpret_cast<unsigned *>(exact_region(d_workspace) + STATE_BYTES);
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
#define CALL(D) launch_row_states<D>(d_in, rows, cols, ld, states, ticket, s)
  CR_EXACT_SWITCH(CALL)
#undef CALL
}

extern "C" cureduce_status cr_launch_exact_combine(int64_t *d_state, const int64_t *d_other, void *stream) {
  cr::exact_combine<<<1, 128, 0, static_cast<cudaStream_t>(stream)>>>(
      reinterpret_cast<exact_word *>(d_state), reinterpret_cast<const exact_word *>(d_other));
  return cr::launch_status();
}

// A warp a state: one warp for one state, else blocks of 8 warps.
extern "C" cureduce_status cr_launch_exact_finish(cureduce_op op, const int64_t *d_states, uint64_t count,
                                                  cureduce_dtype out, void *d_out, void *stream) {
  const unsigned threads = count == 1 ? 32 : 256;
  const unsigned grid = grid_of((count + 7) / 8, (uint64_t)sm_count() * 16);
  cr::exact_round<<<grid, threads, 0, static_cast<cudaStream_t>(stream)>>>(
      d_states, count, op == CUREDUCE_MEAN_EXACT, out, d_out, (int)cureduce_dtype_size(out));
  return cr::launch_status();
}

static cr::exact_outputs outputs(cureduce_op op, cureduce_dtype out, void *d_out) {
  return cr::exact_outputs{op == CUREDUCE_MEAN_EXACT, out, (int)cureduce_dtype_size(out),
                           static_cast<char *>(d_out)};
}

extern "C" cureduce_status cr_launch_exact_rows(cureduce_op op, cureduce_dtype in, cureduce_dtype out,
                                                const void *d_in, uint64_t rows, uint64_t cols, uint64_t ld,
                                                void *d_out, void *d_exact_workspace, void *stream) {
  const cr::exact_finish fin{1, op == CUREDUCE_MEAN_EXACT, out, d_out, (int)cureduce_dtype_size(out)};
  char *ws = static_cast<char *>(d_exact_workspace);
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
#define CALL(D) launch_rows<D>(d_in, rows, cols, ld, ws, fin, s)
  CR_EXACT_SWITCH(CALL)
#undef CALL
}

// Segments: their lengths are on the device, so the kernel cuts them (exact_chunked.cuh).
extern "C" cureduce_status cr_launch_exact_segments(cureduce_op op, cureduce_dtype in, cureduce_dtype out,
                                                    const void *d_in, uint64_t count,
                                                    const int64_t *d_offsets, void *d_out,
                                                    void *d_exact_workspace, void *stream) {
  const cr::segment_layout S{d_offsets, count, 0, 0};
  const cr::exact_outputs O = outputs(op, out, d_out);
  char *ws = static_cast<char *>(d_exact_workspace);
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
#define CALL(D) launch_chunked<D>(d_in, S, ws, O, s)
  CR_EXACT_SWITCH(CALL)
#undef CALL
}

static cureduce_status cols_switch(cureduce_op op, cureduce_dtype in, cureduce_dtype out, const void *d_in,
                                   const cr::exact_cols_layout &C, void *d_out, void *d_exact_workspace,
                                   void *stream) {
  const cr::exact_outputs O = outputs(op, out, d_out);
  char *ws = static_cast<char *>(d_exact_workspace);
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
#define CALL(D) launch_cols<D>(d_in, C, O, ws, s)
  CR_EXACT_SWITCH(CALL)
#undef CALL
}

extern "C" cureduce_status cr_launch_exact_cols(cureduce_op op, cureduce_dtype in, cureduce_dtype out,
                                                const void *d_in, uint64_t rows, uint64_t cols, uint64_t ld,
                                                void *d_out, void *d_exact_workspace, void *stream) {
  return cols_switch(op, in, out, d_in, cr::exact_cols_layout{1, rows, cols, ld, 0}, d_out, d_exact_workspace,
                     stream);
}

extern "C" cureduce_status cr_launch_exact_axis(cureduce_op op, cureduce_dtype in, cureduce_dtype out,
                                                const void *d_in, uint64_t outer, uint64_t length,
                                                uint64_t inner, void *d_out, void *d_exact_workspace,
                                                void *stream) {
  return cols_switch(op, in, out, d_in, cr::exact_cols_layout{outer, length, inner, inner, length * inner},
                     d_out, d_exact_workspace, stream);
}
