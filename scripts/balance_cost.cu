// Is the full-array kernel's fixed cost at 2^26 elements the static partition? GPU time per
// launch, in µs, of a bf16 -> f32 sum over the same data, at the GPU's pace (each batch waits
// behind a spinning kernel until the host has queued it), for:
//   roofline    the bench's read roofline kernel (bench::launch_read_roofline): 16-byte loads
//               over a grid of at most 8 blocks per SM, no arithmetic, nothing written;
//   static      the partition of reduce_full_single_pass: tiles of 256 x 4 vectors, block b
//               takes tiles b, b + G, ...; then its finish (partial store, acq_rel ticket, the
//               last block folds the G partials); G = 1024, and 8 blocks per SM;
//   static_nofin the same without the finish (each block stores its partial and exits);
//   poll W      the static partition with a finish that has no fence and no ticket: each
//               block stores its partial as W 64-bit words {1, 32 bits of the partial}
//               (relaxed, each word single-copy atomic); block 0, after its own tiles, polls
//               every block's words until all carry the 1, folds the partials in index order,
//               and clears the words for the next launch. W = 1 for a 4-byte partial, 2 for 8;
//   pair, pair_nofin  static (and static_nofin) with the f32 sums compensated as in the library
//               (compensated_sum.cuh): each vector's plain sum joins a (hi, lo) pair by TwoSum,
//               pairs meet in the block tree and the last block's fold (8-byte partials);
//   f64acc, f64acc_nofin  each vector's plain f32 sum converted to double and added to an f64
//               accumulator (one F2F and one DADD a vector instead of a TwoSum), f64 in the
//               block tree and the last block's fold (8-byte partials);
//   library     the library's own kernel (reduce_full_single_pass, bf16 -> f32 SUM: an f64
//               sum, widened_op; the pair in logs before it) on the same data, timed the same way;
//   lib_f16, lib_f32  the library's f16 -> f32 and f32 -> f32 SUM kernels on the same bytes
//               read as f16 and f32 (finite values; a sum's time does not depend on them);
//   dyn CH      chunks of CH tiles handed out by a device counter to a grid of 8 blocks per
//               SM, one partial per chunk, a ticket per chunk; the last chunk to finish folds
//               the partials in chunk order. The partition into chunks and the order of the
//               fold depend only on n, so the bits do not depend on which block took which
//               chunk, or on the GPU.
// Build and run on a GPU machine:
//   nvcc -O3 -std=c++17 -arch=sm_90 -Iinclude -Isrc scripts/balance_cost.cu bench/bench_util.cu -o balance_cost && ./balance_cost
#include <cstring>
#include <cstdio>
#include <cuda/atomic>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <vector>

#include "../bench/bench_util.cuh"
#include "micro_common.cuh"
#include "kernels/reduce_full_single_pass.cuh"

constexpr int BLOCK = 256, UNROLL = 4, TILE = BLOCK * UNROLL; // vectors per tile
static_assert(BLOCK == 256, "block_sum (micro_common.cuh) sums 8 warps");

// Sum of the 8 bf16 of a 16-byte word into 4 chains (so the adds are not one long chain).
__device__ __forceinline__ void fold(float (&acc)[UNROLL], int u, const uint4 &x) {
  const unsigned w[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    acc[u] += __uint_as_float(w[k] << 16);
    acc[u] += __uint_as_float(w[k] & 0xffff0000u);
  }
}

__device__ __forceinline__ float fold_tile(const uint4 *__restrict__ in, size_t tile) {
  float acc[UNROLL] = {0.f, 0.f, 0.f, 0.f};
  uint4 x[UNROLL];
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) x[u] = in[tile * TILE + u * BLOCK + threadIdx.x];
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) fold(acc, u, x[u]);
  return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

__device__ bool last_arrival(unsigned *ticket, unsigned arrivals) {
  __shared__ bool last;
  __syncthreads();
  if (threadIdx.x == 0) {
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> c(*ticket);
    last = c.fetch_add(1u, cuda::memory_order_acq_rel) == arrivals - 1;
    if (last) c.store(0u, cuda::memory_order_relaxed);
  }
  __syncthreads();
  return last;
}

__device__ void fold_partials(const float *partials, unsigned count, float *out) {
  float s = 0.f;
  for (unsigned b = threadIdx.x; b < count; b += BLOCK) s += __ldcg(&partials[b]);
  s = block_sum(s);
  if (threadIdx.x == 0) *out = s;
}

template <bool FINISH>
__global__ void __launch_bounds__(BLOCK, 8) static_sum(const uint4 *in, size_t tiles, float *partials,
                                                       unsigned *ticket, float *out) {
  float s = 0.f;
  for (size_t t = blockIdx.x; t < tiles; t += gridDim.x) s += fold_tile(in, t);
  s = block_sum(s);
  if (threadIdx.x == 0) partials[blockIdx.x] = s;
  if (!FINISH) return;
  if (!last_arrival(ticket, gridDim.x)) return;
  fold_partials(partials, gridDim.x, out);
}

// The plain f32 sum of a vector's 8 bf16, in element order (the library's per-vector sum of
// narrow inputs).
__device__ __forceinline__ float vector_sum_bf16(const uint4 &x) {
  const unsigned w[4] = {x.x, x.y, x.z, x.w};
  float v = __uint_as_float(w[0] << 16);
  v = __fadd_rn(v, __uint_as_float(w[0] & 0xffff0000u));
#pragma unroll
  for (int k = 1; k < 4; ++k) {
    v = __fadd_rn(v, __uint_as_float(w[k] << 16));
    v = __fadd_rn(v, __uint_as_float(w[k] & 0xffff0000u));
  }
  return v;
}

// Two accumulators of the vector sums: the library's compensated pair (compensated_sum.cuh)
// and a double.
struct pair { float hi, lo; };
struct pair_acc {
  using T = pair;
  __device__ static T identity() { return {-0.f, 0.f}; }
  __device__ static T add(T a, float y) { // TwoSum
    const float t = __fadd_rn(a.hi, y), yb = __fsub_rn(t, a.hi);
    const float e = __fadd_rn(__fsub_rn(a.hi, __fsub_rn(t, yb)), __fsub_rn(y, yb));
    return {t, __fadd_rn(a.lo, e)};
  }
  __device__ static T combine(T a, T b) {
    T r = add(a, b.hi);
    r.lo = __fadd_rn(r.lo, b.lo);
    return r;
  }
  __device__ static T shfl_down(T v, int o) {
    return {__shfl_down_sync(~0u, v.hi, o), __shfl_down_sync(~0u, v.lo, o)};
  }
  __device__ static float value(T v) { return __fadd_rn(v.hi, v.lo); }
};
struct f64_acc {
  using T = double;
  __device__ static T identity() { return 0.0; }
  __device__ static T add(T a, float y) { return a + (double)y; }
  __device__ static T combine(T a, T b) { return a + b; }
  __device__ static T shfl_down(T v, int o) { return __shfl_down_sync(~0u, v, o); }
  __device__ static float value(T v) { return (float)v; }
};

template <class A> __device__ typename A::T block_tree(typename A::T v) {
  __shared__ typename A::T w[BLOCK / 32];
  for (int o = 16; o > 0; o /= 2) v = A::combine(v, A::shfl_down(v, o));
  if (threadIdx.x % 32 == 0) w[threadIdx.x / 32] = v;
  __syncthreads();
  v = threadIdx.x < BLOCK / 32 ? w[threadIdx.x] : A::identity();
  if (threadIdx.x < 32)
    for (int o = BLOCK / 64; o > 0; o /= 2) v = A::combine(v, A::shfl_down(v, o));
  __syncthreads();
  return v;
}

// The static partition with each vector's plain sum added to an accumulator A (one per slot),
// A in the block tree and in the last block's fold.
template <class A, bool FINISH>
__global__ void __launch_bounds__(BLOCK, 8) acc_sum(const uint4 *in, size_t tiles, typename A::T *partials,
                                                    unsigned *ticket, float *out) {
  using T = typename A::T;
  T acc[UNROLL];
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) acc[u] = A::identity();
  for (size_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    uint4 x[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) x[u] = in[t * TILE + u * BLOCK + threadIdx.x];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) acc[u] = A::add(acc[u], vector_sum_bf16(x[u]));
  }
  T p = block_tree<A>(A::combine(A::combine(acc[0], acc[1]), A::combine(acc[2], acc[3])));
  if (threadIdx.x == 0) partials[blockIdx.x] = p;
  if (!FINISH) return;
  if (!last_arrival(ticket, gridDim.x)) return;
  T v = A::identity();
  for (unsigned b = threadIdx.x; b < gridDim.x; b += BLOCK) {
    const long long q = __ldcg(reinterpret_cast<const long long *>(&partials[b])); // 8 bytes
    T r;
    memcpy(&r, &q, sizeof r);
    v = A::combine(v, r);
  }
  v = block_tree<A>(v);
  if (threadIdx.x == 0) *out = A::value(v);
}

template <int W>
__global__ void __launch_bounds__(BLOCK, 8) poll_sum(const uint4 *in, size_t tiles,
                                                     unsigned long long *words, float *out) {
  float s = 0.f;
  for (size_t t = blockIdx.x; t < tiles; t += gridDim.x) s += fold_tile(in, t);
  s = block_sum(s);
  if (threadIdx.x == 0)
    for (int k = 0; k < W; ++k) { // W words; the partial's bits in the first, copies after
      cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> w(words[blockIdx.x * W + k]);
      w.store(1ull << 32 | __float_as_uint(s), cuda::memory_order_relaxed);
    }
  if (blockIdx.x != 0) return;
  float v = 0.f;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += BLOCK) {
    unsigned bits = 0;
    for (int k = 0; k < W; ++k) {
      cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> w(words[b * W + k]);
      unsigned long long x;
      do x = w.load(cuda::memory_order_relaxed); while ((x >> 32) != 1);
      bits = (unsigned)x;
      w.store(0ull, cuda::memory_order_relaxed);
    }
    v += __uint_as_float(bits);
  }
  v = block_sum(v);
  if (threadIdx.x == 0) *out = v;
}

// counter: chunks handed out so far, plus one failing fetch per block; the block whose fetch
// is the launch's last resets it for the next launch.
__global__ void __launch_bounds__(BLOCK, 8) dyn_sum(const uint4 *in, size_t tiles, unsigned ch,
                                                    unsigned chunks, float *partials,
                                                    unsigned *counter, unsigned *ticket, float *out) {
  __shared__ unsigned next[2];
  auto fetch = [&]() {
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> c(*counter);
    const unsigned v = c.fetch_add(1u, cuda::memory_order_relaxed);
    if (v == chunks + gridDim.x - 1) c.store(0u, cuda::memory_order_relaxed);
    return v;
  };
  if (threadIdx.x == 0) next[0] = fetch();
  __syncthreads();
  bool any_last = false;
  for (int k = 0;; k ^= 1) {
    const unsigned c = next[k];
    if (c >= chunks) break;
    if (threadIdx.x == 0) next[k ^ 1] = fetch(); // the next chunk's number while this one loads
    float s = 0.f;
    const size_t t_end = (size_t)(c + 1) * ch < tiles ? (size_t)(c + 1) * ch : tiles;
    for (size_t t = (size_t)c * ch; t < t_end; ++t) s += fold_tile(in, t);
    s = block_sum(s); // its barriers also publish next[k ^ 1]
    if (threadIdx.x == 0) partials[c] = s;
    if (last_arrival(ticket, chunks)) any_last = true;
  }
  if (any_last) fold_partials(partials, chunks, out);
}

__global__ void fill(unsigned *w, size_t words) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < words; i += (size_t)gridDim.x * blockDim.x) {
    unsigned z = (unsigned)(i * 2654435761u) ^ 0x5bd1e995u;
    z ^= z >> 15;
    // two bf16 in [-1, 1): sign, exponent 118..126, random mantissa
    const unsigned lo = ((z & 1) << 15) | ((118 + (z >> 1) % 9) << 7) | ((z >> 5) & 0x7f);
    const unsigned hi = (((z >> 12) & 1) << 15) | ((118 + (z >> 13) % 9) << 7) | ((z >> 17) & 0x7f);
    w[i] = hi << 16 | lo;
  }
}

int main() {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const size_t max_bytes = (size_t)512 << 20;
  uint4 *in; float *partials, *out; unsigned *ticket, *counter;
  CK(cudaMalloc(&in, max_bytes));
  fill<<<4096, 256>>>((unsigned *)in, max_bytes / 4);
  CK(cudaMalloc(&partials, 1 << 20));
  CK(cudaMalloc(&ticket, 4)); CK(cudaMemset(ticket, 0, 4));
  CK(cudaMalloc(&counter, 4)); CK(cudaMemset(counter, 0, 4));
  unsigned long long *words;
  CK(cudaMalloc(&words, 1024 * 4 * 8));
  CK(cudaMemset(words, 0, 1024 * 4 * 8));
  CK(cudaMalloc(&out, 4));
  cudaStream_t s; cudaEvent_t a, b; CK(make_paced_clock(&s, &a, &b));
  const unsigned wave = (unsigned)sms * 8;
  const char *names[] = {"roofline", "static", "static_nofin", "poll1", "poll2", "pair", "pair_nofin",
                         "f64acc", "f64acc_nofin", "dyn2", "dyn4", "dyn8", "library", "lib_f16", "lib_f32"};
  const int variants = (int)(sizeof names / sizeof *names);
  printf("bf16 -> f32 sum, us per launch (median of 7 batches, GPU-paced); %d SMs\n%-10s", sms, "MiB");
  for (const char *n : names) printf(" %12s", n);
  printf("\n");
  for (size_t mib : {1, 8, 32, 128, 512}) {
    const size_t bytes = mib << 20, tiles = bytes / 16 / TILE;
    const unsigned G = (unsigned)(tiles < 1024 ? tiles : 1024); // the real kernel's grid cap
    // The library kernel's layout for these bytes: aligned, whole tiles (its grid is G too).
    const cr::full_layout lib_layout{bytes / 2, 0, 0, bytes / 16, tiles, tiles};
    const auto *lib_in = reinterpret_cast<const __nv_bfloat16 *>(in);
    constexpr auto lib_kernel = cr::reduce_full_single_pass<CUREDUCE_BF16, CUREDUCE_F32, CUREDUCE_SUM, BLOCK, UNROLL>;
    constexpr auto lib_f16 = cr::reduce_full_single_pass<CUREDUCE_F16, CUREDUCE_F32, CUREDUCE_SUM, BLOCK, UNROLL>;
    constexpr auto lib_f32 = cr::reduce_full_single_pass<CUREDUCE_F32, CUREDUCE_F32, CUREDUCE_SUM, BLOCK, UNROLL>;
    const cr::full_layout f32_layout{bytes / 4, 0, 0, bytes / 16, tiles, tiles};
    const int L = mib >= 512 ? 20 : mib >= 128 ? 50 : 200;
    printf("%-10zu", mib);
    std::vector<float> sums;
    for (int f = 0; f < variants; ++f) {
      const unsigned ch = f >= 9 && f <= 11 ? 2u << (f - 9) : 1; // dyn2, dyn4, dyn8
      const unsigned chunks = (unsigned)((tiles + ch - 1) / ch);
      auto launch = [&] {
        switch (f) {
        case 0: bench::launch_read_roofline(in, bytes, s); break;
        case 1: static_sum<true><<<G, BLOCK, 0, s>>>(in, tiles, partials, ticket, out); break;
        case 2: static_sum<false><<<G, BLOCK, 0, s>>>(in, tiles, partials, ticket, out); break;
        case 3: poll_sum<1><<<G, BLOCK, 0, s>>>(in, tiles, words, out); break;
        case 4: poll_sum<2><<<G, BLOCK, 0, s>>>(in, tiles, words, out); break;
        case 5: acc_sum<pair_acc, true><<<G, BLOCK, 0, s>>>(in, tiles, (pair *)partials, ticket, out); break;
        case 6: acc_sum<pair_acc, false><<<G, BLOCK, 0, s>>>(in, tiles, (pair *)partials, ticket, out); break;
        case 7: acc_sum<f64_acc, true><<<G, BLOCK, 0, s>>>(in, tiles, (double *)partials, ticket, out); break;
        case 8: acc_sum<f64_acc, false><<<G, BLOCK, 0, s>>>(in, tiles, (double *)partials, ticket, out); break;
        case 12: lib_kernel<<<G, BLOCK, 0, s>>>(lib_in, lib_layout, (cr::full_op<CUREDUCE_BF16, CUREDUCE_SUM, CUREDUCE_F32>::T *)partials, ticket, out); break;
        case 13: lib_f16<<<G, BLOCK, 0, s>>>(reinterpret_cast<const __half *>(in), lib_layout, (cr::full_op<CUREDUCE_F16, CUREDUCE_SUM, CUREDUCE_F32>::T *)partials, ticket, out); break;
        case 14: lib_f32<<<G, BLOCK, 0, s>>>(reinterpret_cast<const float *>(in), f32_layout, (cr::f32_pair *)partials, ticket, out); break;
        default: dyn_sum<<<wave, BLOCK, 0, s>>>(in, tiles, ch, chunks, partials, counter, ticket, out); break;
        }
      };
      float us = 0.f;
      CK(paced_median_us(s, a, b, L, 3000000 + 40000ll * L * (long long)(mib / 32), launch, &us));
      printf(" %12.3f", us);
      float h = 0; CK(cudaMemcpy(&h, out, 4, cudaMemcpyDeviceToHost));
      sums.push_back(h);
    }
    printf("   sums: static %.9g pair %.9g f64acc %.9g dyn4 %.9g library %.9g\n", sums[1], sums[5], sums[7],
           sums[10], sums[12]);
  }
  return 0;
}
