/* Row, column, axis and segment reductions on the CPU: each row, column or segment goes through
 * cureduce_cpu_reduce's core (work.h), so they share its semantics and its order of summation;
 * the working memory is allocated once, before any output is written. The reference of the GPU
 * tests and the CLI's path without a GPU. Layer: CPU. */
#include "cureduce.h"

#include "../common/dtype_facts.h"
#include "../common/matrix_shape.h"
#include "work.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* What every matrix call checks: the combination, pointers, shape, and that the outputs do not
   overlap the matrix. h_out may be NULL where there are no outputs, as on the GPU. */
static cureduce_status check_matrix(cureduce_op op, cureduce_dtype in, const void *h_in, uint64_t rows,
                                    uint64_t cols, uint64_t ld, cureduce_dtype *acc, const void *h_out,
                                    uint64_t outputs) {
  const cureduce_status st = cureduce_resolve_acc(op, in, *acc, acc);
  if (st != CUREDUCE_SUCCESS)
    return st;
  if ((outputs > 0 && !h_out) || (rows > 0 && cols > 0 && !h_in))
    return CUREDUCE_ERROR_NULL_POINTER;
  const uint64_t size = cureduce_dtype_size(in);
  if (!cr_matrix_shape_ok(rows, cols, ld, size) || !cr_results_ok(outputs) ||
      cr_overlaps_matrix(h_out, outputs * cureduce_result_size(op, *acc), h_in, rows, cols, ld, size))
    return CUREDUCE_ERROR_INVALID_VALUE;
  return CUREDUCE_SUCCESS;
}

/* One element of `size` bytes (a fixed-size copy for each dtype size, not a library call). */
static void copy_element(void *dst, const void *src, size_t size) {
  switch (size) {
  case 1: memcpy(dst, src, 1); break;
  case 2: memcpy(dst, src, 2); break;
  case 4: memcpy(dst, src, 4); break;
  case 8: memcpy(dst, src, 8); break;
  default: memcpy(dst, src, size); break;
  }
}

/* `count` reductions of `length` elements each: all empty, or none. */
static int empty_reductions(cureduce_op op, uint64_t count, uint64_t length) {
  return count > 0 && length == 0 && !cr_op_empty_is_zero(op);
}

/* The rows of a checked matrix into h_out, in w. */
static cureduce_status rows_in(cureduce_op op, cureduce_dtype in, const void *h_in, uint64_t rows,
                               uint64_t cols, uint64_t ld, cureduce_dtype acc, void *h_out,
                               const cr_cpu_work *w) {
  const size_t size = cureduce_dtype_size(in), out_size = cureduce_result_size(op, acc);
  for (uint64_t i = 0; i < rows; ++i) {
    const cureduce_status st = cr_cpu_reduce_in(op, in, (const char *)h_in + i * ld * size, cols, acc,
                                                (char *)h_out + i * out_size, w);
    if (st != CUREDUCE_SUCCESS)
      return st;
  }
  return CUREDUCE_SUCCESS;
}

/* Work and, for columns (gather), a block to gather them in: allocated together before any
   output is written (matrix_work_free frees either). No block where one column alone is more
   than the block may hold: such columns are read in place, element by element. */
typedef struct matrix_work {
  cr_cpu_work w;
  char *block;
  uint64_t width; /* columns gathered at a time */
} matrix_work;

static void matrix_work_free(matrix_work *m) {
  cr_cpu_work_free(&m->w);
  free(m->block);
}

static cureduce_status matrix_work_alloc(matrix_work *m, cureduce_op op, cureduce_dtype in, uint64_t rows,
                                         uint64_t cols, int gather) {
  m->block = NULL;
  m->width = 0;
  if (cr_cpu_work_alloc(&m->w, cr_op_is_exact(op)) != CUREDUCE_SUCCESS)
    return CUREDUCE_ERROR_OUT_OF_MEMORY;
  if (!gather)
    return CUREDUCE_SUCCESS;
  /* Columns are gathered up to COLS_GATHERED at a time, in one pass over the rows that copies
     each row's stretch of them: one column at a time read a cache line per element per column,
     which took most of the time of a column reduction. At most GATHER_BYTES of copies. */
  enum { COLS_GATHERED = 16 };
  const uint64_t GATHER_BYTES = (uint64_t)64 << 20, length = rows ? rows : 1, size = cureduce_dtype_size(in);
  uint64_t width = cols < COLS_GATHERED ? (cols ? cols : 1) : COLS_GATHERED;
  while (width > 1 && length > GATHER_BYTES / width / size)
    width /= 2;
  m->width = width;
  if (length > GATHER_BYTES / size) /* read in place: a copy of the column would double it */
    return CUREDUCE_SUCCESS;
  m->block = malloc(width * length * size); /* column c of the group at block + c * rows */
  if (m->block)
    return CUREDUCE_SUCCESS;
  matrix_work_free(m);
  return CUREDUCE_ERROR_OUT_OF_MEMORY;
}

/* The columns of a checked matrix into h_out, in m. */
static cureduce_status cols_in(cureduce_op op, cureduce_dtype in, const void *h_in, uint64_t rows,
                               uint64_t cols, uint64_t ld, cureduce_dtype acc, void *h_out,
                               const matrix_work *m) {
  const size_t size = cureduce_dtype_size(in), out_size = cureduce_result_size(op, acc);
  cureduce_status st = CUREDUCE_SUCCESS;
  if (!m->block) { /* columns too tall to copy: each read in place, ld elements apart */
    cr_cpu_work strided = m->w;
    strided.stride = ld;
    for (uint64_t j = 0; j < cols && st == CUREDUCE_SUCCESS; ++j)
      st = cr_cpu_reduce_in(op, in, (const char *)h_in + j * size, rows, acc, (char *)h_out + j * out_size,
                            &strided);
    return st;
  }
  for (uint64_t j0 = 0; j0 < cols && st == CUREDUCE_SUCCESS; j0 += m->width) {
    const uint64_t w = cols - j0 < m->width ? cols - j0 : m->width;
    for (uint64_t i = 0; i < rows; ++i) {
      const char *src = (const char *)h_in + (i * ld + j0) * size;
      for (uint64_t c = 0; c < w; ++c)
        copy_element(m->block + (c * rows + i) * size, src + c * size, size);
    }
    for (uint64_t c = 0; c < w && st == CUREDUCE_SUCCESS; ++c)
      st = cr_cpu_reduce_in(op, in, m->block + c * rows * size, rows, acc,
                            (char *)h_out + (j0 + c) * out_size, &m->w);
  }
  return st;
}

/* `count` empty reductions (SUM and SUMSQ: zeros): nothing to read, no work. */
static cureduce_status write_empty(cureduce_op op, cureduce_dtype in, cureduce_dtype acc, void *h_out,
                                   uint64_t count) {
  const size_t out_size = cureduce_result_size(op, acc);
  for (uint64_t i = 0; i < count; ++i) {
    const cureduce_status st = cr_cpu_reduce_in(op, in, NULL, 0, acc, (char *)h_out + i * out_size, NULL);
    if (st != CUREDUCE_SUCCESS)
      return st;
  }
  return CUREDUCE_SUCCESS;
}

/* Rows (one result a row) or columns (one a column) of a matrix: checked, then the work
   allocated, then the outputs written. */
static cureduce_status reduce_matrix(cureduce_op op, cureduce_dtype in, const void *h_in, uint64_t rows,
                                     uint64_t cols, uint64_t ld, cureduce_dtype acc, void *h_out,
                                     int columns) {
  const uint64_t outputs = columns ? cols : rows, length = columns ? rows : cols;
  cureduce_status st = check_matrix(op, in, h_in, rows, cols, ld, &acc, h_out, outputs);
  if (st != CUREDUCE_SUCCESS)
    return st;
  if (empty_reductions(op, outputs, length))
    return CUREDUCE_EMPTY;
  if (outputs == 0 || length == 0)
    return write_empty(op, in, acc, h_out, length == 0 ? outputs : 0);
  matrix_work m;
  st = matrix_work_alloc(&m, op, in, rows, cols, columns);
  if (st != CUREDUCE_SUCCESS)
    return st;
  st = columns ? cols_in(op, in, h_in, rows, cols, ld, acc, h_out, &m)
               : rows_in(op, in, h_in, rows, cols, ld, acc, h_out, &m.w);
  matrix_work_free(&m);
  return st;
}

cureduce_status cureduce_cpu_reduce_rows(cureduce_op op, cureduce_dtype in, const void *h_in, uint64_t rows,
                                         uint64_t cols, uint64_t ld, cureduce_dtype acc, void *h_out) {
  return reduce_matrix(op, in, h_in, rows, cols, ld, acc, h_out, 0);
}

cureduce_status cureduce_cpu_reduce_cols(cureduce_op op, cureduce_dtype in, const void *h_in, uint64_t rows,
                                         uint64_t cols, uint64_t ld, cureduce_dtype acc, void *h_out) {
  return reduce_matrix(op, in, h_in, rows, cols, ld, acc, h_out, 1);
}

/* One column reduction per outer slab (a row reduction when inner == 1): the GPU's grouping. */
cureduce_status cureduce_cpu_reduce_axis(cureduce_op op, cureduce_dtype in, const void *h_in, uint64_t outer,
                                         uint64_t length, uint64_t inner, cureduce_dtype acc, void *h_out) {
  cureduce_status st = cureduce_resolve_acc(op, in, acc, &acc);
  if (st != CUREDUCE_SUCCESS)
    return st;
  const int outputs = outer > 0 && inner > 0;
  if ((outputs && !h_out) || (outputs && length > 0 && !h_in))
    return CUREDUCE_ERROR_NULL_POINTER;
  if (!cr_axis_shape_ok(outer, length, inner, cureduce_dtype_size(in)))
    return CUREDUCE_ERROR_INVALID_VALUE;
  if (!outputs)
    return CUREDUCE_SUCCESS;
  if (inner == 1) /* which checks the overlap itself */
    return cureduce_cpu_reduce_rows(op, in, h_in, outer, length, length, acc, h_out);
  if (cr_ranges_overlap(h_out, outer * inner * cureduce_result_size(op, acc), h_in,
                        outer * length * inner * cureduce_dtype_size(in)))
    return CUREDUCE_ERROR_INVALID_VALUE;
  if (empty_reductions(op, inner, length))
    return CUREDUCE_EMPTY;
  if (length == 0)
    return write_empty(op, in, acc, h_out, outer * inner);
  matrix_work m;
  st = matrix_work_alloc(&m, op, in, length, inner, 1);
  if (st != CUREDUCE_SUCCESS)
    return st;
  const size_t size = cureduce_dtype_size(in), out_size = cureduce_result_size(op, acc);
  for (uint64_t o = 0; o < outer && st == CUREDUCE_SUCCESS; ++o)
    st = cols_in(op, in, (const char *)h_in + o * length * inner * size, length, inner, inner, acc,
                 (char *)h_out + o * inner * out_size, &m);
  matrix_work_free(&m);
  return st;
}

cureduce_status cureduce_cpu_reduce_segments(cureduce_op op, cureduce_dtype in, const void *h_in,
                                             uint64_t num_segments, const int64_t *h_offsets,
                                             cureduce_dtype acc, void *h_out) {
  cureduce_status st = cureduce_resolve_acc(op, in, acc, &acc);
  if (st != CUREDUCE_SUCCESS)
    return st;
  if (cr_segments_lack_pointer(num_segments, h_in, h_offsets, h_out))
    return CUREDUCE_ERROR_NULL_POINTER;
  const size_t size = cureduce_dtype_size(in), out_size = cureduce_result_size(op, acc);
  if (!cr_results_ok(num_segments))
    return CUREDUCE_ERROR_INVALID_VALUE;
  for (uint64_t s = 0; s < num_segments; ++s)
    if (h_offsets[s] < 0 || h_offsets[s + 1] < h_offsets[s])
      return CUREDUCE_ERROR_INVALID_VALUE;
  if (num_segments > 0 && !cr_extent_ok((uint64_t)h_offsets[num_segments], size))
    return CUREDUCE_ERROR_INVALID_VALUE;
  if (num_segments > 0 &&
      cr_overlaps_segments(h_out, num_segments * out_size, h_in, h_offsets, num_segments, size))
    return CUREDUCE_ERROR_INVALID_VALUE;
  cr_cpu_work w = {NULL, NULL, 1}; /* none where no segment has an element */
  if (num_segments > 0 && h_offsets[num_segments] > h_offsets[0]) {
    st = cr_cpu_work_alloc(&w, cr_op_is_exact(op));
    if (st != CUREDUCE_SUCCESS)
      return st;
  }
  for (uint64_t s = 0; s < num_segments && st == CUREDUCE_SUCCESS; ++s) {
    st = cr_cpu_reduce_in(op, in, (const char *)h_in + (uint64_t)h_offsets[s] * size,
                          (uint64_t)(h_offsets[s + 1] - h_offsets[s]), acc, (char *)h_out + s * out_size, &w);
    if (st == CUREDUCE_EMPTY) /* an empty segment: left untouched */
      st = CUREDUCE_SUCCESS;
  }
  cr_cpu_work_free(&w);
  return st;
}
