// One wave or every block for the lane-group row kernel? GPU time per launch, in µs, at the
// GPU's pace (each batch waits behind a spinning kernel until the host has queued it), of the
// library's reduce_rows_lanes (SUM into f32, CR_ROWS_UNROLL vectors in flight a lane) on
// 65536x128 rows, against the bench's read roofline over the same bytes, for grids of every
// block the rows need (one set of rows per warp), one resident wave (warps loop over their
// sets) and two. Every launch's results are checked against an f64 host sum of each row.
// (Built with -maxrregcount=32 and 40 too, in logs/rows_waves_s10.txt: the bf16 kernel kept
// 48 registers and 5 blocks an SM, its __launch_bounds__ winning over the flag, so those runs
// repeat the first; the f32 one went from 43 to 48 registers and 16 bytes of local memory.)
// Build and run on a GPU machine:
//   nvcc -O3 -std=c++17 -arch=sm_90 -Iinclude -Isrc scripts/rows_waves.cu \
//     bench/bench_util.cu src/common/dtype_info.c src/cpu/convert.c -o rows_waves && ./rows_waves
#include <cmath>
#include <cstdio>
#include <cuda_runtime.h>
#include <vector>

#include "../bench/bench_util.cuh"
#include "dispatch/launch_axis.cuh"
#include "micro_common.cuh"

namespace {

constexpr int BLOCK = CR_AXIS_BLOCK;

template <cureduce_dtype IN> int run_dtype(cudaStream_t s, cudaEvent_t a, cudaEvent_t b, void *in, float *out) {
  using E = cr::storage_t<IN>;
  constexpr uint64_t rows = 65536, cols = 128;
  constexpr auto kernel = cr::reduce_rows_lanes<IN, CUREDUCE_F32, CUREDUCE_SUM, BLOCK, CR_ROWS_UNROLL>;
  const uint64_t bytes = rows * cols * sizeof(E);
  bench::fill_random(IN, in, rows * cols, 777, -1.0, 1.0, s);
  CK(cudaStreamSynchronize(s));
  std::vector<unsigned char> raw(bytes);
  CK(cudaMemcpy(raw.data(), in, bytes, cudaMemcpyDeviceToHost));
  std::vector<double> ref(rows, 0.0), mag(rows, 0.0);
  for (uint64_t i = 0; i < rows * cols; ++i) {
    double v;
    (void)cureduce_to_double(IN, &raw[i * sizeof(E)], &v);
    ref[i / cols] += v;
    mag[i / cols] += std::fabs(v);
  }
  cudaFuncAttributes fa;
  CK(cudaFuncGetAttributes(&fa, kernel));
  int per_sm = 0, sms = 0, dev = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, BLOCK, 0));
  float roof = 0.f;
  CK(paced_median_us(s, a, b, 50, 3000000, [&] { bench::launch_read_roofline(in, bytes, s); }, &roof));
  const uint64_t group = cr::lane_group(cols * sizeof(E) / 16, CR_ROWS_UNROLL); // as launch_rows
  const uint64_t all = rows / (32 / group) / (BLOCK / 32), wave = (uint64_t)per_sm * sms;
  const uint64_t grids[] = {all, wave, 2 * wave};
  const char *names[] = {"every block", "one wave", "two waves"};
  int bad = 0;
  for (int g = 0; g < 3; ++g) {
    const unsigned grid = (unsigned)(grids[g] < all ? grids[g] : all);
    CK(cudaMemset(out, 0xff, rows * sizeof(float)));
    float us = 0.f;
    CK(paced_median_us(s, a, b, 50, 3000000, [&] {
      kernel<<<grid, BLOCK, 0, s>>>(static_cast<const E *>(in), rows, cols, cols, (int)group, out);
    }, &us));
    std::vector<float> got(rows);
    CK(cudaMemcpy(got.data(), out, rows * sizeof(float), cudaMemcpyDeviceToHost));
    double worst = 0.0;
    for (uint64_t r = 0; r < rows; ++r) {
      const double e = std::fabs((double)got[r] - ref[r]) / (mag[r] > 0 ? mag[r] : 1.0);
      worst = std::isnan(e) || e > worst ? (std::isnan(e) ? INFINITY : e) : worst;
    }
    const bool ok = worst <= 0x1p-20;
    bad += !ok;
    printf("%-5s 65536x128 regs %3d local %4zu B, %d blocks/SM, grid %5u (%-11s) %7.3f us, roofline %7.3f, roof %.3f, relerr %.1e %s\n",
           IN == CUREDUCE_F32 ? "f32" : "bf16", fa.numRegs, fa.localSizeBytes, per_sm, grid, names[g], us, roof,
           roof / us, worst, ok ? "ok" : "WRONG");
  }
  return bad;
}

} // namespace

int main() {
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  cudaStream_t s;
  cudaEvent_t a, b;
  CK(make_paced_clock(&s, &a, &b));
  void *in;
  float *out;
  CK(cudaMalloc(&in, (size_t)32 << 20));
  CK(cudaMalloc(&out, 65536 * sizeof(float)));
  printf("%s: reduce_rows_lanes, SUM into f32, us per launch (median of 7 GPU-paced batches of 50)\n", prop.name);
  int bad = run_dtype<CUREDUCE_BF16>(s, a, b, in, out) + run_dtype<CUREDUCE_F32>(s, a, b, in, out);
  printf("%d wrong\n", bad);
  return bad ? 1 : 0;
}
