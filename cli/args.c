/* CLI argument helpers. See args.h. */
#include "args.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int arg_value(int argc, char **argv, int *i, const char *name, const char **value) {
  const char *a = argv[*i];
  const size_t len = strlen(name);
  if (strncmp(a, name, len) != 0)
    return 0;
  if (a[len] == '=') {
    *value = a + len + 1;
    return 1;
  }
  if (a[len] != '\0')
    return 0;
  if (*i + 1 >= argc) {
    fprintf(stderr, "%s: option %s needs a value\n", CLI_NAME, name);
    return -1;
  }
  *value = argv[++*i];
  return 1;
}

/* Decimal digits only: strtoull and strtoll alone would take leading spaces (" -1" wrapping
 * to 2^64 - 1) and, in base 0, octal and hex. */
int parse_u64(const char *option, const char *text, uint64_t *out) {
  char *end = NULL;
  errno = 0;
  const unsigned long long v = isdigit((unsigned char)text[0]) ? strtoull(text, &end, 10) : 0;
  if (!isdigit((unsigned char)text[0]) || errno || *end != '\0') {
    fprintf(stderr, "%s: %s wants a non-negative integer, got '%s'\n", CLI_NAME, option, text);
    return 1;
  }
  *out = v;
  return 0;
}

int parse_i64(const char *option, const char *text, int64_t *out) {
  char *end = NULL;
  errno = 0;
  const char *digits = text + (text[0] == '-' || text[0] == '+');
  const long long v = isdigit((unsigned char)digits[0]) ? strtoll(text, &end, 10) : 0;
  if (!isdigit((unsigned char)digits[0]) || errno || *end != '\0') {
    fprintf(stderr, "%s: %s wants an integer, got '%s'\n", CLI_NAME, option, text);
    return 1;
  }
  *out = v;
  return 0;
}

/* NumPy's names, indexed by cureduce_dtype; bf16 and fp8 are ml_dtypes' names. */
static const char *const NUMPY_NAMES[CUREDUCE_DTYPE_COUNT] = {
    [CUREDUCE_F32] = "float32",
    [CUREDUCE_F64] = "float64",
    [CUREDUCE_F16] = "float16",
    [CUREDUCE_BF16] = "bfloat16",
    [CUREDUCE_F8_E4M3] = "float8_e4m3fn",
    [CUREDUCE_F8_E5M2] = "float8_e5m2",
    [CUREDUCE_I8] = "int8",
    [CUREDUCE_I32] = "int32",
    [CUREDUCE_I64] = "int64",
};

const char *dtype_numpy_name(cureduce_dtype dtype) {
  return (int)dtype >= 0 && dtype < CUREDUCE_DTYPE_COUNT ? NUMPY_NAMES[dtype] : "?";
}

int parse_dtype(const char *option, const char *text, cureduce_dtype *out) {
  if (cureduce_dtype_from_name(text, out) == CUREDUCE_SUCCESS)
    return 0;
  for (int d = 0; d < CUREDUCE_DTYPE_COUNT; ++d) {
    if (strcmp(text, NUMPY_NAMES[d]) == 0) {
      *out = (cureduce_dtype)d;
      return 0;
    }
  }
  fprintf(stderr, "%s: %s: unknown dtype '%s' (one of:", CLI_NAME, option, text);
  for (int d = 0; d < CUREDUCE_DTYPE_COUNT; ++d)
    fprintf(stderr, " %s/%s", cureduce_dtype_name((cureduce_dtype)d), NUMPY_NAMES[d]);
  fprintf(stderr, ")\n");
  return 1;
}

int parse_op(const char *option, const char *text, cureduce_op *out) {
  if (cureduce_op_from_name(text, out) == CUREDUCE_SUCCESS)
    return 0;
  fprintf(stderr, "%s: %s: unknown op '%s' (one of:", CLI_NAME, option, text);
  for (int o = 0; o < CUREDUCE_OP_COUNT; ++o)
    fprintf(stderr, " %s", cureduce_op_name((cureduce_op)o));
  fprintf(stderr, ")\n");
  return 1;
}

const char *format_bytes(double bytes, char *buf, size_t len) {
  static const char *const UNITS[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 6) {
    bytes /= 1024.0;
    ++u;
  }
  if (u == 0)
    snprintf(buf, len, "%.0f bytes", bytes);
  else
    snprintf(buf, len, "%.1f %s", bytes, UNITS[u]);
  return buf;
}
