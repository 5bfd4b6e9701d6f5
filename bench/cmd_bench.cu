// `cureduce-bench`: the full-array reductions against the read roofline and CUB, over n, for
// every (dtype, op, accumulator). Every result is validated against the CPU reference before
// it is timed. Layer: the benchmark tool.
#include "args.h"
#include "bench_commands.h"
#include "bench_util.cuh"
#include "cub_reference.cuh"
#include "plot.h"
#include "references.h"

#include <algorithm>
#include <math.h>
#include <string.h>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace bench;

void bench_usage(FILE *to) {
  fprintf(to,
          "usage: %s [--quick] [--held] [--out DIR] [--name NAME] [--dtype LIST] [--op LIST] [--max-n N]\n"
          "     [--data uniform|wide|cancel]\n"
          "\n"
          "Sweep n = 2^10, 2^12, ... 2^30 for every (dtype, op, accumulator): validate each result\n"
          "against the CPU reference (the exact sum for sums), then time hot and cold-L2 medians,\n"
          "with the read roofline and CUB's DeviceReduce measured on the same data in the same\n"
          "run. Writes DIR/bench.csv, charts and a summary of the targets (docs/performance.md).\n"
          "\n"
          "  --quick       7 sizes instead of 11, default accumulators only\n"
          "  --held        hot batches wait until the host has queued them: GPU time alone,\n"
          "                without the host's launch cost (writes bench_held*, not bench*)\n"
          "  --out DIR     output folder (default ./cureduce-results/<gpu>)\n"
          "  --name NAME   file names NAME.csv, NAME_summary.txt, NAME_*.png (default bench,\n"
          "                bench_quick with --quick); e.g. bench_exact for the exact sums' run\n"
          "  --dtype LIST  comma-separated dtypes (default: all)\n"
          "  --op LIST     comma-separated ops (default: all)\n"
          "  --max-n N     largest n (default 2^30)\n"
          "  --data KIND   the input: uniform (default: floats in [-1, 1), integers over a wide\n"
          "                range), or, for the float dtypes only (the default list becomes those),\n"
          "                wide (every finite exponent, subnormals included) or cancel (groups\n"
          "                B, -B, u, v: huge B, small u and v), the exact sums' adversarial inputs\n"
          "\n"
          "%s --rows [--held] [--out DIR] [--name NAME] [--dtype LIST] [--op LIST]\n"
          "     [--shape RxC|OxRxC|mix] [--axis 0|1|mid]\n"
          "\n"
          "Rows, columns and segments instead: the shapes 4096x4096, 32768x1024, 1024x65536,\n"
          "65536x128, 1048576x32, 8x16777216, 16384x8192 along both axes, a variable-segment\n"
          "mix (2^26 elements) and the middle axis of 64x4096x256, 4096x1024x16 and 16384x2048x2,\n"
          "f32 and bf16 sums by default, against the read roofline and CUB's\n"
          "DeviceSegmentedReduce. Writes DIR/bench_rows.csv and bench_rows_summary.txt\n"
          "(with --held, as above: bench_rows_held.csv and bench_rows_held_summary.txt).\n"
          "--shape and --axis run one of those shapes, or one axis, only (to profile it); --name\n"
          "writes NAME.csv and NAME_summary.txt (e.g. bench_rows_exact for --op sum_exact).\n",
          BENCH_NAME, BENCH_NAME);
}

struct options {
  bool quick = false;
  bool held = false; // hot batches held until queued (timer::hold)
  std::string out;
  std::string name; // file stem; empty: bench or bench_quick
  std::vector<cureduce_dtype> dtypes;
  std::vector<cureduce_op> ops;
  uint64_t max_n = 1ull << 30;
  std::string data = "uniform"; // or "wide", "cancel" (fill_adversarial)
};

bool is_float(cureduce_dtype d) { return d != CUREDUCE_I8 && d != CUREDUCE_I32 && d != CUREDUCE_I64; }

std::vector<std::string> split(const char *s) {
  std::vector<std::string> parts;
  std::string cur;
  for (; *s; ++s) {
    if (*s == ',') {
      parts.push_back(cur);
      cur.clear();
    } else
      cur += *s;
  }
  parts.push_back(cur);
  return parts;
}

int parse(int argc, char **argv, options &o) {
  for (int i = 1; i < argc; ++i) {
    const char *v = nullptr;
    int r;
    if (!strcmp(argv[i], "--quick")) {
      o.quick = true;
    } else if (!strcmp(argv[i], "--held")) {
      o.held = true;
    } else if ((r = arg_value(argc, argv, &i, "--out", &v))) {
      if (r < 0)
        return 2;
      o.out = v;
    } else if ((r = arg_value(argc, argv, &i, "--name", &v))) {
      if (r < 0 || !is_file_stem(BENCH_NAME, v))
        return 2;
      o.name = v;
    } else if ((r = arg_value(argc, argv, &i, "--max-n", &v))) {
      if (r < 0 || parse_u64("--max-n", v, &o.max_n))
        return 2;
      if (o.max_n < 1024) {
        fprintf(stderr, "%s: --max-n must be at least 1024\n", BENCH_NAME);
        return 2;
      }
    } else if ((r = arg_value(argc, argv, &i, "--data", &v))) {
      if (r < 0)
        return 2;
      if (strcmp(v, "uniform") && strcmp(v, "wide") && strcmp(v, "cancel")) {
        fprintf(stderr, "%s: --data wants uniform, wide or cancel, got '%s'\n", BENCH_NAME, v);
        return 2;
      }
      o.data = v;
    } else if ((r = arg_value(argc, argv, &i, "--dtype", &v))) {
      if (r < 0)
        return 2;
      for (auto &name : split(v)) {
        cureduce_dtype d;
        if (parse_dtype("--dtype", name.c_str(), &d))
          return 2;
        o.dtypes.push_back(d);
      }
    } else if ((r = arg_value(argc, argv, &i, "--op", &v))) {
      if (r < 0)
        return 2;
      for (auto &name : split(v)) {
        cureduce_op op;
        if (parse_op("--op", name.c_str(), &op))
          return 2;
        o.ops.push_back(op);
      }
    } else {
      fprintf(stderr, "%s: unknown argument '%s' (see --help)\n", BENCH_NAME, argv[i]);
      return 2;
    }
  }
  const bool adversarial = o.data != "uniform";
  if (o.dtypes.empty())
    for (int d = 0; d < CUREDUCE_DTYPE_COUNT; ++d)
      if (!adversarial || is_float((cureduce_dtype)d))
        o.dtypes.push_back((cureduce_dtype)d);
  for (cureduce_dtype d : o.dtypes)
    if (adversarial && !is_float(d)) {
      fprintf(stderr, "%s: --data %s is for float dtypes, not %s\n", BENCH_NAME, o.data.c_str(),
              cureduce_dtype_name(d));
      return 2;
    }
  if (o.ops.empty())
    for (int op = 0; op < CUREDUCE_OP_COUNT; ++op)
      o.ops.push_back((cureduce_op)op);
  return 0;
}

double unit_roundoff(cureduce_dtype acc) {
  switch (acc) {
  case CUREDUCE_F64: return 0x1p-53;
  case CUREDUCE_F32: return 0x1p-24;
  case CUREDUCE_F16: return 0x1p-11;
  case CUREDUCE_BF16: return 0x1p-8;
  case CUREDUCE_F8_E4M3: return 0x1p-4; // outputs of the exact sums only
  case CUREDUCE_F8_E5M2: return 0x1p-3;
  default: return 0;
  }
}

double max_finite(cureduce_dtype acc) {
  return acc == CUREDUCE_F8_E4M3   ? 448.0
         : acc == CUREDUCE_F8_E5M2 ? 57344.0
         : acc == CUREDUCE_F16     ? 65504.0
         : acc == CUREDUCE_BF16    ? 3.38e38
         : acc == CUREDUCE_F32     ? 3.4e38
                                   : 1.79e308;
}

// One result checked against the reference. err: relative error of a float sum, else 0.
struct verdict {
  bool ok;
  double err;
  std::string why;
};

verdict check(cureduce_op op, cureduce_dtype acc, const void *result, const prefix_reference &r) {
  char why[200];
  if (op == CUREDUCE_ARGMIN || op == CUREDUCE_ARGMAX) {
    int64_t idx;
    memcpy(&idx, result, 8);
    const int64_t want = op == CUREDUCE_ARGMIN ? r.argmin : r.argmax;
    snprintf(why, sizeof why, "index %lld, want %lld", (long long)idx, (long long)want);
    return {idx == want, 0, why};
  }
  if (!is_float(acc)) {
    int64_t got;
    if (acc == CUREDUCE_I32) {
      int32_t g;
      memcpy(&g, result, 4);
      got = g;
    } else
      memcpy(&got, result, 8);
    int64_t want = op == CUREDUCE_SUM     ? r.isum
                   : op == CUREDUCE_SUMSQ ? r.isumsq
                   : op == CUREDUCE_MIN   ? (int64_t)r.min
                   : op == CUREDUCE_MAX   ? (int64_t)r.max
                                          : (int64_t)r.absmax;
    if (acc == CUREDUCE_I32)
      want = (int32_t)(uint32_t)(uint64_t)want;
    snprintf(why, sizeof why, "%lld, want %lld", (long long)got, (long long)want);
    return {got == want, 0, why};
  }
  double g;
  (void)cureduce_to_double(acc, result, &g);
  if (op == CUREDUCE_MIN || op == CUREDUCE_MAX || op == CUREDUCE_ABSMAX) {
    const double want = op == CUREDUCE_MIN ? r.min : op == CUREDUCE_MAX ? r.max : r.absmax;
    snprintf(why, sizeof why, "%.17g, want %.17g", g, want);
    return {g == want, 0, why};
  }
  if (op == CUREDUCE_SUM_EXACT || op == CUREDUCE_MEAN_EXACT) {
    // The exact sum and mean rounded once into each output (f64, f32, the input's type) by the
    // CPU's superaccumulator: the result must be those bits (a NaN any NaN).
    const bool mean = op == CUREDUCE_MEAN_EXACT;
    double want = acc == CUREDUCE_F64   ? (mean ? r.mean : r.sum)
                  : acc == CUREDUCE_F32 ? (mean ? r.mean_f32 : r.sum_f32)
                                        : (mean ? r.mean_own : r.sum_own);
    if (acc == CUREDUCE_F8_E4M3 && isinf(want))
      want = NAN; // e4m3 has no infinity: a sum beyond its range is NaN (docs/exact.md)
    snprintf(why, sizeof why, "%.17g, exact %.17g", g, want);
    const bool same = (isnan(g) && isnan(want)) || memcmp(&g, &want, sizeof g) == 0;
    const double err = want != 0 ? fabs(g - want) / fabs(want) : fabs(g);
    return {same, same ? 0 : err, why};
  }
  const double n = (double)r.n;
  double exact = op == CUREDUCE_SUMSQ ? r.sumsq : r.sum;
  double mag = op == CUREDUCE_SUMSQ ? r.sq_abs_sum : r.abs_sum;
  const bool may_overflow = mag >= max_finite(acc); // the sum itself, before a mean divides
  if (op == CUREDUCE_MEAN)
    exact /= n, mag /= n;
  const double u = unit_roundoff(acc);
  const double tiny = acc == CUREDUCE_F16    ? 0x1p-24
                      : acc == CUREDUCE_BF16 ? 0x1p-133
                                             : 0; // underflowing squares
  const double bound = (log2(n + 1) + 64) * u * mag + fabs(exact) * u + n * tiny;
  const double err = exact != 0 ? fabs(g - exact) / fabs(exact) : fabs(g);
  snprintf(why, sizeof why, "%.17g, exact %.17g, bound %.3g", g, exact, bound);
  if (!isfinite(g) && may_overflow)
    return {true, INFINITY, why}; // accumulator overflow
  return {fabs(g - exact) <= bound, err, why};
}

struct row {
  std::string impl;
  cureduce_dtype dtype, acc;
  std::string op;
  uint64_t n;
  double hot, cold, roof_hot, err;
  double cub_hot; // 0 when CUB has no equivalent
  bool stable;
};

std::vector<uint64_t> sweep_sizes(const options &o) {
  std::vector<uint64_t> s;
  const int quick[] = {10, 14, 18, 20, 24, 26, 28};
  if (o.quick) {
    for (int e : quick)
      if ((1ull << e) <= o.max_n)
        s.push_back(1ull << e);
  } else {
    for (int e = 10; e <= 30; e += 2)
      if ((1ull << e) <= o.max_n)
        s.push_back(1ull << e);
  }
  return s;
}

// The accumulators benchmarked for (dtype, op): every supported one, or the default (--quick).
std::vector<cureduce_dtype> accs_for(cureduce_dtype d, cureduce_op op, bool quick) {
  std::vector<cureduce_dtype> v;
  cureduce_dtype def;
  if (cureduce_resolve_acc(op, d, CUREDUCE_ACC_DEFAULT, &def) != CUREDUCE_SUCCESS)
    return v;
  v.push_back(def);
  if (quick)
    return v;
  for (int a = 0; a < CUREDUCE_DTYPE_COUNT; ++a)
    if ((cureduce_dtype)a != def && cureduce_supported(op, d, (cureduce_dtype)a) == CUREDUCE_SUCCESS)
      v.push_back((cureduce_dtype)a);
  return v;
}

struct bench_run {
  const options &o;
  gpu_info g;
  cudaStream_t stream = nullptr;
  cureduce_handle h = nullptr;
  void *d_out = nullptr;
  std::vector<row> rows;
  int wrong = 0, total = 0, done = 0;
  int unheld = 0; // hot batches that started before the host had queued them (timer::hold)

  bench_run(const options &opts, gpu_info gpu) : o(opts), g(std::move(gpu)) {}

  // Time our reduction of one (dtype, op, acc, n), after validating it; false when wrong.
  bool measure_ours(cureduce_op op, cureduce_dtype d, cureduce_dtype acc, const void *d_in, uint64_t n,
                    const prefix_reference &ref, timer &t, row &x) {
    unsigned char a[16], b[16];
    auto run = [&] {
      if (cureduce_reduce(h, op, d, d_in, n, acc, d_out, stream) != CUREDUCE_SUCCESS) {
        fprintf(stderr, "\ncureduce_reduce failed\n");
        exit(1);
      }
    };
    BENCH_CUDA(cudaMemsetAsync(d_out, 0xAB, 16, stream)); // poisoned before each run it checks
    run();
    BENCH_CUDA(cudaMemcpyAsync(a, d_out, 16, cudaMemcpyDeviceToHost, stream));
    BENCH_CUDA(cudaMemsetAsync(d_out, 0xCD, 16, stream));
    run();
    BENCH_CUDA(cudaMemcpyAsync(b, d_out, 16, cudaMemcpyDeviceToHost, stream));
    BENCH_CUDA(cudaStreamSynchronize(stream));
    x.stable = memcmp(a, b, cureduce_result_size(op, acc)) == 0;
    const verdict v = check(op, acc, a, ref);
    x.err = v.err;
    if (!v.ok || !x.stable) {
      fprintf(stderr, "\nWRONG: %s %s->%s n=%llu: %s%s\n", cureduce_op_name(op), cureduce_dtype_name(d),
              cureduce_dtype_name(acc), (unsigned long long)n, v.why.c_str(),
              x.stable ? "" : " (not reproducible)");
      ++wrong;
      return false;
    }
    const double once = t.hot_us(run, 1, 1);
    x.hot = t.hot_us(run, reps_for(once, 20.0, 7, 200));
    x.cold = t.cold_us(run, reps_for(once, 10.0, 5, 20));
    return true;
  }

  void measure_cub(cureduce_op op, cureduce_dtype d, cureduce_dtype acc, const void *d_in, uint64_t n,
                   const prefix_reference &ref, timer &t, row &ours) {
    auto cub = make_cub_run(op, d, acc, d_in, n, d_out);
    if (!cub)
      return;
    unsigned char a[16];
    BENCH_CUDA(cudaMemsetAsync(d_out, 0xAB, 16, stream)); // else ours, still there, would be checked
    cub->launch(stream);
    BENCH_CUDA(cudaMemcpyAsync(a, d_out, 16, cudaMemcpyDeviceToHost, stream));
    BENCH_CUDA(cudaStreamSynchronize(stream));
    // CUB may legitimately differ (NaN rules, an inexact sum): its error is reported, not fatal
    const verdict v = check(op, acc, a, ref);
    row x = ours;
    x.impl = "cub";
    x.err = v.err;
    auto run = [&] { cub->launch(stream); };
    const double once = t.hot_us(run, 1, 1);
    x.hot = t.hot_us(run, reps_for(once, 20.0, 7, 200));
    x.cold = t.cold_us(run, reps_for(once, 10.0, 5, 20));
    x.cub_hot = x.hot;
    x.stable = true;
    ours.cub_hot = x.hot;
    rows.push_back(x);
  }

  void run_dtype(cureduce_dtype d, const std::vector<uint64_t> &sizes) {
    const size_t size = cureduce_dtype_size(d);
    const uint64_t max_n = sizes.back();
    void *d_in;
    BENCH_CUDA(cudaMalloc(&d_in, max_n * size));
    // floats uniform in [-1, 1); i8 its whole range; wider integers +-2^20 (exact in f64)
    if (o.data != "uniform")
      fill_adversarial(d, d_in, max_n, 7 + d, o.data == "wide" ? FILL_WIDE : FILL_CANCEL, stream);
    else if (d == CUREDUCE_I8)
      fill_random(d, d_in, max_n, 7 + d, -128.0, 128.0, stream);
    else if (!is_float(d))
      fill_random(d, d_in, max_n, 7 + d, -1048576.0, 1048576.0, stream);
    else
      fill_random(d, d_in, max_n, 7 + d, -1.0, 1.0, stream);
    std::vector<char> host(max_n * size);
    BENCH_CUDA(cudaMemcpyAsync(host.data(), d_in, max_n * size, cudaMemcpyDeviceToHost, stream));
    BENCH_CUDA(cudaStreamSynchronize(stream));
    const auto refs =
        compute_references(d, host.data(), sizes, (int)std::max(1u, std::thread::hardware_concurrency()));
    timer t(stream, g.l2_bytes, o.held);
    for (size_t k = 0; k < sizes.size(); ++k) {
      const uint64_t n = sizes[k];
      const double roof_hot = read_roofline_us(t, d_in, n * size, stream, false, 30);
      const double roof_cold = read_roofline_us(t, d_in, n * size, stream, true, 10);
      rows.push_back({"roofline", d, d, "read", n, roof_hot, roof_cold, roof_hot, 0, 0, true});
      for (cureduce_op op : o.ops) {
        for (cureduce_dtype acc : accs_for(d, op, o.quick)) {
          ++done;
          fprintf(stderr, "\r[%d/%d] %-6s %-6s acc %-4s n=2^%-2d   ", done, total, cureduce_op_name(op),
                  cureduce_dtype_name(d), cureduce_dtype_name(acc), (int)log2((double)n));
          row x{"cureduce", d, acc, cureduce_op_name(op), n, 0, 0, roof_hot, 0, 0, true};
          if (!measure_ours(op, d, acc, d_in, n, refs[k], t, x))
            continue;
          measure_cub(op, d, acc, d_in, n, refs[k], t, x);
          rows.push_back(x);
        }
      }
    }
    unheld += t.unheld_batches();
    BENCH_CUDA(cudaFree(d_in));
  }
};

std::string dir_of(const options &o, const gpu_info &g) { return results_dir(o.out, g); }

void write_csv(const std::string &path, const bench_run &b) {
  FILE *f = fopen(path.c_str(), "w");
  if (!f) {
    fprintf(stderr, "%s: cannot write %s\n", BENCH_NAME, path.c_str());
    exit(1);
  }
  fprintf(f, "gpu,impl,dtype,acc,op,n,hot_us,cold_us,gbps,roof_fraction,cub_speedup,rel_error,roof_hot_us,"
             "bitwise_stable\n");
  for (const row &x : b.rows) {
    const double bytes = (double)x.n * cureduce_dtype_size(x.dtype);
    char cub[32] = "";
    if (x.cub_hot > 0)
      snprintf(cub, sizeof cub, "%.4f", x.cub_hot / x.hot);
    fprintf(f, "%s,%s,%s,%s,%s,%llu,%.3f,%.3f,%.1f,%.4f,%s,%.3e,%.3f,%d\n", b.g.name.c_str(), x.impl.c_str(),
            cureduce_dtype_name(x.dtype), cureduce_dtype_name(x.acc), x.op.c_str(), (unsigned long long)x.n,
            x.hot, x.cold, bytes / x.hot / 1e3, x.roof_hot / x.hot, cub, x.err, x.roof_hot, x.stable ? 1 : 0);
  }
  fclose(f);
}

// The issue's targets, measured: printed and written next to the CSV.
void summarize(const std::string &path, const bench_run &b) {
  std::string s;
  char line[400];
  double log_sum = 0, worst_big = 1e9, worst_mid = 0, worst_cub = 1e9;
  int count = 0, big_misses = 0, mid_misses = 0, cub_misses = 0;
  std::string big_list, mid_list, cub_list;
  for (const row &x : b.rows) {
    if (x.impl != "cureduce" || x.cub_hot <= 0) {
      if (x.impl == "cureduce" && x.n >= (1ull << 26))
        worst_big = std::min(worst_big, x.roof_hot / x.hot);
      if (x.impl == "cureduce" && x.n >= (1ull << 26) && x.roof_hot / x.hot < 0.97) {
        ++big_misses;
        snprintf(line, sizeof line, "  %s %s->%s n=%llu: %.3f of roofline\n", x.op.c_str(),
                 cureduce_dtype_name(x.dtype), cureduce_dtype_name(x.acc), (unsigned long long)x.n,
                 x.roof_hot / x.hot);
        big_list += line;
      }
      continue;
    }
    const double speedup = x.cub_hot / x.hot;
    log_sum += log(speedup), ++count;
    const double roof = x.roof_hot / x.hot;
    if (x.n >= (1ull << 26)) {
      worst_big = std::min(worst_big, roof);
      if (roof < 0.97) {
        ++big_misses;
        snprintf(line, sizeof line, "  %s %s->%s n=%llu: %.3f of roofline\n", x.op.c_str(),
                 cureduce_dtype_name(x.dtype), cureduce_dtype_name(x.acc), (unsigned long long)x.n, roof);
        big_list += line;
      }
    }
    if (x.n >= (1ull << 14) && x.n <= (1ull << 20)) {
      const double frac = x.hot / x.cub_hot;
      worst_mid = std::max(worst_mid, frac);
      if (frac > 0.5) {
        ++mid_misses;
        snprintf(line, sizeof line, "  %s %s->%s n=%llu: %.2f of CUB's time\n", x.op.c_str(),
                 cureduce_dtype_name(x.dtype), cureduce_dtype_name(x.acc), (unsigned long long)x.n, frac);
        mid_list += line;
      }
    }
    worst_cub = std::min(worst_cub, speedup);
    if (speedup < 1 / 1.03) {
      ++cub_misses;
      snprintf(line, sizeof line, "  %s %s->%s n=%llu: CUB %.2fx faster\n", x.op.c_str(),
               cureduce_dtype_name(x.dtype), cureduce_dtype_name(x.acc), (unsigned long long)x.n,
               1 / speedup);
      cub_list += line;
    }
  }
  // f32 sum error against CUB's
  std::string err_list;
  int err_misses = 0, err_count = 0;
  for (const row &x : b.rows)
    if (x.impl == "cub" && x.op == "sum" && x.dtype == CUREDUCE_F32 && x.acc == CUREDUCE_F32)
      for (const row &y : b.rows)
        if (y.impl == "cureduce" && y.op == "sum" && y.dtype == CUREDUCE_F32 && y.acc == CUREDUCE_F32 &&
            y.n == x.n) {
          ++err_count;
          if (y.err > x.err) {
            ++err_misses;
            snprintf(line, sizeof line, "  n=%llu: ours %.2e, CUB %.2e\n", (unsigned long long)x.n, y.err,
                     x.err);
            err_list += line;
          }
        }
  snprintf(
      line, sizeof line, "cureduce-bench on %s: %d (dtype, op, acc, n) results validated, %d wrong\n",
      b.g.name.c_str(),
      (int)std::count_if(b.rows.begin(), b.rows.end(), [](const row &x) { return x.impl == "cureduce"; }),
      b.wrong);
  s += line;
  s += "data: " + b.o.data + "\n";
  s += hot_timing_line(b.o.held);
  snprintf(line, sizeof line, "target n >= 2^26 at >= 0.97 of the read roofline: %d misses (worst %.3f)\n",
           big_misses, worst_big);
  s += line + big_list;
  snprintf(line, sizeof line, "target n in 2^14..2^20 at <= 0.5 of CUB's time: %d misses (worst %.2f)\n",
           mid_misses, worst_mid);
  s += line + mid_list;
  snprintf(line, sizeof line, "target never more than 3%% slower than CUB: %d misses (worst speed-up %.3f)\n",
           cub_misses, worst_cub);
  s += line + cub_list;
  snprintf(line, sizeof line, "target geometric-mean speed-up over CUB >= 1.3: %.3f over %d comparisons\n",
           count ? exp(log_sum / count) : 0.0, count);
  s += line;
  snprintf(line, sizeof line, "target f32 sum error <= CUB's: %d of %d sizes worse\n", err_misses, err_count);
  s += line + err_list;
  if (b.o.held)
    s += unheld_batches_line(b.unheld);
  fputs(s.c_str(), stdout);
  FILE *f = fopen(path.c_str(), "w");
  if (f) {
    fputs(s.c_str(), f);
    fclose(f);
  }
}

} // namespace

extern "C" int cmd_bench(int argc, char **argv) {
  for (int i = 1; i < argc; ++i)
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      bench_usage(stdout);
      return 0;
    }
  for (int i = 1; i < argc; ++i)
    if (!strcmp(argv[i], "--rows"))
      return cmd_bench_rows(argc, argv);
  options o;
  if (int rc = parse(argc, argv, o))
    return rc;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    fprintf(stderr, "%s: no CUDA GPU found: the benchmark measures GPU kernels and needs one\n", BENCH_NAME);
    return 1;
  }
  bench_run b(o, current_gpu());
  BENCH_CUDA(cudaStreamCreateWithFlags(&b.stream, cudaStreamNonBlocking));
  BENCH_CUDA(cudaMalloc(&b.d_out, 16));
  if (cureduce_create(&b.h) != CUREDUCE_SUCCESS) {
    fprintf(stderr, "%s: cureduce_create failed\n", BENCH_NAME);
    return 1;
  }
  const auto sizes = sweep_sizes(o);
  for (cureduce_dtype d : o.dtypes)
    for (cureduce_op op : o.ops)
      b.total += (int)(accs_for(d, op, o.quick).size() * sizes.size());
  for (cureduce_dtype d : o.dtypes)
    b.run_dtype(d, sizes);
  fprintf(stderr, "\n");
  const std::string dir = dir_of(o, b.g);
  if (make_dirs(dir))
    return 1;
  const std::string name = !o.name.empty() ? o.name : o.quick ? "bench_quick" : "bench";
  const std::string stem = dir + "/" + name + (o.held ? "_held" : "");
  write_csv(stem + ".csv", b);
  summarize(stem + "_summary.txt", b);
  int plot_rc = plot_csv("bench", (stem + ".csv").c_str(), (stem + "_sum.png").c_str());
  plot_rc |= plot_csv("bench-ops", (stem + ".csv").c_str(), (stem + "_ops.png").c_str());
  printf("wrote %s.csv, %s_summary.txt and charts\n", stem.c_str(), stem.c_str());
  cureduce_destroy(b.h);
  return b.wrong ? 1 : plot_rc;
}
