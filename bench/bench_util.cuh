// Measurement helpers shared by the ladder and the benchmarks: checked CUDA calls, event
// timing (hot and cold-L2 medians), the read roofline, GPU-side random data and the GPU's name.
// Layer: the benchmark tool.
#pragma once

#include "cureduce.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <stdint.h>
#include <stdio.h>
#include <string>
#include <vector>

namespace bench {

// Abort the tool (not the library) with a message when a CUDA call fails: a bench that
// continues after a failed call would report numbers for work it did not do.
#define BENCH_CUDA(call)                                                                                     \
  do {                                                                                                       \
    const cudaError_t e_ = (call);                                                                           \
    if (e_ != cudaSuccess) {                                                                                 \
      fprintf(stderr, "cureduce-bench: %s failed at %s:%d: %s\n", #call, __FILE__, __LINE__,                 \
              cudaGetErrorString(e_));                                                                       \
      exit(1);                                                                                               \
    }                                                                                                        \
  } while (0)

struct gpu_info {
  std::string name;     // as the driver names it, e.g. "NVIDIA H200"
  std::string dir_name; // the same with spaces as underscores, for the results folder
  int sms = 0;
  size_t l2_bytes = 0;
};

// The current device; exits with a message when there is none (callers check first).
gpu_info current_gpu();

// The folder results go to: `out` when the user named one, else ./cureduce-results/<gpu>.
std::string results_dir(const std::string &out, const gpu_info &g);

// mkdir -p; returns 0, or prints why not and returns 1.
int make_dirs(const std::string &dir);

// Whether `stem` (the value of --name) is a file stem: not empty, no '/'. Prints why not, after
// `who` (the command).
bool is_file_stem(const char *who, const char *stem);

// Times a callable that enqueues work on `stream`.
class timer {
public:
  // held_timing: queue each hot batch behind hold() (GPU-paced; `bench --held`), else behind one run.
  timer(cudaStream_t stream, size_t l2_bytes, bool held_timing = false);
  ~timer();
  // Median over `reps` batches of back-to-back runs, after `warmup` runs, of the time per run
  // (data stays in L2 when it fits).
  template <class F> double hot_us(F &&run, int reps, int warmup = 3);
  // Median of `reps` runs, each after writing a buffer twice the L2 size (cold L2).
  template <class F> double cold_us(F &&run, int reps);

  // Batches the GPU began before the host had queued them (hold() timed out): their times may
  // include the host's launch cost.
  int unheld_batches() const;

private:
  double elapsed_us();
  bool held() const { return release_host_ != nullptr; }
  void hold();    // a kernel that keeps the stream waiting until release()
  void release(); // lets it finish
  cudaStream_t stream_;
  // Mapped host flags of held timing (null otherwise): [0] release, [1] batches let go early.
  int *release_host_ = nullptr, *release_dev_ = nullptr;
  cudaEvent_t start_, stop_;
  void *flush_ = nullptr;
  size_t flush_bytes_;
};

double median(std::vector<double> v);

// Time of a plain kernel that streams `bytes` from `d_buf` with 16-byte loads and does
// nothing else: the read roofline for a reduction of that many bytes, measured in this run.
// With out_bytes, the kernel also stores that many zero bytes (rounded down to 16) to d_out:
// the roofline of a reduction whose results are not negligible beside its input (columns of
// few rows). One launch of that kernel (a grid of 8 blocks of 256 threads per SM at most), for
// callers that time it their own way.
void launch_read_roofline(const void *d_buf, size_t bytes, cudaStream_t stream, void *d_out = nullptr,
                          size_t out_bytes = 0);
// The summary lines of a bench run that say how its hot medians were timed: the timer's mode
// (held: GPU-paced, else host- or GPU-paced) and, for held timing, how many batches the hold
// let go before the host had queued them.
const char *hot_timing_line(bool held);
std::string unheld_batches_line(int unheld);

double read_roofline_us(timer &t, const void *d_buf, size_t bytes, cudaStream_t stream, bool cold, int reps,
                        void *d_out = nullptr, size_t out_bytes = 0);

// Fill n elements of dtype at d_ptr on the GPU from a counter-based hash of (seed, index):
// uniform in [lo, hi) rounded to the dtype (integers: floor).
void fill_random(cureduce_dtype dtype, void *d_ptr, uint64_t n, uint64_t seed, double lo, double hi,
                 cudaStream_t stream);

// f32 zeros with one 1.0 at a random place (the same kind of hash) in each group of `group`
// elements, the last group possibly shorter; returns how many ones, ceil(n / group).
uint64_t fill_sparse_ones(float *d_ptr, uint64_t n, uint64_t group, uint64_t seed, cudaStream_t stream);

// Adversarial float data for the exact sums, from the same kind of hash:
// - FILL_WIDE: random bits of the dtype, every finite exponent equally likely (subnormals
//   included; a NaN or infinity pattern has its top exponent bit cleared);
// - FILL_CANCEL: groups of four, B, -B, u, v: B of random sign and significand with an exponent
//   in the top half of the dtype's range, u and v uniform in [-1, 1). The sum is that of the
//   small values, under huge cancellations.
enum fill_pattern { FILL_WIDE, FILL_CANCEL };
void fill_adversarial(cureduce_dtype dtype, void *d_ptr, uint64_t n, uint64_t seed, fill_pattern pattern,
                      cudaStream_t stream);

// Pick reps so that one timing takes about `budget_ms` given one run's rough time.
int reps_for(double one_run_us, double budget_ms, int lo, int hi);

// ---- template definitions ----

template <class F> double timer::hot_us(F &&run, int reps, int warmup) {
  for (int i = 0; i < warmup; ++i)
    run();
  // Runs per timed batch: enough for the batch to last about HOT_BATCH_US, back to back, so
  // the launch's trip from the host is not counted once per run. By default a batch is queued
  // behind one untimed run: a run then costs the larger of its GPU time and the host's time to
  // launch it. When held(), each batch waits behind hold() until the host has queued all of
  // it, so the runs go at the GPU's pace alone. docs/design.md#measurement-method has the
  // figures.
  constexpr double HOT_BATCH_US = 200.0;
  constexpr int MAX_BATCH = 64;
  auto before_batch = [&] {
    if (held())
      hold();
    else
      run(); // keeps the GPU busy while the batch is queued behind it
  };
  auto after_batch = [&] {
    if (held())
      release();
  };
  int batch = 1;
  if (reps > 1) {
    before_batch();
    BENCH_CUDA(cudaEventRecord(start_, stream_));
    run();
    BENCH_CUDA(cudaEventRecord(stop_, stream_));
    after_batch();
    const double one = elapsed_us();
    batch = (int)std::min<double>(MAX_BATCH, std::max<double>(1.0, HOT_BATCH_US / std::max(one, 0.5)));
  }
  std::vector<double> times;
  for (int i = 0; i < reps; ++i) {
    before_batch();
    BENCH_CUDA(cudaEventRecord(start_, stream_));
    for (int b = 0; b < batch; ++b)
      run();
    BENCH_CUDA(cudaEventRecord(stop_, stream_));
    after_batch();
    times.push_back(elapsed_us() / batch);
  }
  return median(times);
}

template <class F> double timer::cold_us(F &&run, int reps) {
  run();
  std::vector<double> times;
  for (int i = 0; i < reps; ++i) {
    BENCH_CUDA(cudaMemsetAsync(flush_, i & 0xff, flush_bytes_, stream_));
    BENCH_CUDA(cudaEventRecord(start_, stream_));
    run();
    BENCH_CUDA(cudaEventRecord(stop_, stream_));
    times.push_back(elapsed_us());
  }
  return median(times);
}

} // namespace bench
