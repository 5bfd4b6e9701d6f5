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
          "  --cpu          run on the CPU even when there is a GPU\n",
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
} run_options;

static int parse_run(int argc, char **argv, run_options *o) {
  *o = (run_options){.dtype = CUREDUCE_ACC_DEFAULT, .seed = 1, .acc = CUREDUCE_ACC_DEFAULT};
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
    } else {
      fprintf(stderr, "%s run: unknown argument '%s' (see --help)\n", CLI_NAME, argv[i]);
      return 2;
    }
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
