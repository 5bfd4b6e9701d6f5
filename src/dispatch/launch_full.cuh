// Launching the full-array kernel: tuning lookup, partition layout and the (dtype, acc) switch
// for one op. Layer: dispatch. Instantiated once per op (launch_full_<op>.cu) so the kernels
// compile in parallel.
#pragma once

#include "../common/combos.h"
#include "../kernels/reduce_full_single_pass.cuh"
#include "dispatch.h"
#include "launch_status.cuh"
#include "tuning.h"

#include <cuda_runtime.h>

namespace cr {

constexpr cr_full_tuning FULL_TUNING[] = {
#define CR_ROW(SIZE, BLOCK, UNROLL, MAX_BLOCKS, ARG_BLOCKS) {SIZE, BLOCK, UNROLL, MAX_BLOCKS, ARG_BLOCKS},
    CR_FULL_TUNING_TABLE(CR_ROW)
#undef CR_ROW
};

constexpr cr_full_tuning full_tuning_for(int elem_size) {
  for (const cr_full_tuning &row : FULL_TUNING)
    if (row.elem_size == elem_size)
      return row;
  return cr_full_tuning{0, 0, 0, 0, 0};
}

// Workspace layout: the partials, then the ticket counter.
constexpr size_t FULL_PARTIAL_BYTES = 16; // the widest accumulator value, aligned
constexpr size_t full_ticket_offset() { return CR_FULL_MAX_BLOCKS * FULL_PARTIAL_BYTES; }

// The partition of n elements at address `in` (see reduce_full_single_pass.cuh), and its grid.
template <int ELEM, int BLOCK, int UNROLL>
inline full_layout make_full_layout(const void *in, uint64_t n) {
  constexpr uint64_t per_vec = 16 / ELEM, per_tile = (uint64_t)BLOCK * UNROLL;
  const uint64_t misalign = reinterpret_cast<uintptr_t>(in) % 16;
  uint64_t head = misalign ? (16 - misalign) / ELEM : 0;
  head = head < n ? head : n;
  full_layout L;
  L.n = n;
  L.head = (uint32_t)head;
  L.vectors = (n - head) / per_vec;
  L.tail = (uint32_t)((n - head) % per_vec);
  L.full_tiles = L.vectors / per_tile;
  L.tiles = (L.vectors + per_tile - 1) / per_tile;
  return L;
}

template <cureduce_dtype IN, cureduce_dtype ACC, cureduce_op OP>
cureduce_status launch_full(const void *d_in, uint64_t n, void *d_out, void *d_workspace,
                            cudaStream_t stream) {
  if constexpr (!offered<OP, ACC>()) {
    return CUREDUCE_ERROR_UNSUPPORTED;
  } else {
    using Op = full_op<IN, OP, ACC>;
    constexpr int ELEM = (int)sizeof(storage_t<IN>);
    constexpr cr_full_tuning T = full_tuning_for(ELEM);
    static_assert(T.block > 0, "no tuning row for this element size");
    static_assert(T.max_blocks <= CR_FULL_MAX_BLOCKS, "workspace too small for this row");
    static_assert(T.arg_blocks > 0 && T.arg_blocks <= T.max_blocks, "arg ops' grid cap out of range");
    static_assert(sizeof(typename Op::T) <= FULL_PARTIAL_BYTES, "partial too wide");

    const full_layout L = make_full_layout<ELEM, T.block, T.unroll>(d_in, n);
    const int arg_cap = cr_full_arg_blocks(T.arg_blocks);
    const uint64_t cap = (uint64_t)(is_arg_kind(OP) && arg_cap > 0 && arg_cap < T.max_blocks ? arg_cap : T.max_blocks);
    const uint64_t blocks = L.tiles < cap ? L.tiles : cap;
    const unsigned grid = blocks > 0 ? (unsigned)blocks : 1u;
    char *ws = static_cast<char *>(d_workspace);
    reduce_full_single_pass<IN, ACC, OP, T.block, T.unroll><<<grid, T.block, 0, stream>>>(
        static_cast<const storage_t<IN> *>(d_in), L, reinterpret_cast<typename Op::T *>(ws),
        reinterpret_cast<unsigned int *>(ws + full_ticket_offset()),
        static_cast<typename Op::Out *>(d_out));
    return launch_status();
  }
}

// The (dtype, accumulator) switch for one op, over the one list of supported pairs.
template <cureduce_op OP>
cureduce_status select_full(cureduce_dtype in, cureduce_dtype acc_dtype, const void *d_in,
                            uint64_t n, void *d_out, void *d_workspace, cudaStream_t stream) {
#define CR_CASE(IN, ACC)                                                                        \
  if (in == CUREDUCE_##IN && acc_dtype == CUREDUCE_##ACC)                                       \
    return launch_full<CUREDUCE_##IN, CUREDUCE_##ACC, OP>(d_in, n, d_out, d_workspace, stream);
  CUREDUCE_FOR_EACH_PAIR(CR_CASE)
#undef CR_CASE
  return CUREDUCE_ERROR_UNSUPPORTED;
}

#define CR_DECLARE_SELECT_FULL(OPNAME)                                                          \
  extern template cureduce_status select_full<CUREDUCE_##OPNAME>(                               \
      cureduce_dtype, cureduce_dtype, const void *, uint64_t, void *, void *, cudaStream_t);
CUREDUCE_FOR_EACH_OP(CR_DECLARE_SELECT_FULL)
#undef CR_DECLARE_SELECT_FULL

} // namespace cr
