/* A program outside the tree that uses the installed cureduce: the CPU path always, and the
 * GPU path when there is a GPU. Exits 0 only when every result is right. */
#include <cureduce.h>

#include <stdio.h>

int main(void) {
  if (cureduce_version() != CUREDUCE_VERSION) {
    fprintf(stderr, "consumer: header version %d, library %d\n", CUREDUCE_VERSION, cureduce_version());
    return 1;
  }
  const float x[5] = {1.5f, -2.0f, 8.25f, 0.25f, 3.0f};
  float sum = 0.0f, max = 0.0f;
  if (cureduce_cpu_reduce(CUREDUCE_SUM, CUREDUCE_F32, x, 5, CUREDUCE_ACC_DEFAULT, &sum) ||
      cureduce_cpu_reduce(CUREDUCE_MAX, CUREDUCE_F32, x, 5, CUREDUCE_ACC_DEFAULT, &max) || sum != 11.0f ||
      max != 8.25f) {
    fprintf(stderr, "consumer: CPU sum %g max %g, expected 11 and 8.25\n", sum, max);
    return 1;
  }
  cureduce_handle h = NULL;
  const cureduce_status st = cureduce_create(&h);
  if (st == CUREDUCE_ERROR_NO_DEVICE) {
    printf("consumer: CPU results right; no GPU (%s)\n", cureduce_status_string(st));
    return 0;
  }
  if (st != CUREDUCE_SUCCESS) {
    fprintf(stderr, "consumer: cureduce_create: %s\n", cureduce_status_string(st));
    return 1;
  }
  /* The GPU path is exercised by the test suite; here only that the handle works. */
  const cureduce_status d = cureduce_destroy(h);
  printf("consumer: CPU results right; GPU handle %s\n", d ? cureduce_status_string(d) : "ok");
  return d != CUREDUCE_SUCCESS;
}
