/* The dispatch layer's C interface: choose and launch a kernel for (op, dtype, accumulator,
 * size). Called by the C API after it has validated every argument. Layer: dispatch. */
#ifndef CUREDUCE_DISPATCH_H
#define CUREDUCE_DISPATCH_H

#include "cureduce.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Device workspace a handle must own for the full-array kernels, in bytes. */
size_t cr_full_workspace_bytes(void);

/* Launch the full-array reduction. Arguments are already validated (supported combination,
   device pointers, acc not DEFAULT). The workspace's counter must be zero on entry and is
   zero again when the kernel ends. Returns SUCCESS or CUDA (launch failure). */
cureduce_status cr_launch_full(cureduce_op op, cureduce_dtype in, cureduce_dtype acc,
                               const void *d_in, uint64_t n, void *d_out, void *d_workspace,
                               void *stream);

#ifdef __cplusplus
}
#endif

#endif
