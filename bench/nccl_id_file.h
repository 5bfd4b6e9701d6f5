/* The NCCL id that the ranks of one host meet through, passed in a file: rank 0 writes it,
 * the others wait for it. For cureduce-bench-nccl and tests/test_nccl_ranks.c, whose ranks are
 * processes that share no memory. Header-only, C and C++. */
#ifndef CUREDUCE_BENCH_NCCL_ID_FILE_H
#define CUREDUCE_BENCH_NCCL_ID_FILE_H

#include <nccl.h>

#include <stdio.h>
#include <unistd.h>

/* Rank 0 writes the id to a temporary name and renames it, so the others never read half.
   0, or -1 when it could not. */
static inline int nccl_id_publish(const char *path, const ncclUniqueId *id) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "wb");
  if (!f || fwrite(id, sizeof *id, 1, f) != 1 || fclose(f) != 0)
    return -1;
  return rename(tmp, path);
}

/* Waits up to two minutes for the id at path. 0, or -1 when none came. */
static inline int nccl_id_wait(const char *path, ncclUniqueId *id) {
  for (int tries = 0; tries < 12000; ++tries) {
    FILE *f = fopen(path, "rb");
    if (f) {
      const size_t got = fread(id, sizeof *id, 1, f);
      fclose(f);
      if (got == 1)
        return 0;
    }
    usleep(10000);
  }
  return -1;
}

#endif
