// How fast can the column kernel's geometry read? GPU time per launch, in µs, at the GPU's pace
// (each batch waits behind a spinning kernel until the host has queued it), of a kernel that
// reads a column shape exactly as reduce_cols.cuh's main phase does (tiles of tx threads
// across the row's 16-byte words, ty = 256 / tx threads down the rows, `slices` row slices
// as gridDim.y, U rows in flight per thread, whole passes then one partial pass) and only
// XORs the words, against the bench's read roofline over the same bytes. Nothing is folded,
// stored or ticketed, so the gap between this and the roofline is what the geometry costs,
// and the gap between this and cols_cost.cu's "nofin" what the fold over ty, the partial
// stores and the ticket cost. The release plan (choose_cols_plan) is marked "plan"; the other
// lines change its slices (x2, x4) or the rows in flight.
// Build and run on a GPU machine:
//   nvcc -O3 -std=c++17 -arch=sm_90 -Iinclude -Isrc scripts/cols_read.cu bench/bench_util.cu \
//     -o cols_read && ./cols_read
#include <cstdio>
#include <cuda_runtime.h>

#include "../bench/bench_util.cuh"
#include "dispatch/launch_axis.cuh"
#include "micro_common.cuh"

namespace {

constexpr int BLOCK = CR_COLS_BLOCK;

// The main phase's loads of reduce_cols, over 16-byte words; the XOR keeps every load live and
// the sink is written only for a value the data never gives.
template <int U>
__global__ void __launch_bounds__(BLOCK)
    read_like_cols(const uint4 *__restrict__ in, uint64_t rows, uint64_t row_words, uint64_t slice_rows,
                   int tx, unsigned *sink) {
  const int TY = BLOCK / tx, x = threadIdx.x % tx, y = threadIdx.x / tx;
  const uint64_t word = (uint64_t)blockIdx.x * tx + x;
  const uint64_t r0 = blockIdx.y * slice_rows, r1 = r0 + slice_rows < rows ? r0 + slice_rows : rows;
  uint4 acc = {0, 0, 0, 0};
  if (word < row_words) {
    uint64_t r = r0 + y;
    for (; r + (uint64_t)(U - 1) * TY < r1; r += (uint64_t)TY * U) {
      uint4 v[U];
#pragma unroll
      for (int u = 0; u < U; ++u)
        v[u] = in[(r + (uint64_t)u * TY) * row_words + word];
#pragma unroll
      for (int u = 0; u < U; ++u)
        acc.x ^= v[u].x, acc.y ^= v[u].y, acc.z ^= v[u].z, acc.w ^= v[u].w;
    }
    for (; r < r1; r += TY) {
      const uint4 v = in[r * row_words + word];
      acc.x ^= v.x, acc.y ^= v.y, acc.z ^= v.z, acc.w ^= v.w;
    }
  }
  if ((acc.x ^ acc.y ^ acc.z ^ acc.w) == 0x9e3779b9u && acc.x == 0x12345678u)
    *sink = acc.y;
}

struct shape {
  const char *dtype;
  uint64_t rows, cols, elem;
};

template <int U>
int run(cudaStream_t s, cudaEvent_t a, cudaEvent_t b, const void *in, unsigned *sink, const shape &sh,
         uint64_t tx, uint64_t slices, float roof, const char *tag) {
  const uint64_t row_words = sh.cols * sh.elem / 16, tiles = cr::div_up(row_words, tx);
  const uint64_t slice_rows = cr::div_up(sh.rows, slices);
  slices = cr::div_up(sh.rows, slice_rows);
  const dim3 grid((unsigned)tiles, (unsigned)slices);
  float us = 0.f;
  CK(paced_median_us(s, a, b, 50, 3000000, [&] {
    read_like_cols<U><<<grid, BLOCK, 0, s>>>(static_cast<const uint4 *>(in), sh.rows, row_words, slice_rows,
                                              (int)tx, sink);
  }, &us));
  printf("%-5s %8llux%-8llu %3llu %3llu %6llu %5llu %2d %6llu %9.3f %9.3f %6.3f %s\n", sh.dtype,
         (unsigned long long)sh.rows, (unsigned long long)sh.cols, (unsigned long long)tx,
         (unsigned long long)(BLOCK / tx), (unsigned long long)tiles, (unsigned long long)slices, U,
         (unsigned long long)(tiles * slices), us, roof, roof / us, tag);
  return 0;
}

template <int VEC, int UREL>
int run_shape(cudaStream_t s, cudaEvent_t a, cudaEvent_t b, void *in, unsigned *sink, const shape &sh) {
  const size_t bytes = sh.rows * sh.cols * sh.elem;
  float roof = 0.f;
  CK(paced_median_us(s, a, b, 50, 3000000, [&] { bench::launch_read_roofline(in, bytes, s); }, &roof));
  const cr::cols_plan P = cr::choose_cols_plan<VEC, UREL, BLOCK>(sh.rows, sh.cols, sizeof(float));
  return run<UREL>(s, a, b, in, sink, sh, P.tx, P.slices, roof, "plan") |
         run<UREL>(s, a, b, in, sink, sh, P.tx, P.slices * 2, roof, "slices x2") |
         run<UREL>(s, a, b, in, sink, sh, P.tx, P.slices * 4, roof, "slices x4") |
         run<4>(s, a, b, in, sink, sh, P.tx, P.slices, roof, "U 4") |
         run<16>(s, a, b, in, sink, sh, P.tx, P.slices, roof, "U 16") |
         run<4>(s, a, b, in, sink, sh, P.tx, P.slices * 4, roof, "U 4, slices x4");
}

} // namespace

int main() {
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  cudaStream_t s;
  cudaEvent_t a, b;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  void *in;
  unsigned *sink;
  CK(cudaMalloc(&in, (size_t)128 << 20));
  CK(cudaMalloc(&sink, sizeof(unsigned)));
  bench::fill_random(CUREDUCE_F32, in, ((size_t)128 << 20) / 4, 12345, -1.0, 1.0, s);
  CK(cudaStreamSynchronize(s));
  printf("%s, %d SMs: reads with the column kernel's geometry, us per launch (median of 7 GPU-paced batches of 50)\n",
         prop.name, prop.multiProcessorCount);
  printf("%-5s %17s %3s %3s %6s %5s %2s %6s %9s %9s %6s\n", "dtype", "shape", "tx", "ty", "tiles", "slice", "U",
         "blocks", "read", "roofline", "roof");
  const shape bf16[] = {{"bf16", 65536, 128, 2}, {"bf16", 4096, 4096, 2}, {"bf16", 1048576, 32, 2},
                        {"bf16", 32768, 1024, 2}};
  const shape f32[] = {{"f32", 65536, 128, 4}, {"f32", 4096, 4096, 4}, {"f32", 1048576, 32, 4}};
  int bad = 0;
  for (const shape &sh : bf16)
    bad |= run_shape<8, CR_COLS_UNROLL(2)>(s, a, b, in, sink, sh);
  for (const shape &sh : f32)
    bad |= run_shape<4, CR_COLS_UNROLL(4)>(s, a, b, in, sink, sh);
  return bad;
}
