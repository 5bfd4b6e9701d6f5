// Measurement helpers. See bench_util.cuh.
#include "bench_util.cuh"

#include "../src/device/dtype_traits.cuh"

#include <algorithm>
#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>

namespace bench {

gpu_info current_gpu() {
  int dev = 0;
  BENCH_CUDA(cudaGetDevice(&dev));
  cudaDeviceProp p;
  BENCH_CUDA(cudaGetDeviceProperties(&p, dev));
  gpu_info g;
  g.name = p.name;
  g.dir_name = p.name;
  std::replace(g.dir_name.begin(), g.dir_name.end(), ' ', '_');
  g.sms = p.multiProcessorCount;
  g.l2_bytes = (size_t)p.l2CacheSize;
  return g;
}

std::string results_dir(const std::string &out, const gpu_info &g) {
  return out.empty() ? "cureduce-results/" + g.dir_name : out;
}

bool is_file_stem(const char *who, const char *stem) {
  if (*stem && !strchr(stem, '/'))
    return true;
  fprintf(stderr, "%s: --name wants a file stem without '/', got '%s'\n", who, stem);
  return false;
}

int make_dirs(const std::string &dir) {
  for (size_t at = dir.find('/', 1);; at = dir.find('/', at + 1)) {
    const std::string part = at == std::string::npos ? dir : dir.substr(0, at);
    struct stat st;
    if (stat(part.c_str(), &st) != 0 && mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) {
      fprintf(stderr, "cureduce-bench: cannot create %s: %s\n", part.c_str(), strerror(errno));
      return 1;
    }
    if (at == std::string::npos)
      return 0;
  }
}

timer::timer(cudaStream_t stream, size_t l2_bytes, bool held_timing)
    : stream_(stream), flush_bytes_(2 * l2_bytes) {
  BENCH_CUDA(cudaEventCreate(&start_));
  BENCH_CUDA(cudaEventCreate(&stop_));
  BENCH_CUDA(cudaMalloc(&flush_, flush_bytes_));
  if (held_timing) { // the flags exist only for held timing: their presence is what held() reports
    BENCH_CUDA(
        cudaHostAlloc(reinterpret_cast<void **>(&release_host_), 2 * sizeof(int), cudaHostAllocMapped));
    BENCH_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void **>(&release_dev_), release_host_, 0));
    release_host_[0] = 1;
    release_host_[1] = 0;
  }
}

timer::~timer() {
  cudaEventDestroy(start_);
  cudaEventDestroy(stop_);
  cudaFree(flush_);
  if (release_host_)
    cudaFreeHost(release_host_);
}

// Spins (sleeping between polls of host memory) until the host sets flag[0], or for at most
// timeout_ns, which it then reports in flag[1]: a batch the host could not queue in time is
// still timed, and counted by unheld_batches().
__global__ void hold_until_released(volatile int *flag, unsigned long long timeout_ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    if (flag[0])
      return;
    __nanosleep(1000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < timeout_ns);
  flag[1] += 1;
}

void timer::hold() {
  __atomic_store_n(&release_host_[0], 0, __ATOMIC_SEQ_CST);
  hold_until_released<<<1, 1, 0, stream_>>>(release_dev_, 50ull * 1000 * 1000); // 50 ms
  BENCH_CUDA(cudaGetLastError());
}

void timer::release() { __atomic_store_n(&release_host_[0], 1, __ATOMIC_SEQ_CST); }

int timer::unheld_batches() const {
  return release_host_ ? __atomic_load_n(&release_host_[1], __ATOMIC_SEQ_CST) : 0;
}

double timer::elapsed_us() {
  BENCH_CUDA(cudaEventSynchronize(stop_));
  BENCH_CUDA(cudaGetLastError()); // a launch failure inside the timed region
  float ms = 0;
  BENCH_CUDA(cudaEventElapsedTime(&ms, start_, stop_));
  return ms * 1000.0;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

int reps_for(double one_run_us, double budget_ms, int lo, int hi) {
  const double r = budget_ms * 1000.0 / std::max(one_run_us, 1.0);
  return (int)std::min<double>(hi, std::max<double>(lo, r));
}

// XOR of every 16-byte word, written only if it equals a value it never takes in practice, so
// the compiler must do every load. With WRITES, the grid also stores out_words zero words to
// out first (a reduction's results), so the kernel moves what the reduction must move.
template <bool WRITES>
__global__ void read_16B(const uint4 *__restrict__ in, size_t words, unsigned *sink, uint4 *__restrict__ out,
                         size_t out_words) {
  uint4 acc = {0, 0, 0, 0};
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if constexpr (WRITES)
    for (size_t o = i; o < out_words; o += stride)
      out[o] = make_uint4(0, 0, 0, 0);
  for (; i + 3 * stride < words; i += 4 * stride) { // four loads in flight per thread
    const uint4 a = in[i], b = in[i + stride], c = in[i + 2 * stride], d = in[i + 3 * stride];
    acc.x ^= a.x ^ b.x ^ c.x ^ d.x;
    acc.y ^= a.y ^ b.y ^ c.y ^ d.y;
    acc.z ^= a.z ^ b.z ^ c.z ^ d.z;
    acc.w ^= a.w ^ b.w ^ c.w ^ d.w;
  }
  for (; i < words; i += stride) {
    const uint4 a = in[i];
    acc.x ^= a.x, acc.y ^= a.y, acc.z ^= a.z, acc.w ^= a.w;
  }
  if ((acc.x ^ acc.y ^ acc.z ^ acc.w) == 0x9e3779b9u && acc.x == 0x12345678u)
    *sink = acc.y;
}

const char *hot_timing_line(bool held) {
  return held ? "hot timing: batches held until queued (GPU-paced, --held)\n"
              : "hot timing: batches queued behind one run (host- or GPU-paced, whichever is slower)\n";
}

std::string unheld_batches_line(int unheld) {
  return "hot batches the hold let go before they were queued (host-paced): " + std::to_string(unheld) + "\n";
}

void launch_read_roofline(const void *d_buf, size_t bytes, cudaStream_t stream, void *d_out,
                          size_t out_bytes) {
  static unsigned *sink = nullptr;
  static unsigned sms = 0;
  if (!sink) {
    int dev = 0, n = 0;
    BENCH_CUDA(cudaGetDevice(&dev));
    BENCH_CUDA(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev));
    BENCH_CUDA(cudaMalloc(&sink, sizeof *sink));
    sms = (unsigned)n;
  }
  const size_t words = bytes / 16;
  const unsigned blocks =
      (unsigned)std::max<size_t>(1, std::min<size_t>((size_t)sms * 8, (words + 255) / 256));
  if (out_bytes >= 16)
    read_16B<true>
        <<<blocks, 256, 0, stream>>>((const uint4 *)d_buf, words, sink, (uint4 *)d_out, out_bytes / 16);
  else
    read_16B<false><<<blocks, 256, 0, stream>>>((const uint4 *)d_buf, words, sink, nullptr, 0);
}

double read_roofline_us(timer &t, const void *d_buf, size_t bytes, cudaStream_t stream, bool cold, int reps,
                        void *d_out, size_t out_bytes) {
  auto run = [&] { launch_read_roofline(d_buf, bytes, stream, d_out, out_bytes); };
  return cold ? t.cold_us(run, reps) : t.hot_us(run, reps);
}

__device__ inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// The k-th draw of the stream `seed`: 64 random bits, the same on every GPU and launch shape.
__device__ inline uint64_t draw(uint64_t seed, uint64_t k) {
  return mix64(seed + 0x9e3779b97f4a7c15ull * (k + 1));
}

template <cureduce_dtype D>
__global__ void fill_kernel(cr::storage_t<D> *out, uint64_t n, uint64_t seed, double lo, double hi) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
       i += (uint64_t)gridDim.x * blockDim.x) {
    const double u = (double)(draw(seed, i) >> 11) * 0x1.0p-53;
    const double x = lo + (hi - lo) * u;
    if constexpr (D == CUREDUCE_F32)
      out[i] = (float)x;
    else if constexpr (D == CUREDUCE_F64)
      out[i] = x;
    else if constexpr (D == CUREDUCE_F16)
      out[i] = __float2half_rn((float)x);
    else if constexpr (D == CUREDUCE_BF16)
      out[i] = __float2bfloat16_rn((float)x);
    else if constexpr (D == CUREDUCE_F8_E4M3)
      out[i] = __nv_cvt_float_to_fp8((float)x, __NV_SATFINITE, __NV_E4M3);
    else if constexpr (D == CUREDUCE_F8_E5M2)
      out[i] = __nv_cvt_float_to_fp8((float)x, __NV_SATFINITE, __NV_E5M2);
    else
      out[i] = (cr::storage_t<D>)floor(x);
  }
}

__global__ void ones_kernel(float *out, uint64_t n, uint64_t group, uint64_t seed) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
       i += (uint64_t)gridDim.x * blockDim.x) {
    const uint64_t g = i / group, start = g * group, len = n - start < group ? n - start : group;
    out[i] = i - start == draw(seed, g) % len ? 1.0f : 0.0f;
  }
}

// The bit layout of a float dtype: exponent field width and position, and its largest finite
// unbiased exponent.
struct float_bits {
  int bits, exp_bits, man_bits, max_exp;
};
template <cureduce_dtype D> __host__ __device__ constexpr float_bits bits_of() {
  return D == CUREDUCE_F64       ? float_bits{64, 11, 52, 1023}
         : D == CUREDUCE_F32     ? float_bits{32, 8, 23, 127}
         : D == CUREDUCE_F16     ? float_bits{16, 5, 10, 15}
         : D == CUREDUCE_BF16    ? float_bits{16, 8, 7, 127}
         : D == CUREDUCE_F8_E5M2 ? float_bits{8, 5, 2, 15}
                                 : float_bits{8, 4, 3, 8}; // e4m3: field 15 is finite but for S.1111.111
}

template <cureduce_dtype D>
__global__ void fill_adversarial_kernel(cr::storage_t<D> *out, uint64_t n, uint64_t seed,
                                        fill_pattern pattern) {
  constexpr float_bits F = bits_of<D>();
  constexpr uint64_t ONES = F.bits == 64 ? ~0ull : (1ull << F.bits) - 1;
  constexpr uint64_t EXP_MASK = ((1ull << F.exp_bits) - 1) << F.man_bits;
  constexpr uint64_t SIGN = 1ull << (F.bits - 1);
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
       i += (uint64_t)gridDim.x * blockDim.x) {
    const uint64_t k = pattern == FILL_CANCEL && i % 4 == 1 ? i - 1 : i; // -B draws B's bits again
    const uint64_t r = draw(seed, k);
    uint64_t bits;
    if (pattern == FILL_WIDE || i % 4 < 2) {
      bits = r & ONES;
      if (pattern == FILL_CANCEL) { // exponent in the top half of the range
        const uint64_t bias = (1ull << (F.exp_bits - 1)) - 1;
        const uint64_t e = bias + F.max_exp / 2 + (r >> 40) % (uint64_t)(F.max_exp - F.max_exp / 2);
        bits = (bits & ~EXP_MASK) | (e << F.man_bits);
        if (i % 4 == 1)
          bits ^= SIGN;
      }
      if (D == CUREDUCE_F8_E4M3 ? (bits & 0x7f) == 0x7f : (bits & EXP_MASK) == EXP_MASK)
        bits ^= 1ull << (F.bits - 2); // NaN, infinity: clear the top exponent bit
    } else {
      const float x = (float)((double)(r >> 11) * 0x1.0p-52 - 1.0); // [-1, 1)
      cr::storage_t<D> v;
      if constexpr (D == CUREDUCE_F64)
        v = (double)(r >> 11) * 0x1.0p-52 - 1.0;
      else if constexpr (D == CUREDUCE_F32)
        v = x;
      else if constexpr (D == CUREDUCE_F16)
        v = __float2half_rn(x);
      else if constexpr (D == CUREDUCE_BF16)
        v = __float2bfloat16_rn(x);
      else
        v = __nv_cvt_float_to_fp8(x, __NV_SATFINITE, D == CUREDUCE_F8_E4M3 ? __NV_E4M3 : __NV_E5M2);
      out[i] = v;
      continue;
    }
    cr::storage_t<D> v;
    memcpy(&v, &bits, sizeof v); // the low bytes: little-endian
    out[i] = v;
  }
}

// The float dtypes, then every dtype, as X(dtype) lists for the fill switches below.
#define BENCH_FLOAT_DTYPES(X)                                                                                \
  X(CUREDUCE_F32) X(CUREDUCE_F64) X(CUREDUCE_F16) X(CUREDUCE_BF16) X(CUREDUCE_F8_E4M3) X(CUREDUCE_F8_E5M2)
#define BENCH_ALL_DTYPES(X) BENCH_FLOAT_DTYPES(X) X(CUREDUCE_I8) X(CUREDUCE_I32) X(CUREDUCE_I64)

void fill_adversarial(cureduce_dtype dtype, void *d_ptr, uint64_t n, uint64_t seed, fill_pattern pattern,
                      cudaStream_t stream) {
  const unsigned blocks = 4096;
  switch (dtype) {
#define BENCH_FILL(D)                                                                                        \
  case D:                                                                                                    \
    fill_adversarial_kernel<D><<<blocks, 256, 0, stream>>>((cr::storage_t<D> *)d_ptr, n, seed, pattern);     \
    break;
    BENCH_FLOAT_DTYPES(BENCH_FILL)
#undef BENCH_FILL
  default: break;
  }
  BENCH_CUDA(cudaGetLastError());
}

void fill_random(cureduce_dtype dtype, void *d_ptr, uint64_t n, uint64_t seed, double lo, double hi,
                 cudaStream_t stream) {
  const unsigned blocks = 4096;
  switch (dtype) {
#define BENCH_FILL(D)                                                                                        \
  case D: fill_kernel<D><<<blocks, 256, 0, stream>>>((cr::storage_t<D> *)d_ptr, n, seed, lo, hi); break;
    BENCH_ALL_DTYPES(BENCH_FILL)
#undef BENCH_FILL
  default: break;
  }
  BENCH_CUDA(cudaGetLastError());
}

uint64_t fill_sparse_ones(float *d_ptr, uint64_t n, uint64_t group, uint64_t seed, cudaStream_t stream) {
  ones_kernel<<<4096, 256, 0, stream>>>(d_ptr, n, group, seed);
  BENCH_CUDA(cudaGetLastError());
  return (n + group - 1) / group;
}

} // namespace bench
