/* What the host's reductions work in: a decode buffer of CR_DECODE_CHUNK doubles and, for exact
 * sums, a superaccumulator. A call that makes many reductions (rows, columns, segments, states)
 * allocates them once, before anything it writes changes, so that nothing fails after. */
#ifndef CUREDUCE_CPU_WORK_H
#define CUREDUCE_CPU_WORK_H

#include "cureduce.h"
#include "decode.h"
#include "superacc.h"

#include <stdint.h>
#include <stdlib.h>

typedef struct cr_cpu_work {
  superacc *sa; /* exact sums only */
  double *buf;
  uint64_t stride; /* elements from one value to the next: 1, or a column's leading dimension */
} cr_cpu_work;

static inline void cr_cpu_work_free(cr_cpu_work *w) {
  free(w->sa);
  free(w->buf);
}

/* The superaccumulator only where `exact`. */
static inline cureduce_status cr_cpu_work_alloc(cr_cpu_work *w, int exact) {
  w->sa = exact ? (superacc *)malloc(sizeof *w->sa) : NULL;
  w->buf = (double *)malloc(CR_DECODE_CHUNK * sizeof *w->buf);
  w->stride = 1;
  if (w->buf && (w->sa || !exact))
    return CUREDUCE_SUCCESS;
  cr_cpu_work_free(w);
  return CUREDUCE_ERROR_OUT_OF_MEMORY;
}

/* cureduce_cpu_reduce with its arguments checked and acc resolved, in w (allocated for op; NULL
   for n == 0): it fails only as cureduce_cpu_reduce does for n == 0 (EMPTY). */
cureduce_status cr_cpu_reduce_in(cureduce_op op, cureduce_dtype in, const void *h_in, uint64_t n,
                                 cureduce_dtype acc, void *h_out, const cr_cpu_work *w);

/* Its SUM_EXACT and MEAN_EXACT for n > 0 (exact_sum.c). */
cureduce_status cr_cpu_exact(cureduce_op op, cureduce_dtype in, const void *h_in, uint64_t n,
                             cureduce_dtype out, void *h_out, const cr_cpu_work *w);

#endif
