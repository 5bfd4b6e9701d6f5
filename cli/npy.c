/* NumPy .npy reader. See npy.h. Format: "\x93NUMPY", major, minor, header length (2 bytes in
 * 1.0, 4 bytes in 2.0/3.0, little-endian), then a Python dict literal with 'descr',
 * 'fortran_order' and 'shape', padded with spaces and ending in a newline; then the data. */
#include "npy.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(char *err, size_t errlen, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
  return 1;
}

/* The value text after 'key': in the header dict, or NULL. */
static const char *dict_value(const char *header, const char *key) {
  char quoted[32];
  snprintf(quoted, sizeof quoted, "'%s'", key);
  const char *p = strstr(header, quoted);
  if (!p)
    return NULL;
  p = strchr(p + strlen(quoted), ':');
  if (!p)
    return NULL;
  ++p;
  while (*p == ' ')
    ++p;
  return p;
}

typedef struct descr_map {
  const char *descr;
  cureduce_dtype dtype;
} descr_map;

static const descr_map TYPED[] = {
    {"<f4", CUREDUCE_F32}, {"<f8", CUREDUCE_F64}, {"<f2", CUREDUCE_F16}, {"|i1", CUREDUCE_I8},
    {"<i1", CUREDUCE_I8},  {"<i4", CUREDUCE_I32}, {"<i8", CUREDUCE_I64},
};

/* Raw byte types that can hold a dtype NumPy has no name for. */
static int raw_descr_size(const char *d) {
  if (!strcmp(d, "|V1") || !strcmp(d, "|u1") || !strcmp(d, "<u1"))
    return 1;
  if (!strcmp(d, "|V2") || !strcmp(d, "<V2") || !strcmp(d, "<u2"))
    return 2;
  return 0;
}

static int parse_descr(const char *header, cureduce_dtype hint, cureduce_dtype *dtype, char *err,
                       size_t errlen) {
  const char *v = dict_value(header, "descr");
  char descr[16] = {0};
  if (!v || *v != '\'' || sscanf(v + 1, "%15[^']", descr) != 1)
    return fail(err, errlen, "header has no readable 'descr' (structured dtypes are not supported)");
  if (descr[0] == '>')
    return fail(err, errlen, "big-endian data ('%s') is not supported; save it little-endian", descr);
  for (size_t i = 0; i < sizeof TYPED / sizeof TYPED[0]; ++i) {
    if (strcmp(descr, TYPED[i].descr) == 0) {
      if (hint != CUREDUCE_ACC_DEFAULT && hint != TYPED[i].dtype)
        return fail(err, errlen, "the file holds '%s' (%s) but --dtype says %s", descr,
                    cureduce_dtype_name(TYPED[i].dtype), cureduce_dtype_name(hint));
      *dtype = TYPED[i].dtype;
      return 0;
    }
  }
  const int raw = raw_descr_size(descr);
  if (raw && hint != CUREDUCE_ACC_DEFAULT && cureduce_dtype_size(hint) == (size_t)raw &&
      hint != CUREDUCE_I8) {
    *dtype = hint;
    return 0;
  }
  if (raw)
    return fail(err, errlen, "the file holds raw %d-byte values ('%s'): say what they are with "
                "--dtype (%s)", raw, descr, raw == 1 ? "e4m3 or e5m2" : "bf16 or f16");
  return fail(err, errlen, "unsupported dtype '%s' (supported: <f2 <f4 <f8 |i1 <i4 <i8, and "
              "raw V1/V2/u1/u2 with --dtype)", descr);
}

static int parse_shape(const char *header, uint64_t *count, char *err, size_t errlen) {
  const char *v = dict_value(header, "shape");
  if (!v || *v != '(')
    return fail(err, errlen, "header has no readable 'shape'");
  uint64_t total = 1;
  const char *p = v + 1;
  for (;;) {
    while (*p == ' ' || *p == ',')
      ++p;
    if (*p == ')')
      break;
    char *end;
    const unsigned long long dim = strtoull(p, &end, 10);
    if (end == p)
      return fail(err, errlen, "malformed 'shape' in header");
    if (dim != 0 && total > UINT64_MAX / dim)
      return fail(err, errlen, "shape too large");
    total *= dim;
    p = end;
  }
  *count = total;
  return 0;
}

static int read_header(FILE *f, char **header, char *err, size_t errlen) {
  unsigned char pre[10];
  if (fread(pre, 1, 8, f) != 8 || memcmp(pre, "\x93NUMPY", 6) != 0)
    return fail(err, errlen, "not a .npy file (bad magic)");
  const int major = pre[6];
  size_t len;
  if (major == 1) {
    if (fread(pre + 8, 1, 2, f) != 2)
      return fail(err, errlen, "truncated header");
    len = (size_t)pre[8] | (size_t)pre[9] << 8;
  } else if (major == 2 || major == 3) {
    unsigned char l[4];
    if (fread(l, 1, 4, f) != 4)
      return fail(err, errlen, "truncated header");
    len = (size_t)l[0] | (size_t)l[1] << 8 | (size_t)l[2] << 16 | (size_t)l[3] << 24;
  } else {
    return fail(err, errlen, "unsupported .npy format version %d", major);
  }
  if (len > (1u << 24))
    return fail(err, errlen, "header too long (%zu bytes)", len);
  *header = malloc(len + 1);
  if (!*header)
    return fail(err, errlen, "out of memory");
  if (fread(*header, 1, len, f) != len) {
    free(*header);
    return fail(err, errlen, "truncated header");
  }
  (*header)[len] = '\0';
  return 0;
}

int npy_load(const char *path, cureduce_dtype hint, npy_array *out, char *err, size_t errlen) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return fail(err, errlen, "cannot open '%s'", path);
  char *header = NULL;
  int rc = read_header(f, &header, err, errlen);
  if (rc) {
    fclose(f);
    return rc;
  }
  const char *fo = dict_value(header, "fortran_order");
  cureduce_dtype dtype = CUREDUCE_F32;
  uint64_t count = 0;
  if (!fo)
    rc = fail(err, errlen, "header has no 'fortran_order'");
  else if (strncmp(fo, "False", 5) != 0)
    rc = fail(err, errlen, "fortran-order arrays are not supported; save with np.ascontiguousarray");
  if (!rc)
    rc = parse_descr(header, hint, &dtype, err, errlen);
  if (!rc)
    rc = parse_shape(header, &count, err, errlen);
  free(header);
  const size_t size = cureduce_dtype_size(dtype);
  if (!rc && count > SIZE_MAX / size)
    rc = fail(err, errlen, "array too large");
  void *data = NULL;
  if (!rc) {
    data = malloc(count ? count * size : 1);
    if (!data)
      rc = fail(err, errlen, "out of memory for %llu elements", (unsigned long long)count);
  }
  if (!rc) {
    const size_t got = fread(data, 1, count * size, f);
    if (got != count * size) {
      rc = fail(err, errlen, "truncated data: the header promises %llu elements (%llu bytes), "
                "the file holds %zu bytes", (unsigned long long)count,
                (unsigned long long)(count * size), got);
      free(data);
    }
  }
  fclose(f);
  if (rc)
    return rc;
  out->dtype = dtype;
  out->count = count;
  out->data = data;
  return 0;
}
