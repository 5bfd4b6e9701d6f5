// The dispatch layer's C entry points for exact sums: launch shapes and the input-dtype
// switch. Layer: dispatch.
//
// The grids follow the GPU's SM count: an exact result does not depend on the launch shape,
// so nothing here needs to be the same on every GPU (docs/exact.md).
#include "../kernels/exact_axis.cuh"
#include "../kernels/exact_full.cuh"
#include "dispatch.h"
#include "launch_full.cuh"
#include "launch_status.cuh"

#include <cuda_runtime.h>

namespace {

using cr::exact_word;

// 256 threads, 4 vectors each in flight per tile: tiles of 16 (f32) to 64 (fp8) elements a
// thread, within exact_tile's limits. 4 blocks an SM (the launch bounds' 64 registers).
constexpr int BLOCK = 256, UNROLL = 4, BLOCKS_PER_SM = 4;
// A block takes at most 2^28 elements, so its shared limbs (each addition below 2^32) cannot
// overflow an int64.
constexpr int MAX_ELEMENTS_LOG2 = 28;

// The exact sums' region of the handle's workspace (from cr::full_exact_offset()): the
// one-call state, then the ticket.
constexpr size_t STATE_BYTES = CUREDUCE_EXACT_STATE_WORDS * sizeof(int64_t);

char *exact_region(void *d_workspace) { return static_cast<char *>(d_workspace) + cr::full_exact_offset(); }

// Few long rows take a grid of blocks each (exact_full, one row a blockIdx.y), with a state and
// a ticket per row in the axis workspace's exact region: states, then tickets. A block a row
// (exact_segments) would leave most SMs idle.
constexpr uint64_t SPLIT_ROWS_MAX = 64;
constexpr size_t SPLIT_STATES_BYTES = SPLIT_ROWS_MAX * STATE_BYTES;

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
// GPU's share of blocks per row, at least one per 2^MAX_ELEMENTS_LOG2 elements.
template <cureduce_dtype IN>
cureduce_status launch_full_rows(const void *d_in, const cr::full_layout &L, uint64_t rows, uint64_t ld,
                                 uint64_t sms, exact_word *state, unsigned *ticket, cr::exact_finish fin,
                                 cudaStream_t stream) {
  const uint64_t share = sms * BLOCKS_PER_SM / rows;
  const uint64_t need = (L.n >> MAX_ELEMENTS_LOG2) + 1;
  const uint64_t cap = share > need ? share : need;
  const uint64_t blocks = L.tiles < cap ? L.tiles : cap;
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

template <cureduce_dtype IN>
cureduce_status launch_segments(const void *d_in, cr::exact_segments_layout S, int mean, cureduce_dtype out,
                                void *d_out, cudaStream_t stream) {
  const uint64_t cap = (uint64_t)sm_count() * 8;
  const unsigned grid = (unsigned)(S.count < cap ? S.count : cap);
  cr::exact_segments<IN, BLOCK><<<grid, BLOCK, 0, stream>>>(static_cast<const cr::storage_t<IN> *>(d_in), S,
                                                            mean, out, (int)cureduce_dtype_size(out),
                                                            static_cast<char *>(d_out));
  return cr::launch_status();
}

// Rows: few enough for their states, fewer than half the grid (two blocks or more each), at
// least two tiles long and each laid out as the first take exact_full's grid; the others a
// block each (exact_segments).
template <cureduce_dtype IN>
cureduce_status launch_rows(const void *d_in, uint64_t rows, uint64_t cols, uint64_t ld, char *ws,
                            cr::exact_finish fin, cudaStream_t stream) {
  constexpr int ELEM = (int)sizeof(cr::storage_t<IN>);
  const cr::full_layout L = cr::make_full_layout<ELEM, BLOCK, UNROLL>(d_in, cols);
  const uint64_t sms = (uint64_t)sm_count();
  if (rows <= SPLIT_ROWS_MAX && 2 * rows <= sms * BLOCKS_PER_SM && L.full_tiles >= 2 && (ld * ELEM) % 16 == 0)
    return launch_full_rows<IN>(d_in, L, rows, ld, sms, reinterpret_cast<exact_word *>(ws),
                                reinterpret_cast<unsigned *>(ws + SPLIT_STATES_BYTES), fin, stream);
  return launch_segments<IN>(d_in, cr::exact_segments_layout{nullptr, rows, ld, cols}, fin.mean,
                             fin.out_dtype, fin.out, stream);
}

template <cureduce_dtype IN>
cureduce_status launch_cols(const void *d_in, const cr::exact_cols_layout &C, int mean, cureduce_dtype out,
                            void *d_out, cudaStream_t stream) {
  constexpr int WARPS = 8;
  const uint64_t groups = (C.batches * C.cols + 31) / 32, cap = (uint64_t)sm_count() * 8;
  const unsigned grid = (unsigned)(groups < cap ? groups : cap);
  cr::exact_cols<IN, WARPS><<<grid, WARPS * 32, 0, stream>>>(static_cast<const cr::storage_t<IN> *>(d_in), C,
                                                             mean, out, (int)cureduce_dtype_size(out),
                                                             static_cast<char *>(d_out));
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

extern "C" size_t cr_exact_rows_workspace_bytes(void) {
  return SPLIT_STATES_BYTES + SPLIT_ROWS_MAX * sizeof(unsigned);
}

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

extern "C" cureduce_status cr_launch_exact_combine(int64_t *d_state, const int64_t *d_other, void *stream) {
  cr::exact_combine<<<1, 128, 0, static_cast<cudaStream_t>(stream)>>>(
      reinterpret_cast<exact_word *>(d_state), reinterpret_cast<const exact_word *>(d_other));
  return cr::launch_status();
}

extern "C" cureduce_status cr_launch_exact_finish(cureduce_op op, const int64_t *d_state, cureduce_dtype out,
                                                  void *d_out, void *stream) {
  cr::exact_round<<<1, 32, 0, static_cast<cudaStream_t>(stream)>>>(d_state, op == CUREDUCE_MEAN_EXACT, out,
                                                                   d_out);
  return cr::launch_status();
}

// Rows and segments share one kernel: rows are segments whose offsets follow from ld.
static cureduce_status segments_switch(cureduce_op op, cureduce_dtype in, cureduce_dtype out,
                                       const void *d_in, const cr::exact_segments_layout &S, void *d_out,
                                       void *stream) {
  const int mean = op == CUREDUCE_MEAN_EXACT;
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
#define CALL(D) launch_segments<D>(d_in, S, mean, out, d_out, s)
  CR_EXACT_SWITCH(CALL)
#undef CALL
}

extern "C" cureduce_status cr_launch_exact_rows(cureduce_op op, cureduce_dtype in, cureduce_dtype out,
                                                const void *d_in, uint64_t rows, uint64_t cols, uint64_t ld,
                                                void *d_out, void *d_rows_workspace, void *stream) {
  const cr::exact_finish fin{1, op == CUREDUCE_MEAN_EXACT, out, d_out, (int)cureduce_dtype_size(out)};
  char *ws = static_cast<char *>(d_rows_workspace);
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
#define CALL(D) launch_rows<D>(d_in, rows, cols, ld, ws, fin, s)
  CR_EXACT_SWITCH(CALL)
#undef CALL
}

extern "C" cureduce_status cr_launch_exact_segments(cureduce_op op, cureduce_dtype in, cureduce_dtype out,
                                                    const void *d_in, uint64_t count,
                                                    const int64_t *d_offsets, void *d_out, void *stream) {
  return segments_switch(op, in, out, d_in, cr::exact_segments_layout{d_offsets, count, 0, 0}, d_out, stream);
}

static cureduce_status cols_switch(cureduce_op op, cureduce_dtype in, cureduce_dtype out, const void *d_in,
                                   const cr::exact_cols_layout &C, void *d_out, void *stream) {
  const int mean = op == CUREDUCE_MEAN_EXACT;
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
#define CALL(D) launch_cols<D>(d_in, C, mean, out, d_out, s)
  CR_EXACT_SWITCH(CALL)
#undef CALL
}

extern "C" cureduce_status cr_launch_exact_cols(cureduce_op op, cureduce_dtype in, cureduce_dtype out,
                                                const void *d_in, uint64_t rows, uint64_t cols, uint64_t ld,
                                                void *d_out, void *stream) {
  return cols_switch(op, in, out, d_in, cr::exact_cols_layout{1, rows, cols, ld, 0}, d_out, stream);
}

extern "C" cureduce_status cr_launch_exact_axis(cureduce_op op, cureduce_dtype in, cureduce_dtype out,
                                                const void *d_in, uint64_t outer, uint64_t length,
                                                uint64_t inner, void *d_out, void *stream) {
  return cols_switch(op, in, out, d_in, cr::exact_cols_layout{outer, length, inner, inner, length * inner},
                     d_out, stream);
}
