// CUB's DeviceSegmentedReduce::Sum on the shapes of `cureduce-bench --rows`: rows (segments
// begin at r * ld), columns (a strided view: segment j is column j, read through a transform
// iterator) and offset-given segments, f32 or bf16 input summed in f32. Layer: the benchmark tool.
#include "bench_util.cuh"
#include "cub_segmented.cuh"

#include <cub/device/device_segmented_reduce.cuh>
#include <cuda_bf16.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

namespace bench {
namespace {

// Element v of the virtual input, as f32: rows and segments read in place; columns read
// element (v % rows, v / rows), so column j is the virtual range [j * rows, (j + 1) * rows).
template <class In> struct element_at {
  const In *in;
  int64_t rows, ld;
  bool columns;
  __host__ __device__ float operator()(int64_t v) const {
    return static_cast<float>(columns ? in[(v % rows) * ld + v / rows] : in[v]);
  }
};
// Segment s's begin (or end, shifted by one segment) for the matrix shapes.
struct scaled {
  int64_t step, add;
  __host__ __device__ int64_t operator()(int64_t s) const { return s * step + add; }
};

template <class In>
std::unique_ptr<cub_run> make(const void *d_in, uint64_t rows, uint64_t cols, int axis,
                              const int64_t *d_offsets, uint64_t segments, void *d_out) {
  auto r = std::make_unique<cub_run>();
  const element_at<In> at{static_cast<const In *>(d_in), (int64_t)rows, (int64_t)cols, axis == 0};
  auto values = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), at);
  float *out = static_cast<float *>(d_out);
  // Segment bounds: rows [r * cols, r * cols + cols); columns [j * rows, (j + 1) * rows).
  const int64_t len = axis == 1 ? (int64_t)cols : (int64_t)rows;
  auto begins = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), scaled{len, 0});
  auto ends = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), scaled{len, len});
  const int64_t count = d_offsets ? (int64_t)segments : (axis == 1 ? (int64_t)rows : (int64_t)cols);
  if (d_offsets)
    BENCH_CUDA(cub::DeviceSegmentedReduce::Sum(nullptr, r->temp_bytes, values, out, count, d_offsets,
                                               d_offsets + 1));
  else
    BENCH_CUDA(cub::DeviceSegmentedReduce::Sum(nullptr, r->temp_bytes, values, out, count, begins, ends));
  BENCH_CUDA(cudaMalloc(&r->temp, r->temp_bytes ? r->temp_bytes : 1));
  void *temp = r->temp;
  size_t bytes = r->temp_bytes;
  r->launch = [=](cudaStream_t s) mutable {
    if (d_offsets)
      cub::DeviceSegmentedReduce::Sum(temp, bytes, values, out, count, d_offsets, d_offsets + 1, s);
    else
      cub::DeviceSegmentedReduce::Sum(temp, bytes, values, out, count, begins, ends, s);
  };
  return r;
}

} // namespace

std::unique_ptr<cub_run> make_cub_segmented_sum(cureduce_dtype in, const void *d_in, uint64_t rows,
                                                uint64_t cols, int axis, const int64_t *d_offsets,
                                                uint64_t segments, void *d_out) {
  if (in == CUREDUCE_F32)
    return make<float>(d_in, rows, cols, axis, d_offsets, segments, d_out);
  if (in == CUREDUCE_BF16)
    return make<__nv_bfloat16>(d_in, rows, cols, axis, d_offsets, segments, d_out);
  return nullptr;
}

} // namespace bench
