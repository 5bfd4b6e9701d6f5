/* Reading NumPy .npy files (format versions 1.0, 2.0 and 3.0): C or Fortran order, little- or
 * big-endian, and the raw byte types ml_dtypes writes for bf16 and fp8. The data comes back in
 * C order and the machine's (little-endian) byte order, with the file's shape. */
#ifndef CUREDUCE_CLI_NPY_H
#define CUREDUCE_CLI_NPY_H

#include "cureduce.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* NumPy's own limit on the number of dimensions. */
#define NPY_MAX_DIMS 64

typedef struct npy_array {
  cureduce_dtype dtype;
  int ndim;                     /* 0 for a scalar (shape ()) */
  uint64_t shape[NPY_MAX_DIMS]; /* shape[0 .. ndim-1] */
  uint64_t count;               /* elements: the product of the shape (1 for a scalar) */
  void *data;                   /* count * size bytes in C order, malloc'ed */
} npy_array;

/* Load the file at path. `hint` (CUREDUCE_ACC_DEFAULT for none) names the dtype of raw byte
   types ('V1', 'u1' as e4m3 or e5m2; 'V2', 'u2' as bf16 or f16; ml_dtypes' 'f1' is e5m2 alone), and must
   agree with the file's dtype when the file names one. Bytes after the data are ignored, as
   NumPy ignores them. On failure writes a sentence without a trailing newline to err (errlen
   bytes), saying why (the file is missing, a directory, unreadable, not a .npy file, cut
   short, ...), and returns non-zero: NPY_ERR_HINT where the hint is missing or disagrees with
   the file (the caller's mistake, not the file's), 1 otherwise; *out is zeroed then and
   nothing is allocated. */
#define NPY_ERR_HINT 2
int npy_load(const char *path, cureduce_dtype hint, npy_array *out, char *err, size_t errlen);

/* As npy_load, from an open stream positioned at the file's first byte; it stays open, and is
   read no further than the data's end. */
int npy_read(FILE *f, cureduce_dtype hint, npy_array *out, char *err, size_t errlen);

/* Free what npy_load or npy_read allocated; safe on a zeroed array. */
void npy_free(npy_array *a);

#endif
