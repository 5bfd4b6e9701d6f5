/* `cureduce run` on the GPU: copy the input over, time the reduction with CUDA events, copy
 * the results back. */
#ifndef CUREDUCE_CLI_RUN_GPU_H
#define CUREDUCE_CLI_RUN_GPU_H

#include "run_plan.h"

#include <stddef.h>

/* Calls timed after the one warm-up call (fewer when one call is slow); their median is
   reported. */
#define GPU_TIMED_CALLS 20

typedef struct gpu_job {
  const reduce_plan *plan;
  cureduce_op op;
  cureduce_dtype dtype, acc;
  const void *h_in; /* in_bytes of input, host memory */
  size_t in_bytes;
  void *h_out; /* out_bytes: plan->outputs results, host memory */
  size_t out_bytes;
} gpu_job;

typedef struct gpu_timing {
  int calls;        /* how many calls were timed */
  double median_us; /* of those calls, each between its own pair of events */
  double bytes;     /* the input's bytes, read once per call */
} gpu_timing;

#define GPU_NONE (-1)  /* no usable GPU: gpu_run wrote why */
#define GPU_EMPTY (-2) /* the library said the reduction is empty (CUREDUCE_EMPTY) */

/* Runs job on the current GPU and prints the "device:" line. Returns 0 when done, GPU_NONE
   (nothing printed), GPU_EMPTY (nothing printed but the device line), or 1 after printing
   an error. */
int gpu_run(const gpu_job *job, gpu_timing *t, char *why, size_t len);

#endif
