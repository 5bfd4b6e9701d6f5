// The matrix and 3-d shapes of `cureduce-bench --rows` (docs/rows.md), shared by the bench and the
// test of the column plans (tests/test_cols_plan.cu). Layer: bench.
#pragma once

#include <stdint.h>

namespace bench {

struct rows_shape {
  uint64_t rows, cols; // rows == 0: the variable-segment mix
  uint64_t outer = 0;  // > 0: outer x rows x cols, reduced along its middle axis (rows)
};
inline constexpr rows_shape ROWS_SHAPES[] = {{4096, 4096},    {32768, 1024},    {1024, 65536},   {65536, 128},
                                             {1048576, 32},   {8, 16777216},    {16384, 8192},   {0, 0},
                                             {4096, 256, 64}, {1024, 16, 4096}, {2048, 2, 16384}};

} // namespace bench
