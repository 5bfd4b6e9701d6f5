/* `cureduce run`: reduce one array, whole or along one axis, and print the result; on the GPU
 * (timed) when there is one, else on the CPU, saying why. Options: run_options.c; the input:
 * run_input.c; the axis mapping: run_plan.c; the GPU and its timing: run_gpu.c. */
#include "args.h"
#include "commands.h"
#include "run_gpu.h"
#include "run_input.h"
#include "run_options.h"
#include "run_plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_arg_op(cureduce_op op) { return op == CUREDUCE_ARGMIN || op == CUREDUCE_ARGMAX; }

/* Ops whose reduction of zero elements has no value (SUM, SUMSQ and SUM_EXACT give 0). */
static int empty_undefined(cureduce_op op) {
  return op != CUREDUCE_SUM && op != CUREDUCE_SUMSQ && op != CUREDUCE_SUM_EXACT;
}

static int report_empty(const run_options *o, const npy_array *a, const reduce_plan *p) {
  const char *op = cureduce_op_name(o->op);
  char shape[256];
  if (p->whole) {
    fprintf(stderr, "%s run: the %s of an empty array (0 elements) is undefined; no result\n", CLI_NAME, op);
  } else {
    fprintf(stderr,
            "%s run: the %s along axis %d of shape %s is undefined: that axis has length 0, so each of "
            "the %llu results would reduce 0 elements; no result\n",
            CLI_NAME, op, p->axis, shape_text(a->ndim, a->shape, shape, sizeof shape),
            (unsigned long long)p->outputs);
  }
  return 1;
}

/* The flat C-order index i of shape as "[i0, i1, ...]". */
static const char *index_text(int ndim, const uint64_t *shape, uint64_t i, char *buf, size_t len) {
  uint64_t idx[NPY_MAX_DIMS];
  for (int d = ndim - 1; d >= 0; --d) {
    idx[d] = shape[d] ? i % shape[d] : 0;
    i = shape[d] ? i / shape[d] : 0;
  }
  size_t used = (size_t)snprintf(buf, len, "[");
  for (int d = 0; d < ndim && used < len; ++d)
    used += (size_t)snprintf(buf + used, len - used, "%s%llu", d ? ", " : "", (unsigned long long)idx[d]);
  if (used < len)
    snprintf(buf + used, len - used, "]");
  return buf;
}

/* One result: integers as integers, floats with the digits that give back the exact value. */
static void print_value(const char *label, cureduce_dtype dtype, const void *value, const char *note) {
  if (dtype == CUREDUCE_I32 || dtype == CUREDUCE_I64) {
    int64_t w;
    if (dtype == CUREDUCE_I32) {
      int32_t x;
      memcpy(&x, value, sizeof x);
      w = x;
    } else {
      memcpy(&w, value, sizeof w);
    }
    printf("%s = %lld%s\n", label, (long long)w, note);
  } else {
    double v = 0.0;
    (void)cureduce_to_double(dtype, value, &v);
    printf("%s = %.17g%s\n", label, v, note);
  }
}

/* How the result's dtype is named: the exact sums round into it once, the others accumulate. */
static const char *acc_word(cureduce_op op) {
  return op == CUREDUCE_SUM_EXACT || op == CUREDUCE_MEAN_EXACT ? "rounded once to" : "acc";
}

static const char *arg_what(cureduce_op op) { return op == CUREDUCE_ARGMIN ? "minimum" : "maximum"; }

static void print_whole(const run_options *o, const npy_array *a, cureduce_dtype acc, const void *result) {
  const char *op = cureduce_op_name(o->op);
  if (!is_arg_op(o->op)) {
    char label[64];
    snprintf(label, sizeof label, "%s (%s %s)", op, acc_word(o->op), cureduce_dtype_name(acc));
    print_value(label, acc, result, "");
    return;
  }
  int64_t i;
  memcpy(&i, result, sizeof i);
  char note[512], where[256], shape[256];
  if (a->ndim >= 2)
    snprintf(note, sizeof note, " (flat C-order index of the first %s, %s in shape %s; compared in %s)",
             arg_what(o->op), index_text(a->ndim, a->shape, (uint64_t)i, where, sizeof where),
             shape_text(a->ndim, a->shape, shape, sizeof shape), cureduce_dtype_name(acc));
  else
    snprintf(note, sizeof note, " (index of the first %s; compared in %s)", arg_what(o->op),
             cureduce_dtype_name(acc));
  print_value(op, CUREDUCE_I64, result, note);
}

static void print_axis(const run_options *o, const npy_array *a, const reduce_plan *p, cureduce_dtype acc,
                       const unsigned char *results) {
  const char *op = cureduce_op_name(o->op);
  char in_shape[256], out_shape[256];
  printf("%llu results, shape %s: the %s along axis %d of shape %s", (unsigned long long)p->outputs,
         shape_text(p->out_ndim, p->out_shape, out_shape, sizeof out_shape), op, p->axis,
         shape_text(a->ndim, a->shape, in_shape, sizeof in_shape));
  if (is_arg_op(o->op))
    printf(" (the index along axis %d of the first %s; compared in %s)\n", p->axis, arg_what(o->op),
           cureduce_dtype_name(acc));
  else
    printf(" (%s %s)\n", acc_word(o->op), cureduce_dtype_name(acc));
  const size_t size = cureduce_result_size(o->op, acc);
  const cureduce_dtype shown = is_arg_op(o->op) ? CUREDUCE_I64 : acc;
  for (uint64_t i = 0; i < p->outputs && i < o->show; ++i) {
    char label[300], index[256];
    snprintf(label, sizeof label, "%s%s", op, index_text(p->out_ndim, p->out_shape, i, index, sizeof index));
    print_value(label, shown, results + i * size, "");
  }
  if (p->outputs > o->show)
    printf("... %llu more (--show K prints the first K)\n", (unsigned long long)(p->outputs - o->show));
}

static void print_timing(const gpu_timing *t) {
  printf("time: %.1f us (median of %d calls)", t->median_us, t->calls);
  const double gbs = t->median_us > 0 ? t->bytes / (t->median_us * 1e3) : 0.0;
  if (gbs >= 1.0)
    printf(", %.1f GB/s", gbs);
  else if (gbs > 0.0)
    printf(", %.3g GB/s", gbs); /* a tiny input */
  printf("\n");
}

/* --exact: the exact sum of the whole array rounded once to f64, on the GPU when the main
   reduction ran there (timed), else on the CPU. */
static int print_exact(const run_options *o, const npy_array *a) {
  if (cureduce_supported(CUREDUCE_SUM_EXACT, a->dtype, CUREDUCE_F64) != CUREDUCE_SUCCESS) {
    printf("exact sum: integer sums are exact already\n");
    return 0;
  }
  const reduce_plan whole = {.whole = 1, .outer = 1, .len = a->count, .inner = 1, .outputs = 1};
  double exact;
  const gpu_job job = {.plan = &whole,
                       .op = CUREDUCE_SUM_EXACT,
                       .dtype = a->dtype,
                       .acc = CUREDUCE_F64,
                       .h_in = a->data,
                       .in_bytes = (size_t)a->count * cureduce_dtype_size(a->dtype),
                       .h_out = &exact,
                       .out_bytes = sizeof exact};
  gpu_timing t = {0};
  char why[256] = "--cpu given";
  const int rc = o->force_cpu ? GPU_NONE : gpu_run(&job, &t, why, sizeof why);
  if (rc == GPU_NONE) {
    const cureduce_status st =
        cureduce_cpu_reduce(CUREDUCE_SUM_EXACT, a->dtype, a->data, a->count, CUREDUCE_F64, &exact);
    if (st != CUREDUCE_SUCCESS) {
      fprintf(stderr, "%s run: the exact sum failed on the CPU: %s\n", CLI_NAME, cureduce_status_string(st));
      return 1;
    }
  } else if (rc != 0) {
    return 1;
  }
  printf("exact sum (%s, correctly rounded to f64) = %.17g\n", rc == GPU_NONE ? "CPU" : "GPU", exact);
  if (rc == 0)
    print_timing(&t);
  return 0;
}

/* Host memory for the results; 1 after printing when it cannot be had. */
static int alloc_results(const reduce_plan *p, size_t size, unsigned char **out, size_t *bytes) {
  if (p->outputs > SIZE_MAX / size || !(*out = malloc(p->outputs ? (size_t)p->outputs * size : 1))) {
    fprintf(stderr, "%s run: cannot allocate host memory for %llu results of %zu bytes\n", CLI_NAME,
            (unsigned long long)p->outputs, size);
    return 1;
  }
  *bytes = (size_t)p->outputs * size;
  return 0;
}

/* The CPU path: 0, GPU_EMPTY (as gpu_run), or 1 after printing an error. */
static int reduce_cpu(const run_options *o, const npy_array *a, const reduce_plan *p, cureduce_dtype acc,
                      void *results, const char *why) {
  printf("device: running on the CPU (%s)\n", why);
  const cureduce_status st = plan_run_cpu(p, o->op, a->dtype, acc, a->data, results);
  if (st == CUREDUCE_SUCCESS || st == CUREDUCE_EMPTY)
    return st == CUREDUCE_EMPTY ? GPU_EMPTY : 0;
  fprintf(stderr, "%s run: the reduction failed on the CPU: %s\n", CLI_NAME, cureduce_status_string(st));
  return 1;
}

/* Reduce on the GPU, or the CPU when asked to or when there is none; print the results. */
static int reduce_and_print(const run_options *o, const npy_array *a, const reduce_plan *p,
                            cureduce_dtype acc) {
  if (p->len == 0 && p->outputs > 0 && empty_undefined(o->op))
    return report_empty(o, a, p);
  unsigned char *results;
  size_t out_bytes;
  if (alloc_results(p, cureduce_result_size(o->op, acc), &results, &out_bytes))
    return 1;
  const gpu_job job = {.plan = p,
                       .op = o->op,
                       .dtype = a->dtype,
                       .acc = acc,
                       .h_in = a->data,
                       .in_bytes = (size_t)a->count * cureduce_dtype_size(a->dtype),
                       .h_out = results,
                       .out_bytes = out_bytes};
  gpu_timing t = {0};
  char why[256] = "--cpu given";
  int rc = o->force_cpu ? GPU_NONE : gpu_run(&job, &t, why, sizeof why);
  const int on_gpu = rc != GPU_NONE;
  if (!on_gpu)
    rc = reduce_cpu(o, a, p, acc, results, why);
  if (rc == GPU_EMPTY)
    rc = report_empty(o, a, p);
  if (rc == 0 && p->whole)
    print_whole(o, a, acc, results);
  else if (rc == 0)
    print_axis(o, a, p, acc, results);
  if (rc == 0 && on_gpu)
    print_timing(&t);
  free(results);
  return rc;
}

int cmd_run(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0); /* results and errors in the order they happen, also in a log */
  run_options o;
  int rc = parse_run_options(argc, argv, &o);
  if (rc)
    return rc < 0 ? 0 : rc;
  npy_array a;
  reduce_plan plan;
  /* Generated data's plan is made from its shape, so a bad --axis is found before the data is
     made; a file's once it is read. */
  const int generated = !o.npy;
  if (generated && ((rc = input_random_shape(&o, &a)) != 0 || (rc = plan_make(&a, &o, &plan)) != 0))
    return rc;
  int from_file;
  if ((rc = input_load(&o, &a, &from_file)) != 0)
    return rc;
  cureduce_dtype acc;
  rc = input_resolve_acc(&o, a.dtype, &acc);
  if (rc == 0 && !generated)
    rc = plan_make(&a, &o, &plan);
  if (rc == 0)
    rc = reduce_and_print(&o, &a, &plan, acc);
  if (rc == 0 && o.exact)
    rc = print_exact(&o, &a);
  input_free(&a, from_file);
  return rc;
}
