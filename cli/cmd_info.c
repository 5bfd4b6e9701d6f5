/* `cureduce info`: the CUDA GPUs found, or a clear line that there are none. */
#include "args.h"
#include "commands.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>

int cmd_info(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      printf("usage: %s info\n\nList the CUDA GPUs found: name, compute capability, SMs, "
             "memory and L2 size.\n", CLI_NAME);
      return 0;
    }
    fprintf(stderr, "%s info: unknown argument '%s'\n", CLI_NAME, argv[i]);
    return 2;
  }
  printf("cureduce %d.%d.%d\n", CUREDUCE_VERSION_MAJOR, CUREDUCE_VERSION_MINOR,
         CUREDUCE_VERSION_PATCH);
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    printf("no CUDA GPU found (%s): cureduce will run on the CPU\n",
           e != cudaSuccess ? cudaGetErrorString(e) : "zero devices");
    return 0;
  }
  for (int d = 0; d < count; ++d) {
    struct cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, d) != cudaSuccess) {
      fprintf(stderr, "%s info: cannot read the properties of GPU %d\n", CLI_NAME, d);
      return 1;
    }
    printf("GPU %d: %s, compute capability %d.%d, %d SMs, %.1f GiB memory, %.1f MiB L2\n", d,
           p.name, p.major, p.minor, p.multiProcessorCount,
           (double)p.totalGlobalMem / (1024.0 * 1024.0 * 1024.0),
           (double)p.l2CacheSize / (1024.0 * 1024.0));
  }
  return 0;
}
