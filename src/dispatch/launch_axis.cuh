// Launching the row, column and segment kernels: each launcher takes the policy of its kernel
// family (axis_policy.h) and the plan computed from it (axis_plan.h); and the (dtype,
// accumulator) switch for one op, which hands out the policies. Layer: dispatch. Instantiated
// once per op (launch_axis_<op>.cu, which CMake generates from launch_axis_op.cu.in) so the
// kernels compile in parallel.
#pragma once

#include "../common/combos.h"
#include "../kernels/reduce_chunked.cuh"
#include "../kernels/reduce_cols.cuh"
#include "../kernels/reduce_rows_lanes.cuh"
#include "../kernels/reduce_rows_short.cuh"
#include "axis_plan.h"
#include "axis_policy.h"
#include "dispatch.h"
#include "launch_full.cuh"
#include "launch_status.cuh"

#include <atomic>
#include <cuda_runtime.h>
#include <type_traits>

namespace cr {

// The arguments every axis launch shares.
struct axis_call {
  const void *in;
  void *out;
  char *workspace;
  cudaStream_t stream;
};

// What an axis launch reduces: rows or columns of `batches` rows x cols matrices with leading
// dimension ld, each rows * ld elements after the one before (only columns take batches > 1);
// or `rows` segments at `offsets`.
struct axis_shape {
  uint64_t batches, rows, cols, ld;
  const int64_t *offsets;
};

// How many blocks of `kernel` (BLOCK threads) the current GPU holds at once, looked up once per
// kernel and device. Only for a kernel whose result does not depend on its grid: the chunked
// kernel's chunks are fixed by the data, and any block may take any chunk; the lane-group row
// kernel's order within a row is fixed by the shape. These kernels use 48 to 64 registers a
// thread, so a fixed grid would leave a mostly empty second wave on some GPUs; one full wave
// avoids it (docs/design.md#segments). A template on the kernel itself: kernels of the same
// signature, such as the f32 SUM and SUMSQ instantiations, may differ in registers and so in
// blocks per SM.
template <int BLOCK, auto KERNEL> unsigned resident_blocks(unsigned fallback) {
  static std::atomic<unsigned> cached[64]; // by device ordinal; 0: not looked up yet
  int dev = 0, sms = 0, per_sm = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= 64)
    return fallback;
  if (const unsigned known = cached[dev].load(std::memory_order_relaxed))
    return known;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, KERNEL, BLOCK, 0) != cudaSuccess || sms < 1 ||
      per_sm < 1)
    return fallback;
  cached[dev].store((unsigned)(sms * per_sm), std::memory_order_relaxed);
  return (unsigned)(sms * per_sm);
}

// The chunked kernel (Chunked: a chunked_policy) over at most `chunks` chunks (0: not known on
// the host), one block per chunk up to one full wave of the GPU.
template <cureduce_dtype IN, cureduce_dtype ACC, cureduce_op OP, class Chunked>
cureduce_status launch_chunked(const axis_call &a, const segment_layout &S, uint64_t chunks) {
  using Op = compare_op<IN, OP, ACC>;
  static_assert(sizeof(typename Op::T) <= AXIS_SLOT_BYTES, "partial too wide");
  static_assert(2 * Chunked::MAX_CHUNKS <= AXIS_PARTIAL_SLOTS && Chunked::MAX_CHUNKS <= AXIS_TICKETS,
                "axis workspace too small for the chunked kernel");
  constexpr int BLOCK = Chunked::BLOCK;
  constexpr auto kernel = reduce_chunked<IN, ACC, OP, BLOCK, Chunked::UNROLL, Chunked::SHORT>;
  const unsigned wave = resident_blocks<BLOCK, kernel>(Chunked::WAVE_FALLBACK);
  const unsigned grid = chunks > 0 && chunks < wave ? (unsigned)chunks : wave;
  constexpr int64_t ELEM = sizeof(storage_t<IN>);
  auto *slots = reinterpret_cast<typename Op::T *>(a.workspace);
  kernel<<<grid, BLOCK, 0, a.stream>>>(static_cast<const storage_t<IN> *>(a.in), S,
                                       (int64_t)Chunked::MIN_CHUNK_BYTES / ELEM, (int64_t)Chunked::MAX_CHUNKS,
                                       slots, slots + Chunked::MAX_CHUNKS,
                                       reinterpret_cast<unsigned int *>(a.workspace + axis_tickets_offset()),
                                       static_cast<typename Op::Out *>(a.out));
  return launch_status();
}

// One of the two warp-based row kernels (both take (in, rows, cols, ld, group, out) and loop
// beyond their grid) as planned by plan_rows: a warp per P.rows_per_warp rows, with at most
// P.waves full waves of the GPU (0: at most Rows::SHORT_MAX_BLOCKS blocks). The grid only
// decides which warp takes which rows, never the order within a row, so the bits do not
// depend on it.
template <cureduce_dtype IN, cureduce_dtype ACC, cureduce_op OP, class Rows, auto KERNEL>
cureduce_status launch_row_warps(const axis_call &a, uint64_t rows, uint64_t cols, uint64_t ld,
                                 const rows_plan &P) {
  using Op = compare_op<IN, OP, ACC>;
  const uint64_t blocks = row_warp_blocks(rows, P.rows_per_warp, Rows::BLOCK);
  const uint64_t cap =
      P.waves ? P.waves * resident_blocks<Rows::BLOCK, KERNEL>(Rows::WAVE_FALLBACK) : Rows::SHORT_MAX_BLOCKS;
  const unsigned grid = (unsigned)(blocks < cap ? blocks : cap);
  KERNEL<<<grid, Rows::BLOCK, 0, a.stream>>>(static_cast<const storage_t<IN> *>(a.in), rows, cols, ld,
                                             (int)P.group, static_cast<typename Op::Out *>(a.out));
  return launch_status();
}

// Long rows, no more than the full-array grid has blocks (ROWS_FULL), each reduced as a full
// array (reduce_full_rows) with the full-array kernel's launch shape (Full: a full_policy), its
// grid shared among the rows, in one launch. The rows' partials and tickets are the axis
// workspace's.
template <cureduce_dtype IN, cureduce_dtype ACC, cureduce_op OP, class Full>
cureduce_status launch_full_rows(const axis_call &a, uint64_t rows, uint64_t cols, uint64_t ld) {
  using Op = full_op<IN, OP, ACC>;
  static_assert(sizeof(typename Op::T) <= AXIS_SLOT_BYTES, "partial too wide");
  static_assert(std::is_same<typename Op::Out, typename compare_op<IN, OP, ACC>::Out>::value,
                "a row's result is written as the other row kernels write it");
  // At most full_grid_cap rows (plan_rows), so as many blocks in all and a ticket a row.
  constexpr uint64_t cap = full_grid_cap<OP, Full>();
  static_assert(cap <= AXIS_PARTIAL_SLOTS && cap <= AXIS_TICKETS && cap <= 65535,
                "axis workspace or grid too small for the rows' partials and tickets");
  constexpr int BLOCK = Full::BLOCK, UNROLL = Full::UNROLL;
  const full_layout L = make_full_layout<(int)sizeof(storage_t<IN>), BLOCK, UNROLL>(a.in, cols);
  const uint64_t blocks = full_blocks(L.tiles, rows, cap, (uint64_t)Full::ONE_BLOCK_TILES);
  reduce_full_rows<IN, ACC, OP, BLOCK, UNROLL>
      <<<dim3((unsigned)blocks, (unsigned)rows), BLOCK, 0, a.stream>>>(
          static_cast<const storage_t<IN> *>(a.in), L, ld, reinterpret_cast<typename Op::T *>(a.workspace),
          reinterpret_cast<unsigned int *>(a.workspace + axis_tickets_offset()),
          static_cast<typename Op::Out *>(a.out));
  return launch_status();
}

// Rows (Rows: a rows_policy; Chunked: the chunked_policy for long rows), by plan_rows.
template <cureduce_dtype IN, cureduce_dtype ACC, cureduce_op OP, class Rows, class Chunked>
cureduce_status launch_rows(const axis_call &a, uint64_t rows, uint64_t cols, uint64_t ld) {
  constexpr uint64_t ELEM = sizeof(storage_t<IN>);
  using Full = full_policy_for<ELEM>;
  const rows_plan P = plan_rows<Rows, Chunked, ELEM>(rows_are_vectors<ELEM>(a.in, cols, ld),
                                                     rows == 1 || (ld * ELEM) % 16 == 0,
                                                     full_grid_cap<OP, Full>(), rows, cols);
  constexpr auto short_rows = reduce_rows_short<IN, ACC, OP, Rows::BLOCK, Rows::SHORT_UNROLL>;
  constexpr auto lane_groups = reduce_rows_lanes<IN, ACC, OP, Rows::BLOCK, Rows::LANES_UNROLL>;
  switch (P.kernel) {
  case ROWS_SHORT: return launch_row_warps<IN, ACC, OP, Rows, short_rows>(a, rows, cols, ld, P);
  case ROWS_LANES: return launch_row_warps<IN, ACC, OP, Rows, lane_groups>(a, rows, cols, ld, P);
  case ROWS_FULL: return launch_full_rows<IN, ACC, OP, Full>(a, rows, cols, ld);
  default: {
    const segment_layout S{nullptr, rows, cols, ld};
    return launch_chunked<IN, ACC, OP, Chunked>(a, S, P.chunks);
  }
  }
}

// Segments: their total length is on the device, so a full wave of blocks, each taking chunks
// until none is left.
template <cureduce_dtype IN, cureduce_dtype ACC, cureduce_op OP, class Chunked>
cureduce_status launch_segments(const axis_call &a, uint64_t count, const int64_t *offsets) {
  const segment_layout S{offsets, count, 0, 0};
  return launch_chunked<IN, ACC, OP, Chunked>(a, S, 0);
}

// The column kernel with VEC columns a thread (Cols: a cols_policy), by choose_cols_plan.
template <cureduce_dtype IN, cureduce_dtype ACC, cureduce_op OP, class Cols, int VEC>
cureduce_status launch_cols_vec(const axis_call &a, const axis_shape &M) {
  using Op = compare_op<IN, OP, ACC>;
  static_assert(sizeof(typename Op::T) <= AXIS_SLOT_BYTES, "partial too wide");
  const cols_plan P = choose_cols_plan<Cols, VEC>(M.batches, M.rows, M.cols, sizeof(typename Op::T));
  if (P.tiles > 0x7fffffffu)
    return CUREDUCE_ERROR_INVALID_VALUE;

  cols_layout L{M.rows, M.cols, M.ld, P.slice_rows, (int)P.tx, (unsigned)P.batch_tiles, M.rows * M.ld, 0};
  L.warp_matrices = P.warps ? M.batches : 0;
  const dim3 grid((unsigned)P.tiles, (unsigned)P.slices);
  reduce_cols<IN, ACC, OP, Cols::BLOCK, VEC, Cols::UNROLL, Cols::LAST_VALUES>
      <<<grid, Cols::BLOCK, 0, a.stream>>>(
          static_cast<const storage_t<IN> *>(a.in), L, reinterpret_cast<typename Op::T *>(a.workspace),
          reinterpret_cast<unsigned int *>(a.workspace + axis_tickets_offset()),
          static_cast<typename Op::Out *>(a.out));
  return launch_status();
}

// Columns: 16-byte packs of columns when every row allows them (every matrix of a batch then
// starts on a 16-byte boundary too: rows * ld elements of whole vectors); else, for 1- and
// 2-byte elements, 4-byte packs, which a narrow inner axis needs (docs/design.md#columns);
// else one column per thread. Narrower packs also where a warp per matrix would leave its
// lanes few rows (choose_cols_pack).
template <cureduce_dtype IN, cureduce_dtype ACC, cureduce_op OP, class Cols>
cureduce_status launch_cols(const axis_call &a, const axis_shape &M) {
  constexpr uint64_t ELEM = sizeof(storage_t<IN>), PACK = 16 / ELEM;
  const bool vectors = rows_are_vectors<ELEM>(a.in, M.cols, M.ld);
  bool packs = false;
  if constexpr (ELEM < 4)
    packs = rows_are_packs<ELEM, 4>(a.in, M.cols, M.ld);
  const uint64_t vec = choose_cols_pack<Cols, ELEM>(vectors, packs, M.batches, M.rows, M.cols);
  if (vec == PACK)
    return launch_cols_vec<IN, ACC, OP, Cols, (int)PACK>(a, M);
  if constexpr (ELEM < 4) {
    if (vec == 4 / ELEM)
      return launch_cols_vec<IN, ACC, OP, Cols, (int)(4 / ELEM)>(a, M);
  }
  return launch_cols_vec<IN, ACC, OP, Cols, 1>(a, M);
}

enum axis_kind { AXIS_ROWS, AXIS_COLS, AXIS_SEGMENTS };

// The (dtype, accumulator) switch for one op, over the one list of supported pairs, with the
// policy of each kernel family: one for all rows, one for segments and long rows, and one
// for columns by element size.
template <cureduce_op OP>
cureduce_status select_axis(axis_kind kind, cureduce_dtype in, cureduce_dtype acc_dtype, const axis_call &a,
                            const axis_shape &M) {
  using Rows = rows_policy;
  using Chunked = chunked_policy;
// An op that has no meaning in an accumulator (offered<>) is refused here, once, so the launch
// functions above are only instantiated for pairs they can run.
#define CR_CASE(IN, ACC)                                                                                     \
  if (in == CUREDUCE_##IN && acc_dtype == CUREDUCE_##ACC) {                                                  \
    if constexpr (!offered<OP, CUREDUCE_##ACC>()) {                                                          \
      return CUREDUCE_ERROR_UNSUPPORTED;                                                                     \
    } else {                                                                                                 \
      using Cols = cols_policy<(int)sizeof(storage_t<CUREDUCE_##IN>)>;                                       \
      switch (kind) {                                                                                        \
      case AXIS_ROWS:                                                                                        \
        return launch_rows<CUREDUCE_##IN, CUREDUCE_##ACC, OP, Rows, Chunked>(a, M.rows, M.cols, M.ld);       \
      case AXIS_COLS: return launch_cols<CUREDUCE_##IN, CUREDUCE_##ACC, OP, Cols>(a, M);                     \
      default: return launch_segments<CUREDUCE_##IN, CUREDUCE_##ACC, OP, Chunked>(a, M.rows, M.offsets);     \
      }                                                                                                      \
    }                                                                                                        \
  }
  CUREDUCE_FOR_EACH_PAIR(CR_CASE)
#undef CR_CASE
  return CUREDUCE_ERROR_UNSUPPORTED;
}

#define CR_DECLARE_SELECT_AXIS(OPNAME, name)                                                                 \
  extern template cureduce_status select_axis<CUREDUCE_##OPNAME>(axis_kind, cureduce_dtype, cureduce_dtype,  \
                                                                 const axis_call &, const axis_shape &);
CUREDUCE_FOR_EACH_OP(CR_DECLARE_SELECT_AXIS)
#undef CR_DECLARE_SELECT_AXIS

} // namespace cr
