/* Decoding input elements on the host into a common working type: double for float dtypes
 * (exact for every one of them), int64 for integer dtypes. */
#ifndef CUREDUCE_CPU_DECODE_H
#define CUREDUCE_CPU_DECODE_H

#include "../common/dtype_facts.h"
#include "cureduce.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Elements are decoded in chunks of this many values so loops stay type-free. */
#define CR_DECODE_CHUNK 4096

/* out[k] = value of element first + k, for k < count (a float dtype), where element i lies
   i * stride elements past in (stride 1: contiguous; a column's: its leading dimension). */
void cr_decode_float(cureduce_dtype d, const void *in, uint64_t first, size_t count, uint64_t stride,
                     double *out);

/* out[k] = value of element first + k, for k < count (an integer dtype), as above. */
void cr_decode_int(cureduce_dtype d, const void *in, uint64_t first, size_t count, uint64_t stride,
                   int64_t *out);

#ifdef __cplusplus
}
#endif

#endif
