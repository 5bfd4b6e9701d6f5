/* Reading NumPy .npy files (format versions 1.0, 2.0 and 3.0), C order, little-endian. */
#ifndef CUREDUCE_CLI_NPY_H
#define CUREDUCE_CLI_NPY_H

#include "cureduce.h"

#include <stddef.h>
#include <stdint.h>

typedef struct npy_array {
  cureduce_dtype dtype;
  uint64_t count; /* elements: the product of the shape */
  void *data;     /* count * size bytes, malloc'ed */
} npy_array;

/* Load path. `hint` (or CUREDUCE_ACC_DEFAULT for none) names the dtype for files whose descr
   NumPy cannot name (bf16 and fp8 saved as raw 'V2' / 'V1' / 'u1' bytes). On failure writes a
   sentence to err (errlen bytes) and returns non-zero; nothing is allocated then. */
int npy_load(const char *path, cureduce_dtype hint, npy_array *out, char *err, size_t errlen);

#endif
