/* What a distributed reduction must give for a sharding, computed on one GPU with the
 * single-GPU library: the whole array's result for the ops whose result does not depend on
 * the sharding, else the rank-order combine (src/dist/combine.h) of each shard's GPU result.
 * Shared by the multi-GPU tests (test_nccl_*, test_dist_gpu_ranks). */
#ifndef CUREDUCE_TEST_DIST_GPU_UTIL_H
#define CUREDUCE_TEST_DIST_GPU_UTIL_H

#include "dist_util.h"

#include <cuda_runtime_api.h>

/* Whether op over any sharding gives the bits of op over the whole array: MIN, MAX, ABSMAX,
   the arg ops, the exact sums, and integer sums (which wrap alike); not float SUM, SUMSQ, MEAN. */
static inline int dg_split_invariant(cureduce_op op, cureduce_dtype acc) {
  const int float_sum = op == CUREDUCE_SUM || op == CUREDUCE_SUMSQ || op == CUREDUCE_MEAN;
  return !float_sum || !cr_dist_float_acc(acc);
}

/* The expected result of op (accumulator acc, resolved) over n elements at device pointer d_in
   (h_in: the same on the host) split at cut over k ranks, written to host memory out; the
   status of the whole-array reduction (EMPTY when n is 0 for the ops that say so). */
static inline cureduce_status dg_expected(cureduce_handle h, cureduce_op op, cureduce_dtype in,
                                          cureduce_dtype acc, const void *h_in, const void *d_in, uint64_t n,
                                          const uint64_t *cut, int k, void *out) {
  if (n == 0 || dg_split_invariant(op, acc) || k == 1)
    return cureduce_reduce_to_host(h, op, in, d_in, n, acc, out, NULL);
  const size_t size = cureduce_dtype_size(in);
  cr_dist_partial p[DU_MAX_RANKS];
  for (int r = 0; r < k; ++r) {
    const uint64_t m = cut[r + 1] - cut[r];
    unsigned char local[8] = {0};
    if (m > 0) {
      const cureduce_status st = cureduce_reduce_to_host(
          h, cr_dist_local_op(op, acc), in, (const char *)d_in + cut[r] * size, m, acc, local, NULL);
      if (st != CUREDUCE_SUCCESS)
        return st;
    }
    p[r] = du_partial(op, in, acc, (const char *)h_in + cut[r] * size, m, local);
  }
  cr_dist_combine(op, acc, p, k, 1, out);
  return CUREDUCE_SUCCESS;
}

/* Whether two results of op with accumulator acc are the same (NaN equal to NaN). */
static inline int dg_same_result(cureduce_op op, cureduce_dtype acc, const void *a, const void *b) {
  if (cr_dist_is_arg(op))
    return memcmp(a, b, 8) == 0;
  return tu_same_value(acc, a, b);
}

/* Every (op, input, accumulator) a distributed reduction offers: each pair with each op it
   supports, and the exact sums of each float input into f64, f32 and the input's own dtype. */
typedef struct dg_combo {
  cureduce_op op;
  cureduce_dtype in, acc;
} dg_combo;

static inline int dg_combos(dg_combo *out, int max) {
  int count = 0;
  for (int op = 0; op < CUREDUCE_OP_COUNT; ++op) {
    if (op == CUREDUCE_SUM_EXACT || op == CUREDUCE_MEAN_EXACT) {
      static const cureduce_dtype floats[] = {CUREDUCE_F32,  CUREDUCE_F64,     CUREDUCE_F16,
                                              CUREDUCE_BF16, CUREDUCE_F8_E4M3, CUREDUCE_F8_E5M2};
      for (int f = 0; f < 6; ++f) {
        const cureduce_dtype outs[3] = {CUREDUCE_F64, CUREDUCE_F32, floats[f]};
        for (int o = 0; o < (floats[f] == CUREDUCE_F64 || floats[f] == CUREDUCE_F32 ? 2 : 3) && count < max;
             ++o)
          out[count++] = (dg_combo){(cureduce_op)op, floats[f], outs[o]};
      }
      continue;
    }
    for (size_t p = 0; p < DU_PAIR_COUNT && count < max; ++p)
      if (cureduce_supported((cureduce_op)op, DU_PAIRS[p].in, DU_PAIRS[p].acc) == CUREDUCE_SUCCESS)
        out[count++] = (dg_combo){(cureduce_op)op, DU_PAIRS[p].in, DU_PAIRS[p].acc};
  }
  return count;
}

#endif
