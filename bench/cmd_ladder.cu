// `cureduce-bench ladder`: validate, then time, every rung of the teaching ladder on one array, with
// the read roofline and CUB measured in the same run; or sweep n (--shmoo). Layer: the benchmark tool.
#include "../ladder/ladder.h"
#include "args.h"
#include "bench_commands.h"
#include "bench_util.cuh"
#include "cub_reference.cuh"
#include "plot.h"

#include <math.h>
#include <string.h>
#include <string>
#include <vector>

namespace {

using namespace bench;

void ladder_usage(FILE *to) {
  fprintf(to,
          "usage: %s ladder [--n N] [--dtype f32|i32] [--op sum|min|max] [--csv FILE]\n"
          "                 [--plot FILE.png] [--shmoo] [--seed S]\n"
          "\n"
          "Run every rung of the reduction ladder (ladder/) on one random array: validate each\n"
          "against the CPU reference first (f32 sums also bit for bit on 0/1 data, exact in any\n"
          "order; a wrong rung is not timed and the exit is non-zero),\n"
          "run it twice to see whether the bits repeat, then time it hot and with a cold L2.\n"
          "The read roofline and CUB's DeviceReduce are measured in the same run.\n"
          "\n"
          "  --n N        elements (default 33554432)\n"
          "  --dtype D    f32 or i32 (default f32)\n"
          "  --op OP      sum, min or max (default sum)\n"
          "  --csv FILE   write the table as CSV\n"
          "  --plot FILE  write a bar chart (PNG; needs python3 with matplotlib)\n"
          "  --shmoo      sweep n = 2^10, 2^12, ... 2^28 instead; --csv/--plot get the sweep\n"
          "  --seed S     data seed (default 1)\n",
          BENCH_NAME);
}

struct options {
  uint64_t n = 33554432, seed = 1;
  cureduce_dtype dtype = CUREDUCE_F32;
  cureduce_op op = CUREDUCE_SUM;
  const char *csv = nullptr, *plot = nullptr;
  bool shmoo = false;
};

int parse(int argc, char **argv, options &o) {
  for (int i = 1; i < argc; ++i) {
    const char *v = nullptr;
    int r;
    if (!strcmp(argv[i], "--shmoo")) {
      o.shmoo = true;
    } else if ((r = arg_value(argc, argv, &i, "--n", &v))) {
      if (r < 0 || parse_u64("--n", v, &o.n))
        return 2;
      if (o.n == 0) {
        fprintf(stderr, "%s ladder: --n must be at least 1\n", BENCH_NAME);
        return 2;
      }
    } else if ((r = arg_value(argc, argv, &i, "--seed", &v))) {
      if (r < 0 || parse_u64("--seed", v, &o.seed))
        return 2;
    } else if ((r = arg_value(argc, argv, &i, "--dtype", &v))) {
      if (r < 0 || parse_dtype("--dtype", v, &o.dtype))
        return 2;
      if (o.dtype != CUREDUCE_F32 && o.dtype != CUREDUCE_I32) {
        fprintf(stderr, "%s ladder: --dtype must be f32 or i32, got '%s'\n", BENCH_NAME, v);
        return 2;
      }
    } else if ((r = arg_value(argc, argv, &i, "--op", &v))) {
      if (r < 0 || parse_op("--op", v, &o.op))
        return 2;
      if (o.op != CUREDUCE_SUM && o.op != CUREDUCE_MIN && o.op != CUREDUCE_MAX) {
        fprintf(stderr, "%s ladder: --op must be sum, min or max, got '%s'\n", BENCH_NAME, v);
        return 2;
      }
    } else if ((r = arg_value(argc, argv, &i, "--csv", &v))) {
      if (r < 0)
        return 2;
      o.csv = v;
    } else if ((r = arg_value(argc, argv, &i, "--plot", &v))) {
      if (r < 0)
        return 2;
      o.plot = v;
    } else {
      fprintf(stderr, "%s ladder: unknown argument '%s' (see --help)\n", BENCH_NAME, argv[i]);
      return 2;
    }
  }
  return 0;
}

// The device buffers and the reference answer for one array.
struct workload {
  cureduce_dtype dtype;
  cureduce_op op;
  uint64_t n;
  void *d_in = nullptr, *d_out = nullptr, *d_scratch = nullptr;
  void *d_exact = nullptr; // f32 sums: integer data whose sum is exact in any order
  uint32_t exact_bits = 0; // and that sum's bits
  unsigned *d_counter = nullptr;
  double want = 0, abs_sum = 0; // reference value; sum of |x| (for the float tolerance)
  cudaStream_t stream = nullptr;
  int sms = 0;

  workload(cureduce_dtype d, cureduce_op o, uint64_t count, uint64_t seed, int sm)
      : dtype(d), op(o), n(count), sms(sm) {
    BENCH_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    BENCH_CUDA(cudaMalloc(&d_in, n * 4));
    BENCH_CUDA(cudaMalloc(&d_out, 16));
    BENCH_CUDA(cudaMalloc(&d_scratch, ladder::scratch_bytes(n)));
    BENCH_CUDA(cudaMalloc(&d_counter, sizeof(unsigned)));
    BENCH_CUDA(cudaMemset(d_counter, 0, sizeof(unsigned)));
    // f32 in [-1, 1): sums cancel, so float roundings stay visible; i32 in [-1000, 1000).
    if (d == CUREDUCE_F32)
      fill_random(d, d_in, n, seed, -1.0, 1.0, stream);
    else
      fill_random(d, d_in, n, seed, -1000.0, 1000.0, stream);
    std::vector<char> host(n * 4);
    BENCH_CUDA(cudaMemcpyAsync(host.data(), d_in, n * 4, cudaMemcpyDeviceToHost, stream));
    BENCH_CUDA(cudaStreamSynchronize(stream));
    reference(host.data());
    if (d == CUREDUCE_F32 && o == CUREDUCE_SUM)
      make_exact_data(seed);
  }
  ~workload() {
    cudaFree(d_exact);
    cudaFree(d_in);
    cudaFree(d_out);
    cudaFree(d_scratch);
    cudaFree(d_counter);
    cudaStreamDestroy(stream);
  }

  void reference(const void *h) {
    if (dtype == CUREDUCE_F32) {
      const float *x = (const float *)h;
      for (uint64_t i = 0; i < n; ++i)
        abs_sum += fabs(x[i]);
      if (op == CUREDUCE_SUM) {
        (void)cureduce_cpu_sum_exact(dtype, h, n, CUREDUCE_F64, &want);
      } else {
        float v;
        (void)cureduce_cpu_reduce(op, dtype, h, n, CUREDUCE_F32, &v);
        want = v;
      }
    } else {
      int64_t v; // i32 sums wrap in the rungs' i32 accumulator: compare modulo 2^32
      (void)cureduce_cpu_reduce(op, dtype, h, n, CUREDUCE_I64, &v);
      want = (double)(int32_t)(uint32_t)(uint64_t)v;
    }
  }

  // A float sum of [-1, 1) data rounds differently in each order, so it can only be checked
  // against a bound. The rungs' f32 sums are first checked bit for bit on data whose sum no
  // order rounds: 1 and 0, at most 2^24 ones (one at a random place in each group of
  // ceil(n / 2^24) elements), so every partial sum is an integer of at most 2^24, exact in f32,
  // and the sum counts the ones: a rung that skips or repeats one is off by that many.
  void make_exact_data(uint64_t seed) {
    BENCH_CUDA(cudaMalloc(&d_exact, n * 4));
    const float ones =
        (float)fill_sparse_ones((float *)d_exact, n, (n + (1ull << 24) - 1) >> 24, seed, stream);
    memcpy(&exact_bits, &ones, 4);
  }

  ladder::rung_ctx ctx() const { return {dtype, op, d_in, n, d_out, d_scratch, d_counter, stream, sms}; }
  uint32_t result_bits() const {
    uint32_t b;
    BENCH_CUDA(cudaStreamSynchronize(stream));
    BENCH_CUDA(cudaGetLastError());
    BENCH_CUDA(cudaMemcpy(&b, d_out, 4, cudaMemcpyDeviceToHost));
    return b;
  }
  double value_of(uint32_t bits) const {
    if (dtype == CUREDUCE_F32) {
      float f;
      memcpy(&f, &bits, 4);
      return f;
    }
    return (double)(int32_t)bits;
  }
  // Float sums (checked bit for bit on the integer data first): within 2^-20 of sum |x| of the
  // exact sum, which the rungs' orders meet on this data (not a worst-case bound for every
  // order); everything else: exact.
  bool valid(double got) const {
    if (dtype == CUREDUCE_F32 && op == CUREDUCE_SUM)
      return fabs(got - want) <= ldexp(abs_sum, -20);
    return got == want;
  }
};

struct row {
  std::string id, name;
  double hot = 0, cold = 0;
  bool stable = true, timed = false;
};

// Run a rung twice, validate, and time it. Returns false when it gave a wrong answer.
bool measure(const ladder::rung_info &r, workload &w, timer &t, row &out, std::string &why) {
  const ladder::rung_ctx c = w.ctx();
  if (w.d_exact) {
    ladder::rung_ctx e = c;
    e.d_in = w.d_exact;
    BENCH_CUDA(cudaMemsetAsync(w.d_out, 0xAB, 16, w.stream)); // poison: a rung must write
    r.run(e);
    const uint32_t bits = w.result_bits();
    if (bits != w.exact_bits) {
      char msg[160];
      snprintf(msg, sizeof msg, "on 0/1 data got %.9g, want %.9g exactly", w.value_of(bits),
               w.value_of(w.exact_bits));
      why = msg;
      return false;
    }
  }
  BENCH_CUDA(cudaMemsetAsync(w.d_out, 0xAB, 16, w.stream)); // poison: a rung must write
  r.run(c);
  const uint32_t a = w.result_bits();
  r.run(c);
  const uint32_t b = w.result_bits();
  out.stable = a == b;
  if (!w.valid(w.value_of(a))) {
    char msg[160];
    snprintf(msg, sizeof msg, "got %.9g, want %.9g", w.value_of(a), w.want);
    why = msg;
    return false;
  }
  const double once = t.hot_us([&] { r.run(c); }, 1, 0);
  const int reps = reps_for(once, 150.0, 3, 50);
  out.hot = t.hot_us([&] { r.run(c); }, reps);
  out.cold = t.cold_us([&] { r.run(c); }, reps < 20 ? reps : 20);
  out.timed = true;
  return true;
}

void progress(const char *what, int k, int total) {
  fprintf(stderr, "\r[%d/%d] %-40s", k, total, what);
  fflush(stderr);
}

int run_table(const options &o, const gpu_info &g) {
  workload w(o.dtype, o.op, o.n, o.seed, g.sms);
  timer t(w.stream, g.l2_bytes);
  const double bytes = (double)o.n * 4;
  std::vector<row> rows;
  int wrong = 0, k = 0, total = 0;
  for (const auto &r : ladder::RUNGS)
    total += ladder::rung_supports(r, o.dtype, o.op);
  for (const auto &r : ladder::RUNGS) {
    if (!ladder::rung_supports(r, o.dtype, o.op))
      continue;
    progress(r.name, ++k, total);
    row x{r.id, r.name};
    std::string why;
    if (!measure(r, w, t, x, why)) {
      fprintf(stderr, "\nrung %s (%s) is WRONG: %s; not timed\n", r.id, r.name, why.c_str());
      ++wrong;
    }
    if (x.stable != ladder::rung_reproducible(r, o.dtype, o.op) &&
        ladder::rung_reproducible(r, o.dtype, o.op)) {
      fprintf(stderr, "\nrung %s (%s) gave different bits on two runs: a race\n", r.id, r.name);
      ++wrong;
    }
    rows.push_back(x);
  }
  progress("read roofline and CUB", total, total);
  fprintf(stderr, "\n");
  const double roof_hot = read_roofline_us(t, w.d_in, (size_t)bytes, w.stream, false, 30);
  const double roof_cold = read_roofline_us(t, w.d_in, (size_t)bytes, w.stream, true, 20);
  auto cub = make_cub_run(o.op, o.dtype, o.dtype, w.d_in, o.n, w.d_out);
  row cubrow{"cub", "cub_device_reduce"};
  cub->launch(w.stream);
  const uint32_t cub_bits = w.result_bits();
  if (!w.valid(w.value_of(cub_bits)))
    fprintf(stderr, "note: CUB's result %.9g is outside the tolerance\n", w.value_of(cub_bits));
  cub->launch(w.stream);
  cubrow.stable = w.result_bits() == cub_bits;
  cubrow.hot = t.hot_us([&] { cub->launch(w.stream); }, 30);
  cubrow.cold = t.cold_us([&] { cub->launch(w.stream); }, 20);
  cubrow.timed = true;
  rows.push_back(cubrow);

  printf("ladder: %s, %s %s, n = %llu (%.1f MiB), read roofline %.1f us hot (%.0f GB/s), %.1f us cold\n",
         g.name.c_str(), cureduce_op_name(o.op), cureduce_dtype_name(o.dtype), (unsigned long long)o.n,
         bytes / 1048576.0, roof_hot, bytes / roof_hot / 1e3, roof_cold);
  printf("%-5s %-26s %10s %10s %8s %7s %9s %9s %6s\n", "rung", "name", "hot_us", "cold_us", "GB/s", "roof",
         "vs_first", "vs_prev", "stable");
  FILE *csv = o.csv ? fopen(o.csv, "w") : nullptr;
  if (o.csv && !csv) {
    fprintf(stderr, "%s ladder: cannot write %s\n", BENCH_NAME, o.csv);
    return 1;
  }
  if (csv)
    fprintf(csv, "gpu,rung,name,dtype,op,n,hot_us,cold_us,gbps,roof_fraction,speedup_vs_first,speedup_vs_"
                 "prev,bitwise_stable\n");
  double first = 0, prev = 0;
  for (const row &x : rows) {
    if (!x.timed) {
      printf("%-5s %-26s %10s\n", x.id.c_str(), x.name.c_str(), "WRONG");
      continue;
    }
    if (first == 0)
      first = x.hot;
    const double vs_prev = prev > 0 ? prev / x.hot : 1.0;
    printf("%-5s %-26s %10.1f %10.1f %8.0f %6.1f%% %8.1fx %8.2fx %6s\n", x.id.c_str(), x.name.c_str(), x.hot,
           x.cold, bytes / x.hot / 1e3, 100 * roof_hot / x.hot, first / x.hot, vs_prev,
           x.stable ? "yes" : "no");
    if (csv)
      fprintf(csv, "%s,%s,%s,%s,%s,%llu,%.3f,%.3f,%.1f,%.4f,%.3f,%.3f,%d\n", g.name.c_str(), x.id.c_str(),
              x.name.c_str(), cureduce_dtype_name(o.dtype), cureduce_op_name(o.op), (unsigned long long)o.n,
              x.hot, x.cold, bytes / x.hot / 1e3, roof_hot / x.hot, first / x.hot, vs_prev, x.stable ? 1 : 0);
    if (x.id != "cub")
      prev = x.hot;
  }
  if (csv) {
    fprintf(csv, "%s,roof,read_roofline,%s,%s,%llu,%.3f,%.3f,%.1f,1.0,%.3f,1.0,1\n", g.name.c_str(),
            cureduce_dtype_name(o.dtype), cureduce_op_name(o.op), (unsigned long long)o.n, roof_hot,
            roof_cold, bytes / roof_hot / 1e3, first / roof_hot);
    fclose(csv);
  }
  if (o.plot && plot_csv("ladder", o.csv, o.plot))
    return 1;
  return wrong ? 1 : 0;
}

int run_shmoo(const options &o, const gpu_info &g) {
  FILE *csv = o.csv ? fopen(o.csv, "w") : nullptr;
  if (o.csv && !csv) {
    fprintf(stderr, "%s ladder: cannot write %s\n", BENCH_NAME, o.csv);
    return 1;
  }
  if (csv)
    fprintf(csv,
            "gpu,rung,name,dtype,op,n,hot_us,cold_us,gbps,roof_fraction,speedup_vs_first,bitwise_stable\n");
  int wrong = 0;
  printf("ladder shmoo: %s, %s %s; GB/s (hot)\n%-26s", g.name.c_str(), cureduce_op_name(o.op),
         cureduce_dtype_name(o.dtype), "n =");
  for (int e = 10; e <= 28; e += 2)
    printf(" %7s", ("2^" + std::to_string(e)).c_str());
  printf("\n");
  std::vector<std::vector<std::string>> lines(ladder::RUNG_COUNT + 2);
  for (int e = 10; e <= 28; e += 2) {
    const uint64_t n = 1ull << e;
    workload w(o.dtype, o.op, n, o.seed + e, g.sms);
    timer t(w.stream, g.l2_bytes);
    const double bytes = (double)n * 4;
    const double roof = read_roofline_us(t, w.d_in, (size_t)bytes, w.stream, false, 20);
    double first = 0;
    int idx = 0;
    for (const auto &r : ladder::RUNGS) {
      ++idx;
      if (!ladder::rung_supports(r, o.dtype, o.op))
        continue;
      progress((std::string(r.name) + " n=2^" + std::to_string(e)).c_str(), idx, ladder::RUNG_COUNT);
      row x{r.id, r.name};
      std::string why;
      if (!measure(r, w, t, x, why)) {
        fprintf(stderr, "\nrung %s n=%llu is WRONG: %s\n", r.id, (unsigned long long)n, why.c_str());
        ++wrong;
        continue;
      }
      if (first == 0)
        first = x.hot;
      lines[idx - 1].push_back(std::to_string((int)(bytes / x.hot / 1e3)));
      if (csv)
        fprintf(csv, "%s,%s,%s,%s,%s,%llu,%.3f,%.3f,%.1f,%.4f,%.3f,%d\n", g.name.c_str(), r.id, r.name,
                cureduce_dtype_name(o.dtype), cureduce_op_name(o.op), (unsigned long long)n, x.hot, x.cold,
                bytes / x.hot / 1e3, roof / x.hot, first / x.hot, x.stable ? 1 : 0);
    }
    auto cub = make_cub_run(o.op, o.dtype, o.dtype, w.d_in, n, w.d_out);
    const double cub_hot = t.hot_us([&] { cub->launch(w.stream); }, 20);
    const double cub_cold = t.cold_us([&] { cub->launch(w.stream); }, 10);
    lines[ladder::RUNG_COUNT].push_back(std::to_string((int)(bytes / cub_hot / 1e3)));
    lines[ladder::RUNG_COUNT + 1].push_back(std::to_string((int)(bytes / roof / 1e3)));
    if (csv) {
      fprintf(csv, "%s,cub,cub_device_reduce,%s,%s,%llu,%.3f,%.3f,%.1f,%.4f,%.3f,1\n", g.name.c_str(),
              cureduce_dtype_name(o.dtype), cureduce_op_name(o.op), (unsigned long long)n, cub_hot, cub_cold,
              bytes / cub_hot / 1e3, roof / cub_hot, first / cub_hot);
      fprintf(csv, "%s,roof,read_roofline,%s,%s,%llu,%.3f,0,%.1f,1.0,%.3f,1\n", g.name.c_str(),
              cureduce_dtype_name(o.dtype), cureduce_op_name(o.op), (unsigned long long)n, roof,
              bytes / roof / 1e3, first / roof);
    }
  }
  fprintf(stderr, "\n");
  for (int i = 0; i < ladder::RUNG_COUNT + 2; ++i) {
    if (lines[i].empty())
      continue;
    const std::string label = i < ladder::RUNG_COUNT
                                  ? std::string(ladder::RUNGS[i].id) + " " + ladder::RUNGS[i].name
                                  : (i == ladder::RUNG_COUNT ? "cub" : "read roofline");
    printf("%-26s", label.c_str());
    for (auto &s : lines[i])
      printf(" %7s", s.c_str());
    printf("\n");
  }
  if (csv)
    fclose(csv);
  if (o.plot && plot_csv("shmoo", o.csv, o.plot))
    return 1;
  return wrong ? 1 : 0;
}

} // namespace

extern "C" int cmd_ladder(int argc, char **argv) {
  for (int i = 1; i < argc; ++i)
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      ladder_usage(stdout);
      return 0;
    }
  options o;
  if (int rc = parse(argc, argv, o))
    return rc;
  if (o.plot && !o.csv) {
    fprintf(stderr, "%s ladder: --plot draws from the CSV: give --csv FILE too\n", BENCH_NAME);
    return 2;
  }
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    fprintf(stderr, "%s ladder: no CUDA GPU found: the ladder measures GPU kernels and needs one\n",
            BENCH_NAME);
    return 1;
  }
  const gpu_info g = current_gpu();
  return o.shmoo ? run_shmoo(o, g) : run_table(o, g);
}
