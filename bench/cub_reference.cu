// CUB DeviceReduce runners. See cub_reference.cuh.
#include "bench_util.cuh"
#include "cub_reference.cuh"

#ifdef CUREDUCE_HAVE_RFA_PEER
#include "peers/cub_rfa.h"
#endif

#include <cub/device/device_reduce.cuh>
#include <cuda/functional>
#include <cuda/std/limits>
#include <cuda/std/type_traits>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <thrust/iterator/transform_output_iterator.h>

namespace bench {
namespace {

// The element types CUB sees: the fp8 wrapper classes convert to float by themselves.
template <cureduce_dtype D> struct cub_type;
template <> struct cub_type<CUREDUCE_F32> { using type = float; };
template <> struct cub_type<CUREDUCE_F64> { using type = double; };
template <> struct cub_type<CUREDUCE_F16> { using type = __half; };
template <> struct cub_type<CUREDUCE_BF16> { using type = __nv_bfloat16; };
template <> struct cub_type<CUREDUCE_F8_E4M3> { using type = __nv_fp8_e4m3; };
template <> struct cub_type<CUREDUCE_F8_E5M2> { using type = __nv_fp8_e5m2; };
template <> struct cub_type<CUREDUCE_I8> { using type = int8_t; };
template <> struct cub_type<CUREDUCE_I32> { using type = int32_t; };
template <> struct cub_type<CUREDUCE_I64> { using type = int64_t; };

template <class Acc> struct to_acc {
  template <class T> __host__ __device__ Acc operator()(const T &x) const { return static_cast<Acc>(x); }
};
template <class Acc> struct square_acc {
  template <class T> __host__ __device__ Acc operator()(const T &x) const {
    const Acc a = static_cast<Acc>(x);
    return a * a;
  }
};

// TransformReduce of n In elements into *out, with its temp storage allocated.
template <class In, class Out, class Op, class Init, class Xform>
std::unique_ptr<cub_run> make_transform_reduce(const void *d_in, uint64_t n, Out out, Op op, Init init,
                                               Xform xf) {
  auto r = std::make_unique<cub_run>();
  const In *in = static_cast<const In *>(d_in);
  BENCH_CUDA(cub::DeviceReduce::TransformReduce(nullptr, r->temp_bytes, in, out, (int64_t)n, op, xf, init));
  BENCH_CUDA(cudaMalloc(&r->temp, r->temp_bytes ? r->temp_bytes : 1));
  void *temp = r->temp;
  size_t bytes = r->temp_bytes;
  r->launch = [=](cudaStream_t s) mutable {
    cub::DeviceReduce::TransformReduce(temp, bytes, in, out, (int64_t)n, op, xf, init, s);
  };
  return r;
}

// Sums, sums of squares and means: TransformReduce converts each element to the accumulator
// before combining, as we do.
template <class In, class Acc, class Op, class Xform = to_acc<Acc>>
std::unique_ptr<cub_run> make(const void *d_in, uint64_t n, void *d_out, Op op, Acc init, Xform xf = {}) {
  return make_transform_reduce<In>(d_in, n, static_cast<Acc *>(d_out), op, init, xf);
}

// Min, max and absmax compare each element in a 32-bit type (f16, bf16 and fp8 as float, i8 as
// int32; wider types as themselves; magnitudes of i32 and i64 as the unsigned type of their
// width) and convert the one result to the output's type on the way out, as ours does. Widening
// every element to a 64-bit accumulator would slow CUB down for nothing; i8 compared as
// itself was slower than as int32 (docs/design.md#measurement-method).
template <class In> struct compare_type { using type = In; };
template <> struct compare_type<__half> { using type = float; };
template <> struct compare_type<__nv_bfloat16> { using type = float; };
template <> struct compare_type<__nv_fp8_e4m3> { using type = float; };
template <> struct compare_type<__nv_fp8_e5m2> { using type = float; };
template <> struct compare_type<int8_t> { using type = int32_t; };
// i64 into i64 keeps the library's wrapping |INT64_MIN| (itself, the smallest).
template <class In, class Acc> struct magnitude_type { using type = typename compare_type<In>::type; };
template <class Acc> struct magnitude_type<int32_t, Acc> { using type = uint32_t; };
template <class Acc> struct magnitude_type<int64_t, Acc> { using type = uint64_t; };
template <> struct magnitude_type<int64_t, int64_t> { using type = int64_t; };

template <class C> struct to_compare {
  template <class T> __device__ C operator()(const T &x) const { return static_cast<C>(x); }
};
template <class C> struct magnitude {
  template <class T> __device__ C operator()(const T &x) const {
    if constexpr (cuda::std::is_integral_v<T>) { // negated in unsigned arithmetic: it wraps
      using U = cuda::std::make_unsigned_t<C>;
      return x < 0 ? static_cast<C>(U(0) - static_cast<U>(x)) : static_cast<C>(x);
    } else {
      const C a = static_cast<C>(x);
      return a < C(0) ? -a : a;
    }
  }
};
template <class C> struct smaller {
  __device__ C operator()(const C &a, const C &b) const { return b < a ? b : a; }
};
template <class C> struct larger {
  __device__ C operator()(const C &a, const C &b) const { return a < b ? b : a; }
};

template <class In, class Acc, class C, class Op, class Xform>
std::unique_ptr<cub_run> make_extremum(const void *d_in, uint64_t n, void *d_out, Op op, C init, Xform xf) {
  auto out = thrust::make_transform_output_iterator(static_cast<Acc *>(d_out), to_acc<Acc>{});
  return make_transform_reduce<In>(d_in, n, out, op, init, xf);
}

// ArgMin / ArgMax: CUB writes the extremum and its int64 index to separate outputs; the index
// goes to d_out (as ours does), the value to the temp allocation's tail.
template <class In, bool IS_MAX>
std::unique_ptr<cub_run> make_arg(const void *d_in, uint64_t n, void *d_out) {
  auto r = std::make_unique<cub_run>();
  const In *in = static_cast<const In *>(d_in);
  int64_t *idx = static_cast<int64_t *>(d_out);
  In *value = nullptr;
  if (IS_MAX)
    BENCH_CUDA(cub::DeviceReduce::ArgMax(nullptr, r->temp_bytes, in, value, idx, (int64_t)n));
  else
    BENCH_CUDA(cub::DeviceReduce::ArgMin(nullptr, r->temp_bytes, in, value, idx, (int64_t)n));
  const size_t value_at = (r->temp_bytes + 255) / 256 * 256;
  BENCH_CUDA(cudaMalloc(&r->temp, value_at + 256));
  void *temp = r->temp;
  size_t bytes = r->temp_bytes;
  value = reinterpret_cast<In *>(static_cast<char *>(r->temp) + value_at);
  r->launch = [=](cudaStream_t s) mutable {
    if (IS_MAX)
      cub::DeviceReduce::ArgMax(temp, bytes, in, value, idx, (int64_t)n, s);
    else
      cub::DeviceReduce::ArgMin(temp, bytes, in, value, idx, (int64_t)n, s);
  };
  return r;
}

template <cureduce_dtype IN, class Acc>
std::unique_ptr<cub_run> make_for(cureduce_op op, const void *d_in, uint64_t n, void *d_out) {
  using In = typename cub_type<IN>::type;
  using C = typename compare_type<In>::type;
  using M = typename magnitude_type<In, Acc>::type;
  switch (op) {
  case CUREDUCE_SUM: return make<In, Acc>(d_in, n, d_out, cuda::std::plus<Acc>{}, Acc(0));
  case CUREDUCE_MIN:
    return make_extremum<In, Acc>(d_in, n, d_out, smaller<C>{}, cuda::std::numeric_limits<C>::max(),
                                  to_compare<C>{});
  case CUREDUCE_MAX:
    return make_extremum<In, Acc>(d_in, n, d_out, larger<C>{}, cuda::std::numeric_limits<C>::lowest(),
                                  to_compare<C>{});
  case CUREDUCE_ABSMAX: return make_extremum<In, Acc>(d_in, n, d_out, larger<M>{}, M(0), magnitude<M>{});
  case CUREDUCE_SUMSQ:
    return make<In, Acc>(d_in, n, d_out, cuda::std::plus<Acc>{}, Acc(0), square_acc<Acc>{});
  case CUREDUCE_MEAN: // CUB has no mean: its sum, which is what a user would call
    return make<In, Acc>(d_in, n, d_out, cuda::std::plus<Acc>{}, Acc(0));
  case CUREDUCE_ARGMIN:
  case CUREDUCE_ARGMAX:
    // CUB's ArgMin/ArgMax compare the element type itself, and the fp8 types have no < or ==.
    if constexpr (IN == CUREDUCE_F8_E4M3 || IN == CUREDUCE_F8_E5M2)
      return nullptr;
    else
      return op == CUREDUCE_ARGMIN ? make_arg<In, false>(d_in, n, d_out) : make_arg<In, true>(d_in, n, d_out);
  default: return nullptr;
  }
}

} // namespace

std::unique_ptr<cub_run> make_cub_run(cureduce_op op, cureduce_dtype in, cureduce_dtype acc, const void *d_in,
                                      uint64_t n, void *d_out) {
  if (op == CUREDUCE_SUM_EXACT || op == CUREDUCE_MEAN_EXACT) {
    // The peer of an exact sum is CUB's reproducible sum (gpu_to_gpu), when the bench is built
    // with the newer CCCL it needs (bench/peers); f32 and f64, into their own type.
#ifdef CUREDUCE_HAVE_RFA_PEER
    if (op == CUREDUCE_SUM_EXACT && acc == in && (in == CUREDUCE_F32 || in == CUREDUCE_F64)) {
      auto r = std::make_unique<cub_run>();
      const int is_f64 = in == CUREDUCE_F64;
      if (cr_peer_rfa_sum(is_f64, d_in, n, d_out, nullptr, &r->temp_bytes, nullptr) != 0 ||
          cudaMalloc(&r->temp, r->temp_bytes ? r->temp_bytes : 1) != cudaSuccess)
        return nullptr;
      r->launch = [=, raw = r.get()](cudaStream_t s) {
        size_t bytes = raw->temp_bytes;
        (void)cr_peer_rfa_sum(is_f64, d_in, n, d_out, raw->temp, &bytes, s);
      };
      return r;
    }
#endif
    return nullptr;
  }
#define CUB_CASE(IN, ACC, ACCT)                                                                              \
  if (in == IN && acc == ACC)                                                                                \
    return make_for<IN, ACCT>(op, d_in, n, d_out);
  CUB_CASE(CUREDUCE_F32, CUREDUCE_F32, float)
  CUB_CASE(CUREDUCE_F64, CUREDUCE_F64, double)
  CUB_CASE(CUREDUCE_F16, CUREDUCE_F32, float)
  CUB_CASE(CUREDUCE_BF16, CUREDUCE_F32, float)
  CUB_CASE(CUREDUCE_F8_E4M3, CUREDUCE_F32, float)
  CUB_CASE(CUREDUCE_F8_E5M2, CUREDUCE_F32, float)
  CUB_CASE(CUREDUCE_I8, CUREDUCE_I64, int64_t)
  CUB_CASE(CUREDUCE_I8, CUREDUCE_I32, int32_t)
  CUB_CASE(CUREDUCE_I32, CUREDUCE_I64, int64_t)
  CUB_CASE(CUREDUCE_I32, CUREDUCE_I32, int32_t) // the ladder's i32 accumulator
  CUB_CASE(CUREDUCE_I64, CUREDUCE_I64, int64_t)
  CUB_CASE(CUREDUCE_I8, CUREDUCE_F64, double)
  CUB_CASE(CUREDUCE_I32, CUREDUCE_F64, double)
  CUB_CASE(CUREDUCE_I64, CUREDUCE_F64, double)
  CUB_CASE(CUREDUCE_F32, CUREDUCE_F64, double)
  CUB_CASE(CUREDUCE_F16, CUREDUCE_F64, double)
  CUB_CASE(CUREDUCE_BF16, CUREDUCE_F64, double)
  CUB_CASE(CUREDUCE_F8_E4M3, CUREDUCE_F64, double)
  CUB_CASE(CUREDUCE_F8_E5M2, CUREDUCE_F64, double)
#undef CUB_CASE
  return nullptr;
}

} // namespace bench
