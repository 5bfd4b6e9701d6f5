// GPU time per launch, in µs, of the ways a multi-block reduction can finish in one launch,
// at the GPU's pace (each batch of launches waits behind a spinning kernel until the host has
// queued it). Every block reduces 256 floats, one per thread; then:
//   none        thread 0 stores the block's partial and the block exits (no finish at all);
//   ticket      the finish of reduce_full_single_pass: partial store, barrier, acq_rel ticket
//               (MEMBAR.ALL.GPU + ATOM + CCTL.IVALL), barrier; the last block loads the
//               partials through L2 and reduces them;
//   no_fence    the same with a relaxed ticket (no MEMBAR): NOT a correct protocol, only the
//               price of the fence;
//   tagged      each partial is stored in one 64-bit word with the launch's tag, then a relaxed
//               ticket; the last block polls the words until every tag is this launch's.
// It says what the single-pass kernels' fixed end cost is made of (docs/performance.md).
// Build and run on a GPU machine:
//   nvcc -O3 -std=c++17 -arch=sm_90 scripts/tail_cost.cu -o tail_cost && ./tail_cost
#include <cstdio>
#include <cuda/atomic>
#include <cuda_runtime.h>

#include "micro_common.cuh"

enum finish { NONE, TICKET, NO_FENCE, TAGGED };
const char *names[] = {"none", "ticket", "no_fence", "tagged"};

template <finish F>
__global__ void __launch_bounds__(256) tail(const float4 *in, float *partials,
                                             unsigned long long *tagged, unsigned *ticket,
                                             unsigned tag, float *out) {
  const float4 x = in[blockIdx.x * 256 + threadIdx.x];
  float v = block_sum(x.x + x.y + x.z + x.w);
  const unsigned G = gridDim.x;
  __shared__ bool last;
  cuda::atomic_ref<unsigned, cuda::thread_scope_device> count(*ticket);
  if constexpr (F == NONE) {
    if (threadIdx.x == 0) partials[blockIdx.x] = v;
    return;
  } else if constexpr (F == TICKET || F == NO_FENCE) {
    if (threadIdx.x == 0) partials[blockIdx.x] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
      last = count.fetch_add(1u, F == TICKET ? cuda::memory_order_acq_rel : cuda::memory_order_relaxed) == G - 1;
      if (last) count.store(0u, cuda::memory_order_relaxed);
    }
    __syncthreads();
    if (!last) return;
    float s = 0.f;
    for (unsigned b = threadIdx.x; b < G; b += 256) s += __ldcg(&partials[b]);
    s = block_sum(s);
    if (threadIdx.x == 0) *out = s;
  } else {
    if (threadIdx.x == 0) {
      cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> slot(tagged[blockIdx.x]);
      slot.store((unsigned long long)tag << 32 | __float_as_uint(v), cuda::memory_order_relaxed);
      last = count.fetch_add(1u, cuda::memory_order_relaxed) == G - 1;
      if (last) count.store(0u, cuda::memory_order_relaxed);
    }
    __syncthreads();
    if (!last) return;
    float s = 0.f;
    for (unsigned b = threadIdx.x; b < G; b += 256) {
      cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> slot(tagged[b]);
      unsigned long long w;
      do w = slot.load(cuda::memory_order_relaxed); while ((unsigned)(w >> 32) != tag);
      s += __uint_as_float((unsigned)w);
    }
    s = block_sum(s);
    if (threadIdx.x == 0) *out = s;
  }
}

int main() {
  const unsigned maxG = 1024;
  float4 *in; float *partials, *out; unsigned long long *tagged; unsigned *ticket;
  CK(cudaMalloc(&in, maxG * 256 * sizeof(float4)));
  CK(cudaMemset(in, 0, maxG * 256 * sizeof(float4)));
  CK(cudaMalloc(&partials, maxG * 4));
  CK(cudaMalloc(&tagged, maxG * 8));
  CK(cudaMemset(tagged, 0, maxG * 8));
  CK(cudaMalloc(&ticket, 4));
  CK(cudaMemset(ticket, 0, 4));
  CK(cudaMalloc(&out, 4));
  cudaStream_t s; cudaEvent_t a, b; CK(make_paced_clock(&s, &a, &b));
  unsigned tag = 0;
  const int L = 200;
  auto launch = [&](int f, unsigned G) {
    ++tag;
    switch (f) {
    case NONE: tail<NONE><<<G, 256, 0, s>>>(in, partials, tagged, ticket, tag, out); break;
    case TICKET: tail<TICKET><<<G, 256, 0, s>>>(in, partials, tagged, ticket, tag, out); break;
    case NO_FENCE: tail<NO_FENCE><<<G, 256, 0, s>>>(in, partials, tagged, ticket, tag, out); break;
    default: tail<TAGGED><<<G, 256, 0, s>>>(in, partials, tagged, ticket, tag, out); break;
    }
  };
  printf("us per launch (median of 7 batches of %d, GPU-paced)\n%-9s", L, "blocks");
  for (const char *n : names) printf(" %9s", n);
  printf("\n");
  for (unsigned G : {1u, 4u, 32u, 132u, 528u, 1024u}) {
    printf("%-9u", G);
    for (int f = 0; f < 4; ++f) {
      float us = 0.f; // 3 ms of spin: longer than queueing the batch
      CK(paced_median_us(s, a, b, L, 3000000, [&] { launch(f, G); }, &us));
      printf(" %9.3f", us);
    }
    printf("\n");
  }
  return 0;
}
