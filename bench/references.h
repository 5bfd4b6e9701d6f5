// The benchmark's CPU references: every op's answer for each prefix n of one host array, from
// one multi-threaded pass (prefixes grow, so each segment is reduced once and folded into the
// previous prefix). Float sums are exact (superaccumulators, merged exactly). Layer: bench.
#pragma once

#include "cureduce.h"

#include <stdint.h>
#include <vector>

namespace bench {

struct prefix_reference {
  uint64_t n = 0;
  double sum = 0, sumsq = 0;          // exact sums (floats), rounded once to double
  double mean = 0;                    // the exact sum over n, rounded once to double
  double sum_f32 = 0, mean_f32 = 0;   // the same rounded once to f32,
  double sum_own = 0, mean_own = 0;   // and to the input's own float type
  double abs_sum = 0, sq_abs_sum = 0; // sum |x| and sum x*x, for rounding bounds
  int64_t isum = 0, isumsq = 0;       // integer inputs: exact modulo 2^64
  double min = 0, max = 0, absmax = 0;
  int64_t argmin = -1, argmax = -1; // first occurrence; the first NaN wins
  bool has_nan = false;
};

// References for every n in sizes (ascending) over host array h of dtype, with threads.
std::vector<prefix_reference> compute_references(cureduce_dtype dtype, const void *h,
                                                 const std::vector<uint64_t> &sizes, int threads);

} // namespace bench
