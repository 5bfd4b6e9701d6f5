// Where does a column sum's time go? GPU time per launch, in µs, at the GPU's pace (each batch
// waits behind a spinning kernel until the host has queued it), of the library's column kernel
// (reduce_cols.cuh, SUM into f32) on the bench's column shapes, against the bench's read
// roofline over the same bytes:
//   fin     the kernel as the library launches it, for the given tile width (tx), row slices,
//           rows in flight per thread (U) and partials in flight in the last fold (LV): main
//           phase, partial stores, ticket, and the last block of each tile folding the slices;
//   nofin   the same launch with every tile's ticket set far from its arrival count first, so
//           no block is the last: the main phase, partial stores and ticket only. fin - nofin
//           ("fold") is what the last block's fold adds to the kernel's critical path.
// The release plan (choose_cols_plan, CR_COLS_UNROLL, CR_COLS_LAST_VALUES) is marked "plan";
// the other lines change one of its values. Every fin launch's results are checked against an
// f64 host sum of each column, within 2^-20 of the column's sum of |x|.
// Build and run on a GPU machine:
//   nvcc -O3 -std=c++17 -arch=sm_90 -Iinclude -Isrc scripts/cols_cost.cu bench/bench_util.cu \
//     src/common/dtype_info.c src/cpu/convert.c -o cols_cost && ./cols_cost
#include <cstring>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <vector>

#include "../bench/bench_util.cuh"
#include "dispatch/launch_axis.cuh"
#include "micro_common.cuh"

namespace {

constexpr int BLOCK = CR_COLS_BLOCK, LAST = CR_COLS_LAST_VALUES;
constexpr unsigned FAR = 0x40000000u; // a ticket value no arrival count reaches

struct shape { uint64_t rows, cols; };
struct ctx {
  cudaStream_t s;
  cudaEvent_t a, b;
  void *in, *partials;
  unsigned *tickets;
  float *out;
};

template <cureduce_dtype IN, int U, int LASTV>
int run_one(ctx &c, shape sh, uint64_t tx, uint64_t slices, bool is_plan, double roof_us,
            const std::vector<double> &ref, const std::vector<double> &mag) {
  using Op = cr::compare_op<IN, CUREDUCE_SUM, CUREDUCE_F32>;
  using E = cr::storage_t<IN>;
  constexpr int VEC = 16 / (int)sizeof(E);
  const uint64_t ty = BLOCK / tx, tiles = cr::div_up(sh.cols / VEC, tx);
  const uint64_t slice_rows = cr::div_up(sh.rows, slices);
  slices = cr::div_up(sh.rows, slice_rows);
  if (ty * U > slice_rows) // fewer rows than one pass: not a plan anyone would pick
    return 0;
  const cr::cols_layout L{sh.rows, sh.cols, sh.cols, slice_rows, (int)tx};
  const dim3 grid((unsigned)tiles, (unsigned)slices);
  constexpr auto kernel = cr::reduce_cols<IN, CUREDUCE_F32, CUREDUCE_SUM, BLOCK, VEC, U, LASTV>;
  auto launch = [&] {
    kernel<<<grid, BLOCK, 0, c.s>>>(static_cast<const E *>(c.in), L, static_cast<typename Op::T *>(c.partials),
                                   c.tickets, c.out);
  };
  const int reps = 50;
  const long long spin_ns = 3000000;
  float fin = 0.f, nofin = 0.f;
  CK(cudaMemset(c.tickets, 0, tiles * sizeof(unsigned)));
  CK(cudaMemset(c.out, 0xff, sh.cols * sizeof(float)));
  CK(paced_median_us(c.s, c.a, c.b, reps, spin_ns, launch, &fin));
  std::vector<float> got(sh.cols);
  CK(cudaMemcpy(got.data(), c.out, sh.cols * sizeof(float), cudaMemcpyDeviceToHost));
  double worst = 0.0;
  for (uint64_t j = 0; j < sh.cols; ++j) {
    const double e = std::fabs((double)got[j] - ref[j]) / (mag[j] > 0 ? mag[j] : 1.0);
    worst = std::isnan(e) || e > worst ? (std::isnan(e) ? INFINITY : e) : worst;
  }
  std::vector<unsigned> far(tiles, FAR);
  CK(cudaMemcpy(c.tickets, far.data(), tiles * sizeof(unsigned), cudaMemcpyHostToDevice));
  CK(paced_median_us(c.s, c.a, c.b, reps, spin_ns, launch, &nofin));
  CK(cudaMemset(c.tickets, 0, tiles * sizeof(unsigned)));
  printf("%-5s %8llux%-8llu %3llu %3llu %6llu %5llu %2d %2d %6llu %9.3f %9.3f %7.3f %9.3f %6.3f %8.1e %s%s\n",
         IN == CUREDUCE_F32 ? "f32" : "bf16", (unsigned long long)sh.rows, (unsigned long long)sh.cols,
         (unsigned long long)tx, (unsigned long long)ty, (unsigned long long)tiles,
         (unsigned long long)slices, U, LASTV, (unsigned long long)(tiles * slices), fin, nofin, fin - nofin,
         roof_us, roof_us / fin, worst, worst <= 0x1p-20 ? "ok" : "WRONG", is_plan ? " plan" : "");
  return worst <= 0x1p-20 ? 0 : 1;
}

template <cureduce_dtype IN> int run_shape(ctx &c, shape sh) {
  using E = cr::storage_t<IN>;
  constexpr int VEC = 16 / (int)sizeof(E);
  constexpr int UREL = CR_COLS_UNROLL(sizeof(E));
  using Op = cr::compare_op<IN, CUREDUCE_SUM, CUREDUCE_F32>;
  const uint64_t bytes = sh.rows * sh.cols * sizeof(E);
  bench::fill_random(IN, c.in, sh.rows * sh.cols, 12345, -1.0, 1.0, c.s);
  CK(cudaStreamSynchronize(c.s));
  std::vector<unsigned char> raw(bytes);
  CK(cudaMemcpy(raw.data(), c.in, bytes, cudaMemcpyDeviceToHost));
  std::vector<double> ref(sh.cols, 0.0), mag(sh.cols, 0.0);
  for (uint64_t i = 0; i < sh.rows; ++i)
    for (uint64_t j = 0; j < sh.cols; ++j) {
      double v;
      (void)cureduce_to_double(IN, &raw[(i * sh.cols + j) * sizeof(E)], &v);
      ref[j] += v;
      mag[j] += std::fabs(v);
    }
  float roof = 0.f;
  CK(paced_median_us(c.s, c.a, c.b, 50, 3000000, [&] { bench::launch_read_roofline(c.in, bytes, c.s); }, &roof));

  const cr::cols_plan P = cr::choose_cols_plan<VEC, UREL, BLOCK>(sh.rows, sh.cols, sizeof(typename Op::T));
  int bad = 0;
  // The release kernel, then one change at a time: the other unroll, 32 partials in flight in
  // the last fold, half and twice the plan's slices.
  constexpr int UOTHER = UREL == 8 ? 4 : 8;
  bad += run_one<IN, UREL, LAST>(c, sh, P.tx, P.slices, true, roof, ref, mag);
  bad += run_one<IN, UOTHER, LAST>(c, sh, P.tx, P.slices, false, roof, ref, mag);
  bad += run_one<IN, UREL, 32>(c, sh, P.tx, P.slices, false, roof, ref, mag);
  if (P.slices > 1) {
    bad += run_one<IN, UREL, LAST>(c, sh, P.tx, P.slices / 2, false, roof, ref, mag);
    bad += run_one<IN, UREL, LAST>(c, sh, P.tx, P.slices * 2, false, roof, ref, mag);
  }
  return bad;
}

} // namespace

int main() {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  ctx c{};
  CK(make_paced_clock(&c.s, &c.a, &c.b));
  CK(cudaMalloc(&c.in, (size_t)512 << 20));
  CK(cudaMalloc(&c.partials, (size_t)64 << 20));
  CK(cudaMalloc(&c.tickets, ((size_t)1 << 20) * sizeof(unsigned))); // a ticket per tile
  CK(cudaMalloc(&c.out, (size_t)64 << 20));
  printf("%s, %d SMs: column SUM into f32, us per launch (median of 7 GPU-paced batches of 50)\n", prop.name, sms);
  printf("%-5s %17s %3s %3s %6s %5s %2s %2s %6s %9s %9s %7s %9s %6s %8s\n", "dtype", "shape", "tx", "ty", "tiles",
         "slice", "U", "LV", "blocks", "fin", "nofin", "fold", "roofline", "roof", "relerr");
  int bad = 0;
  const shape shapes[] = {{32768, 1024}, {1048576, 32}, {65536, 128}, {4096, 4096},
                          {1024, 65536}, {16384, 8192}, {8, 16777216}};
  for (const shape &sh : shapes)
    bad += run_shape<CUREDUCE_BF16>(c, sh);
  for (const shape &sh : shapes)
    bad += run_shape<CUREDUCE_F32>(c, sh);
  printf("%d wrong\n", bad);
  return bad ? 1 : 0;
}
