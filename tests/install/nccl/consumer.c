/* A program outside the tree that links the installed multi-GPU library and calls it where no
 * GPU or communicator is needed: the calls must answer with their documented statuses. */
#include <cureduce_nccl.h>

#include <stdio.h>

int main(void) {
  cureduce_dist d = NULL;
  const cureduce_status created = cureduce_dist_create(&d, NULL, NULL);
  const cureduce_status destroyed = cureduce_dist_destroy(NULL);
  if (created != CUREDUCE_ERROR_INVALID_HANDLE || d != NULL || destroyed != CUREDUCE_SUCCESS) {
    fprintf(stderr, "nccl consumer: create gave %s, destroy %s\n", cureduce_status_string(created),
            cureduce_status_string(destroyed));
    return 1;
  }
  printf("nccl consumer: the multi-GPU API links and answers\n");
  return 0;
}
