/* The one rule for a valid rows x cols matrix with leading dimension ld (cureduce.h): the GPU
 * and CPU row and column calls both check it. */
#ifndef CUREDUCE_COMMON_MATRIX_SHAPE_H
#define CUREDUCE_COMMON_MATRIX_SHAPE_H

#include <stdint.h>

/* 1 when ld >= cols and the last element, (rows - 1) * ld + cols - 1, stays below 2^63. */
static inline int cr_matrix_shape_ok(uint64_t rows, uint64_t cols, uint64_t ld) {
  return ld >= cols && !(rows > 0 && ld > 0 && rows - 1 > (UINT64_MAX / 2 - cols) / ld);
}

#endif
