// CUB's DeviceSegmentedReduce on the shapes of `cureduce-bench --rows`: rows (segments begin at
// r * ld) and offset-given segments on the array itself, columns through a transform iterator
// (segment j is column j); f32 or bf16 input summed in f32. Layer: the benchmark tool.
#include "bench_util.cuh"
#include "cub_segmented.cuh"

#include <cub/device/device_segmented_reduce.cuh>
#include <cuda/std/functional>
#include <cuda_bf16.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

namespace bench {
namespace {

// Element v of column-major order, as f32: element (v % rows, v / rows), so column j is the
// virtual range [j * rows, (j + 1) * rows). CUB has no strided segments; rows and offset-given
// segments read the array itself.
template <class In> struct column_element {
  const In *in;
  int64_t rows, ld;
  __host__ __device__ float operator()(int64_t v) const {
    return static_cast<float>(in[(v % rows) * ld + v / rows]);
  }
};
// Segment s's begin (or end, shifted by one segment) for the matrix shapes.
struct scaled {
  int64_t step, add;
  __host__ __device__ int64_t operator()(int64_t s) const { return s * step + add; }
};

// Sums in f32 (plus<float> from a 0.0f start), whatever the element type, as ours does.
template <class Values, class Begins, class Ends>
std::unique_ptr<cub_run> make(Values values, int64_t count, Begins begins, Ends ends, void *d_out) {
  auto r = std::make_unique<cub_run>();
  float *out = static_cast<float *>(d_out);
  const cuda::std::plus<float> add;
  BENCH_CUDA(cub::DeviceSegmentedReduce::Reduce(nullptr, r->temp_bytes, values, out, count, begins, ends, add,
                                                0.0f));
  BENCH_CUDA(cudaMalloc(&r->temp, r->temp_bytes ? r->temp_bytes : 1));
  void *temp = r->temp;
  size_t bytes = r->temp_bytes;
  r->launch = [=](cudaStream_t s) mutable {
    cub::DeviceSegmentedReduce::Reduce(temp, bytes, values, out, count, begins, ends, add, 0.0f, s);
  };
  return r;
}

template <class In>
std::unique_ptr<cub_run> make(const void *d_in, uint64_t rows, uint64_t cols, int axis,
                              const int64_t *d_offsets, uint64_t segments, void *d_out) {
  const In *in = static_cast<const In *>(d_in);
  if (d_offsets)
    return make(in, (int64_t)segments, d_offsets, d_offsets + 1, d_out);
  // Rows [r * cols, r * cols + cols); columns [j * rows, (j + 1) * rows) of the virtual range.
  const int64_t len = axis == 1 ? (int64_t)cols : (int64_t)rows;
  auto begins = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), scaled{len, 0});
  auto ends = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), scaled{len, len});
  if (axis == 1)
    return make(in, (int64_t)rows, begins, ends, d_out);
  const column_element<In> at{in, (int64_t)rows, (int64_t)cols};
  auto values = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), at);
  return make(values, (int64_t)cols, begins, ends, d_out);
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
