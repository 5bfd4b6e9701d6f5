/* Exact sums on the CPU: running states (common/exact_state.h through superacc.h), the
 * one-call sum and mean, and the state calls of the C API. Layer: CPU. */
#include "cureduce.h"

#include "../common/matrix_shape.h"
#include "decode.h"
#include "superacc.h"

#include <math.h>
#include <stdlib.h>

/* Add n elements to sa (a float dtype; arguments checked), decoding through buf
   (CR_DECODE_CHUNK doubles). */
static void accumulate_with(superacc *sa, double *buf, cureduce_dtype in, const void *h_in, uint64_t n) {
  for (uint64_t first = 0; first < n; first += CR_DECODE_CHUNK) {
    const size_t count = (size_t)(n - first < CR_DECODE_CHUNK ? n - first : CR_DECODE_CHUNK);
    cr_decode_float(in, h_in, first, count, buf);
    for (size_t k = 0; k < count; ++k)
      sa_add(sa, buf[k]);
  }
  sa_carry(sa);
}

static cureduce_status accumulate(superacc *sa, cureduce_dtype in, const void *h_in, uint64_t n) {
  double *buf = malloc(CR_DECODE_CHUNK * sizeof *buf);
  if (!buf)
    return CUREDUCE_ERROR_OUT_OF_MEMORY;
  accumulate_with(sa, buf, in, h_in, n);
  free(buf);
  return CUREDUCE_SUCCESS;
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
                             cureduce_dtype out, void *h_out) {
  superacc *sa = malloc(sizeof *sa);
  if (!sa)
    return CUREDUCE_ERROR_OUT_OF_MEMORY;
  sa_init(sa);
  cureduce_status st = accumulate(sa, in, h_in, n);
  if (st == CUREDUCE_SUCCESS)
    st = finish(sa->w, op == CUREDUCE_MEAN_EXACT, out, h_out);
  free(sa);
  return st;
}

cureduce_status cureduce_cpu_sum_exact(cureduce_dtype in_dtype, const void *h_in, uint64_t n,
                                       cureduce_dtype out_dtype, void *h_out) {
  const cureduce_status st = cureduce_resolve_acc(CUREDUCE_SUM_EXACT, in_dtype, out_dtype, &out_dtype);
  if (st != CUREDUCE_SUCCESS)
    return st;
  if (!h_out || (n > 0 && !h_in))
    return CUREDUCE_ERROR_NULL_POINTER;
  return cr_cpu_exact(CUREDUCE_SUM_EXACT, in_dtype, h_in, n, out_dtype, h_out);
}

cureduce_status cureduce_cpu_exact_accumulate(cureduce_dtype in_dtype, const void *h_in, uint64_t n,
                                              int64_t *h_state) {
  const cureduce_status ok = cureduce_supported(CUREDUCE_SUM_EXACT, in_dtype, CUREDUCE_ACC_DEFAULT);
  if (ok != CUREDUCE_SUCCESS)
    return ok;
  if (!h_state || (n > 0 && !h_in))
    return CUREDUCE_ERROR_NULL_POINTER;
  superacc *sa = malloc(sizeof *sa);
  if (!sa)
    return CUREDUCE_ERROR_OUT_OF_MEMORY;
  sa_init(sa);
  const cureduce_status st = accumulate(sa, in_dtype, h_in, n);
  if (st == CUREDUCE_SUCCESS) { /* written only on success */
    for (int i = 0; i < CUREDUCE_EXACT_STATE_WORDS; ++i)
      sa->w[i] += h_state[i];
    sa_carry(sa);
    memcpy(h_state, sa->w, sizeof sa->w);
  }
  free(sa);
  return st;
}

cureduce_status cureduce_cpu_exact_accumulate_rows(cureduce_dtype in_dtype, const void *h_in, uint64_t rows,
                                                   uint64_t cols, uint64_t ld, int64_t *h_states) {
  const cureduce_status ok = cureduce_supported(CUREDUCE_SUM_EXACT, in_dtype, CUREDUCE_ACC_DEFAULT);
  if (ok != CUREDUCE_SUCCESS)
    return ok;
  if ((rows > 0 && !h_states) || (rows > 0 && cols > 0 && !h_in))
    return CUREDUCE_ERROR_NULL_POINTER;
  if (!cr_matrix_shape_ok(rows, cols, ld))
    return CUREDUCE_ERROR_INVALID_VALUE;
  const size_t size = cureduce_dtype_size(in_dtype);
  for (uint64_t r = 0; r < rows && cols > 0; ++r) {
    const cureduce_status st = cureduce_cpu_exact_accumulate(in_dtype, (const char *)h_in + r * ld * size,
                                                             cols, h_states + r * CUREDUCE_EXACT_STATE_WORDS);
    if (st != CUREDUCE_SUCCESS)
      return st;
  }
  return CUREDUCE_SUCCESS;
}

cureduce_status cureduce_cpu_exact_accumulate_segments(cureduce_dtype in_dtype, const void *h_in,
                                                       uint64_t num_segments, const int64_t *h_offsets,
                                                       int64_t *h_states) {
  const cureduce_status ok = cureduce_supported(CUREDUCE_SUM_EXACT, in_dtype, CUREDUCE_ACC_DEFAULT);
  if (ok != CUREDUCE_SUCCESS)
    return ok;
  if (num_segments == 0)
    return CUREDUCE_SUCCESS;
  if (!h_states || !h_offsets)
    return CUREDUCE_ERROR_NULL_POINTER;
  const size_t size = cureduce_dtype_size(in_dtype);
  for (uint64_t s = 0; s < num_segments; ++s) /* all checked before any state changes */
    if (h_offsets[s] < 0 || h_offsets[s + 1] < h_offsets[s])
      return CUREDUCE_ERROR_INVALID_VALUE;
  if ((uint64_t)h_offsets[num_segments] > SIZE_MAX / size)
    return CUREDUCE_ERROR_INVALID_VALUE;
  if (h_offsets[num_segments] > h_offsets[0] && !h_in)
    return CUREDUCE_ERROR_NULL_POINTER;
  superacc *sa = malloc(sizeof *sa); /* allocated once: nothing can fail once states change */
  double *buf = malloc(CR_DECODE_CHUNK * sizeof *buf);
  if (!sa || !buf) {
    free(sa);
    free(buf);
    return CUREDUCE_ERROR_OUT_OF_MEMORY;
  }
  for (uint64_t s = 0; s < num_segments; ++s) {
    if (h_offsets[s + 1] == h_offsets[s])
      continue;
    int64_t *state = h_states + s * CUREDUCE_EXACT_STATE_WORDS;
    sa_init(sa);
    accumulate_with(sa, buf, in_dtype, (const char *)h_in + (uint64_t)h_offsets[s] * size,
                    (uint64_t)(h_offsets[s + 1] - h_offsets[s]));
    for (int i = 0; i < CUREDUCE_EXACT_STATE_WORDS; ++i)
      sa->w[i] += state[i];
    sa_carry(sa);
    memcpy(state, sa->w, sizeof sa->w);
  }
  free(sa);
  free(buf);
  return CUREDUCE_SUCCESS;
}

cureduce_status cureduce_cpu_exact_combine(int64_t *h_state, const int64_t *h_other) {
  if (!h_state || !h_other)
    return CUREDUCE_ERROR_NULL_POINTER;
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
  for (uint64_t r = 0; r < rows; ++r) {
    void *out = (char *)h_out + r * size;
    if (finish(h_states + r * CUREDUCE_EXACT_STATE_WORDS, op == CUREDUCE_MEAN_EXACT, out_dtype, out) ==
        CUREDUCE_EMPTY)
      cr_exact_encode((double)NAN, out_dtype, out);
  }
  return CUREDUCE_SUCCESS;
}
