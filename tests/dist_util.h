/* Simulated ranks for the distributed reductions (src/dist/combine.h): the supported pairs,
 * random shardings, and one rank's partial made from its shard and its local result, which
 * may come from the CPU (cureduce_cpu_reduce) or from one GPU (cureduce_reduce). */
#ifndef CUREDUCE_TEST_DIST_UTIL_H
#define CUREDUCE_TEST_DIST_UTIL_H

#include "../src/common/combos.h"
#include "../src/dist/combine.h"
#include "test_util.h"

#define DU_MAX_RANKS 8

typedef struct du_pair {
  cureduce_dtype in, acc;
} du_pair;

#define DU_PAIR(IN, ACC) {CUREDUCE_##IN, CUREDUCE_##ACC},
static const du_pair DU_PAIRS[] = {CUREDUCE_FOR_EACH_PAIR(DU_PAIR)};
#undef DU_PAIR
#define DU_PAIR_COUNT (sizeof DU_PAIRS / sizeof *DU_PAIRS)

/* cut[0] = 0 <= cut[1] <= ... <= cut[k] = n: rank r holds [cut[r], cut[r + 1]). About one
   cut in four repeats the one before, so empty shards are common. */
static inline void du_split(uint64_t n, int k, uint64_t *rng, uint64_t *cut) {
  cut[0] = 0;
  cut[k] = n;
  for (int r = 1; r < k; ++r)
    cut[r] = tu_next(rng) % (n + 1);
  for (int r = 1; r < k; ++r) /* insertion sort of cut[1 .. k - 1] */
    for (int s = r; s > 1 && cut[s - 1] > cut[s]; --s) {
      const uint64_t t = cut[s];
      cut[s] = cut[s - 1];
      cut[s - 1] = t;
    }
  for (int r = 1; r < k; ++r)
    if (tu_next(rng) % 4 == 0)
      cut[r] = cut[r - 1];
}

/* Integer element i of an integer dtype at p. */
static inline int64_t du_int_at(cureduce_dtype d, const void *p, uint64_t i) {
  switch (d) {
  case CUREDUCE_I8: return ((const int8_t *)p)[i];
  case CUREDUCE_I32: return ((const int32_t *)p)[i];
  default: return ((const int64_t *)p)[i];
  }
}

/* The partial of a rank holding n elements of in at h_shard, whose result of
   cr_dist_local_op(op, acc) with accumulator acc (resolved) is at result (unread when n is 0). */
static inline cr_dist_partial du_partial(cureduce_op op, cureduce_dtype in, cureduce_dtype acc,
                                         const void *h_shard, uint64_t n, const void *result) {
  cr_dist_partial p = {(int64_t)n, 0, 0};
  if (n == 0)
    return p;
  if (!cr_dist_is_arg(op)) {
    memcpy(&p.value, result, cureduce_result_size(cr_dist_local_op(op, acc), acc));
    return p;
  }
  memcpy(&p.index, result, sizeof p.index);
  const uint64_t i = (uint64_t)p.index;
  if (!cr_dist_float_acc(acc)) {
    cr_dist_set_key_int(&p, du_int_at(in, h_shard, i));
  } else if (!tu_is_float(in)) {
    cr_dist_set_key_float(&p, (double)du_int_at(in, h_shard, i));
  } else {
    double x = 0;
    (void)cureduce_to_double(in, (const char *)h_shard + i * cureduce_dtype_size(in), &x);
    cr_dist_set_key_float(&p, x);
  }
  return p;
}

/* The CPU's partials for the sharding cut of h_in over k ranks: the status of any local
   reduction that failed (EMPTY of an empty shard is not a failure), else SUCCESS. */
static inline cureduce_status du_cpu_partials(cureduce_op op, cureduce_dtype in, cureduce_dtype acc,
                                              const void *h_in, const uint64_t *cut, int k,
                                              cr_dist_partial *p) {
  const size_t size = cureduce_dtype_size(in);
  for (int r = 0; r < k; ++r) {
    const uint64_t n = cut[r + 1] - cut[r];
    const char *shard = (const char *)h_in + cut[r] * size;
    unsigned char result[8] = {0};
    if (n > 0) {
      const cureduce_status st = cureduce_cpu_reduce(cr_dist_local_op(op, acc), in, shard, n, acc, result);
      if (st != CUREDUCE_SUCCESS)
        return st;
    }
    p[r] = du_partial(op, in, acc, shard, n, result);
  }
  return CUREDUCE_SUCCESS;
}

#endif
