/* See run_input.h. */
#include "run_input.h"

#include "args.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *shape_text(int ndim, const uint64_t *shape, char *buf, size_t len) {
  size_t used = (size_t)snprintf(buf, len, "(");
  for (int i = 0; i < ndim && used < len; ++i)
    used += (size_t)snprintf(buf + used, len - used, "%s%llu", i ? ", " : "", (unsigned long long)shape[i]);
  if (used < len)
    snprintf(buf + used, len - used, ndim == 1 ? ",)" : ")");
  return buf;
}

int input_resolve_acc(const run_options *o, cureduce_dtype dtype, cureduce_dtype *acc) {
  if (cureduce_resolve_acc(o->op, dtype, o->acc, acc) == CUREDUCE_SUCCESS)
    return 0;
  if (cureduce_supported(o->op, dtype, CUREDUCE_ACC_DEFAULT) != CUREDUCE_SUCCESS) { /* the exact sums */
    fprintf(stderr,
            "%s run: %s takes float dtypes (f32, f64, f16, bf16, e4m3, e5m2), not %s; integer sums are "
            "exact already (use --op %s)\n",
            CLI_NAME, cureduce_op_name(o->op), cureduce_dtype_name(dtype),
            o->op == CUREDUCE_MEAN_EXACT ? "mean" : "sum");
    return 2;
  }
  const char *given = o->acc == CUREDUCE_ACC_DEFAULT ? "the default" : cureduce_dtype_name(o->acc);
  fprintf(stderr, "%s run: %s is not an accumulator for %s of %s; allowed:", CLI_NAME, given,
          cureduce_op_name(o->op), cureduce_dtype_name(dtype));
  for (int d = 0; d < CUREDUCE_DTYPE_COUNT; ++d)
    if (cureduce_supported(o->op, dtype, (cureduce_dtype)d) == CUREDUCE_SUCCESS)
      fprintf(stderr, " %s", cureduce_dtype_name((cureduce_dtype)d));
  cureduce_dtype def;
  if (cureduce_resolve_acc(o->op, dtype, CUREDUCE_ACC_DEFAULT, &def) == CUREDUCE_SUCCESS)
    fprintf(stderr, " (default %s)", cureduce_dtype_name(def));
  fprintf(stderr, "\n");
  return 2;
}

/* splitmix64: small, fast, and the same stream on every machine for a given seed. */
static uint64_t next_random(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static void fill_random(cureduce_dtype dtype, uint64_t n, uint64_t seed, unsigned char *p) {
  const size_t size = cureduce_dtype_size(dtype);
  uint64_t state = seed;
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t r = next_random(&state);
    double x;
    if (dtype == CUREDUCE_I8)
      x = (double)(int8_t)(r >> 56);
    else if (dtype == CUREDUCE_I32 || dtype == CUREDUCE_I64)
      x = (double)((int64_t)(r >> 43) - (1 << 20));
    else
      x = (double)(r >> 11) * 0x1.0p-52 - 1.0; /* uniform in [-1, 1) */
    (void)cureduce_from_double(dtype, x, p + i * size);
  }
}

/* n elements of dtype in host memory: a usage error (2) when their size passes what 64-bit
   addresses reach, a runtime error (1) when the allocation fails. */
static int alloc_elements(cureduce_dtype dtype, uint64_t n, void **p) {
  const size_t size = cureduce_dtype_size(dtype);
  char human[32];
  if (n > SIZE_MAX / size) {
    fprintf(stderr, "%s run: %llu elements of %s take %s (%.4g bytes), more than 64-bit addresses reach\n",
            CLI_NAME, (unsigned long long)n, cureduce_dtype_name(dtype),
            format_bytes((double)n * (double)size, human, sizeof human), (double)n * (double)size);
    return 2;
  }
  *p = malloc(n ? n * size : 1);
  if (!*p) {
    fprintf(stderr, "%s run: cannot allocate %s of host memory for %llu elements of %s\n", CLI_NAME,
            format_bytes((double)n * (double)size, human, sizeof human), (unsigned long long)n,
            cureduce_dtype_name(dtype));
    return 1;
  }
  return 0;
}

/* Whether --rows x --cols is below 2^64 (else prints why: a usage error). */
static int rows_cols_fit(const run_options *o) {
  if (o->cols == 0 || o->rows <= UINT64_MAX / o->cols)
    return 1;
  fprintf(stderr, "%s run: --rows %llu x --cols %llu is more than 2^64 elements\n", CLI_NAME,
          (unsigned long long)o->rows, (unsigned long long)o->cols);
  return 0;
}

int input_random_shape(const run_options *o, npy_array *a) {
  const cureduce_dtype dtype = o->dtype == CUREDUCE_ACC_DEFAULT ? CUREDUCE_F32 : o->dtype;
  cureduce_dtype acc;
  if (input_resolve_acc(o, dtype, &acc))
    return 2;
  if (o->matrix && !rows_cols_fit(o))
    return 2;
  if (o->matrix && o->rows * o->cols != o->random_n) {
    fprintf(stderr, "%s run: --random %llu elements do not fill --rows %llu x --cols %llu = %llu\n", CLI_NAME,
            (unsigned long long)o->random_n, (unsigned long long)o->rows, (unsigned long long)o->cols,
            (unsigned long long)(o->rows * o->cols));
    return 2;
  }
  *a = (npy_array){.dtype = dtype, .ndim = o->matrix ? 2 : 1, .count = o->random_n};
  a->shape[0] = o->matrix ? o->rows : o->random_n;
  a->shape[1] = o->matrix ? o->cols : 0;
  return 0;
}

static int load_random(const run_options *o, npy_array *a) {
  int rc = input_random_shape(o, a);
  if (rc == 0)
    rc = alloc_elements(a->dtype, a->count, &a->data);
  if (rc)
    return rc;
  fill_random(a->dtype, a->count, o->seed, a->data);
  return 0;
}

static int load_file(const run_options *o, npy_array *a) {
  char err[512];
  const int is_stdin = !strcmp(o->npy, "-");
  const int rc = is_stdin ? npy_read(stdin, o->dtype, a, err, sizeof err)
                          : npy_load(o->npy, o->dtype, a, err, sizeof err);
  if (rc) {
    fprintf(stderr, "%s run: %s: %s\n", CLI_NAME, is_stdin ? "standard input" : o->npy, err);
    return rc == NPY_ERR_HINT ? 2 : 1; /* a --dtype that is missing or contradicts the file: usage */
  }
  return 0;
}

/* --rows/--cols on a file: a reshape of 1-D (or 0-D) data; a check of the shape of anything
   more. */
static int apply_rows_cols(const run_options *o, npy_array *a) {
  char have[256];
  if (!rows_cols_fit(o))
    return 2;
  if (a->ndim >= 2) {
    if (a->ndim == 2 && a->shape[0] == o->rows && a->shape[1] == o->cols)
      return 0;
    fprintf(stderr,
            "%s run: --rows %llu --cols %llu ask for shape (%llu, %llu), but the file's shape is %s\n",
            CLI_NAME, (unsigned long long)o->rows, (unsigned long long)o->cols, (unsigned long long)o->rows,
            (unsigned long long)o->cols, shape_text(a->ndim, a->shape, have, sizeof have));
    return 2;
  }
  if (a->count != o->rows * o->cols) {
    fprintf(stderr, "%s run: the input has %llu elements, not --rows x --cols = %llu\n", CLI_NAME,
            (unsigned long long)a->count, (unsigned long long)(o->rows * o->cols));
    return 2;
  }
  a->ndim = 2;
  a->shape[0] = o->rows;
  a->shape[1] = o->cols;
  return 0;
}

static void print_input(const run_options *o, const npy_array *a) {
  char shape[256];
  shape_text(a->ndim, a->shape, shape, sizeof shape);
  if (o->npy)
    printf("input: %s, %s, shape %s, %llu elements\n", strcmp(o->npy, "-") ? o->npy : "standard input",
           cureduce_dtype_name(a->dtype), shape, (unsigned long long)a->count);
  else
    printf("input: random, %s, shape %s, %llu elements, seed %llu\n", cureduce_dtype_name(a->dtype), shape,
           (unsigned long long)a->count, (unsigned long long)o->seed);
}

int input_load(const run_options *o, npy_array *a, int *from_file) {
  *from_file = o->npy != NULL;
  int rc = *from_file ? load_file(o, a) : load_random(o, a);
  if (rc)
    return rc;
  if (*from_file && o->matrix && (rc = apply_rows_cols(o, a)) != 0) { /* generated: shaped already */
    input_free(a, *from_file);
    return rc;
  }
  print_input(o, a);
  return 0;
}

void input_free(npy_array *a, int from_file) {
  if (from_file) {
    npy_free(a);
  } else {
    free(a->data);
    a->data = NULL;
  }
}
