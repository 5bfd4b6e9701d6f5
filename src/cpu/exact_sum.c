/* Exact sums on the CPU: running states (common/exact_state.h through superacc.h), the
 * one-call sum and mean, and the state calls of the C API. Layer: CPU. */
#include "cureduce.h"

#include "../common/matrix_shape.h"
#include "decode.h"
#include "superacc.h"
#include "work.h"

#include <math.h>
#include <stdlib.h>

/* s->sa = the n elements at h_in (a float dtype; arguments checked), carried. */
static void accumulate(const cr_cpu_work *s, cureduce_dtype in, const void *h_in, uint64_t n) {
  sa_init(s->sa);
  for (uint64_t first = 0; first < n; first += CR_DECODE_CHUNK) {
    const size_t count = (size_t)(n - first < CR_DECODE_CHUNK ? n - first : CR_DECODE_CHUNK);
    cr_decode_float(in, h_in, first, count, s->stride, s->buf);
    for (size_t k = 0; k < count; ++k)
      sa_add(s->sa, s->buf[k]);
  }
  sa_carry(s->sa);
}

/* state += the n elements at h_in, carried. */
static void add_to_state(const cr_cpu_work *s, cureduce_dtype in, const void *h_in, uint64_t n,
                         int64_t *state) {
  accumulate(s, in, h_in, n);
  for (int i = 0; i < CUREDUCE_EXACT_STATE_WORDS; ++i)
    s->sa->w[i] += state[i];
  sa_carry(s->sa);
  memcpy(state, s->sa->w, sizeof s->sa->w);
}

/* The rounded sum (or mean) of a state into one element of out at h_out; EMPTY for the mean
   of no elements. */
static cureduce_status finish(const int64_t *w, int mean, cureduce_dtype out, void *h_out) {
  if (mean && w[CR_EXACT_COUNT] == 0)
    return CUREDUCE_EMPTY;
  cr_exact_encode(cr_exact_value(w, mean, cr_exact_format_of(out)), out, h_out);
  return CUREDUCE_SUCCESS;
}

/* cureduce_cpu_reduce's SUM_EXACT and MEAN_EXACT (arguments checked, n > 0 for the mean). */
cureduce_status cr_cpu_exact(cureduce_op op, cureduce_dtype in, const void *h_in, uint64_t n,
                             cureduce_dtype out, void *h_out, const cr_cpu_work *w) {
  accumulate(w, in, h_in, n);
  return finish(w->sa->w, op == CUREDUCE_MEAN_EXACT, out, h_out);
}

cureduce_status cureduce_cpu_exact_accumulate(cureduce_dtype in_dtype, const void *h_in, uint64_t n,
                                              int64_t *h_state) {
  const cureduce_status ok = cureduce_supported(CUREDUCE_SUM_EXACT, in_dtype, CUREDUCE_ACC_DEFAULT);
  if (ok != CUREDUCE_SUCCESS)
    return ok;
  if (!h_state || (n > 0 && !h_in))
    return CUREDUCE_ERROR_NULL_POINTER;
  if (!cr_extent_ok(n, cureduce_dtype_size(in_dtype)) ||
      cr_ranges_overlap(h_state, cr_exact_states_bytes(1), h_in, n * cureduce_dtype_size(in_dtype)))
    return CUREDUCE_ERROR_INVALID_VALUE;
  cr_cpu_work s;
  const cureduce_status st = cr_cpu_work_alloc(&s, 1);
  if (st != CUREDUCE_SUCCESS)
    return st;
  add_to_state(&s, in_dtype, h_in, n, h_state);
  cr_cpu_work_free(&s);
  return CUREDUCE_SUCCESS;
}

cureduce_status cureduce_cpu_exact_accumulate_rows(cureduce_dtype in_dtype, const void *h_in, uint64_t rows,
                                                   uint64_t cols, uint64_t ld, int64_t *h_states) {
  const cureduce_status ok = cureduce_supported(CUREDUCE_SUM_EXACT, in_dtype, CUREDUCE_ACC_DEFAULT);
  if (ok != CUREDUCE_SUCCESS)
    return ok;
  if ((rows > 0 && !h_states) || (rows > 0 && cols > 0 && !h_in))
    return CUREDUCE_ERROR_NULL_POINTER;
  const uint64_t size = cureduce_dtype_size(in_dtype);
  if (!cr_matrix_shape_ok(rows, cols, ld, size) || !cr_exact_states_ok(rows) ||
      cr_overlaps_matrix(h_states, cr_exact_states_bytes(rows), h_in, rows, cols, ld, size))
    return CUREDUCE_ERROR_INVALID_VALUE;
  if (rows == 0 || cols == 0)
    return CUREDUCE_SUCCESS;
  cr_cpu_work s;
  const cureduce_status st = cr_cpu_work_alloc(&s, 1);
  if (st != CUREDUCE_SUCCESS)
    return st;
  for (uint64_t r = 0; r < rows; ++r)
    add_to_state(&s, in_dtype, (const char *)h_in + r * ld * size, cols,
                 h_states + r * CUREDUCE_EXACT_STATE_WORDS);
  cr_cpu_work_free(&s);
  return CUREDUCE_SUCCESS;
}

cureduce_status cureduce_cpu_exact_accumulate_segments(cureduce_dtype in_dtype, const void *h_in,
                                                       uint64_t num_segments, const int64_t *h_offsets,
                                                       int64_t *h_states) {
  const cureduce_status ok = cureduce_supported(CUREDUCE_SUM_EXACT, in_dtype, CUREDUCE_ACC_DEFAULT);
  if (ok != CUREDUCE_SUCCESS)
    return ok;
  if (cr_segments_lack_pointer(num_segments, h_in, h_offsets, h_states))
    return CUREDUCE_ERROR_NULL_POINTER;
  if (!cr_exact_states_ok(num_segments))
    return CUREDUCE_ERROR_INVALID_VALUE;
  if (num_segments == 0)
    return CUREDUCE_SUCCESS;
  const size_t size = cureduce_dtype_size(in_dtype);
  for (uint64_t s = 0; s < num_segments; ++s) /* all checked before any state changes */
    if (h_offsets[s] < 0 || h_offsets[s + 1] < h_offsets[s])
      return CUREDUCE_ERROR_INVALID_VALUE;
  if (!cr_extent_ok((uint64_t)h_offsets[num_segments], size) ||
      cr_overlaps_segments(h_states, cr_exact_states_bytes(num_segments), h_in, h_offsets, num_segments,
                           size))
    return CUREDUCE_ERROR_INVALID_VALUE;
  cr_cpu_work s;
  const cureduce_status st = cr_cpu_work_alloc(&s, 1);
  if (st != CUREDUCE_SUCCESS)
    return st;
  for (uint64_t k = 0; k < num_segments; ++k)
    if (h_offsets[k + 1] > h_offsets[k])
      add_to_state(&s, in_dtype, (const char *)h_in + (uint64_t)h_offsets[k] * size,
                   (uint64_t)(h_offsets[k + 1] - h_offsets[k]), h_states + k * CUREDUCE_EXACT_STATE_WORDS);
  cr_cpu_work_free(&s);
  return CUREDUCE_SUCCESS;
}

cureduce_status cureduce_cpu_exact_combine(int64_t *h_state, const int64_t *h_other) {
  if (!h_state || !h_other)
    return CUREDUCE_ERROR_NULL_POINTER;
  if (cr_exact_states_overlap(h_state, h_other))
    return CUREDUCE_ERROR_INVALID_VALUE;
  for (int i = 0; i < CUREDUCE_EXACT_STATE_WORDS; ++i)
    h_state[i] += h_other[i];
  cr_exact_carry(h_state, 0, CR_EXACT_LIMBS - 1);
  return CUREDUCE_SUCCESS;
}

cureduce_status cureduce_cpu_exact_finish(cureduce_op op, const int64_t *h_state, cureduce_dtype out_dtype,
                                          void *h_out) {
  const cureduce_status st = cr_exact_finish_supported(op, out_dtype);
  if (st != CUREDUCE_SUCCESS)
    return st;
  if (!h_state || !h_out)
    return CUREDUCE_ERROR_NULL_POINTER;
  if (cr_ranges_overlap(h_out, cureduce_dtype_size(out_dtype), h_state, cr_exact_states_bytes(1)))
    return CUREDUCE_ERROR_INVALID_VALUE;
  return finish(h_state, op == CUREDUCE_MEAN_EXACT, out_dtype, h_out);
}

/* As the GPU's cureduce_exact_finish_rows: the mean of a state with no elements is NaN. */
cureduce_status cureduce_cpu_exact_finish_rows(cureduce_op op, const int64_t *h_states, uint64_t rows,
                                               cureduce_dtype out_dtype, void *h_out) {
  const cureduce_status st = cr_exact_finish_supported(op, out_dtype);
  if (st != CUREDUCE_SUCCESS)
    return st;
  if (rows > 0 && (!h_states || !h_out))
    return CUREDUCE_ERROR_NULL_POINTER;
  const size_t size = cureduce_dtype_size(out_dtype);
  if (!cr_exact_states_ok(rows) ||
      cr_ranges_overlap(h_out, rows * size, h_states, cr_exact_states_bytes(rows)))
    return CUREDUCE_ERROR_INVALID_VALUE;
  for (uint64_t r = 0; r < rows; ++r) {
    void *out = (char *)h_out + r * size;
    if (finish(h_states + r * CUREDUCE_EXACT_STATE_WORDS, op == CUREDUCE_MEAN_EXACT, out_dtype, out) ==
        CUREDUCE_EMPTY)
      cr_exact_encode((double)NAN, out_dtype, out);
  }
  return CUREDUCE_SUCCESS;
}
