/* The .npy header: the preamble ("\x93NUMPY", major, minor, the header length: 2 bytes in 1.0,
 * 4 in 2.0 and 3.0, little-endian) and the dict literal with 'descr', 'fortran_order' and
 * 'shape', parsed with explicit bounds since it is untrusted; 'descr' resolved to a dtype. */
#include "npy_header.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* NumPy's own writers never come close; anything longer is a damaged file. */
#define HEADER_MAX ((size_t)1 << 24)

int npy_fail(char *err, size_t errlen, const char *fmt, ...) {
  if (err && errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return 1;
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
    return npy_fail(err, errlen, "structured dtypes are not supported ('descr' is a list of fields)");
  const char *s = NULL;
  size_t len = 0;
  if (parse_string(c, &s, &len))
    return npy_fail(err, errlen, "malformed header: 'descr' is not a quoted type string such as '<f4'");
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
    return npy_fail(err, errlen, "malformed header: 'fortran_order' is neither True nor False");
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
    return npy_fail(err, errlen, "malformed 'shape' in header: '%s' is not a dimension", shown);
  }
  char shown[32];
  printable(shown, start, (size_t)(c->p - start));
  if (negative && (v || overflow))
    return npy_fail(err, errlen, "negative dimension %s in 'shape'", shown);
  if (overflow)
    return npy_fail(err, errlen, "dimension %s in 'shape' is too large (more than 2^64 - 1)", shown);
  *dim = v;
  return 0;
}

/* A tuple of dimensions: '()', '(3,)', '(3, 4)', with or without a trailing comma. */
static int parse_shape(cursor *c, header *h, char *err, size_t errlen) {
  if (!at(c, '('))
    return npy_fail(err, errlen, "malformed header: 'shape' is not a tuple");
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
      return npy_fail(err, errlen, "'shape' has more than %d dimensions (NumPy's limit)", NPY_MAX_DIMS);
    h->shape[h->ndim++] = dim;
    skip_space(c);
    if (at(c, ','))
      ++c->p;
    else if (!at(c, ')'))
      return npy_fail(err, errlen, "malformed 'shape' in header: expected ',' or ')' after a dimension");
  }
  ++c->p;
  return 0;
}

/* The header dict: the three keys in any order, any spacing, a trailing comma or not. */
static int parse_header(const char *text, size_t len, header *h, char *err, size_t errlen) {
  cursor c = {text, text + len};
  skip_space(&c);
  if (!at(&c, '{'))
    return npy_fail(err, errlen, "malformed header: it is not a dict");
  ++c.p;
  for (;;) {
    skip_space(&c);
    if (at(&c, '}'))
      break;
    const char *key = NULL;
    size_t klen = 0;
    if (parse_string(&c, &key, &klen))
      return npy_fail(err, errlen, "malformed header: expected a quoted key in the dict");
    char shown[32];
    printable(shown, key, klen);
    skip_space(&c);
    if (!at(&c, ':'))
      return npy_fail(err, errlen, "malformed header: expected ':' after '%s'", shown);
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
      return npy_fail(err, errlen,
                      "malformed header: unexpected key '%s' (only 'descr', 'fortran_order' "
                      "and 'shape' belong there)",
                      shown);
    if (*have)
      return npy_fail(err, errlen, "malformed header: '%s' appears twice", shown);
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
      return npy_fail(err, errlen, "malformed header: expected ',' or '}' after the value of '%s'", shown);
  }
  ++c.p;
  skip_space(&c);
  if (c.p != c.end)
    return npy_fail(err, errlen, "malformed header: text after the closing '}'");
  if (!h->have_descr)
    return npy_fail(err, errlen, "header has no 'descr'");
  if (!h->have_fortran)
    return npy_fail(err, errlen, "header has no 'fortran_order'");
  if (!h->have_shape)
    return npy_fail(err, errlen, "header has no 'shape'");
  return 0;
}

/* --- dtypes ----------------------------------------------------------------------------- */

typedef struct descr_map {
  const char *code; /* the descr without its byte-order character */
  cureduce_dtype dtype;
} descr_map;

static const descr_map TYPED[] = {
    {"f2", CUREDUCE_F16}, {"f4", CUREDUCE_F32}, {"f8", CUREDUCE_F64},     {"i1", CUREDUCE_I8},
    {"i4", CUREDUCE_I32}, {"i8", CUREDUCE_I64}, {"f1", CUREDUCE_F8_E5M2}, /* NumPy has no f1: ml_dtypes writes
                                                                             float8_e5m2 so, and only it */
};

/* Bytes that hold a dtype NumPy has no name for: ml_dtypes writes float8_e4m3fn (and its other
   one-byte types) as 'V1' and bfloat16 as 'V2'; others save the bits as unsigned integers. */
static const char *const RAW1[] = {"V1", "u1"};
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
    return npy_fail(err, errlen, "invalid dtype hint %d", (int)hint);
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
    if (have_hint && hint != t) { /* the hint is at fault, not the file */
      npy_fail(err, errlen, "the file holds '%s' (%s) but --dtype says %s", d, cureduce_dtype_name(t),
               cureduce_dtype_name(hint));
      return NPY_ERR_HINT;
    }
  } else if (raw) {
    const char *fits = raw == 1 ? "e4m3 or e5m2" : "bf16 or f16";
    if (!have_hint) { /* u1/u2 are unsigned integers to NumPy, but cureduce has none: only bits */
      npy_fail(err, errlen,
               "the file holds raw %d-byte values ('%s'), which cureduce reads only as float bits: say which "
               "with --dtype %s (unsigned integers are not supported)",
               raw, d, fits);
      return NPY_ERR_HINT;
    }
    const int fit = raw == 1 ? hint == CUREDUCE_F8_E4M3 || hint == CUREDUCE_F8_E5M2
                             : hint == CUREDUCE_BF16 || hint == CUREDUCE_F16;
    if (!fit) {
      npy_fail(err, errlen,
               "the file holds raw %d-byte values ('%s') but --dtype says %s (%zu-byte); they can be %s", raw,
               d, cureduce_dtype_name(hint), cureduce_dtype_size(hint), fits);
      return NPY_ERR_HINT;
    }
    t = hint;
  } else {
    return npy_fail(err, errlen,
                    "unsupported dtype '%s' (supported: f2 f4 f8 i1 i4 i8, little- or big-endian; "
                    "f1 as e5m2; raw V1 u1 as e4m3/e5m2 and V2 u2 as bf16/f16 with --dtype)",
                    d);
  }
  *dtype = t;
  *swap = cureduce_dtype_size(t) > 1 && big != host_is_big_endian();
  return 0;
}

/* --- The preamble and entry point ------------------------------------------------------- */

/* The preamble, then the header text (*len bytes, malloc'ed, not NUL-terminated). */
static int read_preamble(FILE *f, char **text, size_t *len, char *err, size_t errlen) {
  static const char MAGIC[6] = "\x93NUMPY";
  unsigned char pre[12];
  size_t got = fread(pre, 1, 8, f);
  if (got < 8 && ferror(f))
    return npy_fail(err, errlen, "read error: %s", strerror(errno));
  if (got == 0)
    return npy_fail(err, errlen, "not a .npy file: it is empty");
  if (memcmp(pre, MAGIC, got < 6 ? got : 6) != 0)
    return npy_fail(err, errlen, "not a .npy file (bad magic: it does not start with \"\\x93NUMPY\")");
  if (got < 8)
    return npy_fail(err, errlen, "truncated header: the preamble has at least 10 bytes, the file holds %zu",
                    got);
  const int major = pre[6], minor = pre[7];
  if (minor != 0 || major < 1 || major > 3)
    return npy_fail(err, errlen, "unsupported .npy format version %d.%d (this reads 1.0, 2.0 and 3.0)", major,
                    minor);
  const size_t field = major == 1 ? 2 : 4;
  got += fread(pre + 8, 1, field, f);
  if (got < 8 + field) {
    if (ferror(f))
      return npy_fail(err, errlen, "read error: %s", strerror(errno));
    return npy_fail(err, errlen,
                    "truncated header: a version %d.0 preamble has %zu bytes, the file holds %zu", major,
                    8 + field, got);
  }
  size_t n = (size_t)pre[8] | (size_t)pre[9] << 8;
  if (field == 4)
    n |= (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
  if (n > HEADER_MAX)
    return npy_fail(err, errlen, "header length %zu is beyond the limit of %zu bytes: the file is damaged", n,
                    HEADER_MAX);
  unsigned char *buf = NULL;
  size_t have = 0;
  if (npy_read_bytes(f, n, SIZE_MAX, &buf, &have, err, errlen))
    return 1;
  if (have < n) {
    free(buf);
    return npy_fail(err, errlen, "truncated header: its length field promises %zu bytes, the file holds %zu",
                    n, have);
  }
  *text = (char *)buf;
  *len = n;
  return 0;
}

int npy_header_read(FILE *f, cureduce_dtype hint, npy_header *h, char *err, size_t errlen) {
  char *text = NULL;
  size_t len = 0;
  if (read_preamble(f, &text, &len, err, errlen))
    return 1;
  header d;
  memset(&d, 0, sizeof d);
  const int bad = parse_header(text, len, &d, err, errlen);
  free(text);
  if (bad)
    return 1;
  cureduce_dtype dtype = CUREDUCE_F32;
  int swap = 0;
  const int rc = resolve_dtype(&d, hint, &dtype, &swap, err, errlen);
  if (rc)
    return rc;
  h->dtype = dtype;
  h->swap = swap;
  h->fortran = d.fortran;
  h->ndim = d.ndim;
  memcpy(h->shape, d.shape, sizeof d.shape);
  return 0;
}

/* The first allocation when the file's size is unknown; buffers double from there. */
#define READ_CHUNK ((size_t)1 << 20)

int npy_read_bytes(FILE *f, size_t need, size_t avail, unsigned char **buf, size_t *got, char *err,
                   size_t errlen) {
  size_t cap = need < READ_CHUNK || (avail != SIZE_MAX && need <= avail) ? need : READ_CHUNK;
  unsigned char *b = malloc(cap ? cap : 1);
  if (!b)
    return npy_fail(err, errlen, "out of memory for %zu bytes", cap);
  size_t n = 0;
  while (n < need) {
    if (n == cap) {
      const size_t grown = cap > need / 2 ? need : cap * 2;
      unsigned char *nb = realloc(b, grown);
      if (!nb) {
        free(b);
        return npy_fail(err, errlen, "out of memory for %zu bytes", grown);
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
    return npy_fail(err, errlen, "read error: %s", e ? strerror(e) : "unknown");
  }
  *buf = b;
  *got = n;
  return 0;
}
