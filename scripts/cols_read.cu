// Where does the column kernel's main phase spend its time? GPU time per launch, in µs, at the
// GPU's pace (each batch waits behind a spinning kernel until the host has queued it), of
// reduce_cols.cuh's main phase (SUM into f32: tiles of tx threads across the columns, ty = 256
// / tx threads down the rows, `slices` row slices as gridDim.y, U rows in flight per thread),
// stopped after one of these stages, against the bench's read roofline over the same bytes:
//   read             the loads and the folds of the loaded rows only (see READ below);
//   +fold,store      then the fold over ty (fold_over_ty) and the slice's partial store;
//   +ticket          then the tile's ticket, as the library takes it (block_last_arrival, acq_rel),
//                    with every ticket preset far from its arrival count, so no block folds
//                    the slices (cols_cost.cu's "nofin" of the real kernel);
//   +relaxed ticket  the same with a relaxed fetch_add and no barrier after it;
//   +release ticket  the same with a release fetch_add (an acquire fence only in a last block).
// For the release plan (choose_cols_plan, "plan") and twice and four times its slices.
// (Commit 4ed24e1's first version timed the loads alone at several unrolls:
// logs/cols_read_s10.txt.)
// Build and run on a GPU machine:
//   nvcc -O3 -std=c++17 -arch=sm_90 -Iinclude -Isrc scripts/cols_read.cu bench/bench_util.cu \
//     -o cols_read && ./cols_read
#include <cstdio>
#include <cuda/atomic>
#include <cuda_runtime.h>
#include <vector>

#include "../bench/bench_util.cuh"
#include "dispatch/launch_axis.cuh"
#include "micro_common.cuh"

namespace {

constexpr int BLOCK = CR_COLS_BLOCK;

// What a block does after its loads, added one stage at a time.
enum stage : int {
  READ = 0,   // the main phase's loads and folds only (the sink tests two of the VEC sums: every
              // load stays, the compiler may drop the other sums' adds)
  FOLD = 1,   // + the fold over ty and the slice's partial store (ty = 0)
  TICKET = 2, // + the tile's ticket, as the library takes it (acq_rel), preset so none is last
  RELAXED = 3, // FOLD + a relaxed ticket instead
  RELEASE = 4  // FOLD + a release ticket (the acquire left to the last block, which is none here)
};

// The main phase of reduce_cols (SUM into f32) over VEC-column packs: U rows in flight, whole
// passes then one partial pass; then the stages above.
template <cureduce_dtype IN, int U, int ST>
__global__ void __launch_bounds__(BLOCK)
    read_like_cols(const cr::storage_t<IN> *__restrict__ in, uint64_t rows, uint64_t cols, uint64_t slice_rows,
                   int tx, float *partials, unsigned *tickets, unsigned *sink) {
  using E = cr::storage_t<IN>;
  using Op = cr::compare_op<IN, CUREDUCE_SUM, CUREDUCE_F32>;
  constexpr int VEC = 16 / (int)sizeof(E);
  struct alignas(16) pack { E v[VEC]; };
  const int TY = BLOCK / tx, x = threadIdx.x % tx, y = threadIdx.x / tx;
  const uint64_t col = ((uint64_t)blockIdx.x * tx + x) * VEC;
  const uint64_t r0 = blockIdx.y * slice_rows, r1 = r0 + slice_rows < rows ? r0 + slice_rows : rows;
  float acc[VEC];
#pragma unroll
  for (int c = 0; c < VEC; ++c)
    acc[c] = 0.f;
  if (col < cols) {
    uint64_t r = r0 + y;
    for (; r + (uint64_t)(U - 1) * TY < r1; r += (uint64_t)TY * U) {
      pack v[U];
#pragma unroll
      for (int u = 0; u < U; ++u)
        v[u] = *reinterpret_cast<const pack *>(in + (r + (uint64_t)u * TY) * cols + col);
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int c = 0; c < VEC; ++c)
          acc[c] += cr::widen<IN>(v[u].v[c]);
    }
    for (; r < r1; r += TY) {
      const pack v = *reinterpret_cast<const pack *>(in + r * cols + col);
#pragma unroll
      for (int c = 0; c < VEC; ++c)
        acc[c] += cr::widen<IN>(v.v[c]);
    }
  }
  if (ST == READ) {
    if (acc[0] == 1234.5f && acc[VEC - 1] == -1234.5f)
      *sink = 1;
    return;
  }
  cr::fold_over_ty<Op, BLOCK, VEC>(acc, tx);
  if (y == 0 && col < cols)
    cr::store_values(&partials[blockIdx.y * cols + col], acc);
  if (ST == TICKET) {
    (void)cr::block_last_arrival(&tickets[blockIdx.x], gridDim.y);
  } else if (ST == RELAXED || ST == RELEASE) {
    __syncthreads();
    if (threadIdx.x == 0) {
      cuda::atomic_ref<unsigned, cuda::thread_scope_device> t(tickets[blockIdx.x]);
      if (t.fetch_add(1u, ST == RELAXED ? cuda::memory_order_relaxed : cuda::memory_order_release) ==
          gridDim.y - 1)
        cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device);
    }
  }
}

struct shape {
  cureduce_dtype dtype;
  uint64_t rows, cols;
};

struct bufs {
  cudaStream_t s;
  cudaEvent_t a, b;
  void *in;
  float *partials;
  unsigned *tickets, *sink;
};

template <cureduce_dtype IN, int U, int ST>
int run(bufs &B, const shape &sh, uint64_t tx, uint64_t slices, float roof, const char *tag) {
  constexpr int VEC = 16 / (int)sizeof(cr::storage_t<IN>);
  const uint64_t tiles = cr::div_up(sh.cols / VEC, tx);
  const uint64_t slice_rows = cr::div_up(sh.rows, slices);
  slices = cr::div_up(sh.rows, slice_rows);
  const dim3 grid((unsigned)tiles, (unsigned)slices);
  std::vector<unsigned> far(tiles, 0x40000000u); // no arrival count reaches it: nobody folds
  CK(cudaMemcpy(B.tickets, far.data(), tiles * sizeof(unsigned), cudaMemcpyHostToDevice));
  float us = 0.f;
  CK(paced_median_us(B.s, B.a, B.b, 50, 3000000, [&] {
    read_like_cols<IN, U, ST><<<grid, BLOCK, 0, B.s>>>(static_cast<const cr::storage_t<IN> *>(B.in), sh.rows, sh.cols,
                                                       slice_rows, (int)tx, B.partials, B.tickets, B.sink);
  }, &us));
  static const char *names[] = {"read", "+fold,store", "+ticket", "+relaxed ticket", "+release ticket"};
  printf("%-5s %8llux%-8llu %3llu %3llu %6llu %5llu %2d %6llu %9.3f %9.3f %6.3f %-16s %s\n",
         IN == CUREDUCE_F32 ? "f32" : "bf16", (unsigned long long)sh.rows, (unsigned long long)sh.cols,
         (unsigned long long)tx, (unsigned long long)(BLOCK / tx), (unsigned long long)tiles,
         (unsigned long long)slices, U, (unsigned long long)(tiles * slices), us, roof, roof / us, names[ST], tag);
  return 0;
}

template <cureduce_dtype IN, int U>
int stages(bufs &B, const shape &sh, uint64_t tx, uint64_t slices, float roof, const char *tag) {
  return run<IN, U, READ>(B, sh, tx, slices, roof, tag) | run<IN, U, FOLD>(B, sh, tx, slices, roof, tag) |
         run<IN, U, TICKET>(B, sh, tx, slices, roof, tag) | run<IN, U, RELAXED>(B, sh, tx, slices, roof, tag) |
         run<IN, U, RELEASE>(B, sh, tx, slices, roof, tag);
}

template <cureduce_dtype IN> int run_shape(bufs &B, const shape &sh) {
  constexpr int VEC = 16 / (int)sizeof(cr::storage_t<IN>);
  constexpr int UREL = CR_COLS_UNROLL(sizeof(cr::storage_t<IN>));
  const size_t bytes = sh.rows * sh.cols * sizeof(cr::storage_t<IN>);
  float roof = 0.f;
  CK(paced_median_us(B.s, B.a, B.b, 50, 3000000, [&] { bench::launch_read_roofline(B.in, bytes, B.s); }, &roof));
  const cr::cols_plan P = cr::choose_cols_plan<VEC, UREL, BLOCK>(sh.rows, sh.cols, sizeof(float));
  return stages<IN, UREL>(B, sh, P.tx, P.slices, roof, "plan") |
         stages<IN, UREL>(B, sh, P.tx, P.slices * 2, roof, "slices x2") |
         stages<IN, UREL>(B, sh, P.tx, P.slices * 4, roof, "slices x4");
}

} // namespace

int main() {
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  bufs B{};
  CK(make_paced_clock(&B.s, &B.a, &B.b));
  CK(cudaMalloc(&B.in, (size_t)128 << 20));
  CK(cudaMalloc(&B.partials, (size_t)64 << 20));
  CK(cudaMalloc(&B.tickets, 65536 * sizeof(unsigned)));
  CK(cudaMalloc(&B.sink, sizeof(unsigned)));
  bench::fill_random(CUREDUCE_F32, B.in, ((size_t)128 << 20) / 4, 12345, -1.0, 1.0, B.s);
  CK(cudaStreamSynchronize(B.s));
  printf("%s, %d SMs: the column kernel's main phase by stages, us per launch (median of 7 GPU-paced batches of 50)\n",
         prop.name, prop.multiProcessorCount);
  printf("%-5s %17s %3s %3s %6s %5s %2s %6s %9s %9s %6s %-16s\n", "dtype", "shape", "tx", "ty", "tiles", "slice", "U",
         "blocks", "us", "roofline", "roof", "stage");
  int bad = 0;
  const shape shapes[] = {{CUREDUCE_BF16, 65536, 128}, {CUREDUCE_BF16, 4096, 4096}, {CUREDUCE_BF16, 1048576, 32},
                          {CUREDUCE_BF16, 32768, 1024}, {CUREDUCE_F32, 65536, 128}, {CUREDUCE_F32, 1048576, 32}};
  for (const shape &sh : shapes)
    bad |= sh.dtype == CUREDUCE_F32 ? run_shape<CUREDUCE_F32>(B, sh) : run_shape<CUREDUCE_BF16>(B, sh);
  return bad;
}
