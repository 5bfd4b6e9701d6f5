// The row, column and segment kernels of op argmin, one set per supported (dtype, accumulator)
// pair. Layer: dispatch.
#include "launch_axis.cuh"

template cureduce_status cr::select_axis<CUREDUCE_ARGMIN>(cr::axis_kind, cureduce_dtype, cureduce_dtype,
                                                      const cr::axis_call &, uint64_t, uint64_t,
                                                      uint64_t, const int64_t *);
