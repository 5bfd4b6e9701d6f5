/* Internal to the .npy reader (not part of npy.h): the parsed .npy preamble and header dict,
 * and the two helpers that npy.c and npy_header.c share. */
#ifndef CUREDUCE_CLI_NPY_HEADER_H
#define CUREDUCE_CLI_NPY_HEADER_H

#include "npy.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#if defined(__GNUC__)
#define NPY_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define NPY_PRINTF(fmt, args)
#endif

/* What the header says about the data that follows it. */
typedef struct npy_header {
  cureduce_dtype dtype; /* from 'descr', with the hint for raw byte types */
  int swap;             /* the data's bytes need reversing to the machine's order */
  int fortran;          /* 'fortran_order' */
  int ndim;
  uint64_t shape[NPY_MAX_DIMS];
} npy_header;

/* Reads the preamble and the header dict from f, which is left at the data's first byte, and
   resolves the dtype with `hint` (as npy_read). Returns 0, or with err set NPY_ERR_HINT (the
   hint is missing or disagrees with the file) or 1. */
int npy_header_read(FILE *f, cureduce_dtype hint, npy_header *h, char *err, size_t errlen);

/* Writes the message to err and returns 1, so that `return npy_fail(...)` reports a failure. */
int npy_fail(char *err, size_t errlen, const char *fmt, ...) NPY_PRINTF(3, 4);

/* Reads up to `need` bytes into *buf (malloc'ed, at least 1 byte), *got of them; fewer only at
   the end of the stream. `avail`, the bytes known to remain (SIZE_MAX when unknown), lets a
   regular file's data be read in one allocation. Returns 0, or 1 with err set. */
int npy_read_bytes(FILE *f, size_t need, size_t avail, unsigned char **buf, size_t *got, char *err,
                   size_t errlen);

#endif
