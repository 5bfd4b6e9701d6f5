// The dispatch layer's C entry points for row, column, axis and segment reductions. Layer:
// dispatch.
#include "launch_axis.cuh"

// The axis kernels' workspace, then the exact sums' region.
extern "C" size_t cr_axis_workspace_bytes(void) {
  return cr::axis_workspace_bytes() + cr_exact_axis_workspace_bytes();
}

static void *exact_axis_region(void *d_workspace) {
  return static_cast<char *>(d_workspace) + cr::axis_workspace_bytes();
}

static cureduce_status select(cr::axis_kind kind, cureduce_op op, cureduce_dtype in, cureduce_dtype acc,
                              const cr::axis_call &a, const cr::axis_shape &M) {
  switch (op) {
#define CR_OP_CASE(OPNAME, name)                                                                             \
  case CUREDUCE_##OPNAME: return cr::select_axis<CUREDUCE_##OPNAME>(kind, in, acc, a, M);
    CUREDUCE_FOR_EACH_OP(CR_OP_CASE)
#undef CR_OP_CASE
  default: return CUREDUCE_ERROR_INVALID_OP;
  }
}

static int is_exact(cureduce_op op) { return op == CUREDUCE_SUM_EXACT || op == CUREDUCE_MEAN_EXACT; }

static cr::axis_call call(const void *d_in, void *d_out, void *d_workspace, void *stream) {
  return cr::axis_call{d_in, d_out, static_cast<char *>(d_workspace), static_cast<cudaStream_t>(stream)};
}

extern "C" cureduce_status cr_launch_rows(cureduce_op op, cureduce_dtype in, cureduce_dtype acc,
                                          const void *d_in, uint64_t rows, uint64_t cols, uint64_t ld,
                                          void *d_out, void *d_workspace, void *stream) {
  if (is_exact(op))
    return cr_launch_exact_rows(op, in, acc, d_in, rows, cols, ld, d_out, exact_axis_region(d_workspace),
                                stream);
  return select(cr::AXIS_ROWS, op, in, acc, call(d_in, d_out, d_workspace, stream),
                cr::axis_shape{1, rows, cols, ld, nullptr});
}

extern "C" cureduce_status cr_launch_cols(cureduce_op op, cureduce_dtype in, cureduce_dtype acc,
                                          const void *d_in, uint64_t rows, uint64_t cols, uint64_t ld,
                                          void *d_out, void *d_workspace, void *stream) {
  if (is_exact(op))
    return cr_launch_exact_cols(op, in, acc, d_in, rows, cols, ld, d_out, exact_axis_region(d_workspace),
                                stream);
  return select(cr::AXIS_COLS, op, in, acc, call(d_in, d_out, d_workspace, stream),
                cr::axis_shape{1, rows, cols, ld, nullptr});
}

extern "C" cureduce_status cr_launch_axis(cureduce_op op, cureduce_dtype in, cureduce_dtype acc,
                                          const void *d_in, uint64_t outer, uint64_t length, uint64_t inner,
                                          void *d_out, void *d_workspace, void *stream) {
  if (is_exact(op))
    return cr_launch_exact_axis(op, in, acc, d_in, outer, length, inner, d_out,
                                exact_axis_region(d_workspace), stream);
  return select(cr::AXIS_COLS, op, in, acc, call(d_in, d_out, d_workspace, stream),
                cr::axis_shape{outer, length, inner, inner, nullptr});
}

extern "C" cureduce_status cr_launch_segments(cureduce_op op, cureduce_dtype in, cureduce_dtype acc,
                                              const void *d_in, uint64_t count, const int64_t *d_offsets,
                                              void *d_out, void *d_workspace, void *stream) {
  if (is_exact(op))
    return cr_launch_exact_segments(op, in, acc, d_in, count, d_offsets, d_out,
                                    exact_axis_region(d_workspace), stream);
  return select(cr::AXIS_SEGMENTS, op, in, acc, call(d_in, d_out, d_workspace, stream),
                cr::axis_shape{1, count, 0, 0, d_offsets});
}
