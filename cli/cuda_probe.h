/* What the CUDA runtime can see, in plain words for `info` and the CPU fallback of `run`. */
#ifndef CUREDUCE_CLI_CUDA_PROBE_H
#define CUREDUCE_CLI_CUDA_PROBE_H

#include <stddef.h>

/* The number of CUDA GPUs this build can use. When there are none, writes why to why[len]:
   "no NVIDIA driver is installed", "the installed NVIDIA driver (CUDA x.y) is older than this
   build needs (CUDA a.b)", "no CUDA GPU found", or the CUDA error. */
int cuda_probe(char *why, size_t len);

/* The CUDA versions as "x.y": the installed driver's ("none" without a driver) and the
   runtime this build was linked with. */
void cuda_versions(char *driver, char *runtime, size_t len);

#endif
