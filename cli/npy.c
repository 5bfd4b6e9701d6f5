/* NumPy .npy reader. See npy.h. Format: "\x93NUMPY", major, minor, the header length (2 bytes
 * in 1.0, 4 bytes in 2.0 and 3.0, little-endian), then a Python dict literal with 'descr',
 * 'fortran_order' and 'shape', padded with spaces and ending in a newline; then the data.
 *
 * Everything read from the file is untrusted: the header is parsed with explicit bounds, and
 * buffers grow with the bytes that actually arrive, so a header that promises terabytes costs
 * no more memory than the file holds. */
#define _POSIX_C_SOURCE 200809L /* fileno, fstat, ftello */

#include "npy.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

/* NumPy's own writers never come close; anything longer is a damaged file. */
#define HEADER_MAX ((size_t)1 << 24)
/* The first allocation when the file's size is unknown; buffers double from there. */
#define READ_CHUNK ((size_t)1 << 20)

#if defined(__GNUC__)
#define NPY_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define NPY_PRINTF(fmt, args)
#endif

/* Writes the message to err and returns 1, so that `return fail(...)` reports a failure. */
static int fail(char *err, size_t errlen, const char *fmt, ...) NPY_PRINTF(3, 4);
static int fail(char *err, size_t errlen, const char *fmt, ...) {
  if (err && errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return 1;
}

/* --- Reading bytes ---------------------------------------------------------------------- */

/* Reads up to `need` bytes into *buf (malloc'ed, at least 1 byte), *got of them; fewer only at
   the end of the stream. `avail`, the bytes known to remain (SIZE_MAX when unknown), lets a
   regular file's data be read in one allocation. Returns 0, or 1 with err set. */
static int read_bytes(FILE *f, size_t need, size_t avail, unsigned char **buf, size_t *got, char *err,
                      size_t errlen) {
  size_t cap = need < READ_CHUNK || (avail != SIZE_MAX && need <= avail) ? need : READ_CHUNK;
  unsigned char *b = malloc(cap ? cap : 1);
  if (!b)
    return fail(err, errlen, "out of memory for %zu bytes", cap);
  size_t n = 0;
  while (n < need) {
    if (n == cap) {
      const size_t grown = cap > need / 2 ? need : cap * 2;
      unsigned char *nb = realloc(b, grown);
      if (!nb) {
        free(b);
        return fail(err, errlen, "out of memory for %zu bytes", grown);
      }
      b = nb, cap = grown;
    }
    const size_t want = cap - n;
    const size_t r = fread(b + n, 1, want, f);
    n += r;
    if (r < want)
      break;
  }
  if (n < need && ferror(f)) {
    const int e = errno;
    free(b);
    return fail(err, errlen, "read error: %s", e ? strerror(e) : "unknown");
  }
  *buf = b;
  *got = n;
  return 0;
}

/* Bytes left in a regular file after the stream's position, or SIZE_MAX when not known (a pipe,
   a memory stream). */
static size_t bytes_left(FILE *f) {
  const int fd = fileno(f);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    return SIZE_MAX;
  const off_t pos = ftello(f);
  if (pos < 0 || pos > st.st_size || (uint64_t)(st.st_size - pos) > SIZE_MAX)
    return SIZE_MAX;
  return (size_t)(st.st_size - pos);
}

/* --- The header dict -------------------------------------------------------------------- */

typedef struct header {
  char descr[28]; /* printable ASCII; longer or odd strings are unsupported anyway */
  int descr_ok;   /* 0 when the string was too long or held a byte outside printable ASCII */
  int fortran;
  int ndim;
  uint64_t shape[NPY_MAX_DIMS];
  int have_descr, have_fortran, have_shape;
} header;

typedef struct cursor {
  const char *p, *end;
} cursor;

static int is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
static int is_digit(char c) { return c >= '0' && c <= '9'; }
static void skip_space(cursor *c) {
  while (c->p < c->end && is_space(*c->p))
    ++c->p;
}
static int at(const cursor *c, char ch) { return c->p < c->end && *c->p == ch; }

/* Copies up to 24 bytes of s for a message (out: 28 bytes), with '?' for anything not printable. */
static void printable(char *out, const char *s, size_t len) {
  const size_t n = len < 24 ? len : 24;
  for (size_t i = 0; i < n; ++i)
    out[i] = s[i] >= ' ' && s[i] <= '~' ? s[i] : '?';
  strcpy(out + n, len > n ? "..." : "");
}

/* A Python string literal ('...' or "..."); *s and *len receive its contents. */
static int parse_string(cursor *c, const char **s, size_t *len) {
  if (!(at(c, '\'') || at(c, '"')))
    return 1;
  const char q = *c->p++;
  const char *start = c->p;
  while (c->p < c->end && *c->p != q)
    ++c->p;
  if (c->p == c->end)
    return 1;
  *s = start;
  *len = (size_t)(c->p - start);
  ++c->p;
  return 0;
}

static int parse_descr(cursor *c, header *h, char *err, size_t errlen) {
  if (at(c, '['))
    return fail(err, errlen, "structured dtypes are not supported ('descr' is a list of fields)");
  const char *s = NULL;
  size_t len = 0;
  if (parse_string(c, &s, &len))
    return fail(err, errlen, "malformed header: 'descr' is not a quoted type string such as '<f4'");
  h->descr_ok = len < sizeof h->descr;
  for (size_t i = 0; i < len && h->descr_ok; ++i)
    h->descr_ok = s[i] > ' ' && s[i] <= '~';
  if (h->descr_ok) {
    memcpy(h->descr, s, len);
    h->descr[len] = '\0';
  } else {
    printable(h->descr, s, len);
  }
  return 0;
}

static int parse_fortran(cursor *c, header *h, char *err, size_t errlen) {
  const size_t left = (size_t)(c->end - c->p);
  if (left >= 4 && !memcmp(c->p, "True", 4))
    h->fortran = 1, c->p += 4;
  else if (left >= 5 && !memcmp(c->p, "False", 5))
    h->fortran = 0, c->p += 5;
  else
    return fail(err, errlen, "malformed header: 'fortran_order' is neither True nor False");
  return 0;
}

/* One dimension: decimal digits, optionally with Python 2's 'L' suffix (old files). */
static int parse_dim(cursor *c, uint64_t *dim, char *err, size_t errlen) {
  const char *start = c->p;
  const int negative = at(c, '-');
  if (negative || at(c, '+'))
    ++c->p;
  const char *digits = c->p;
  uint64_t v = 0;
  int overflow = 0;
  while (c->p < c->end && is_digit(*c->p)) {
    const uint64_t d = (uint64_t)(*c->p - '0');
    if (v > (UINT64_MAX - d) / 10)
      overflow = 1;
    v = v * 10 + d;
    ++c->p;
  }
  const size_t ndigits = (size_t)(c->p - digits);
  if (ndigits && (at(c, 'L') || at(c, 'l')))
    ++c->p;
  if (!ndigits || (c->p < c->end && !is_space(*c->p) && *c->p != ',' && *c->p != ')')) {
    const char *tok = start;
    while (c->p < c->end && !is_space(*c->p) && *c->p != ',' && *c->p != ')')
      ++c->p;
    char shown[32];
    printable(shown, tok, (size_t)(c->p - tok));
    return fail(err, errlen, "malformed 'shape' in header: '%s' is not a dimension", shown);
  }
  char shown[32];
  printable(shown, start, (size_t)(c->p - start));
  if (negative && (v || overflow))
    return fail(err, errlen, "negative dimension %s in 'shape'", shown);
  if (overflow)
    return fail(err, errlen, "dimension %s in 'shape' is too large (more than 2^64 - 1)", shown);
  *dim = v;
  return 0;
}

/* A tuple of dimensions: '()', '(3,)', '(3, 4)', with or without a trailing comma. */
static int parse_shape(cursor *c, header *h, char *err, size_t errlen) {
  if (!at(c, '('))
    return fail(err, errlen, "malformed header: 'shape' is not a tuple");
  ++c->p;
  h->ndim = 0;
  for (;;) {
    skip_space(c);
    if (at(c, ')'))
      break;
    uint64_t dim = 0;
    if (parse_dim(c, &dim, err, errlen))
      return 1;
    if (h->ndim == NPY_MAX_DIMS)
      return fail(err, errlen, "'shape' has more than %d dimensions (NumPy's limit)", NPY_MAX_DIMS);
    h->shape[h->ndim++] = dim;
    skip_space(c);
    if (at(c, ','))
      ++c->p;
    else if (!at(c, ')'))
      return fail(err, errlen, "malformed 'shape' in header: expected ',' or ')' after a dimension");
  }
  ++c->p;
  return 0;
}

/* The header dict: the three keys in any order, any spacing, a trailing comma or not. */
static int parse_header(const char *text, size_t len, header *h, char *err, size_t errlen) {
  cursor c = {text, text + len};
  skip_space(&c);
  if (!at(&c, '{'))
    return fail(err, errlen, "malformed header: it is not a dict");
  ++c.p;
  for (;;) {
    skip_space(&c);
    if (at(&c, '}'))
      break;
    const char *key = NULL;
    size_t klen = 0;
    if (parse_string(&c, &key, &klen))
      return fail(err, errlen, "malformed header: expected a quoted key in the dict");
    char shown[32];
    printable(shown, key, klen);
    skip_space(&c);
    if (!at(&c, ':'))
      return fail(err, errlen, "malformed header: expected ':' after '%s'", shown);
    ++c.p;
    skip_space(&c);
    int *have;
    if (klen == 5 && !memcmp(key, "descr", 5))
      have = &h->have_descr;
    else if (klen == 13 && !memcmp(key, "fortran_order", 13))
      have = &h->have_fortran;
    else if (klen == 5 && !memcmp(key, "shape", 5))
      have = &h->have_shape;
    else
      return fail(err, errlen,
                  "malformed header: unexpected key '%s' (only 'descr', 'fortran_order' "
                  "and 'shape' belong there)",
                  shown);
    if (*have)
      return fail(err, errlen, "malformed header: '%s' appears twice", shown);
    const int rc = have == &h->have_descr     ? parse_descr(&c, h, err, errlen)
                   : have == &h->have_fortran ? parse_fortran(&c, h, err, errlen)
                                              : parse_shape(&c, h, err, errlen);
    if (rc)
      return rc;
    *have = 1;
    skip_space(&c);
    if (at(&c, ','))
      ++c.p;
    else if (!at(&c, '}'))
      return fail(err, errlen, "malformed header: expected ',' or '}' after the value of '%s'", shown);
  }
  ++c.p;
  skip_space(&c);
  if (c.p != c.end)
    return fail(err, errlen, "malformed header: text after the closing '}'");
  if (!h->have_descr)
    return fail(err, errlen, "header has no 'descr'");
  if (!h->have_fortran)
    return fail(err, errlen, "header has no 'fortran_order'");
  if (!h->have_shape)
    return fail(err, errlen, "header has no 'shape'");
  return 0;
}

/* --- dtypes ----------------------------------------------------------------------------- */

typedef struct descr_map {
  const char *code; /* the descr without its byte-order character */
  cureduce_dtype dtype;
} descr_map;

static const descr_map TYPED[] = {
    {"f2", CUREDUCE_F16}, {"f4", CUREDUCE_F32}, {"f8", CUREDUCE_F64},
    {"i1", CUREDUCE_I8},  {"i4", CUREDUCE_I32}, {"i8", CUREDUCE_I64},
};

/* Bytes that hold a dtype NumPy has no name for: ml_dtypes writes float8_e4m3fn as 'V1',
   float8_e5m2 as 'f1' and bfloat16 as 'V2'; others save the bits as unsigned integers. */
static const char *const RAW1[] = {"V1", "u1", "f1"};
static const char *const RAW2[] = {"V2", "u2"};

static int host_is_big_endian(void) {
  const uint16_t one = 1;
  unsigned char first;
  memcpy(&first, &one, 1);
  return first == 0;
}

static int in_list(const char *code, const char *const *list, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (!strcmp(code, list[i]))
      return 1;
  return 0;
}

/* The dtype of descr, given the user's hint; *swap says whether the bytes need reversing. */
static int resolve_dtype(const header *h, cureduce_dtype hint, cureduce_dtype *dtype, int *swap, char *err,
                         size_t errlen) {
  const char *d = h->descr;
  const int have_hint = hint != CUREDUCE_ACC_DEFAULT;
  if (have_hint && !cureduce_dtype_name(hint))
    return fail(err, errlen, "invalid dtype hint %d", (int)hint);
  const char *code = d;
  int big = host_is_big_endian(); /* '=', '|' and no order character: the machine's order */
  if (*d == '<' || *d == '>' || *d == '=' || *d == '|') {
    if (*d == '<' || *d == '>')
      big = *d == '>';
    ++code;
  }
  cureduce_dtype t = CUREDUCE_ACC_DEFAULT;
  for (size_t i = 0; h->descr_ok && i < sizeof TYPED / sizeof TYPED[0]; ++i)
    if (!strcmp(code, TYPED[i].code))
      t = TYPED[i].dtype;
  int raw = 0;
  if (h->descr_ok && in_list(code, RAW1, sizeof RAW1 / sizeof RAW1[0]))
    raw = 1;
  if (h->descr_ok && in_list(code, RAW2, sizeof RAW2 / sizeof RAW2[0]))
    raw = 2;
  if (t != CUREDUCE_ACC_DEFAULT) {
    if (have_hint && hint != t)
      return fail(err, errlen, "the file holds '%s' (%s) but --dtype says %s", d, cureduce_dtype_name(t),
                  cureduce_dtype_name(hint));
  } else if (raw) {
    const char *fits = raw == 1 ? "e4m3 or e5m2" : "bf16 or f16";
    if (!have_hint)
      return fail(err, errlen, "the file holds raw %d-byte values ('%s'): say what they are with --dtype %s",
                  raw, d, fits);
    const int fit = raw == 1 ? hint == CUREDUCE_F8_E4M3 || hint == CUREDUCE_F8_E5M2
                             : hint == CUREDUCE_BF16 || hint == CUREDUCE_F16;
    if (!fit)
      return fail(err, errlen,
                  "the file holds raw %d-byte values ('%s') but --dtype says %s (%zu-byte); "
                  "they can be %s",
                  raw, d, cureduce_dtype_name(hint), cureduce_dtype_size(hint), fits);
    t = hint;
  } else {
    return fail(err, errlen,
                "unsupported dtype '%s' (supported: f2 f4 f8 i1 i4 i8, little- or big-endian; "
                "raw V1 u1 f1 as e4m3/e5m2 and V2 u2 as bf16/f16 with --dtype)",
                d);
  }
  *dtype = t;
  *swap = cureduce_dtype_size(t) > 1 && big != host_is_big_endian();
  return 0;
}

/* --- Layout ----------------------------------------------------------------------------- */

/* Reverses the bytes of each element; the shifts compile to one bswap instruction. */
static void byte_swap(unsigned char *p, size_t count, size_t size) {
  for (size_t i = 0; i < count; ++i, p += size) {
    if (size == 2) {
      uint16_t v;
      memcpy(&v, p, 2);
      v = (uint16_t)(v << 8 | v >> 8);
      memcpy(p, &v, 2);
    } else if (size == 4) {
      uint32_t v;
      memcpy(&v, p, 4);
      v = v << 24 | (v & 0xff00u) << 8 | (v >> 8 & 0xff00u) | v >> 24;
      memcpy(p, &v, 4);
    } else {
      uint64_t v;
      memcpy(&v, p, 8);
      v = (v & 0x00000000ffffffffull) << 32 | v >> 32;
      v = (v & 0x0000ffff0000ffffull) << 16 | (v >> 16 & 0x0000ffff0000ffffull);
      v = (v & 0x00ff00ff00ff00ffull) << 8 | (v >> 8 & 0x00ff00ff00ff00ffull);
      memcpy(p, &v, 8);
    }
  }
}

/* One rows x cols slab of the output, from src where element (r, c) sits at r*rs + c*cs.
   Tiled so that the strided side stays in cache; `size` is a constant at each call. */
static inline void copy_slab(unsigned char *dst, const unsigned char *src, size_t rows, size_t cols,
                             size_t rs, size_t cs, size_t size) {
  enum { TILE = 32 };
  for (size_t r0 = 0; r0 < rows; r0 += TILE)
    for (size_t c0 = 0; c0 < cols; c0 += TILE) {
      const size_t r1 = rows - r0 < TILE ? rows : r0 + TILE;
      const size_t c1 = cols - c0 < TILE ? cols : c0 + TILE;
      for (size_t r = r0; r < r1; ++r)
        for (size_t c = c0; c < c1; ++c)
          memcpy(dst + (r * cols + c) * size, src + (r * rs + c * cs) * size, size);
    }
}

/* src holds the array in column-major order: element (i0, ..., iN-1) at i0 + d0*(i1 + d1*(...)).
   Writes it to dst in row-major order. Axes of length 1 move nothing and are dropped; the last
   two axes left form contiguous slabs of the output, the others are counted off in C order. */
static void fortran_to_c(unsigned char *dst, const unsigned char *src, int ndim, const uint64_t *shape,
                         size_t count, size_t size) {
  size_t d[NPY_MAX_DIMS], s[NPY_MAX_DIMS], idx[NPY_MAX_DIMS];
  int n = 0;
  size_t stride = 1;
  for (int k = 0; k < ndim; ++k)
    if (shape[k] != 1) {
      d[n] = (size_t)shape[k], s[n] = stride, idx[n] = 0;
      stride *= d[n++];
    }
  if (n < 2) {
    memcpy(dst, src, count * size);
    return;
  }
  const size_t rows = d[n - 2], cols = d[n - 1], slab = rows * cols;
  size_t base = 0;
  for (size_t done = 0; done < count; done += slab, dst += slab * size) {
    const unsigned char *from = src + base * size;
    switch (size) {
    case 1: copy_slab(dst, from, rows, cols, s[n - 2], s[n - 1], 1); break;
    case 2: copy_slab(dst, from, rows, cols, s[n - 2], s[n - 1], 2); break;
    case 4: copy_slab(dst, from, rows, cols, s[n - 2], s[n - 1], 4); break;
    default: copy_slab(dst, from, rows, cols, s[n - 2], s[n - 1], 8); break;
    }
    for (int k = n - 3; k >= 0; --k) {
      base += s[k];
      if (++idx[k] < d[k])
        break;
      base -= d[k] * s[k];
      idx[k] = 0;
    }
  }
}

static void format_shape(char *buf, size_t len, const header *h) {
  size_t used = (size_t)snprintf(buf, len, "(");
  for (int k = 0; k < h->ndim && used < len; ++k)
    used += (size_t)snprintf(buf + used, len - used, k ? ", %llu" : "%llu", (unsigned long long)h->shape[k]);
  if (used < len)
    snprintf(buf + used, len - used, h->ndim == 1 ? ",)" : ")"); /* as Python writes a tuple */
}

/* --- Entry points ----------------------------------------------------------------------- */

/* The preamble, then the header text (*len bytes, malloc'ed, not NUL-terminated). */
static int read_preamble(FILE *f, char **text, size_t *len, char *err, size_t errlen) {
  static const char MAGIC[6] = "\x93NUMPY";
  unsigned char pre[12];
  size_t got = fread(pre, 1, 8, f);
  if (got < 8 && ferror(f))
    return fail(err, errlen, "read error: %s", strerror(errno));
  if (got == 0)
    return fail(err, errlen, "not a .npy file: it is empty");
  if (memcmp(pre, MAGIC, got < 6 ? got : 6) != 0)
    return fail(err, errlen, "not a .npy file (bad magic: it does not start with \"\\x93NUMPY\")");
  if (got < 8)
    return fail(err, errlen, "truncated header: the preamble has at least 10 bytes, the file holds %zu", got);
  const int major = pre[6], minor = pre[7];
  if (minor != 0 || major < 1 || major > 3)
    return fail(err, errlen, "unsupported .npy format version %d.%d (this reads 1.0, 2.0 and 3.0)", major,
                minor);
  const size_t field = major == 1 ? 2 : 4;
  got += fread(pre + 8, 1, field, f);
  if (got < 8 + field) {
    if (ferror(f))
      return fail(err, errlen, "read error: %s", strerror(errno));
    return fail(err, errlen, "truncated header: a version %d.0 preamble has %zu bytes, the file holds %zu",
                major, 8 + field, got);
  }
  size_t n = (size_t)pre[8] | (size_t)pre[9] << 8;
  if (field == 4)
    n |= (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
  if (n > HEADER_MAX)
    return fail(err, errlen, "header length %zu is beyond the limit of %zu bytes: the file is damaged", n,
                HEADER_MAX);
  unsigned char *buf = NULL;
  size_t have = 0;
  if (read_bytes(f, n, SIZE_MAX, &buf, &have, err, errlen))
    return 1;
  if (have < n) {
    free(buf);
    return fail(err, errlen, "truncated header: its length field promises %zu bytes, the file holds %zu", n,
                have);
  }
  *text = (char *)buf;
  *len = n;
  return 0;
}

int npy_read(FILE *f, cureduce_dtype hint, npy_array *out, char *err, size_t errlen) {
  if (err && errlen)
    err[0] = '\0';
  if (!f || !out)
    return fail(err, errlen, "no stream or no output array");
  memset(out, 0, sizeof *out);

  char *text = NULL;
  size_t len = 0;
  if (read_preamble(f, &text, &len, err, errlen))
    return 1;
  header h;
  memset(&h, 0, sizeof h);
  const int bad = parse_header(text, len, &h, err, errlen);
  free(text);
  if (bad)
    return 1;
  cureduce_dtype dtype = CUREDUCE_F32;
  int swap = 0;
  if (resolve_dtype(&h, hint, &dtype, &swap, err, errlen))
    return 1;

  /* A zero anywhere makes the product 0, whatever the other dimensions. */
  uint64_t count = 1;
  for (int k = 0; k < h.ndim; ++k)
    if (h.shape[k] == 0)
      count = 0;
  char shape[128];
  for (int k = 0; k < h.ndim && count; ++k) {
    if (count > UINT64_MAX / h.shape[k]) {
      format_shape(shape, sizeof shape, &h);
      return fail(err, errlen, "array too large: shape %s has more than 2^64 - 1 elements", shape);
    }
    count *= h.shape[k];
  }
  const size_t size = cureduce_dtype_size(dtype);
  if (count > SIZE_MAX / size) {
    format_shape(shape, sizeof shape, &h);
    return fail(err, errlen, "array too large: shape %s, %llu elements of %zu bytes, is more than %zu bytes",
                shape, (unsigned long long)count, size, (size_t)SIZE_MAX);
  }
  const size_t nbytes = (size_t)count * size;

  unsigned char *data = NULL;
  size_t got = 0;
  if (read_bytes(f, nbytes, bytes_left(f), &data, &got, err, errlen))
    return 1;
  if (got < nbytes) {
    free(data);
    return fail(err, errlen,
                "truncated data: the header promises %llu elements of %zu bytes (%zu bytes), the "
                "file holds %zu",
                (unsigned long long)count, size, nbytes, got);
  }
  if (h.fortran && h.ndim > 1 && count > 1) {
    unsigned char *c_order = malloc(nbytes);
    if (!c_order) {
      free(data);
      return fail(err, errlen, "out of memory for %zu bytes", nbytes);
    }
    fortran_to_c(c_order, data, h.ndim, h.shape, (size_t)count, size);
    free(data);
    data = c_order;
  }
  if (swap)
    byte_swap(data, (size_t)count, size);

  out->dtype = dtype;
  out->ndim = h.ndim;
  memcpy(out->shape, h.shape, sizeof h.shape);
  out->count = count;
  out->data = data;
  return 0;
}

int npy_load(const char *path, cureduce_dtype hint, npy_array *out, char *err, size_t errlen) {
  if (err && errlen)
    err[0] = '\0';
  if (!path || !out)
    return fail(err, errlen, "no path or no output array");
  memset(out, 0, sizeof *out);
  FILE *f = fopen(path, "rb");
  if (!f) {
    const int e = errno;
    if (e == ENOENT)
      return fail(err, errlen, "cannot open: no such file");
    if (e == EACCES || e == EPERM)
      return fail(err, errlen, "cannot open: permission denied");
    if (e == EISDIR)
      return fail(err, errlen, "cannot open: is a directory");
    return fail(err, errlen, "cannot open: %s", strerror(e));
  }
  /* On Linux fopen succeeds on a directory; only the first read would fail. */
  struct stat st;
  if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
    fclose(f);
    return fail(err, errlen, "cannot open: is a directory");
  }
  const int rc = npy_read(f, hint, out, err, errlen);
  fclose(f);
  return rc;
}

void npy_free(npy_array *a) {
  if (!a)
    return;
  free(a->data);
  a->data = NULL;
}
