/* See cuda_probe.h. cudaGetDeviceCount alone says "CUDA driver version is insufficient" also
 * when no driver is installed at all; cudaDriverGetVersion tells the two apart (0: none). */
#include "cuda_probe.h"

#include <cuda_runtime_api.h>
#include <stdio.h>

static void version_text(int v, char *buf, size_t len) {
  if (v <= 0)
    snprintf(buf, len, "none");
  else
    snprintf(buf, len, "%d.%d", v / 1000, (v % 1000) / 10);
}

void cuda_versions(char *driver, char *runtime, size_t len) {
  int drv = 0, rt = 0;
  if (cudaDriverGetVersion(&drv) != cudaSuccess)
    drv = 0;
  if (cudaRuntimeGetVersion(&rt) != cudaSuccess)
    rt = 0;
  version_text(drv, driver, len);
  version_text(rt, runtime, len);
}

int cuda_probe(char *why, size_t len) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e == cudaSuccess && count > 0)
    return count;
  (void)cudaGetLastError(); /* clear it: the CPU path must not trip over it later */
  char drv[32], rt[32];
  cuda_versions(drv, rt, sizeof drv);
  int have_driver = 0;
  if (cudaDriverGetVersion(&have_driver) != cudaSuccess)
    have_driver = 0;
  if (!have_driver)
    snprintf(why, len, "no NVIDIA driver is installed");
  else if (e == cudaErrorInsufficientDriver)
    snprintf(why, len, "the installed NVIDIA driver (CUDA %s) is older than this build needs (CUDA %s)", drv,
             rt);
  else if (e == cudaSuccess || e == cudaErrorNoDevice)
    snprintf(why, len, "no CUDA GPU found");
  else
    snprintf(why, len, "the CUDA runtime cannot use the GPUs: %s", cudaGetErrorString(e));
  return 0;
}
