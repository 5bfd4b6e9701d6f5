/* NumPy .npy reader (see npy.h): opens the file, reads the data after the header (npy_header.c)
 * in buffers that grow with the bytes that actually arrive, so a header that promises terabytes
 * costs no more memory than the file holds; then puts it in C order and the machine's byte order. */
#define _POSIX_C_SOURCE 200809L /* fileno, fstat, ftello */

#include "npy.h"
#include "npy_header.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

/* --- Reading bytes ---------------------------------------------------------------------- */

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

static void format_shape(char *buf, size_t len, const npy_header *h) {
  size_t used = (size_t)snprintf(buf, len, "(");
  for (int k = 0; k < h->ndim && used < len; ++k)
    used += (size_t)snprintf(buf + used, len - used, k ? ", %llu" : "%llu", (unsigned long long)h->shape[k]);
  if (used < len)
    snprintf(buf + used, len - used, h->ndim == 1 ? ",)" : ")"); /* as Python writes a tuple */
}

/* --- Entry points ----------------------------------------------------------------------- */

int npy_read(FILE *f, cureduce_dtype hint, npy_array *out, char *err, size_t errlen) {
  if (err && errlen)
    err[0] = '\0';
  if (!f || !out)
    return npy_fail(err, errlen, "no stream or no output array");
  memset(out, 0, sizeof *out);

  npy_header h;
  memset(&h, 0, sizeof h);
  const int header_rc = npy_header_read(f, hint, &h, err, errlen);
  if (header_rc)
    return header_rc;
  const cureduce_dtype dtype = h.dtype;
  const int swap = h.swap;

  /* A zero anywhere makes the product 0, whatever the other dimensions. */
  uint64_t count = 1;
  for (int k = 0; k < h.ndim; ++k)
    if (h.shape[k] == 0)
      count = 0;
  char shape[128];
  for (int k = 0; k < h.ndim && count; ++k) {
    if (count > UINT64_MAX / h.shape[k]) {
      format_shape(shape, sizeof shape, &h);
      return npy_fail(err, errlen, "array too large: shape %s has more than 2^64 - 1 elements", shape);
    }
    count *= h.shape[k];
  }
  const size_t size = cureduce_dtype_size(dtype);
  if (count > SIZE_MAX / size) {
    format_shape(shape, sizeof shape, &h);
    return npy_fail(err, errlen,
                    "array too large: shape %s, %llu elements of %zu bytes, is more than %zu bytes", shape,
                    (unsigned long long)count, size, (size_t)SIZE_MAX);
  }
  const size_t nbytes = (size_t)count * size;

  unsigned char *data = NULL;
  size_t got = 0;
  if (npy_read_bytes(f, nbytes, bytes_left(f), &data, &got, err, errlen))
    return 1;
  if (got < nbytes) {
    free(data);
    return npy_fail(err, errlen,
                    "truncated data: the header promises %llu elements of %zu bytes (%zu bytes), the "
                    "file holds %zu",
                    (unsigned long long)count, size, nbytes, got);
  }
  if (h.fortran && h.ndim > 1 && count > 1) {
    unsigned char *c_order = malloc(nbytes);
    if (!c_order) {
      free(data);
      return npy_fail(err, errlen, "out of memory for %zu bytes", nbytes);
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
    return npy_fail(err, errlen, "no path or no output array");
  memset(out, 0, sizeof *out);
  FILE *f = fopen(path, "rb");
  if (!f) {
    const int e = errno;
    if (e == ENOENT)
      return npy_fail(err, errlen, "cannot open: no such file");
    if (e == EACCES || e == EPERM)
      return npy_fail(err, errlen, "cannot open: permission denied");
    if (e == EISDIR)
      return npy_fail(err, errlen, "cannot open: is a directory");
    return npy_fail(err, errlen, "cannot open: %s", strerror(e));
  }
  /* On Linux fopen succeeds on a directory; only the first read would fail. */
  struct stat st;
  if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
    fclose(f);
    return npy_fail(err, errlen, "cannot open: is a directory");
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
