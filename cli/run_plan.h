/* How `cureduce run` maps a reduction of an N-d C-order array, whole or along one axis, onto
 * the library's whole-array, row and column reductions, on the GPU and on the CPU alike. */
#ifndef CUREDUCE_CLI_RUN_PLAN_H
#define CUREDUCE_CLI_RUN_PLAN_H

#include "cureduce.h"
#include "npy.h"
#include "run_options.h"

#include <stdint.h>

/* The array seen as outer x len x inner (C order), reduced over len: the axis's length, with
   outer the product of the axes before it and inner of those after it. */
typedef struct reduce_plan {
  int whole;                  /* one result over all elements: no --axis, or a 1-D array */
  int axis;                   /* when !whole: the axis, 0 .. ndim-1 */
  uint64_t outer, len, inner; /* whole: 1 x count x 1 */
  uint64_t outputs;           /* outer * inner */
  int out_ndim;               /* the result's shape: the input's without the axis */
  uint64_t out_shape[NPY_MAX_DIMS];
} reduce_plan;

/* The plan for --axis (if any) over a's shape; 2 after printing an error when the axis is out
   of range. */
int plan_make(const npy_array *a, const run_options *o, reduce_plan *p);

/* Run the plan: whole -> cureduce_reduce; an axis -> cureduce_reduce_axis over outer x len x
   inner (one launch). Results go to out, p->outputs of cureduce_result_size each, in C order. */
cureduce_status plan_run_cpu(const reduce_plan *p, cureduce_op op, cureduce_dtype dtype, cureduce_dtype acc,
                             const void *in, void *out);
cureduce_status plan_run_gpu(cureduce_handle h, const reduce_plan *p, cureduce_op op, cureduce_dtype dtype,
                             cureduce_dtype acc, const void *d_in, void *d_out, void *stream);

#endif
