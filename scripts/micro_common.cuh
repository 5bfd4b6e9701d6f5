// What the standalone GPU measurements in scripts/ (tail_cost, balance_cost, cols_cost,
// cols_read, rows_waves) share: a CUDA check that ends main, the float sum over a block of 256
// threads, the stream and events they time with, and the kernel that holds the stream while
// the host queues a batch, so the batch then runs at the GPU's pace.
#pragma once

#include <cstdio>
#include <cuda_runtime.h>

#define CK(x)                                                                                    \
  do {                                                                                           \
    cudaError_t e_ = (x);                                                                        \
    if (e_ != cudaSuccess) {                                                                     \
      printf("CUDA error %s at line %d\n", cudaGetErrorString(e_), __LINE__);                    \
      return 1;                                                                                  \
    }                                                                                            \
  } while (0)

// Sum over the 256 threads of a block (8 warps); thread 0 gets it.
__device__ float block_sum(float v) {
  __shared__ float w[8];
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(~0u, v, o);
  if (threadIdx.x % 32 == 0) w[threadIdx.x / 32] = v;
  __syncthreads();
  v = threadIdx.x < 8 ? w[threadIdx.x] : 0.f;
  if (threadIdx.x < 32)
    for (int o = 4; o > 0; o /= 2) v += __shfl_down_sync(~0u, v, o);
  __syncthreads();
  return v;
}

// The non-blocking stream and the two events that paced_median_us times with.
inline cudaError_t make_paced_clock(cudaStream_t *s, cudaEvent_t *a, cudaEvent_t *b) {
  cudaError_t e = cudaStreamCreateWithFlags(s, cudaStreamNonBlocking);
  if (e == cudaSuccess) e = cudaEventCreate(a);
  if (e == cudaSuccess) e = cudaEventCreate(b);
  return e;
}

__global__ void spin(long long ns) {
  long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); while (t - t0 < ns);
}

// GPU time per launch, in µs: the median of 7 batches of L launches, each batch queued behind
// spin(spin_ns) (which must outlast the queueing) and timed with events a and b.
template <class F>
cudaError_t paced_median_us(cudaStream_t s, cudaEvent_t a, cudaEvent_t b, int L, long long spin_ns,
                            F launch, float *us) {
  float t[7];
  for (int r = 0; r < 7; ++r) {
    spin<<<1, 1, 0, s>>>(spin_ns);
    cudaEventRecord(a, s);
    for (int i = 0; i < L; ++i) launch();
    cudaEventRecord(b, s);
    cudaError_t e = cudaEventSynchronize(b);
    if (e == cudaSuccess) e = cudaGetLastError();
    float ms = 0.f;
    if (e == cudaSuccess) e = cudaEventElapsedTime(&ms, a, b);
    if (e != cudaSuccess) return e;
    t[r] = ms * 1000.f / L;
  }
  for (int i = 1; i < 7; ++i) // insertion sort of 7 values
    for (int j = i; j > 0 && t[j] < t[j - 1]; --j) { const float x = t[j]; t[j] = t[j - 1]; t[j - 1] = x; }
  *us = t[3];
  return cudaSuccess;
}
