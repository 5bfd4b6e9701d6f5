// cureduce-bench-nccl: the multi-GPU reductions (cureduce_nccl.h) on 1, 2, 4 and 8 GPUs of one
// host, one process a GPU, against one GPU's cureduce_reduce measured in the same run. A tool
// beside the product, built only with the multi-GPU library.
//
// For each number of GPUs k, k ranks are forked (before anything touches CUDA) and meet
// through an ncclUniqueId in a file. Every rank fills the same array, then times:
// - weak: each rank reduces a whole array of --gib GiB (k copies in all) against one GPU
//   reducing one copy; the check: the result is k times one copy's, bit for bit (k is a power
//   of two, so no rounding separates them);
// - strong: the ranks reduce k slices of that one array; the check for the exact sums: the
//   bits of one GPU's sum of the whole array (float sums add rounded slices: reported only);
// - latency: 1024 elements a rank, where the time is the combine's (all-gather or all-reduce,
//   and its kernels) beside the local reduction.
// Every rank must make the same calls, so the timing loops run fixed counts, and each time is
// the slowest rank's median. Every check also asks that every rank got the same bits.
#include "bench_util.cuh"
#include "cureduce.h"
#include "cureduce_nccl.h"
#include "nccl_id_file.h"

#include <nccl.h>

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <sstream>
#include <utility>

namespace {

const char *const NAME = "cureduce-bench-nccl";
constexpr int MAX_GPUS = 8;
constexpr int RANK_TIME_LIMIT_S = 900; // a rank whose peers died would wait in NCCL for ever
constexpr uint64_t LATENCY_N = 1024;

struct bench_case {
  cureduce_dtype dtype;
  cureduce_op op;
  cureduce_dtype acc;
};
const bench_case CASES[] = {
    {CUREDUCE_F32, CUREDUCE_SUM, CUREDUCE_F32},  {CUREDUCE_F32, CUREDUCE_SUM_EXACT, CUREDUCE_F32},
    {CUREDUCE_BF16, CUREDUCE_SUM, CUREDUCE_F32}, {CUREDUCE_BF16, CUREDUCE_SUM_EXACT, CUREDUCE_F32},
    {CUREDUCE_F64, CUREDUCE_SUM, CUREDUCE_F64},  {CUREDUCE_F64, CUREDUCE_SUM_EXACT, CUREDUCE_F64},
};

const char *dtype_name(cureduce_dtype d) {
  return d == CUREDUCE_F32 ? "f32" : d == CUREDUCE_BF16 ? "bf16" : "f64";
}
const char *op_name(cureduce_op op) { return op == CUREDUCE_SUM ? "sum" : "sum_exact"; }

#define RANK_CHECK(ok, what)                                                                                 \
  do {                                                                                                       \
    if (!(ok)) {                                                                                             \
      fprintf(stderr, "%s rank %d: %s failed\n", NAME, rank, what);                                          \
      _exit(1);                                                                                              \
    }                                                                                                        \
  } while (0)

// Median time of one call, over `reps` batches of `batch` calls after `warmup` calls.
template <class F> double time_us(cudaStream_t s, F &&run, int warmup, int reps, int batch) {
  cudaEvent_t a, b;
  BENCH_CUDA(cudaEventCreate(&a));
  BENCH_CUDA(cudaEventCreate(&b));
  for (int i = 0; i < warmup; ++i)
    run();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    BENCH_CUDA(cudaEventRecord(a, s));
    for (int i = 0; i < batch; ++i)
      run();
    BENCH_CUDA(cudaEventRecord(b, s));
    BENCH_CUDA(cudaEventSynchronize(b));
    float ms = 0;
    BENCH_CUDA(cudaEventElapsedTime(&ms, a, b));
    t.push_back(1000.0 * ms / batch);
  }
  BENCH_CUDA(cudaEventDestroy(a));
  BENCH_CUDA(cudaEventDestroy(b));
  return bench::median(t);
}

// k times a result of acc dtype (k a power of two: exact unless it overflows).
uint64_t times_k(uint64_t bits, cureduce_dtype acc, int k) {
  if (acc == CUREDUCE_F32) {
    float f;
    memcpy(&f, &bits, 4);
    f *= (float)k;
    uint64_t out = 0;
    memcpy(&out, &f, 4);
    return out;
  }
  double d;
  memcpy(&d, &bits, 8);
  d *= k;
  memcpy(&bits, &d, 8);
  return bits;
}

struct rank_ctx {
  int rank, world;
  ncclComm_t comm;
  cureduce_handle h;
  cureduce_dist d;
  cudaStream_t s;
  void *buf, *out, *one_out;
  uint64_t *flags; // device: a result's bits (min and max over the ranks), then a time
};

// The slowest rank's time, and whether every rank holds the same 8 result bytes at out.
double slowest(rank_ctx &c, double t) {
  double *dt = reinterpret_cast<double *>(c.flags + 2);
  BENCH_CUDA(cudaMemcpy(dt, &t, sizeof t, cudaMemcpyHostToDevice));
  if (ncclAllReduce(dt, dt, 1, ncclFloat64, ncclMax, c.comm, c.s) != ncclSuccess)
    _exit(1);
  BENCH_CUDA(cudaMemcpyAsync(&t, dt, sizeof t, cudaMemcpyDeviceToHost, c.s));
  BENCH_CUDA(cudaStreamSynchronize(c.s));
  return t;
}

bool same_on_every_rank(rank_ctx &c, uint64_t bits) {
  uint64_t host[2] = {bits, bits};
  BENCH_CUDA(cudaMemcpy(c.flags, host, 16, cudaMemcpyHostToDevice));
  if (ncclAllReduce(c.flags, c.flags, 1, ncclUint64, ncclMin, c.comm, c.s) != ncclSuccess ||
      ncclAllReduce(c.flags + 1, c.flags + 1, 1, ncclUint64, ncclMax, c.comm, c.s) != ncclSuccess)
    _exit(1);
  BENCH_CUDA(cudaMemcpyAsync(host, c.flags, 16, cudaMemcpyDeviceToHost, c.s));
  BENCH_CUDA(cudaStreamSynchronize(c.s));
  return host[0] == bits && host[1] == bits;
}

uint64_t result_bits(const void *d_out, cureduce_dtype acc) {
  uint64_t bits = 0;
  BENCH_CUDA(cudaMemcpy(&bits, d_out, cureduce_result_size(CUREDUCE_SUM, acc), cudaMemcpyDeviceToHost));
  return bits;
}

// One CSV row (rank 0 writes them to `to`).
void row(FILE *to, const bench::gpu_info &g, int k, const char *scaling, const bench_case &bc, uint64_t n,
         double one_us, double k_us, double efficiency, uint64_t bits, uint64_t one_bits, bool ok) {
  fprintf(to, "%s,%d,%s,%s,%s,%s,%llu,%llu,%.3f,%.3f,", g.name.c_str(), k, scaling, dtype_name(bc.dtype),
          dtype_name(bc.acc), op_name(bc.op), (unsigned long long)n,
          (unsigned long long)(n * cureduce_dtype_size(bc.dtype)), one_us, k_us);
  if (efficiency > 0)
    fprintf(to, "%.4f", efficiency);
  fprintf(to, ",%016llx,%016llx,%d\n", (unsigned long long)bits, (unsigned long long)one_bits, ok ? 1 : 0);
}

void run_cases(rank_ctx &c, uint64_t bytes, FILE *to) {
  const int rank = c.rank, k = c.world;
  const bench::gpu_info g = bench::current_gpu();
  for (const bench_case &bc : CASES) {
    const uint64_t n = bytes / cureduce_dtype_size(bc.dtype);
    bench::fill_random(bc.dtype, c.buf, n, 12345, -1.0, 1.0, c.s); // the same array on every rank
    const auto one = [&](uint64_t m) {
      RANK_CHECK(cureduce_reduce(c.h, bc.op, bc.dtype, c.buf, m, bc.acc, c.one_out, c.s) == CUREDUCE_SUCCESS,
                 "cureduce_reduce");
    };
    const auto dist = [&](const void *p, uint64_t m, uint64_t total) {
      RANK_CHECK(cureduce_dist_reduce(c.d, bc.op, bc.dtype, p, m, total, bc.acc, c.out, c.s) ==
                     CUREDUCE_SUCCESS,
                 "cureduce_dist_reduce");
    };
    // The slowest rank's median time of `run` (fixed counts), and the result it left at `out`.
    const auto measure = [&](auto run, const void *out, int warmup, int reps, int batch) {
      const double us = slowest(c, time_us(c.s, run, warmup, reps, batch));
      return std::make_pair(us, result_bits(out, bc.acc));
    };
    // weak: a whole array a rank
    const auto [one_us, one_bits] = measure([&] { one(n); }, c.one_out, 2, 5, 4);
    const auto [weak_us, weak_bits] = measure([&] { dist(c.buf, n, n * k); }, c.out, 2, 5, 4);
    const bool weak_ok = same_on_every_rank(c, weak_bits) && weak_bits == times_k(one_bits, bc.acc, k);
    if (rank == 0)
      row(to, g, k, "weak", bc, n, one_us, weak_us, one_us / weak_us, weak_bits, one_bits, weak_ok);
    // strong: a slice of the one array a rank
    const uint64_t lo = n / k * rank, hi = rank == k - 1 ? n : n / k * (rank + 1);
    const char *slice = static_cast<const char *>(c.buf) + lo * cureduce_dtype_size(bc.dtype);
    const auto [strong_us, strong_bits] = measure([&] { dist(slice, hi - lo, n); }, c.out, 2, 5, 4);
    const bool strong_ok =
        same_on_every_rank(c, strong_bits) && (bc.op != CUREDUCE_SUM_EXACT || strong_bits == one_bits);
    if (rank == 0) // rank 0's slice: n / k elements
      row(to, g, k, "strong", bc, hi - lo, one_us, strong_us, one_us / (k * strong_us), strong_bits, one_bits,
          strong_ok);
    // latency: a few elements a rank
    if (bc.dtype == CUREDUCE_F32) {
      const auto [small_one, small_one_bits] = measure([&] { one(LATENCY_N); }, c.one_out, 20, 7, 100);
      const auto [small_k, small_bits] =
          measure([&] { dist(c.buf, LATENCY_N, LATENCY_N * k); }, c.out, 20, 7, 100);
      const bool small_ok =
          same_on_every_rank(c, small_bits) && small_bits == times_k(small_one_bits, bc.acc, k);
      if (rank == 0)
        row(to, g, k, "latency", bc, LATENCY_N, small_one, small_k, 0, small_bits, small_one_bits, small_ok);
    }
  }
}

// One rank: its GPU, the communicator, the cases; rank 0 writes the rows to csv_path.
int run_rank(int rank, int world, const char *id_path, const char *csv_path, uint64_t bytes) {
  rank_ctx c{};
  c.rank = rank;
  c.world = world;
  ncclUniqueId id;
  RANK_CHECK(cudaSetDevice(rank) == cudaSuccess, "cudaSetDevice");
  if (rank == 0)
    RANK_CHECK(ncclGetUniqueId(&id) == ncclSuccess && nccl_id_publish(id_path, &id) == 0,
               "publishing the NCCL id");
  else
    RANK_CHECK(nccl_id_wait(id_path, &id) == 0, "waiting for the NCCL id");
  RANK_CHECK(ncclCommInitRank(&c.comm, world, id, rank) == ncclSuccess, "ncclCommInitRank");
  RANK_CHECK(cureduce_create(&c.h) == CUREDUCE_SUCCESS, "cureduce_create");
  RANK_CHECK(cureduce_dist_create(&c.d, c.comm, c.h) == CUREDUCE_SUCCESS, "cureduce_dist_create");
  RANK_CHECK(cudaStreamCreate(&c.s) == cudaSuccess && cudaMalloc(&c.buf, bytes) == cudaSuccess &&
                 cudaMalloc(&c.out, 8) == cudaSuccess && cudaMalloc(&c.one_out, 8) == cudaSuccess &&
                 cudaMalloc(&c.flags, 24) == cudaSuccess,
             "allocating");
  FILE *to = rank == 0 ? fopen(csv_path, "w") : nullptr;
  RANK_CHECK(rank != 0 || to, "opening the rows' file");
  run_cases(c, bytes, to);
  if (to)
    RANK_CHECK(fclose(to) == 0, "writing the rows");
  RANK_CHECK(cureduce_dist_destroy(c.d) == CUREDUCE_SUCCESS && cureduce_destroy(c.h) == CUREDUCE_SUCCESS &&
                 ncclCommDestroy(c.comm) == ncclSuccess,
             "tearing down");
  return 0;
}

// The GPUs this machine has, asked by a child so that this process never initializes CUDA.
int gpu_count() {
  const pid_t pid = fork();
  if (pid == 0) {
    int n = 0;
    _exit(cudaGetDeviceCount(&n) == cudaSuccess ? (n < 100 ? n : 99) : 0);
  }
  int status = 0;
  return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) ? WEXITSTATUS(status) : 0;
}

// k ranks, forked; their rows appended to `rows`. False when a rank failed.
bool run_world(int k, uint64_t bytes, const char *dir, std::vector<std::string> &rows) {
  const std::string id = std::string(dir) + "/id" + std::to_string(k),
                    csv = std::string(dir) + "/rows" + std::to_string(k);
  fflush(stdout);
  pid_t pids[MAX_GPUS];
  for (int r = 0; r < k; ++r) {
    pids[r] = fork();
    if (pids[r] == 0) {
      alarm(RANK_TIME_LIMIT_S);
      const int rc = run_rank(r, k, id.c_str(), csv.c_str(), bytes);
      fflush(stdout);
      _exit(rc);
    }
  }
  bool ok = true;
  for (int r = 0; r < k; ++r) {
    int status = 0;
    ok = ok && pids[r] > 0 && waitpid(pids[r], &status, 0) == pids[r] && WIFEXITED(status) &&
         WEXITSTATUS(status) == 0;
  }
  std::ifstream in(csv);
  for (std::string line; std::getline(in, line);)
    rows.push_back(line);
  unlink(id.c_str());
  unlink(csv.c_str());
  return ok;
}

std::vector<std::string> fields(const std::string &line) {
  std::vector<std::string> f;
  std::stringstream ss(line);
  for (std::string x; std::getline(ss, x, ',');)
    f.push_back(x);
  return f;
}

// The summary: checks, the weak-scaling target, exact sums' bits across k, combine latency.
std::string summary(const std::vector<std::string> &rows, double gib, int &failed) {
  std::ostringstream s;
  int misses = 0, weak = 0;
  failed = 0;
  std::map<std::string, std::string> exact_bits; // dtype -> the strong rows' bits
  std::map<std::string, bool> exact_same;
  std::ostringstream weak_lines, latency_lines;
  for (const std::string &line : rows) {
    const std::vector<std::string> f = fields(line);
    if (f.size() < 14)
      continue;
    const int k = atoi(f[1].c_str());
    const std::string &scaling = f[2], &dtype = f[3], &op = f[5], &bits = f[11];
    failed += f[13] != "1";
    if (scaling == "weak" && k > 1) {
      const double eff = atof(f[10].c_str());
      ++weak;
      misses += eff < 0.9;
      weak_lines << "  " << op << " " << dtype << " on " << k << " GPUs: " << f[10] << " of " << k
                 << " x one GPU's throughput" << (eff < 0.9 ? " (miss)" : "") << "\n";
    }
    if (scaling == "strong" && op == "sum_exact") {
      const std::string key = dtype + "->" + f[4];
      if (!exact_bits.count(key)) {
        exact_bits[key] = bits;
        exact_same[key] = true;
      }
      exact_same[key] = exact_same[key] && bits == exact_bits[key];
    }
    if (scaling == "latency")
      latency_lines << "  " << op << " " << dtype << " on " << k << " GPUs: " << f[9] << " us (one GPU "
                    << f[8] << " us)\n";
  }
  s << rows.size() << " results, " << failed
    << " failed checks (weak: k copies give k times one copy's bits; "
    << "strong, exact sums: one GPU's bits; every rank the same bits)\n";
  s << "target k GPUs >= 0.9 k x one GPU's throughput at " << gib << " GiB a GPU: " << misses << " misses of "
    << weak << "\n"
    << weak_lines.str();
  s << "exact sums of one array split over every k, the same bits as on one GPU:\n";
  for (const auto &e : exact_bits)
    s << "  " << e.first << ": " << (exact_same[e.first] ? "identical" : "DIFFERENT") << " (" << e.second
      << ")\n";
  s << "combine latency, " << LATENCY_N << " elements a GPU (hot median a call):\n" << latency_lines.str();
  return s.str();
}

void usage(FILE *to) {
  fprintf(to,
          "usage: %s [--gpus LIST] [--gib G] [--out DIR] [--name NAME]\n"
          "\n"
          "The multi-GPU reductions (cureduce_nccl.h), one process a GPU, against one GPU's\n"
          "cureduce_reduce in the same run: sums of f32, bf16 and f64, plain and exact; weak\n"
          "scaling (G GiB a GPU), strong scaling (one array of G GiB split over the GPUs) and the\n"
          "combine's latency (1024 elements a GPU). Writes DIR/NAME.csv and NAME_summary.txt.\n"
          "Start it with NCCL_NVLS_ENABLE=0 where the GPUs are shared.\n"
          "\n"
          "  --gpus LIST  comma-separated numbers of GPUs, each 1, 2, 4 or 8 (default: those up\n"
          "               to the GPUs present)\n"
          "  --gib G      GiB a GPU (default 4)\n"
          "  --out DIR    output folder (default ./cureduce-results/<gpu>)\n"
          "  --name NAME  file names (default bench_nccl)\n",
          NAME);
}

} // namespace

int main(int argc, char **argv) {
  std::vector<int> ks;
  double gib = 4;
  std::string out, name = "bench_nccl";
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(argv[i], "--gpus") && has_value) {
      std::stringstream ss(argv[++i]);
      for (std::string x; std::getline(ss, x, ',');) {
        const int k = atoi(x.c_str());
        if (k != 1 && k != 2 && k != 4 && k != 8) {
          fprintf(stderr, "%s: --gpus takes 1, 2, 4 or 8, got '%s'\n", NAME, x.c_str());
          return 2;
        }
        ks.push_back(k);
      }
    } else if (!strcmp(argv[i], "--gib") && has_value) {
      char *end = nullptr;
      gib = strtod(argv[++i], &end);
      if (*end || !(gib > 0 && gib <= 64)) {
        fprintf(stderr, "%s: --gib wants a size in (0, 64], got '%s'\n", NAME, argv[i]);
        return 2;
      }
    } else if (!strcmp(argv[i], "--out") && has_value) {
      out = argv[++i];
    } else if (!strcmp(argv[i], "--name") && has_value) {
      name = argv[++i];
      if (!bench::is_file_stem(NAME, name.c_str()))
        return 2;
    } else {
      fprintf(stderr, "%s: unknown or incomplete option '%s'\n\n", NAME, argv[i]);
      usage(stderr);
      return 2;
    }
  }
  const int gpus = gpu_count();
  if (gpus < 1) {
    fprintf(stderr, "%s: no CUDA GPU found\n", NAME);
    return 1;
  }
  if (ks.empty())
    for (int k = 1; k <= gpus && k <= MAX_GPUS; k *= 2)
      ks.push_back(k);
  for (int k : ks)
    if (k > gpus) {
      fprintf(stderr, "%s: %d GPUs asked for, %d present\n", NAME, k, gpus);
      return 1;
    }
  // Whole 16-byte words of every dtype.
  const uint64_t bytes = (uint64_t)(gib * (1 << 30)) / 16 * 16;
  char dir[] = "/tmp/cureduce-bench-nccl-XXXXXX";
  if (!mkdtemp(dir)) {
    fprintf(stderr, "%s: no temporary folder\n", NAME);
    return 1;
  }
  std::vector<std::string> rows;
  bool ok = true;
  for (int k : ks) {
    const size_t before = rows.size();
    ok = run_world(k, bytes, dir, rows) && ok;
    printf("%d GPU%s: %zu results%s\n", k, k > 1 ? "s" : "", rows.size() - before,
           ok ? "" : " (a rank failed)");
  }
  rmdir(dir);
  if (rows.empty()) {
    fprintf(stderr, "%s: no results\n", NAME);
    return 1;
  }
  std::string gpu = fields(rows[0])[0];
  std::replace(gpu.begin(), gpu.end(), ' ', '_');
  const std::string folder = out.empty() ? "cureduce-results/" + gpu : out;
  if (bench::make_dirs(folder) != 0)
    return 1;
  const std::string csv = folder + "/" + name + ".csv", txt = folder + "/" + name + "_summary.txt";
  std::ofstream c(csv), t(txt);
  c << "gpu,gpus,scaling,dtype,acc,op,n_per_gpu,bytes_per_gpu,one_gpu_us,gpus_us,efficiency,result,one_gpu_"
       "result,check\n";
  for (const std::string &r : rows)
    c << r << "\n";
  int failed = 0;
  const std::string sum = std::string(NAME) + " on " + fields(rows[0])[0] + "\n" + summary(rows, gib, failed);
  t << sum;
  c.close();
  t.close();
  if (!c || !t) {
    fprintf(stderr, "%s: cannot write %s or %s\n", NAME, csv.c_str(), txt.c_str());
    return 1;
  }
  fputs(sum.c_str(), stdout);
  printf("wrote %s and %s\n", csv.c_str(), txt.c_str());
  return ok && failed == 0 ? 0 : 1;
}
