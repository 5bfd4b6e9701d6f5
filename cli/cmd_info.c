/* `cureduce info`: the CUDA GPUs found, or a plain sentence saying why there are none. */
#include "args.h"
#include "commands.h"
#include "cuda_probe.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>

static void info_usage(void) {
  printf("usage: %s info\n\n"
         "Print the library version, the CUDA runtime it was built with, the installed NVIDIA\n"
         "driver's CUDA version, and the CUDA GPUs found: name, compute capability, SMs, memory\n"
         "and L2 size. Without a usable GPU it says why (no driver, a driver too old for this\n"
         "build, no GPU); `%s run` then runs on the CPU.\n",
         CLI_NAME, CLI_NAME);
}

static int print_gpu(int d) {
  struct cudaDeviceProp p;
  if (cudaGetDeviceProperties(&p, d) != cudaSuccess) {
    fprintf(stderr, "%s info: cannot read the properties of GPU %d\n", CLI_NAME, d);
    return 1;
  }
  printf("GPU %d: %s, compute capability %d.%d, %d SMs, %.1f GiB memory, %.1f MiB L2\n", d, p.name, p.major,
         p.minor, p.multiProcessorCount, (double)p.totalGlobalMem / (1024.0 * 1024.0 * 1024.0),
         (double)p.l2CacheSize / (1024.0 * 1024.0));
  return 0;
}

int cmd_info(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      info_usage();
      return 0;
    }
    fprintf(stderr, "%s info: unknown argument '%s' (info takes no options; see --help)\n", CLI_NAME,
            argv[i]);
    return 2;
  }
  char driver[32], runtime[32], why[256];
  cuda_versions(driver, runtime, sizeof driver);
  printf("cureduce %d.%d.%d, built with CUDA %s; NVIDIA driver: %s%s\n", CUREDUCE_VERSION_MAJOR,
         CUREDUCE_VERSION_MINOR, CUREDUCE_VERSION_PATCH, runtime, strcmp(driver, "none") ? "CUDA " : "",
         strcmp(driver, "none") ? driver : "none installed");
  const int count = cuda_probe(why, sizeof why);
  if (count == 0) {
    printf("%s: cureduce runs on the CPU\n", why);
    return 0;
  }
  for (int d = 0; d < count; ++d)
    if (print_gpu(d))
      return 1;
  return 0;
}
