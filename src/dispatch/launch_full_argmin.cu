// The full-array kernels of op argmin, one per supported (dtype, accumulator) pair. Layer: dispatch.
#include "launch_full.cuh"

template cureduce_status cr::select_full<CUREDUCE_ARGMIN>(cureduce_dtype, cureduce_dtype,
                                                       const void *, uint64_t, void *, void *,
                                                       cudaStream_t);
