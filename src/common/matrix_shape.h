/* The one rule for a valid rows x cols matrix with leading dimension ld (cureduce.h), and for
 * an outer x length x inner array: the GPU and CPU calls both check them. */
#ifndef CUREDUCE_COMMON_MATRIX_SHAPE_H
#define CUREDUCE_COMMON_MATRIX_SHAPE_H

#include <stdint.h>

/* 1 when ld >= cols and the last element, (rows - 1) * ld + cols - 1, stays below 2^63. */
static inline int cr_matrix_shape_ok(uint64_t rows, uint64_t cols, uint64_t ld) {
  return ld >= cols && !(rows > 0 && ld > 0 && rows - 1 > (UINT64_MAX / 2 - cols) / ld);
}

/* 1 when outer x length x inner elements number less than 2^63 (cureduce_reduce_axis). */
static inline int cr_axis_shape_ok(uint64_t outer, uint64_t length, uint64_t inner) {
  const uint64_t limit = UINT64_MAX / 2;
  if (outer == 0 || length == 0 || inner == 0)
    return 1;
  return length <= limit / inner && outer <= limit / (length * inner);
}

#endif
