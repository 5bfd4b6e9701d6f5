/* Names, sizes, default accumulators and the supported-combination check: the facts about
 * dtypes and ops that every layer shares. */
#include "combos.h"
#include "convert.h"
#include "cureduce.h"
#include "dtype_facts.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

typedef struct dtype_facts {
  const char *name;
  size_t size;
  cureduce_dtype default_acc;
} dtype_facts;

static const dtype_facts DTYPES[CUREDUCE_DTYPE_COUNT] = {
    [CUREDUCE_F32] = {"f32", 4, CUREDUCE_F32},      [CUREDUCE_F64] = {"f64", 8, CUREDUCE_F64},
    [CUREDUCE_F16] = {"f16", 2, CUREDUCE_F32},      [CUREDUCE_BF16] = {"bf16", 2, CUREDUCE_F32},
    [CUREDUCE_F8_E4M3] = {"e4m3", 1, CUREDUCE_F32}, [CUREDUCE_F8_E5M2] = {"e5m2", 1, CUREDUCE_F32},
    [CUREDUCE_I8] = {"i8", 1, CUREDUCE_I64},        [CUREDUCE_I32] = {"i32", 4, CUREDUCE_I64},
    [CUREDUCE_I64] = {"i64", 8, CUREDUCE_I64},
};

#define CR_OP_NAME(OP, name) [CUREDUCE_##OP] = #name,
static const char *const OP_NAMES[CUREDUCE_OP_COUNT] = {CUREDUCE_FOR_EACH_OP(CR_OP_NAME)
                                                            CUREDUCE_FOR_EACH_EXACT_OP(CR_OP_NAME)};
#undef CR_OP_NAME
#define CR_OP_ONE(OP, name) +1
_Static_assert(0 CUREDUCE_FOR_EACH_OP(CR_OP_ONE) CUREDUCE_FOR_EACH_EXACT_OP(CR_OP_ONE) == CUREDUCE_OP_COUNT,
               "combos.h lists every cureduce_op once");
#undef CR_OP_ONE

int cr_dtype_is_float(cureduce_dtype d) {
  return d == CUREDUCE_F32 || d == CUREDUCE_F64 || d == CUREDUCE_F16 || d == CUREDUCE_BF16 ||
         d == CUREDUCE_F8_E4M3 || d == CUREDUCE_F8_E5M2;
}

int cr_op_is_exact(cureduce_op op) { return op == CUREDUCE_SUM_EXACT || op == CUREDUCE_MEAN_EXACT; }

int cr_op_empty_is_zero(cureduce_op op) {
  return op == CUREDUCE_SUM || op == CUREDUCE_SUMSQ || op == CUREDUCE_SUM_EXACT;
}

static int dtype_valid(cureduce_dtype d);
static int op_valid(cureduce_op op);

cureduce_status cr_exact_finish_supported(cureduce_op op, cureduce_dtype out_dtype) {
  if (!op_valid(op))
    return CUREDUCE_ERROR_INVALID_OP;
  if (!dtype_valid(out_dtype))
    return CUREDUCE_ERROR_INVALID_DTYPE;
  return cr_op_is_exact(op) && cr_dtype_is_float(out_dtype) ? CUREDUCE_SUCCESS : CUREDUCE_ERROR_UNSUPPORTED;
}

static int dtype_valid(cureduce_dtype d) { return (int)d >= 0 && d < CUREDUCE_DTYPE_COUNT; }
static int op_valid(cureduce_op op) { return (int)op >= 0 && op < CUREDUCE_OP_COUNT; }

int cureduce_version(void) { return CUREDUCE_VERSION; }

const char *cureduce_status_string(cureduce_status status) {
  switch (status) {
  case CUREDUCE_SUCCESS: return "success";
  case CUREDUCE_EMPTY:
    return "the reduction of zero elements has no value (min, max, absmax, argmin, argmax, mean, "
           "mean_exact); output left untouched";
  case CUREDUCE_ERROR_NULL_POINTER: return "a required pointer argument is NULL";
  case CUREDUCE_ERROR_INVALID_DTYPE: return "the dtype is not one of cureduce_dtype";
  case CUREDUCE_ERROR_INVALID_OP: return "the op is not one of cureduce_op";
  case CUREDUCE_ERROR_UNSUPPORTED: return "this (op, input dtype, accumulator) combination is not supported";
  case CUREDUCE_ERROR_HOST_POINTER: return "a host pointer was passed where device memory is required";
  case CUREDUCE_ERROR_NO_DEVICE: return "no usable CUDA device was found";
  case CUREDUCE_ERROR_CUDA: return "a CUDA runtime call or kernel launch failed";
  case CUREDUCE_ERROR_OUT_OF_MEMORY: return "a memory allocation failed";
  case CUREDUCE_ERROR_INVALID_HANDLE: return "the handle is NULL or not valid";
  case CUREDUCE_ERROR_INVALID_VALUE:
    return "an argument is out of range (a size, an alignment, or an output that overlaps the input)";
  }
  return "unknown cureduce status";
}

const char *cureduce_dtype_name(cureduce_dtype dtype) {
  return dtype_valid(dtype) ? DTYPES[dtype].name : NULL;
}

const char *cureduce_op_name(cureduce_op op) { return op_valid(op) ? OP_NAMES[op] : NULL; }

size_t cureduce_dtype_size(cureduce_dtype dtype) { return dtype_valid(dtype) ? DTYPES[dtype].size : 0; }

cureduce_status cureduce_dtype_from_name(const char *name, cureduce_dtype *dtype) {
  if (!name || !dtype)
    return CUREDUCE_ERROR_NULL_POINTER;
  for (int d = 0; d < CUREDUCE_DTYPE_COUNT; ++d) {
    if (strcmp(name, DTYPES[d].name) == 0) {
      *dtype = (cureduce_dtype)d;
      return CUREDUCE_SUCCESS;
    }
  }
  return CUREDUCE_ERROR_INVALID_DTYPE;
}

cureduce_status cureduce_op_from_name(const char *name, cureduce_op *op) {
  if (!name || !op)
    return CUREDUCE_ERROR_NULL_POINTER;
  for (int o = 0; o < CUREDUCE_OP_COUNT; ++o) {
    if (strcmp(name, OP_NAMES[o]) == 0) {
      *op = (cureduce_op)o;
      return CUREDUCE_SUCCESS;
    }
  }
  return CUREDUCE_ERROR_INVALID_OP;
}

cureduce_status cureduce_default_acc(cureduce_dtype in_dtype, cureduce_dtype *acc) {
  if (!acc)
    return CUREDUCE_ERROR_NULL_POINTER;
  if (!dtype_valid(in_dtype))
    return CUREDUCE_ERROR_INVALID_DTYPE;
  *acc = DTYPES[in_dtype].default_acc;
  return CUREDUCE_SUCCESS;
}

cureduce_status cureduce_resolve_acc(cureduce_op op, cureduce_dtype in_dtype, cureduce_dtype acc_dtype,
                                     cureduce_dtype *acc) {
  if (!acc)
    return CUREDUCE_ERROR_NULL_POINTER;
  const cureduce_status st = cureduce_supported(op, in_dtype, acc_dtype);
  if (st != CUREDUCE_SUCCESS)
    return st;
  if (acc_dtype != CUREDUCE_ACC_DEFAULT)
    *acc = acc_dtype;
  else if (op == CUREDUCE_MEAN && !cr_dtype_is_float(in_dtype))
    *acc = CUREDUCE_F64;
  else
    *acc = DTYPES[in_dtype].default_acc;
  return CUREDUCE_SUCCESS;
}

size_t cureduce_result_size(cureduce_op op, cureduce_dtype acc_dtype) {
  if (!op_valid(op) || !dtype_valid(acc_dtype))
    return 0;
  if (op == CUREDUCE_ARGMIN || op == CUREDUCE_ARGMAX)
    return sizeof(int64_t);
  return cureduce_dtype_size(acc_dtype);
}

cureduce_status cureduce_supported(cureduce_op op, cureduce_dtype in_dtype, cureduce_dtype acc_dtype) {
  if (!op_valid(op))
    return CUREDUCE_ERROR_INVALID_OP;
  if (!dtype_valid(in_dtype) || (acc_dtype != CUREDUCE_ACC_DEFAULT && !dtype_valid(acc_dtype)))
    return CUREDUCE_ERROR_INVALID_DTYPE;
  if (cr_op_is_exact(op)) /* float inputs; out F64, F32 or the input's own dtype */
    return cr_dtype_is_float(in_dtype) && (acc_dtype == CUREDUCE_ACC_DEFAULT || acc_dtype == CUREDUCE_F64 ||
                                           acc_dtype == CUREDUCE_F32 || acc_dtype == in_dtype)
               ? CUREDUCE_SUCCESS
               : CUREDUCE_ERROR_UNSUPPORTED;
  if (acc_dtype == CUREDUCE_ACC_DEFAULT)
    return CUREDUCE_SUCCESS;
  if (op == CUREDUCE_MEAN && !cr_dtype_is_float(acc_dtype))
    return CUREDUCE_ERROR_UNSUPPORTED;
#define CHECK_PAIR(IN, ACC)                                                                                  \
  if (in_dtype == CUREDUCE_##IN && acc_dtype == CUREDUCE_##ACC)                                              \
    return CUREDUCE_SUCCESS;
  CUREDUCE_FOR_EACH_PAIR(CHECK_PAIR)
#undef CHECK_PAIR
  return CUREDUCE_ERROR_UNSUPPORTED;
}

cureduce_status cureduce_to_double(cureduce_dtype dtype, const void *value, double *out) {
  if (!value || !out)
    return CUREDUCE_ERROR_NULL_POINTER;
  switch (dtype) {
  case CUREDUCE_F32: {
    float v;
    memcpy(&v, value, sizeof v);
    *out = v;
    break;
  }
  case CUREDUCE_F64: memcpy(out, value, sizeof *out); break;
  case CUREDUCE_F16: {
    uint16_t v;
    memcpy(&v, value, sizeof v);
    *out = cr_f16_to_float(v);
    break;
  }
  case CUREDUCE_BF16: {
    uint16_t v;
    memcpy(&v, value, sizeof v);
    *out = cr_bf16_to_float(v);
    break;
  }
  case CUREDUCE_F8_E4M3: *out = cr_e4m3_to_float(*(const uint8_t *)value); break;
  case CUREDUCE_F8_E5M2: *out = cr_e5m2_to_float(*(const uint8_t *)value); break;
  case CUREDUCE_I8: *out = *(const int8_t *)value; break;
  case CUREDUCE_I32: {
    int32_t v;
    memcpy(&v, value, sizeof v);
    *out = v;
    break;
  }
  case CUREDUCE_I64: {
    int64_t v;
    memcpy(&v, value, sizeof v);
    *out = (double)v;
    break;
  }
  default: return CUREDUCE_ERROR_INVALID_DTYPE;
  }
  return CUREDUCE_SUCCESS;
}

/* x truncated toward zero and clamped to [lo, hi]. */
static double clamp_trunc(double x, double lo, double hi) {
  const double t = trunc(x);
  return t < lo ? lo : (t > hi ? hi : t);
}

cureduce_status cureduce_from_double(cureduce_dtype dtype, double x, void *value) {
  if (!value)
    return CUREDUCE_ERROR_NULL_POINTER;
  if (!dtype_valid(dtype))
    return CUREDUCE_ERROR_INVALID_DTYPE;
  if (isnan(x) && (dtype == CUREDUCE_I8 || dtype == CUREDUCE_I32 || dtype == CUREDUCE_I64))
    return CUREDUCE_ERROR_INVALID_VALUE;
  /* The narrow floats round x's f32 round-to-odd value, which rounds x once (convert.h). */
  switch (dtype) {
  case CUREDUCE_F32: {
    const float f = (float)x;
    memcpy(value, &f, sizeof f);
    break;
  }
  case CUREDUCE_F64: memcpy(value, &x, sizeof x); break;
  case CUREDUCE_F16: {
    uint16_t v = cr_double_to_f16(x);
    memcpy(value, &v, sizeof v);
    break;
  }
  case CUREDUCE_BF16: {
    uint16_t v = cr_double_to_bf16(x);
    memcpy(value, &v, sizeof v);
    break;
  }
  case CUREDUCE_F8_E4M3: *(uint8_t *)value = cr_float_to_e4m3(cr_float_round_to_odd(x), 1); break;
  case CUREDUCE_F8_E5M2: *(uint8_t *)value = cr_float_to_e5m2(cr_float_round_to_odd(x), 1); break;
  case CUREDUCE_I8: *(int8_t *)value = (int8_t)clamp_trunc(x, INT8_MIN, INT8_MAX); break;
  case CUREDUCE_I32: {
    int32_t v = (int32_t)clamp_trunc(x, INT32_MIN, INT32_MAX);
    memcpy(value, &v, sizeof v);
    break;
  }
  default: { /* I64: 2^63 and above saturate to INT64_MAX, which no double holds */
    const double t = clamp_trunc(x, -9223372036854775808.0, 9223372036854774784.0);
    int64_t v = x >= 9223372036854775808.0 ? INT64_MAX : (int64_t)t;
    memcpy(value, &v, sizeof v);
    break;
  }
  }
  return CUREDUCE_SUCCESS;
}
