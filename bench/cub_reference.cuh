// NVIDIA CUB's DeviceReduce on the same data, for comparison in the ladder and the benchmark.
// CUB is linked into the bench only, never into libcureduce. Layer: the benchmark tool.
#pragma once

#include "cureduce.h"

#include <cuda_runtime.h>
#include <functional>
#include <memory>
#include <stdint.h>

namespace bench {

struct cub_run {
  void *temp = nullptr;
  size_t temp_bytes = 0;
  std::function<void(cudaStream_t)> launch; // enqueue the whole CUB reduction
  ~cub_run() { cudaFree(temp); }
};

// CUB's reduction of n in_dtype elements into one acc_dtype value at d_out (an int64 index for
// argmin/argmax), with its temp storage allocated; nullptr when this tool offers no CUB
// equivalent of (op, in, acc): CUB's narrow accumulators (f16 with f16, ...) are not compared.
std::unique_ptr<cub_run> make_cub_run(cureduce_op op, cureduce_dtype in, cureduce_dtype acc, const void *d_in,
                                      uint64_t n, void *d_out);

} // namespace bench
