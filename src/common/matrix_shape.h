/* The one rule for a valid rows x cols matrix with leading dimension ld (cureduce.h), for an
 * outer x length x inner array, for n elements, for arrays of exact states and for the
 * pointers of segmented calls, and for outputs that overlap what a call reads: the GPU and CPU
 * calls all check them. An extent of 2^63 bytes or more cannot be in memory, and its byte
 * offsets would wrap. */
#ifndef CUREDUCE_COMMON_MATRIX_SHAPE_H
#define CUREDUCE_COMMON_MATRIX_SHAPE_H

#include "cureduce.h"

#include <stdint.h>

/* Elements of `size` bytes that fit in less than 2^63 bytes. */
static inline uint64_t cr_elements_max(uint64_t size) { return (UINT64_MAX / 2) / size; }

/* 1 when n elements of `size` bytes span less than 2^63 bytes. */
static inline int cr_extent_ok(uint64_t n, uint64_t size) { return n <= cr_elements_max(size); }

/* 1 when `count` results of up to 8 bytes each span less than 2^63 bytes (a matrix call's
   outputs: rows of zero columns, or of one-byte elements, can number more). */
static inline int cr_results_ok(uint64_t count) { return cr_extent_ok(count, 8); }

/* 1 when `count` exact states (CUREDUCE_EXACT_STATE_WORDS int64 words each) span less than 2^63
   bytes. */
static inline int cr_exact_states_ok(uint64_t count) {
  return cr_extent_ok(count, CUREDUCE_EXACT_STATE_WORDS * sizeof(int64_t));
}

/* 1 when the bytes [a, a + a_bytes) and [b, b + b_bytes) share one (an empty range shares none).
   A call refuses outputs (or states) that overlap what it reads: writing them would change
   elements still to be read, in an order that depends on the GPU's schedule. */
static inline int cr_ranges_overlap(const void *a, uint64_t a_bytes, const void *b, uint64_t b_bytes) {
  const uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
  return a_bytes > 0 && b_bytes > 0 && x < y + b_bytes && y < x + a_bytes;
}

/* The bytes of `count` exact states. */
static inline uint64_t cr_exact_states_bytes(uint64_t count) {
  return count * CUREDUCE_EXACT_STATE_WORDS * sizeof(int64_t);
}

/* 1 when the states at a and b (one each) share a word: combining them is refused. */
static inline int cr_exact_states_overlap(const int64_t *a, const int64_t *b) {
  return cr_ranges_overlap(a, cr_exact_states_bytes(1), b, cr_exact_states_bytes(1));
}

/* 1 when a segmented call lacks a pointer it reads: with any segment, empty or not, the input,
   the offsets and the outputs (or states) all; with none, no pointer is read. The GPU cannot
   see the offsets, so an input of empty segments must still be given, on the CPU too. */
static inline int cr_segments_lack_pointer(uint64_t num_segments, const void *in, const int64_t *offsets,
                                           const void *out) {
  return num_segments > 0 && (!in || !offsets || !out);
}

/* 1 when the out_bytes at out overlap a matrix that cr_matrix_shape_ok accepts: its extent from
   the first element, (rows - 1) * ld + cols elements of `size` bytes (none when it is empty). */
static inline int cr_overlaps_matrix(const void *out, uint64_t out_bytes, const void *in, uint64_t rows,
                                     uint64_t cols, uint64_t ld, uint64_t size) {
  const uint64_t bytes = rows == 0 || cols == 0 ? 0 : ((rows - 1) * ld + cols) * size;
  return cr_ranges_overlap(out, out_bytes, in, bytes);
}

/* 1 when the out_bytes at out overlap a segmented call's num_segments + 1 offsets. */
static inline int cr_overlaps_offsets(const void *out, uint64_t out_bytes, const int64_t *offsets,
                                      uint64_t num_segments) {
  return cr_ranges_overlap(out, out_bytes, offsets, (num_segments + 1) * sizeof(int64_t));
}

/* 1 when the out_bytes at out overlap a segmented call's offsets or the elements its segments
   span, offsets[0] to offsets[num_segments] (offsets checked, in host memory: the CPU calls). */
static inline int cr_overlaps_segments(const void *out, uint64_t out_bytes, const void *in,
                                       const int64_t *offsets, uint64_t num_segments, uint64_t size) {
  return cr_overlaps_offsets(out, out_bytes, offsets, num_segments) ||
         cr_ranges_overlap(out, out_bytes, (const char *)in + (uint64_t)offsets[0] * size,
                           (uint64_t)(offsets[num_segments] - offsets[0]) * size);
}

/* 1 when ld >= cols and the matrix's extent, (rows - 1) * ld + cols elements of `size` bytes,
   stays below 2^63 bytes. */
static inline int cr_matrix_shape_ok(uint64_t rows, uint64_t cols, uint64_t ld, uint64_t size) {
  const uint64_t limit = cr_elements_max(size);
  if (ld < cols)
    return 0;
  if (rows == 0)
    return 1;
  return cols <= limit && (ld == 0 || rows - 1 <= (limit - cols) / ld);
}

/* 1 when outer x length x inner elements of `size` bytes span less than 2^63 bytes, and so do
   the outer x inner results of up to 8 bytes each, also where length is 0
   (cureduce_reduce_axis). */
static inline int cr_axis_shape_ok(uint64_t outer, uint64_t length, uint64_t inner, uint64_t size) {
  const uint64_t limit = cr_elements_max(size);
  if (outer == 0 || inner == 0)
    return 1;
  if (outer > cr_elements_max(8) / inner)
    return 0;
  return length == 0 || (length <= limit / inner && outer <= limit / (length * inner));
}

#endif
