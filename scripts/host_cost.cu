// Host time per call, in µs: cudaPointerGetAttributes, cudaGetLastError, cudaGetDevice, a bare
// kernel launch, cureduce_reduce (f32 sums of 2^10 and 2^16 elements) and the row and column
// calls on bf16 64x128 (the path of bench --rows' 65536x128, at a size the GPU runs faster than
// the host launches), 2000 calls each, three rounds. It says how much of a back-to-back "hot"
// time at small n is the host's (docs/performance.md, docs/rows.md).
// Build and run on a GPU machine:
//   nvcc -O2 -std=c++17 -arch=sm_90 -Iinclude scripts/host_cost.cu build/libcureduce.a -o host_cost
//   (or -Lbuild -lcureduce, with build/ on LD_LIBRARY_PATH)
//   ./host_cost
#include "cureduce.h"
#include <chrono>
#include <cstdio>
#include <cuda_runtime.h>
__global__ void empty_kernel(float *p) { if (p == nullptr) p[0] = 1; }
template <class F> double per_call_us(F f, int reps) {
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) f();
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::micro>(t1 - t0).count() / reps;
}
int main() {
  float *d; double *o; cudaMalloc(&d, 1 << 20); cudaMalloc(&o, 4096); // room for the 128 column results
  cudaMemset(d, 0, 1 << 20);
  cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cureduce_handle h; cureduce_create(&h);
  const int R = 2000;
  for (int round = 0; round < 3; ++round) {
    cudaPointerAttributes a;
    double attr = per_call_us([&] { cudaPointerGetAttributes(&a, d); }, R);
    double err = per_call_us([&] { (void)cudaGetLastError(); }, R);
    int dev = 0;
    double getdev = per_call_us([&] { (void)cudaGetDevice(&dev); }, R);
    double launch = per_call_us([&] { empty_kernel<<<1, 256, 0, s>>>((float *)o); }, R);
    cudaStreamSynchronize(s);
    double red = per_call_us([&] { cureduce_reduce(h, CUREDUCE_SUM, CUREDUCE_F32, d, 1024, CUREDUCE_F32, o, s); }, R);
    cudaStreamSynchronize(s);
    double red16 = per_call_us([&] { cureduce_reduce(h, CUREDUCE_SUM, CUREDUCE_F32, d, 65536, CUREDUCE_F32, o, s); }, R);
    cudaStreamSynchronize(s);
    double rows = per_call_us([&] { cureduce_reduce_rows(h, CUREDUCE_SUM, CUREDUCE_BF16, d, 64, 128, 128, CUREDUCE_F32, o, s); }, R);
    cudaStreamSynchronize(s);
    double cols = per_call_us([&] { cureduce_reduce_cols(h, CUREDUCE_SUM, CUREDUCE_BF16, d, 64, 128, 128, CUREDUCE_F32, o, s); }, R);
    cudaStreamSynchronize(s);
    printf("round %d host us/call: pointer attrs %.3f, getlasterror %.3f, getdevice %.3f, bare launch %.3f, "
           "cureduce_reduce n=2^10 %.3f, n=2^16 %.3f, rows bf16 64x128 %.3f, cols bf16 64x128 %.3f\n",
           round, attr, err, getdev, launch, red, red16, rows, cols);
  }
  return 0;
}
