/* libFuzzer harness for the .npy reader: each input is a file's bytes, read through fmemopen
 * with no hint and with each hint a raw type can take, so that the raw-type paths are reached
 * too. Besides the sanitizers' reports, it aborts when a result breaks the reader's promises:
 * on success a shape whose product is the count and a data buffer; on failure a message and
 * an untouched-or-zeroed array. Built and run by scripts/fuzz-npy. */
#define _POSIX_C_SOURCE 200809L /* fmemopen */

#include "npy.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check(int ok) {
  if (!ok)
    abort();
}

static void read_once(unsigned char *bytes, size_t size, cureduce_dtype hint) {
  FILE *f = fmemopen(bytes, size, "rb");
  if (!f)
    return;
  npy_array a;
  char err[256];
  memset(err, 'x', sizeof err);
  const int rc = npy_read(f, hint, &a, err, sizeof err);
  fclose(f);
  if (rc) {
    static const npy_array zero;
    check(memcmp(&a, &zero, sizeof a) == 0);
    check(memchr(err, '\0', sizeof err) && err[0] != '\0');
    return;
  }
  check(a.ndim >= 0 && a.ndim <= NPY_MAX_DIMS && a.data);
  uint64_t count = 1;
  for (int k = 0; k < a.ndim; ++k)
    count *= a.shape[k];
  check(count == a.count);
  const size_t nbytes = (size_t)a.count * cureduce_dtype_size(a.dtype);
  check(nbytes <= size); /* the data came from the input */
  /* touch every byte, so that a short buffer shows up under ASan */
  volatile unsigned char sink = 0;
  for (size_t i = 0; i < nbytes; ++i)
    sink ^= ((const unsigned char *)a.data)[i];
  (void)sink;
  npy_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) /* fmemopen may refuse an empty buffer */
    return 0;
  /* a copy, so that fmemopen gets a writable buffer of exactly the input's size */
  unsigned char *bytes = malloc(size);
  if (!bytes)
    return 0;
  memcpy(bytes, data, size);
  static const cureduce_dtype hints[] = {CUREDUCE_ACC_DEFAULT, CUREDUCE_F8_E4M3, CUREDUCE_BF16, CUREDUCE_F32};
  for (size_t i = 0; i < sizeof hints / sizeof hints[0]; ++i)
    read_once(bytes, size, hints[i]);
  free(bytes);
  return 0;
}
