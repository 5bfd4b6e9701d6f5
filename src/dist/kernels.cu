// The two small kernels around the all-gather: pack this rank's local results into partials,
// and combine every rank's partials in rank order (combine.h, the code the CPU test runs).
// One thread per row or segment; a full array is one row. Both are latency, not bandwidth: a
// few hundred bytes per row, against the shard the single-GPU reduction has just read.
#include "launch.h"

#include "../device/dtype_traits.cuh"

#include <cuda_runtime.h>

namespace {

constexpr int kThreads = 256;
constexpr uint64_t kMaxBlocks = 4096; // grid-stride beyond this: rows are few compared to elements

// Element idx of a row, exactly: a double for a float accumulator (every offered input fits,
// but int64 beyond 2^53, which rounds as the library's comparison does), else an int64.
template <cureduce_dtype D>
__device__ void set_key_of(cr_dist_partial *p, const void *row, int64_t idx, bool float_acc) {
  const auto w = cr::widen<D>(static_cast<const cr::storage_t<D> *>(row)[idx]);
  if (float_acc)
    cr_dist_set_key_float(p, static_cast<double>(w));
  else
    cr_dist_set_key_int(p, static_cast<int64_t>(w));
}

__device__ void set_key(cr_dist_partial *p, cureduce_dtype in, const void *row, int64_t idx, bool float_acc) {
  switch (in) {
#define CR_DIST_KEY(D)                                                                                       \
  case CUREDUCE_##D: set_key_of<CUREDUCE_##D>(p, row, idx, float_acc); break;
    CR_DIST_KEY(F32)
    CR_DIST_KEY(F64)
    CR_DIST_KEY(F16)
    CR_DIST_KEY(BF16)
    CR_DIST_KEY(F8_E4M3)
    CR_DIST_KEY(F8_E5M2)
    CR_DIST_KEY(I8)
    CR_DIST_KEY(I32)
    CR_DIST_KEY(I64)
#undef CR_DIST_KEY
  default: break;
  }
}

// Row i starts at element i * ld and holds count elements, or, with offsets, segment i runs
// from offsets[i] to offsets[i + 1].
__global__ void pack_partials(cureduce_op op, cureduce_dtype in, cureduce_dtype acc, const char *d_in,
                              size_t in_size, uint64_t rows, uint64_t ld, int64_t count,
                              const int64_t *offsets, const unsigned char *d_local, size_t result_size,
                              cr_dist_partial *mine) {
  const bool arg = cr_dist_is_arg(op);
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < rows;
       i += (uint64_t)gridDim.x * blockDim.x) {
    const int64_t n = offsets ? offsets[i + 1] - offsets[i] : count;
    cr_dist_partial p = {n, 0, 0};
    if (n > 0 && arg) {
      memcpy(&p.index, d_local + i * 8, 8);
      const uint64_t start = offsets ? (uint64_t)offsets[i] : i * ld;
      set_key(&p, in, d_in + start * in_size, p.index, cr_dist_float_acc(acc));
    } else if (n > 0) {
      memcpy(&p.value, d_local + i * result_size, result_size); // low bytes; the rest stay zero
    }
    mine[i] = p;
  }
}

__global__ void combine_partials(cureduce_op op, cureduce_dtype acc, const cr_dist_partial *all, int world,
                                 uint64_t rows, size_t result_size, unsigned char *out) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < rows;
       i += (uint64_t)gridDim.x * blockDim.x)
    cr_dist_combine(op, acc, all + i, world, rows, out + i * result_size);
}

__global__ void store_u64(uint64_t *word, uint64_t value) { *word = value; }

unsigned blocks_for(uint64_t rows) {
  const uint64_t b = (rows + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 1 ? 1 : b > kMaxBlocks ? kMaxBlocks : b);
}

cureduce_status launch_status() {
  return cudaGetLastError() == cudaSuccess ? CUREDUCE_SUCCESS : CUREDUCE_ERROR_CUDA;
}

} // namespace

extern "C" cureduce_status cr_dist_launch_pack(cureduce_op op, cureduce_dtype in_dtype, cureduce_dtype acc,
                                               const void *d_in, uint64_t rows, uint64_t ld, int64_t count,
                                               const int64_t *d_offsets, const void *d_local,
                                               cr_dist_partial *d_mine, void *stream) {
  pack_partials<<<blocks_for(rows), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      op, in_dtype, acc, static_cast<const char *>(d_in), cureduce_dtype_size(in_dtype), rows, ld, count,
      d_offsets, static_cast<const unsigned char *>(d_local), cureduce_result_size(op, acc), d_mine);
  return launch_status();
}

extern "C" cureduce_status cr_dist_launch_combine(cureduce_op op, cureduce_dtype acc,
                                                  const cr_dist_partial *d_all, int world, uint64_t rows,
                                                  void *d_out, void *stream) {
  combine_partials<<<blocks_for(rows), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      op, acc, d_all, world, rows, cureduce_result_size(op, acc), static_cast<unsigned char *>(d_out));
  return launch_status();
}

extern "C" cureduce_status cr_dist_launch_store_u64(uint64_t *d_word, uint64_t value, void *stream) {
  store_u64<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(d_word, value);
  return launch_status();
}
