// `cureduce-bench --rows`: row, column and segment reductions on the shapes of docs/rows.md, along
// both axes, and the middle axis of 3-d shapes, against the read roofline and CUB's
// DeviceSegmentedReduce measured in the same run (CUB has no middle-axis call). Every result is
// validated against the CPU reference before it is timed.
// Layer: the benchmark tool.
#include "args.h"
#include "bench_commands.h"
#include "bench_util.cuh"
#include "cub_segmented.cuh"
#include "rows_shapes.h"

#include <algorithm>
#include <math.h>
#include <string.h>
#include <string>
#include <vector>

namespace {

using namespace bench;

// "4096x4096", "64x4096x256", or "mix" for the variable-segment mix.
std::string shape_name(const rows_shape &s) {
  const std::string outer = s.outer ? std::to_string(s.outer) + "x" : "";
  return s.rows ? outer + std::to_string(s.rows) + "x" + std::to_string(s.cols) : "mix";
}

// Axes: 1 one result per row, 0 per column, MID the middle axis of an outer x rows x cols shape.
constexpr int MID = 2;

struct result_row {
  std::string impl, op, axis;
  cureduce_dtype dtype, acc;
  uint64_t rows, cols;
  double hot, cold, roof_hot, err, cub_hot;
  bool stable;
  uint64_t outer = 1; // the middle axis: outer x rows x cols
};

float host_value(cureduce_dtype d, const void *p) {
  if (d == CUREDUCE_F32) {
    float f;
    memcpy(&f, p, 4);
    return f;
  }
  uint16_t b; // bf16: the high half of an f32
  memcpy(&b, p, 2);
  const uint32_t w = (uint32_t)b << 16;
  float f;
  memcpy(&f, &w, 4);
  return f;
}

// The variable-segment mix: lengths log-uniform in [1, 2^20] with one in ten empty, until
// `total` elements; deterministic.
std::vector<int64_t> segment_mix(uint64_t total) {
  std::vector<int64_t> off{0};
  uint64_t state = 12345;
  auto next = [&] {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (z ^ (z >> 31)) >> 11;
  };
  while ((uint64_t)off.back() < total) {
    const double u = (double)next() * 0x1p-53;
    int64_t len = u < 0.1 ? 0 : (int64_t)exp2((double)next() * 0x1p-53 * 20.0);
    len = std::min<int64_t>(len, (int64_t)total - off.back());
    off.push_back(off.back() + len);
  }
  return off;
}

struct rows_bench {
  gpu_info g;
  cudaStream_t stream = nullptr;
  cureduce_handle h = nullptr;
  std::vector<result_row> out_rows;
  int wrong = 0;
  bool held = false; // hot batches held until queued (--held, timer::hold): GPU time alone
  int unheld = 0;    // hot batches the hold let go before the host had queued them

  void run_states(cureduce_dtype d, cureduce_dtype acc, uint64_t segments, const void *d_in,
                  const int64_t *d_off, const std::vector<int64_t> &off, void *d_out,
                  const std::vector<unsigned char> &got, size_t out_size, timer &t, const result_row &x);

  // Validate then time one configuration.
  void run(cureduce_dtype d, cureduce_op op, const rows_shape &s, int axis, const void *d_in,
           const std::vector<char> &host, const int64_t *d_off, const std::vector<int64_t> &off) {
    cureduce_dtype acc;
    (void)cureduce_resolve_acc(op, d, CUREDUCE_ACC_DEFAULT, &acc);
    const bool seg = s.rows == 0;
    const uint64_t segments = seg ? off.size() - 1 : 0;
    const uint64_t outer = axis == MID ? s.outer : 1;
    const uint64_t outputs = seg ? segments : axis == 1 ? s.rows : outer * s.cols;
    const uint64_t elements = seg ? (uint64_t)off.back() : outer * s.rows * s.cols;
    const size_t size = cureduce_dtype_size(d), out_size = cureduce_result_size(op, acc);
    const char *axis_name = seg ? "segments" : axis == 1 ? "1" : axis == MID ? "mid" : "0";
    fprintf(stderr, "\r%-6s %-5s %-22s axis %-8s    ", cureduce_op_name(op), cureduce_dtype_name(d),
            shape_name(s).c_str(), axis_name);

    void *d_out;
    BENCH_CUDA(cudaMalloc(&d_out, outputs * out_size + 16));
    auto ours = [&] {
      cureduce_status st =
          seg           ? cureduce_reduce_segments(h, op, d, d_in, segments, d_off, acc, d_out, stream)
          : axis == 1   ? cureduce_reduce_rows(h, op, d, d_in, s.rows, s.cols, s.cols, acc, d_out, stream)
          : axis == MID ? cureduce_reduce_axis(h, op, d, d_in, outer, s.rows, s.cols, acc, d_out, stream)
                        : cureduce_reduce_cols(h, op, d, d_in, s.rows, s.cols, s.cols, acc, d_out, stream);
      if (st != CUREDUCE_SUCCESS) {
        fprintf(stderr, "\nreduce failed: %s\n", cureduce_status_string(st));
        exit(1);
      }
    };
    // Validate: against the CPU in f64 (sums, within a rounding bound) or exactly (others).
    std::vector<unsigned char> got(outputs * out_size), again(outputs * out_size), want(outputs * 16);
    ours();
    BENCH_CUDA(cudaMemcpyAsync(got.data(), d_out, got.size(), cudaMemcpyDeviceToHost, stream));
    ours();
    BENCH_CUDA(cudaMemcpyAsync(again.data(), d_out, again.size(), cudaMemcpyDeviceToHost, stream));
    BENCH_CUDA(cudaStreamSynchronize(stream));
    const bool stable = got == again;
    const bool sum = op == CUREDUCE_SUM;
    const cureduce_dtype ref_acc = sum ? CUREDUCE_F64 : acc;
    const cureduce_status st =
        seg ? cureduce_cpu_reduce_segments(op, d, host.data(), segments, off.data(), ref_acc, want.data())
        : axis == 1
            ? cureduce_cpu_reduce_rows(op, d, host.data(), s.rows, s.cols, s.cols, ref_acc, want.data())
        : axis == MID
            ? cureduce_cpu_reduce_axis(op, d, host.data(), outer, s.rows, s.cols, ref_acc, want.data())
            : cureduce_cpu_reduce_cols(op, d, host.data(), s.rows, s.cols, s.cols, ref_acc, want.data());
    double err = 0;
    bool ok = st == CUREDUCE_SUCCESS;
    if (ok && sum) {
      // Sums of |x| per output, for a normwise error: |got - want| / sum |x|.
      std::vector<double> abs_sum(outputs, 0.0);
      for (uint64_t o = 0; o < outputs; ++o) {
        const uint64_t b = seg ? off[o] : axis == 1 ? o * s.cols : 0;
        const uint64_t n = seg ? off[o + 1] - off[o] : axis == 1 ? s.cols : 0;
        for (uint64_t i = b; i < b + n; ++i)
          abs_sum[o] += fabs(host_value(d, host.data() + i * size));
      }
      if (!seg && axis != 1)
        for (uint64_t o = 0; o < outer; ++o)
          for (uint64_t r = 0; r < s.rows; ++r)
            for (uint64_t c = 0; c < s.cols; ++c)
              abs_sum[o * s.cols + c] +=
                  fabs(host_value(d, host.data() + ((o * s.rows + r) * s.cols + c) * size));
      for (uint64_t o = 0; o < outputs; ++o) {
        float ours_v;
        double w;
        memcpy(&ours_v, got.data() + o * 4, 4);
        memcpy(&w, want.data() + o * 8, 8);
        const uint64_t len = seg ? off[o + 1] - off[o] : axis == 1 ? s.cols : s.rows;
        const double e = abs_sum[o] > 0 ? fabs(ours_v - w) / abs_sum[o] : fabs(ours_v - w);
        err = std::max(err, e);
        if (!(e <= (log2((double)len + 1) + 64) * 0x1p-24))
          ok = false;
      }
    } else if (ok) {
      ok = memcmp(got.data(), want.data(), got.size()) == 0;
    }
    if (!ok || !stable) {
      fprintf(stderr, "\nWRONG: %s %s %s axis %s%s\n", cureduce_op_name(op), cureduce_dtype_name(d),
              shape_name(s).c_str(), axis_name, stable ? "" : " (not reproducible)");
      ++wrong;
      BENCH_CUDA(cudaFree(d_out));
      return;
    }
    timer t(stream, g.l2_bytes, held);
    // The roofline moves what the call must: the input read, the results written (an eighth of
    // the input for 8-row f32 columns; negligible for the other shapes).
    const size_t out_bytes = outputs * out_size;
    const double roof_hot = read_roofline_us(t, d_in, elements * size, stream, false, 20, d_out, out_bytes);
    const double roof_cold = read_roofline_us(t, d_in, elements * size, stream, true, 10, d_out, out_bytes);
    const uint64_t rows_col = seg ? segments : s.rows, cols_col = seg ? elements : s.cols;
    out_rows.push_back({"roofline", "read_write", axis_name, d, d, rows_col, cols_col, roof_hot, roof_cold,
                        roof_hot, 0, 0, true, outer});
    result_row x{"cureduce", cureduce_op_name(op),
                 axis_name,  d,
                 acc,        rows_col,
                 cols_col,   0,
                 0,          roof_hot,
                 err,        0,
                 stable,     outer};
    const double once = t.hot_us(ours, 1, 1);
    x.hot = t.hot_us(ours, reps_for(once, 30.0, 7, 200));
    x.cold = t.cold_us(ours, reps_for(once, 10.0, 5, 20));
    if (sum && axis != MID) {
      auto cub =
          make_cub_segmented_sum(d, d_in, s.rows, s.cols, axis, seg ? d_off : nullptr, segments, d_out);
      if (cub) {
        auto cub_launch = [&] { cub->launch(stream); };
        cub_launch();
        std::vector<float> cg(outputs);
        BENCH_CUDA(cudaMemcpyAsync(cg.data(), d_out, outputs * 4, cudaMemcpyDeviceToHost, stream));
        BENCH_CUDA(cudaStreamSynchronize(stream));
        double cub_err = 0;
        for (uint64_t o = 0; o < outputs; ++o) {
          double w;
          memcpy(&w, want.data() + o * 8, 8);
          cub_err = std::max(cub_err, fabs(cg[o] - w) / std::max(fabs(w), 1e-30));
        }
        const double c_once = t.hot_us(cub_launch, 1, 1);
        result_row c{"cub_segmented", x.op, axis_name, d,   acc, rows_col, cols_col, 0, 0,
                     roof_hot,        0,    0,         true};
        c.hot = t.hot_us(cub_launch, reps_for(c_once, 30.0, 5, 200));
        c.cold = t.cold_us(cub_launch, reps_for(c_once, 10.0, 3, 10));
        c.cub_hot = c.hot;
        x.cub_hot = c.hot;
        (void)cub_err;
        out_rows.push_back(c);
      }
    }
    out_rows.push_back(x);
    if (seg && op == CUREDUCE_SUM_EXACT)
      run_states(d, acc, segments, d_in, d_off, off, d_out, got, out_size, t, x);
    unheld += t.unheld_batches();
    BENCH_CUDA(cudaFree(d_out));
  }
};

// The exact segment sums again through running states (x: the one-call row, got its results):
// clear the states, add the segments (cureduce_exact_accumulate_segments), round them
// (cureduce_exact_finish_rows). The results must be the one call's bits (empty segments: zero).
void rows_bench::run_states(cureduce_dtype d, cureduce_dtype acc, uint64_t segments, const void *d_in,
                            const int64_t *d_off, const std::vector<int64_t> &off, void *d_out,
                            const std::vector<unsigned char> &got, size_t out_size, timer &t,
                            const result_row &x) {
  int64_t *d_states;
  const size_t state_bytes = segments * CUREDUCE_EXACT_STATE_WORDS * sizeof(int64_t);
  BENCH_CUDA(cudaMalloc(&d_states, state_bytes));
  auto states = [&] {
    BENCH_CUDA(cudaMemsetAsync(d_states, 0, state_bytes, stream));
    if (cureduce_exact_accumulate_segments(h, d, d_in, segments, d_off, d_states, stream) !=
            CUREDUCE_SUCCESS ||
        cureduce_exact_finish_rows(h, CUREDUCE_SUM_EXACT, d_states, segments, acc, d_out, stream) !=
            CUREDUCE_SUCCESS) {
      fprintf(stderr, "\nexact segment states failed\n");
      exit(1);
    }
  };
  states();
  std::vector<unsigned char> via(got.size());
  BENCH_CUDA(cudaMemcpyAsync(via.data(), d_out, via.size(), cudaMemcpyDeviceToHost, stream));
  BENCH_CUDA(cudaStreamSynchronize(stream));
  bool ok = true;
  for (uint64_t o = 0; o < segments && ok; ++o) {
    const unsigned char *v = via.data() + o * out_size;
    if (off[o + 1] > off[o])
      ok = memcmp(v, got.data() + o * out_size, out_size) == 0;
    else // an empty segment's state rounds to a zero of either sign
      for (size_t b = 0; b < out_size; ++b)
        ok = ok && (v[b] & (b + 1 == out_size ? 0x7f : 0xff)) == 0;
  }
  if (!ok) {
    fprintf(stderr, "\nWRONG: sum_exact %s segment states differ from the one call\n",
            cureduce_dtype_name(d));
    ++wrong;
  } else {
    result_row r = x;
    r.impl = "cureduce_states";
    const double once = t.hot_us(states, 1, 1);
    r.hot = t.hot_us(states, reps_for(once, 30.0, 7, 200));
    r.cold = t.cold_us(states, reps_for(once, 10.0, 5, 20));
    r.cub_hot = 0;
    out_rows.push_back(r);
  }
  BENCH_CUDA(cudaFree(d_states));
}

void write_outputs(const std::string &dir, const std::string &name, const rows_bench &b) {
  const std::string stem = dir + "/" + (name.empty() ? "bench_rows" : name) + (b.held ? "_held" : "");
  const std::string csv = stem + ".csv", txt = stem + "_summary.txt";
  FILE *f = fopen(csv.c_str(), "w");
  FILE *s = fopen(txt.c_str(), "w");
  if (!f || !s) {
    fprintf(stderr, "%s: cannot write %s\n", BENCH_NAME, dir.c_str());
    exit(1);
  }
  fprintf(f, "gpu,impl,dtype,acc,op,rows,cols,axis,hot_us,cold_us,gbps,roof_fraction,cub_speedup,rel_error,"
             "roof_hot_us,bitwise_stable,outer\n");
  fprintf(s,
          "cureduce-bench --rows on %s (hot medians; roof = roofline time (reading the input, writing the "
          "results) / ours; "
          "axis 1: one result per row, 0: per column, mid: the middle axis of outer x rows x cols; "
          "segments: rows = segments, cols = elements)\n",
          b.g.name.c_str());
  fputs(hot_timing_line(b.held), s);
  if (b.held)
    fputs(unheld_batches_line(b.unheld).c_str(), s);
  fputs("\n", s);
  fprintf(s, "%-6s %-5s %-22s %-8s %9s %9s %7s %8s\n", "op", "dtype", "shape", "axis", "ours_us", "GB/s",
          "roof", "xCUB");
  int misses = 0, total = 0;
  for (const result_row &x : b.out_rows) {
    const double bytes = x.axis == "segments"
                             ? (double)x.cols * cureduce_dtype_size(x.dtype)
                             : (double)x.outer * x.rows * x.cols * cureduce_dtype_size(x.dtype);
    const double gbps = bytes / (x.hot * 1e3);
    const double roof = x.roof_hot / x.hot, vs_cub = x.cub_hot > 0 ? x.cub_hot / x.hot : 0;
    fprintf(f, "%s,%s,%s,%s,%s,%llu,%llu,%s,%.3f,%.3f,%.1f,%.4f,%.4f,%.3g,%.3f,%d,%llu\n", b.g.name.c_str(),
            x.impl.c_str(), cureduce_dtype_name(x.dtype), cureduce_dtype_name(x.acc), x.op.c_str(),
            (unsigned long long)x.rows, (unsigned long long)x.cols, x.axis.c_str(), x.hot, x.cold, gbps, roof,
            vs_cub, x.err, x.roof_hot, x.stable ? 1 : 0, (unsigned long long)x.outer);
    if (x.impl != "cureduce" && x.impl != "cureduce_states")
      continue;
    char shape_s[64];
    if (x.outer > 1)
      snprintf(shape_s, sizeof shape_s, "%llux%llux%llu", (unsigned long long)x.outer,
               (unsigned long long)x.rows, (unsigned long long)x.cols);
    else
      snprintf(shape_s, sizeof shape_s, "%llux%llu", (unsigned long long)x.rows, (unsigned long long)x.cols);
    const bool target_shape = x.op == "sum" && (x.dtype == CUREDUCE_F32 || x.dtype == CUREDUCE_BF16);
    const double need = x.axis == "segments" ? 0.8 : 0.9;
    const bool miss = target_shape && roof < need;
    total += target_shape;
    misses += miss;
    fprintf(s, "%-6s %-5s %-22s %-8s %9.2f %9.1f %7.3f %8.2f%s\n", x.op.c_str(), cureduce_dtype_name(x.dtype),
            shape_s, x.impl == "cureduce_states" ? "states" : x.axis.c_str(), x.hot, gbps, roof, vs_cub,
            miss ? "  MISS (roofline target)" : "");
  }
  fprintf(s, "\nroofline targets (f32/bf16 sums: >= 0.9, segment mix >= 0.8): %d of %d met\n", total - misses,
          total);
  fprintf(s, "validated results: %d wrong\n", b.wrong);
  fclose(f);
  fclose(s);
  printf("wrote %s and %s\n", csv.c_str(), txt.c_str());
}

std::vector<std::string> split_list(const std::string &list) {
  std::vector<std::string> parts;
  size_t at = 0;
  while (at <= list.size()) {
    const size_t comma = std::min(list.find(',', at), list.size());
    parts.push_back(list.substr(at, comma - at));
    at = comma + 1;
  }
  return parts;
}

} // namespace

// Called by cmd_bench for `bench --rows [--held] [--out DIR] [--name NAME] [--dtype LIST] [--op LIST]
// [--shape RxC|OxRxC|mix] [--axis 0|1|mid]` (the last two pick one of the listed shapes or one axis, e.g.
// to profile it; --held times at the GPU's pace and writes bench_rows_held*, as bench --held;
// --name NAME writes NAME.csv and NAME_summary.txt instead of bench_rows*).
extern "C" int cmd_bench_rows(int argc, char **argv) {
  std::string out, stem_name, only_shape;
  int only_axis = -1;
  bool held = false;
  std::vector<cureduce_dtype> dtypes;
  std::vector<cureduce_op> ops;
  for (int i = 1; i < argc; ++i) {
    const char *v = nullptr;
    int r;
    if (!strcmp(argv[i], "--rows")) {
      continue;
    } else if (!strcmp(argv[i], "--held")) {
      held = true;
    } else if ((r = arg_value(argc, argv, &i, "--out", &v))) {
      if (r < 0)
        return 2;
      out = v;
    } else if ((r = arg_value(argc, argv, &i, "--name", &v))) {
      if (r < 0 || !is_file_stem(BENCH_NAME " bench --rows", v))
        return 2;
      stem_name = v;
    } else if ((r = arg_value(argc, argv, &i, "--dtype", &v))) {
      if (r < 0)
        return 2;
      for (const std::string &name : split_list(v)) {
        cureduce_dtype d;
        if (parse_dtype("--dtype", name.c_str(), &d))
          return 2;
        dtypes.push_back(d);
      }
    } else if ((r = arg_value(argc, argv, &i, "--op", &v))) {
      if (r < 0)
        return 2;
      for (const std::string &name : split_list(v)) {
        cureduce_op op;
        if (parse_op("--op", name.c_str(), &op))
          return 2;
        ops.push_back(op);
      }
    } else if ((r = arg_value(argc, argv, &i, "--shape", &v))) {
      if (r < 0)
        return 2;
      only_shape = v;
      bool known = false;
      for (const rows_shape &s : ROWS_SHAPES)
        known = known || only_shape == shape_name(s);
      if (!known) {
        fprintf(stderr, "%s bench --rows: --shape '%s' is not one of the benchmark's shapes (", BENCH_NAME,
                v);
        for (const rows_shape &s : ROWS_SHAPES)
          fprintf(stderr, "%s%s", &s == ROWS_SHAPES ? "" : ", ", shape_name(s).c_str());
        fprintf(stderr, ")\n");
        return 2;
      }
    } else if ((r = arg_value(argc, argv, &i, "--axis", &v))) {
      if (r < 0)
        return 2;
      if (strcmp(v, "0") && strcmp(v, "1") && strcmp(v, "mid")) {
        fprintf(stderr, "%s bench --rows: --axis must be 0 (columns), 1 (rows) or mid, not '%s'\n",
                BENCH_NAME, v);
        return 2;
      }
      only_axis = strcmp(v, "mid") ? v[0] - '0' : MID;
    } else {
      fprintf(stderr, "%s bench --rows: unknown argument '%s' (see --help)\n", BENCH_NAME, argv[i]);
      return 2;
    }
  }
  if (dtypes.empty())
    dtypes = {CUREDUCE_F32, CUREDUCE_BF16};
  if (ops.empty())
    ops = {CUREDUCE_SUM};
  for (cureduce_dtype d : dtypes)
    for (cureduce_op op : ops)
      if (op == CUREDUCE_SUM && d != CUREDUCE_F32 && d != CUREDUCE_BF16) {
        fprintf(stderr, "%s bench --rows: sums are validated for f32 and bf16 only\n", BENCH_NAME);
        return 2;
      }
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    fprintf(stderr, "%s: no CUDA GPU found: the benchmark measures GPU kernels and needs one\n", BENCH_NAME);
    return 1;
  }
  rows_bench b;
  b.held = held;
  b.g = current_gpu();
  BENCH_CUDA(cudaStreamCreateWithFlags(&b.stream, cudaStreamNonBlocking));
  if (cureduce_create(&b.h) != CUREDUCE_SUCCESS) {
    fprintf(stderr, "%s: cureduce_create failed\n", BENCH_NAME);
    return 1;
  }
  const std::vector<int64_t> off = segment_mix(1ull << 26);
  int64_t *d_off;
  BENCH_CUDA(cudaMalloc(&d_off, off.size() * sizeof(int64_t)));
  BENCH_CUDA(cudaMemcpy(d_off, off.data(), off.size() * sizeof(int64_t), cudaMemcpyHostToDevice));
  for (cureduce_dtype d : dtypes) {
    for (const rows_shape &s : ROWS_SHAPES) {
      if (!only_shape.empty() && only_shape != shape_name(s))
        continue;
      if ((only_axis == 0 && !s.rows) || (only_axis >= 0 && (only_axis == MID) != (s.outer > 0)))
        continue; // the segment mix has no column form; 3-d shapes only a middle axis
      const uint64_t elements = s.rows ? (s.outer ? s.outer : 1) * s.rows * s.cols : (uint64_t)off.back();
      const size_t size = cureduce_dtype_size(d);
      void *d_in;
      BENCH_CUDA(cudaMalloc(&d_in, elements * size));
      fill_random(d, d_in, elements, 11 + d, -1.0, 1.0, b.stream);
      std::vector<char> host(elements * size);
      BENCH_CUDA(cudaMemcpyAsync(host.data(), d_in, host.size(), cudaMemcpyDeviceToHost, b.stream));
      BENCH_CUDA(cudaStreamSynchronize(b.stream));
      for (cureduce_op op : ops) {
        if (s.outer) {
          b.run(d, op, s, MID, d_in, host, d_off, off);
          continue;
        }
        for (int axis = 1; axis >= (s.rows ? 0 : 1); --axis)
          if (only_axis < 0 || axis == only_axis)
            b.run(d, op, s, axis, d_in, host, d_off, off);
      }
      BENCH_CUDA(cudaFree(d_in));
    }
  }
  fprintf(stderr, "\n");
  const std::string dir = results_dir(out, b.g);
  if (make_dirs(dir))
    return 1;
  write_outputs(dir, stem_name, b);
  cureduce_destroy(b.h);
  return b.wrong ? 1 : 0;
}
