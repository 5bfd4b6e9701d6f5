/* See run_plan.h. */
#include "run_plan.h"

#include "args.h"
#include "run_input.h"

#include <stdio.h>

/* The axis of --axis in 0 .. ndim-1 (negative counts from the end, as NumPy), or -1 after
   printing why it is out of range. */
static int normalize_axis(const npy_array *a, int64_t axis) {
  char shape[256];
  shape_text(a->ndim, a->shape, shape, sizeof shape);
  if (a->ndim == 0) {
    fprintf(stderr, "%s run: --axis %lld: the input is a 0-d array (shape ()), which has no axes\n", CLI_NAME,
            (long long)axis);
    return -1;
  }
  if (axis < -(int64_t)a->ndim || axis >= (int64_t)a->ndim) {
    fprintf(stderr,
            "%s run: --axis %lld is out of range for shape %s: ndim is %d, so the axis is in %d .. %d\n",
            CLI_NAME, (long long)axis, shape, a->ndim, -a->ndim, a->ndim - 1);
    return -1;
  }
  return (int)(axis < 0 ? axis + a->ndim : axis);
}

/* *acc *= x; 0 when the product passes 2^64 (possible only when another axis has length 0). */
static int mul_into(uint64_t *acc, uint64_t x) {
  if (x && *acc > UINT64_MAX / x)
    return 0;
  *acc *= x;
  return 1;
}

int plan_make(const npy_array *a, const run_options *o, reduce_plan *p) {
  *p = (reduce_plan){.whole = 1, .outer = 1, .len = a->count, .inner = 1, .outputs = 1};
  if (!o->have_axis)
    return 0;
  const int axis = normalize_axis(a, o->axis);
  if (axis < 0)
    return 2;
  if (a->ndim == 1)
    return 0; /* the one result of a 1-D array along its axis is the whole reduction */
  p->whole = 0;
  p->axis = axis;
  p->len = a->shape[axis];
  int ok = 1;
  for (int d = 0; d < a->ndim; ++d) {
    if (d != axis)
      p->out_shape[p->out_ndim++] = a->shape[d];
    if (d != axis)
      ok &= mul_into(d < axis ? &p->outer : &p->inner, a->shape[d]);
  }
  p->outputs = p->outer;
  if (!ok || !mul_into(&p->outputs, p->inner)) {
    char shape[256];
    fprintf(stderr, "%s run: --axis %lld of shape %s would give more than 2^64 results\n", CLI_NAME,
            (long long)o->axis, shape_text(a->ndim, a->shape, shape, sizeof shape));
    return 2;
  }
  return 0;
}

cureduce_status plan_run_cpu(const reduce_plan *p, cureduce_op op, cureduce_dtype dtype, cureduce_dtype acc,
                             const void *in, void *out) {
  if (p->whole)
    return cureduce_cpu_reduce(op, dtype, in, p->len, acc, out);
  return cureduce_cpu_reduce_axis(op, dtype, in, p->outer, p->len, p->inner, acc, out);
}

cureduce_status plan_run_gpu(cureduce_handle h, const reduce_plan *p, cureduce_op op, cureduce_dtype dtype,
                             cureduce_dtype acc, const void *d_in, void *d_out, void *stream) {
  if (p->whole)
    return cureduce_reduce(h, op, dtype, d_in, p->len, acc, d_out, stream);
  return cureduce_reduce_axis(h, op, dtype, d_in, p->outer, p->len, p->inner, acc, d_out, stream);
}
