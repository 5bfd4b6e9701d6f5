// The dispatch layer's C entry points for full-array reductions. Layer: dispatch.
#include "launch_full.cuh"

extern "C" size_t cr_full_workspace_bytes(void) {
  return cr::full_exact_offset() + cr_exact_workspace_bytes();
}

extern "C" cureduce_status cr_launch_full(cureduce_op op, cureduce_dtype in, cureduce_dtype acc,
                                          const void *d_in, uint64_t n, void *d_out, void *d_workspace,
                                          void *stream) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  switch (op) {
#define CR_OP_CASE(OPNAME, name)                                                                             \
  case CUREDUCE_##OPNAME: return cr::select_full<CUREDUCE_##OPNAME>(in, acc, d_in, n, d_out, d_workspace, s);
    CUREDUCE_FOR_EACH_OP(CR_OP_CASE)
#undef CR_OP_CASE
  case CUREDUCE_SUM_EXACT:
  case CUREDUCE_MEAN_EXACT: return cr_launch_exact_full(op, in, acc, d_in, n, d_out, d_workspace, stream);
  default: return CUREDUCE_ERROR_INVALID_OP;
  }
}
