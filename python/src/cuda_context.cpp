#include "cuda_context.h"

#include <cuda.h> // types only: the two driver calls are looked up through the runtime

namespace cureduce_py {

namespace {

using CtxGetCurrent = CUresult (*)(CUcontext *);
using CtxSetCurrent = CUresult (*)(CUcontext);

struct DriverCalls {
  CtxGetCurrent get = nullptr;
  CtxSetCurrent set = nullptr;
};

// cuCtxGetCurrent and cuCtxSetCurrent, found once through the runtime so that the extension
// needs no link to libcuda. Both null if the driver does not offer them.
const DriverCalls &driver() {
  static const DriverCalls calls = [] {
    DriverCalls c;
    void *get = nullptr, *set = nullptr;
    cudaDriverEntryPointQueryResult got = cudaDriverEntryPointSymbolNotFound;
    cudaDriverEntryPointQueryResult put = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &get, 12000, cudaEnableDefault, &got) !=
            cudaSuccess ||
        cudaGetDriverEntryPointByVersion("cuCtxSetCurrent", &set, 12000, cudaEnableDefault, &put) !=
            cudaSuccess) {
      forget_cuda_error();
      return c;
    }
    if (got == cudaDriverEntryPointSuccess && put == cudaDriverEntryPointSuccess) {
      c.get = reinterpret_cast<CtxGetCurrent>(get);
      c.set = reinterpret_cast<CtxSetCurrent>(set);
    }
    return c;
  }();
  return calls;
}

} // namespace

DeviceGuard::DeviceGuard(int device) {
  const DriverCalls &d = driver();
  int current = -1;
  bool have_context = true;
  if (d.get) {
    CUcontext ctx = nullptr;
    if (d.get(&ctx) != CUDA_SUCCESS)
      ctx = nullptr;
    previous_ = ctx;
    have_context = ctx != nullptr;
  }
  if (have_context && cudaGetDevice(&current) == cudaSuccess && current == device)
    return;
  if (cudaSetDevice(device) != cudaSuccess) {
    forget_cuda_error();
    ok_ = false;
    return;
  }
  changed_ = true;
  fallback_device_ = current;
}

DeviceGuard::~DeviceGuard() {
  if (!changed_)
    return;
  if (driver().set)
    (void)driver().set(static_cast<CUcontext>(previous_));
  else if (fallback_device_ >= 0)
    (void)cudaSetDevice(fallback_device_);
}

} // namespace cureduce_py
