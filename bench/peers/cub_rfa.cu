// CUB's gpu_to_gpu (RFA) and default float sums from the CCCL headers in CUREDUCE_CCCL_PEER_DIR. See
// cub_rfa.h. Built into its own shared library with only the C functions exported, so none of these CCCL
// instantiations meets the toolkit CCCL's at link time.
#include "cub_rfa.h"

#include <cub/device/device_reduce.cuh>
#include <cub/version.cuh>
#include <cuda/execution.determinism.h>
#include <cuda/execution.require.h>
#include <cuda/memory_resource>
#include <cuda/std/execution>
#include <cuda/stream_ref>
#include <cuda_runtime.h>

// The toolkit's CCCL 3.0 has no gpu_to_gpu sum; failing here means its headers won over the peer's.
static_assert(CCCL_VERSION >= 3006000 && CUB_VERSION >= 300600,
              "CUREDUCE_CCCL_PEER_DIR must come before the toolkit's CCCL (CCCL 3.6 or newer)");
// nv/ also sits in the toolkit's main include directory, which nvcc puts after -I but before -isystem.
#ifndef NV_PROVIDES_SM_121
#error "nv/target comes from the toolkit: pass CUREDUCE_CCCL_PEER_DIR with -I, not -isystem"
#endif

namespace {

// The env-taking DeviceReduce::Sum has no temp-storage arguments: it asks the environment's memory
// resource for its temporary storage. This resource hands out the caller's buffer. Without one (the size
// query) or when it is too small, it records the size and returns null; CUB then takes its second phase
// for another size query and launches nothing.
struct temp_request {
  void *buf;
  size_t cap;
  size_t asked;
  bool too_small;
};

class caller_buffer {
public:
  explicit caller_buffer(temp_request *r) : r_(r) {}
  void *allocate_sync(size_t bytes, size_t align) { return take(bytes, align); }
  void deallocate_sync(void *, size_t, size_t) noexcept {}
  void *allocate(cuda::stream_ref, size_t bytes, size_t align) { return take(bytes, align); }
  void deallocate(cuda::stream_ref, void *, size_t, size_t) noexcept {}
  bool operator==(const caller_buffer &o) const { return r_ == o.r_; }
  bool operator!=(const caller_buffer &o) const { return r_ != o.r_; }

private:
  void *take(size_t bytes, size_t align) {
    r_->asked = bytes;
    if (!r_->buf)
      return nullptr;
    if (bytes > r_->cap || reinterpret_cast<uintptr_t>(r_->buf) % align != 0) {
      r_->too_small = true;
      return nullptr;
    }
    return r_->buf;
  }
  temp_request *r_;
};

template <class T>
int rfa_sum(const void *d_in, uint64_t n, void *d_out, void *d_temp, size_t *temp_bytes, cudaStream_t s) {
  temp_request req{d_temp, d_temp ? *temp_bytes : 0, 0, false};
  const auto env = cuda::std::execution::env{
      cuda::execution::require(cuda::execution::determinism::gpu_to_gpu), cuda::stream_ref{s},
      cuda::std::execution::prop{cuda::mr::get_memory_resource, caller_buffer{&req}}};
  const cudaError_t err =
      cub::DeviceReduce::Sum(static_cast<const T *>(d_in), static_cast<T *>(d_out), (int64_t)n, env);
  if (err != cudaSuccess)
    return (int)err;
  if (!d_temp) {
    *temp_bytes = req.asked;
    return 0;
  }
  return req.too_small ? (int)cudaErrorInvalidValue : 0;
}

template <class T>
int cub_sum(const void *d_in, uint64_t n, void *d_out, void *d_temp, size_t *temp_bytes, cudaStream_t s) {
  size_t bytes = d_temp ? *temp_bytes : 0;
  const cudaError_t err = cub::DeviceReduce::Sum(d_temp, bytes, static_cast<const T *>(d_in),
                                                 static_cast<T *>(d_out), (int64_t)n, s);
  if (err == cudaSuccess && !d_temp)
    *temp_bytes = bytes;
  return (int)err;
}

} // namespace

extern "C" {

int cr_peer_rfa_available(void) { return 1; }

int cr_peer_cccl_version(void) { return CCCL_VERSION; }

int cr_peer_rfa_sum(int is_f64, const void *d_in, uint64_t n, void *d_out, void *d_temp, size_t *temp_bytes,
                    void *stream) {
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  return is_f64 ? rfa_sum<double>(d_in, n, d_out, d_temp, temp_bytes, s)
                : rfa_sum<float>(d_in, n, d_out, d_temp, temp_bytes, s);
}

int cr_peer_cub_sum(int is_f64, const void *d_in, uint64_t n, void *d_out, void *d_temp, size_t *temp_bytes,
                    void *stream) {
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  return is_f64 ? cub_sum<double>(d_in, n, d_out, d_temp, temp_bytes, s)
                : cub_sum<float>(d_in, n, d_out, d_temp, temp_bytes, s);
}

} // extern "C"
