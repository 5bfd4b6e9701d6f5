// Launching the full-array kernel: partition layout, the launch with a policy
// (full_policy.h) and the (dtype, acc) switch for one op. Layer: dispatch. Instantiated once
// per op (launch_full_<op>.cu, generated from launch_full_op.cu.in) so the kernels compile in
// parallel.
#pragma once

#include "../common/combos.h"
#include "../kernels/reduce_full_single_pass.cuh"
#include "dispatch.h"
#include "full_policy.h"
#include "launch_status.cuh"

#include <cuda_runtime.h>

namespace cr {

// Workspace layout: the partials, then the ticket counter.
constexpr size_t FULL_PARTIAL_BYTES = 16; // the widest accumulator value, aligned
constexpr size_t full_ticket_offset() { return (size_t)FULL_MAX_BLOCKS * FULL_PARTIAL_BYTES; }
// Then, after the counter (padded to keep the next user aligned), the exact sums' region
// (dispatch_exact.cu).
constexpr size_t full_exact_offset() { return full_ticket_offset() + 256; }

// The grid cap of OP's kernel (Policy: a full_policy): ARG_BLOCKS for the arg ops, else
// MAX_BLOCKS.
template <cureduce_op OP, class Policy> constexpr uint64_t full_grid_cap() {
  return is_arg_kind(OP) ? (uint64_t)Policy::ARG_BLOCKS : (uint64_t)Policy::MAX_BLOCKS;
}

// The kernel for (IN, ACC, OP) with the launch shape of Policy (a full_policy).
template <cureduce_dtype IN, cureduce_dtype ACC, cureduce_op OP, class Policy>
cureduce_status launch_full(const void *d_in, uint64_t n, void *d_out, void *d_workspace,
                            cudaStream_t stream) {
  if constexpr (!offered<OP, ACC>()) {
    return CUREDUCE_ERROR_UNSUPPORTED;
  } else {
    using Op = full_op<IN, OP, ACC>;
    constexpr int ELEM = (int)sizeof(storage_t<IN>);
    constexpr int BLOCK = Policy::BLOCK, UNROLL = Policy::UNROLL;
    static_assert(Policy::MAX_BLOCKS <= FULL_MAX_BLOCKS, "workspace too small for this policy");
    static_assert(sizeof(typename Op::T) <= FULL_PARTIAL_BYTES, "partial too wide");

    const full_layout L = make_full_layout<ELEM, BLOCK, UNROLL>(d_in, n);
    const unsigned grid =
        (unsigned)full_blocks(L.tiles, 1, full_grid_cap<OP, Policy>(), (uint64_t)Policy::ONE_BLOCK_TILES);
    char *ws = static_cast<char *>(d_workspace);
    reduce_full_single_pass<IN, ACC, OP, BLOCK, UNROLL><<<grid, BLOCK, 0, stream>>>(
        static_cast<const storage_t<IN> *>(d_in), L, reinterpret_cast<typename Op::T *>(ws),
        reinterpret_cast<unsigned int *>(ws + full_ticket_offset()), static_cast<typename Op::Out *>(d_out));
    return launch_status();
  }
}

// The (dtype, accumulator) switch for one op, over the one list of supported pairs.
template <cureduce_op OP>
cureduce_status select_full(cureduce_dtype in, cureduce_dtype acc_dtype, const void *d_in, uint64_t n,
                            void *d_out, void *d_workspace, cudaStream_t stream) {
#define CR_CASE(IN, ACC)                                                                                     \
  if (in == CUREDUCE_##IN && acc_dtype == CUREDUCE_##ACC)                                                    \
    return launch_full<CUREDUCE_##IN, CUREDUCE_##ACC, OP,                                                    \
                       full_policy_for<sizeof(storage_t<CUREDUCE_##IN>)>>(d_in, n, d_out, d_workspace,       \
                                                                          stream);
  CUREDUCE_FOR_EACH_PAIR(CR_CASE)
#undef CR_CASE
  return CUREDUCE_ERROR_UNSUPPORTED;
}

#define CR_DECLARE_SELECT_FULL(OPNAME, name)                                                                 \
  extern template cureduce_status select_full<CUREDUCE_##OPNAME>(                                            \
      cureduce_dtype, cureduce_dtype, const void *, uint64_t, void *, void *, cudaStream_t);
CUREDUCE_FOR_EACH_OP(CR_DECLARE_SELECT_FULL)
#undef CR_DECLARE_SELECT_FULL

} // namespace cr
