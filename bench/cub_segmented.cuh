// CUB's DeviceSegmentedReduce on the shapes of `cureduce-bench --rows`. Layer: the benchmark tool.
#pragma once

#include "cub_reference.cuh"

namespace bench {

// The f32 sum of each row (axis 1), each column (axis 0) of a rows x cols matrix (ld == cols),
// or each segment of d_offsets (when not null; `segments` of them), of f32 or bf16 input,
// written as floats to d_out; nullptr for other dtypes.
std::unique_ptr<cub_run> make_cub_segmented_sum(cureduce_dtype in, const void *d_in, uint64_t rows,
                                                uint64_t cols, int axis, const int64_t *d_offsets,
                                                uint64_t segments, void *d_out);

} // namespace bench
