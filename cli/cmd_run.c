/* `cureduce run`: reduce one array and print the result, on the GPU when there is one, else on
 * the CPU (and say so). */
#include "args.h"
#include "commands.h"
#include "npy.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void run_usage(FILE *to) {
  fprintf(to,
          "usage: %s run (--npy FILE | --random N) [options]\n"
          "\n"
          "Reduce one array and print the result. Runs on the GPU when there is one, else on\n"
          "the CPU and says so.\n"
          "\n"
          "  --npy FILE     read a NumPy .npy file (C order, little-endian; any shape is\n"
          "                 reduced as one flat array)\n"
          "  --random N     generate N elements: uniform in [-1, 1) for float dtypes, the whole\n"
          "                 range for i8, [-2^20, 2^20) for i32 and i64\n"
          "  --dtype D      element dtype for --random (default f32); for --npy, what raw\n"
          "                 V1/V2/u1/u2 data holds (bf16, e4m3, e5m2)\n"
          "  --seed S       random seed (default 1)\n"
          "  --op OP        sum, min, max, absmax, sumsq, argmin, argmax or mean (default sum)\n"
          "  --acc D        accumulator dtype (default: the input's default accumulator)\n"
          "  --exact        also print the exact, correctly rounded sum (CPU)\n"
          "  --cpu          run on the CPU even when there is a GPU\n"
          "  --rows R --cols C\n"
          "                 treat the input as an R x C row-major matrix (random data when\n"
          "                 neither --npy nor --random is given) and reduce along --axis\n"
          "  --axis A       1: one result per row (default), 0: one result per column\n"
          "  --show K       print the first K results of --rows/--cols (default 8)\n",
          CLI_NAME);
}

typedef struct run_options {
  const char *npy;
  uint64_t random_n;
  int have_random;
  cureduce_dtype dtype; /* CUREDUCE_ACC_DEFAULT: not given */
  uint64_t seed;
  cureduce_op op;
  cureduce_dtype acc;
  int exact, force_cpu;
  uint64_t rows, cols, axis, show;
  int matrix; /* --rows or --cols given */
} run_options;

static int parse_run(int argc, char **argv, run_options *o) {
  *o = (run_options){.dtype = CUREDUCE_ACC_DEFAULT, .seed = 1, .acc = CUREDUCE_ACC_DEFAULT,
                     .axis = 1, .show = 8};
  int have_rows = 0, have_cols = 0, have_axis = 0;
  for (int i = 1; i < argc; ++i) {
    const char *v = NULL;
    int r;
    if (!strcmp(argv[i], "--exact")) {
      o->exact = 1;
    } else if (!strcmp(argv[i], "--cpu")) {
      o->force_cpu = 1;
    } else if ((r = arg_value(argc, argv, &i, "--npy", &v)) != 0) {
      if (r < 0)
        return 2;
      o->npy = v;
    } else if ((r = arg_value(argc, argv, &i, "--random", &v)) != 0) {
      if (r < 0 || parse_u64("--random", v, &o->random_n))
        return 2;
      o->have_random = 1;
    } else if ((r = arg_value(argc, argv, &i, "--dtype", &v)) != 0) {
      if (r < 0 || parse_dtype("--dtype", v, &o->dtype))
        return 2;
    } else if ((r = arg_value(argc, argv, &i, "--seed", &v)) != 0) {
      if (r < 0 || parse_u64("--seed", v, &o->seed))
        return 2;
    } else if ((r = arg_value(argc, argv, &i, "--op", &v)) != 0) {
      if (r < 0 || parse_op("--op", v, &o->op))
        return 2;
    } else if ((r = arg_value(argc, argv, &i, "--acc", &v)) != 0) {
      if (r < 0 || parse_dtype("--acc", v, &o->acc))
        return 2;
    } else if ((r = arg_value(argc, argv, &i, "--rows", &v)) != 0) {
      if (r < 0 || parse_u64("--rows", v, &o->rows))
        return 2;
      have_rows = 1;
    } else if ((r = arg_value(argc, argv, &i, "--cols", &v)) != 0) {
      if (r < 0 || parse_u64("--cols", v, &o->cols))
        return 2;
      have_cols = 1;
    } else if ((r = arg_value(argc, argv, &i, "--axis", &v)) != 0) {
      if (r < 0 || parse_u64("--axis", v, &o->axis))
        return 2;
      if (o->axis > 1) {
        fprintf(stderr, "%s run: --axis must be 0 (per column) or 1 (per row), not %s\n", CLI_NAME, v);
        return 2;
      }
      have_axis = 1;
    } else if ((r = arg_value(argc, argv, &i, "--show", &v)) != 0) {
      if (r < 0 || parse_u64("--show", v, &o->show))
        return 2;
    } else {
      fprintf(stderr, "%s run: unknown argument '%s' (see --help)\n", CLI_NAME, argv[i]);
      return 2;
    }
  }
  if (have_rows != have_cols) {
    fprintf(stderr, "%s run: give both --rows R and --cols C\n", CLI_NAME);
    return 2;
  }
  if (have_axis && !have_rows) {
    fprintf(stderr, "%s run: --axis needs --rows and --cols\n", CLI_NAME);
    return 2;
  }
  o->matrix = have_rows;
  if (o->matrix && o->cols > 0 && o->rows > UINT64_MAX / 16 / o->cols) {
    fprintf(stderr, "%s run: --rows x --cols is too large\n", CLI_NAME);
    return 2;
  }
  if (o->matrix && !o->npy && !o->have_random) {
    o->random_n = o->rows * o->cols;
    o->have_random = 1;
  }
  if (!o->npy == !o->have_random) {
    fprintf(stderr, "%s run: give exactly one of --npy FILE and --random N\n", CLI_NAME);
    return 2;
  }
  return 0;
}

/* splitmix64: small, fast, and the same stream on every machine for a given seed. */
static uint64_t next_random(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static int generate(cureduce_dtype dtype, uint64_t n, uint64_t seed, void **data) {
  const size_t size = cureduce_dtype_size(dtype);
  unsigned char *p = malloc(n ? n * size : 1);
  if (!p) {
    fprintf(stderr, "%s run: out of memory for %llu elements\n", CLI_NAME, (unsigned long long)n);
    return 1;
  }
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
  *data = p;
  return 0;
}

static void print_value(const char *label, cureduce_dtype dtype, const void *value) {
  double v;
  (void)cureduce_to_double(dtype, value, &v);
  if (dtype == CUREDUCE_I32 || dtype == CUREDUCE_I64) {
    long long w = 0;
    if (dtype == CUREDUCE_I32) {
      int32_t x;
      memcpy(&x, value, sizeof x);
      w = x;
    } else {
      int64_t x;
      memcpy(&x, value, sizeof x);
      w = x;
    }
    printf("%s = %lld\n", label, w);
  } else {
    printf("%s = %.17g\n", label, v);
  }
}

/* Reduce on the GPU; returns 0 on success, 1 on failure, -1 when there is no GPU. */
static int reduce_gpu(const run_options *o, cureduce_dtype dtype, const void *data, uint64_t n,
                      cureduce_dtype acc, void *result) {
  cureduce_handle h;
  cureduce_status st = cureduce_create(&h);
  if (st == CUREDUCE_ERROR_NO_DEVICE)
    return -1;
  if (st != CUREDUCE_SUCCESS) {
    fprintf(stderr, "%s run: %s\n", CLI_NAME, cureduce_status_string(st));
    return 1;
  }
  struct cudaDeviceProp prop;
  int dev = 0;
  (void)cudaGetDevice(&dev);
  (void)cudaGetDeviceProperties(&prop, dev);
  printf("device: GPU %d, %s\n", dev, prop.name);
  void *d_in = NULL;
  const size_t bytes = n * cureduce_dtype_size(dtype);
  if (cudaMalloc(&d_in, bytes ? bytes : 1) != cudaSuccess ||
      cudaMemcpy(d_in, data, bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
    fprintf(stderr, "%s run: cannot copy %zu bytes to the GPU\n", CLI_NAME, bytes);
    (void)cudaFree(d_in);
    (void)cureduce_destroy(h);
    return 1;
  }
  st = cureduce_reduce_to_host(h, o->op, dtype, d_in, n, acc, result, NULL);
  (void)cudaFree(d_in);
  (void)cureduce_destroy(h);
  if (st != CUREDUCE_SUCCESS) {
    fprintf(stderr, "%s run: %s: %s\n", CLI_NAME, st == CUREDUCE_EMPTY ? "empty input" : "error",
            cureduce_status_string(st));
    return 1;
  }
  return 0;
}

/* --rows/--cols: reduce along an axis on the GPU (or the CPU), print the first results. */
static int run_matrix(const run_options *o, cureduce_dtype dtype, const void *data, cureduce_dtype acc) {
  const uint64_t outputs = o->axis == 1 ? o->rows : o->cols;
  const size_t out_size = cureduce_result_size(o->op, acc);
  unsigned char *results = malloc(outputs ? outputs * out_size : 1);
  if (!results) {
    fprintf(stderr, "%s run: out of memory for %llu results\n", CLI_NAME, (unsigned long long)outputs);
    return 1;
  }
  cureduce_status st = CUREDUCE_ERROR_NO_DEVICE;
  cureduce_handle h = NULL;
  if (!o->force_cpu)
    st = cureduce_create(&h);
  if (st == CUREDUCE_SUCCESS) {
    struct cudaDeviceProp prop;
    int dev = 0;
    (void)cudaGetDevice(&dev);
    (void)cudaGetDeviceProperties(&prop, dev);
    printf("device: GPU %d, %s\n", dev, prop.name);
    const size_t bytes = o->rows * o->cols * cureduce_dtype_size(dtype);
    void *d_in = NULL, *d_out = NULL;
    if (cudaMalloc(&d_in, bytes ? bytes : 1) != cudaSuccess ||
        cudaMalloc(&d_out, outputs ? outputs * out_size : 1) != cudaSuccess ||
        cudaMemcpy(d_in, data, bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
      st = CUREDUCE_ERROR_OUT_OF_MEMORY;
    } else {
      st = o->axis == 1
               ? cureduce_reduce_rows(h, o->op, dtype, d_in, o->rows, o->cols, o->cols, acc, d_out, NULL)
               : cureduce_reduce_cols(h, o->op, dtype, d_in, o->rows, o->cols, o->cols, acc, d_out, NULL);
      if (st == CUREDUCE_SUCCESS &&
          cudaMemcpy(results, d_out, outputs * out_size, cudaMemcpyDeviceToHost) != cudaSuccess)
        st = CUREDUCE_ERROR_CUDA;
    }
    (void)cudaFree(d_in);
    (void)cudaFree(d_out);
    (void)cureduce_destroy(h);
  } else if (st == CUREDUCE_ERROR_NO_DEVICE) {
    printf("device: %s: running on the CPU\n", o->force_cpu ? "--cpu given" : "no CUDA GPU found");
    st = o->axis == 1 ? cureduce_cpu_reduce_rows(o->op, dtype, data, o->rows, o->cols, o->cols, acc, results)
                      : cureduce_cpu_reduce_cols(o->op, dtype, data, o->rows, o->cols, o->cols, acc, results);
  }
  if (st != CUREDUCE_SUCCESS) {
    fprintf(stderr, "%s run: %s: %s\n", CLI_NAME, st == CUREDUCE_EMPTY ? "empty rows or columns" : "error",
            cureduce_status_string(st));
    free(results);
    return 1;
  }
  printf("%llu results, one per %s (axis %llu)\n", (unsigned long long)outputs,
         o->axis == 1 ? "row" : "column", (unsigned long long)o->axis);
  const int arg = o->op == CUREDUCE_ARGMIN || o->op == CUREDUCE_ARGMAX;
  for (uint64_t i = 0; i < outputs && i < o->show; ++i) {
    char label[96];
    snprintf(label, sizeof label, "%s[%llu] (acc %s)", cureduce_op_name(o->op), (unsigned long long)i,
             cureduce_dtype_name(acc));
    print_value(label, arg ? CUREDUCE_I64 : acc, results + i * out_size);
  }
  free(results);
  return 0;
}

int cmd_run(int argc, char **argv) {
  for (int i = 1; i < argc; ++i)
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      run_usage(stdout);
      return 0;
    }
  run_options o;
  int rc = parse_run(argc, argv, &o);
  if (rc)
    return rc;

  cureduce_dtype dtype;
  uint64_t n;
  void *data = NULL;
  if (o.npy) {
    npy_array a;
    char err[256];
    if (npy_load(o.npy, o.dtype, &a, err, sizeof err)) {
      fprintf(stderr, "%s run: %s: %s\n", CLI_NAME, o.npy, err);
      return 1;
    }
    dtype = a.dtype, n = a.count, data = a.data;
    printf("input: %s, %llu x %s\n", o.npy, (unsigned long long)n, cureduce_dtype_name(dtype));
  } else {
    dtype = o.dtype == CUREDUCE_ACC_DEFAULT ? CUREDUCE_F32 : o.dtype;
    n = o.random_n;
    if (generate(dtype, n, o.seed, &data))
      return 1;
    printf("input: random, %llu x %s, seed %llu\n", (unsigned long long)n,
           cureduce_dtype_name(dtype), (unsigned long long)o.seed);
  }

  cureduce_dtype acc = o.acc;
  const cureduce_status sup = cureduce_resolve_acc(o.op, dtype, o.acc, &acc);
  if (sup != CUREDUCE_SUCCESS) {
    fprintf(stderr, "%s run: %s of %s with accumulator %s: %s\n", CLI_NAME, cureduce_op_name(o.op),
            cureduce_dtype_name(dtype), o.acc == CUREDUCE_ACC_DEFAULT ? "default" : cureduce_dtype_name(o.acc),
            cureduce_status_string(sup));
    free(data);
    return 1;
  }

  if (o.matrix) {
    if (n != o.rows * o.cols) {
      fprintf(stderr, "%s run: the input has %llu elements, not --rows x --cols = %llu\n", CLI_NAME,
              (unsigned long long)n, (unsigned long long)(o.rows * o.cols));
      free(data);
      return 1;
    }
    rc = run_matrix(&o, dtype, data, acc);
    free(data);
    return rc;
  }

  unsigned char result[16];
  rc = o.force_cpu ? -1 : reduce_gpu(&o, dtype, data, n, acc, result);
  if (rc < 0) {
    printf("device: %s: running on the CPU\n", o.force_cpu ? "--cpu given" : "no CUDA GPU found");
    const cureduce_status st = cureduce_cpu_reduce(o.op, dtype, data, n, acc, result);
    if (st != CUREDUCE_SUCCESS) {
      fprintf(stderr, "%s run: %s: %s\n", CLI_NAME, st == CUREDUCE_EMPTY ? "empty input" : "error",
              cureduce_status_string(st));
      rc = 1;
    } else {
      rc = 0;
    }
  }
  if (rc == 0) {
    char label[64];
    snprintf(label, sizeof label, "%s (acc %s)", cureduce_op_name(o.op), cureduce_dtype_name(acc));
    const int arg = o.op == CUREDUCE_ARGMIN || o.op == CUREDUCE_ARGMAX;
    print_value(label, arg ? CUREDUCE_I64 : acc, result); /* arg ops write an int64 index */
  }
  if (rc == 0 && o.exact) {
    double exact;
    if (cureduce_cpu_sum_exact(dtype, data, n, CUREDUCE_F64, &exact) == CUREDUCE_SUCCESS)
      printf("exact sum (CPU, correctly rounded to f64) = %.17g\n", exact);
    else
      printf("exact sum: integer sums are exact already\n");
  }
  free(data);
  return rc;
}
