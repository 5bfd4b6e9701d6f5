/* The exact, correctly rounded sum of float arrays on the CPU (superacc.h does the work). */
#include "cureduce.h"

#include "decode.h"
#include "superacc.h"

#include <float.h>
#include <stdlib.h>

cureduce_status cureduce_cpu_sum_exact(cureduce_dtype in_dtype, const void *h_in, uint64_t n,
                                       cureduce_dtype out_dtype, void *h_out) {
  if ((int)in_dtype < 0 || in_dtype >= CUREDUCE_DTYPE_COUNT || (int)out_dtype < 0 ||
      out_dtype >= CUREDUCE_DTYPE_COUNT)
    return CUREDUCE_ERROR_INVALID_DTYPE;
  if (!cr_dtype_is_float(in_dtype) || (out_dtype != CUREDUCE_F64 && out_dtype != CUREDUCE_F32))
    return CUREDUCE_ERROR_UNSUPPORTED;
  if (!h_out || (n > 0 && !h_in))
    return CUREDUCE_ERROR_NULL_POINTER;

  superacc *sa = malloc(sizeof *sa);
  double *buf = malloc(CR_DECODE_CHUNK * sizeof *buf);
  if (!sa || !buf) {
    free(sa);
    free(buf);
    return CUREDUCE_ERROR_OUT_OF_MEMORY;
  }
  sa_init(sa);
  for (uint64_t first = 0; first < n; first += CR_DECODE_CHUNK) {
    const size_t count = (size_t)(n - first < CR_DECODE_CHUNK ? n - first : CR_DECODE_CHUNK);
    cr_decode_float(in_dtype, h_in, first, count, buf);
    for (size_t k = 0; k < count; ++k)
      sa_add(sa, buf[k]);
  }
  if (out_dtype == CUREDUCE_F64) {
    *(double *)h_out = sa_round(sa, 53, -1074, DBL_MAX);
  } else {
    *(float *)h_out = (float)sa_round(sa, 24, -149, FLT_MAX); /* exact: already a float */
  }
  free(sa);
  free(buf);
  return CUREDUCE_SUCCESS;
}
