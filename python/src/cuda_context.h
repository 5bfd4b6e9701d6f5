// The CUDA device a call runs on, set for the call's duration and restored exactly afterwards.
#pragma once

#include <cuda_runtime_api.h>

namespace cureduce_py {

// Makes `device` current for this thread while it lives, then puts back the context that was
// current before, or none: restoring by cudaSetDevice would create a context on a device the
// process never used (cudaSetDevice initialises its primary context).
class DeviceGuard {
public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard &) = delete;
  DeviceGuard &operator=(const DeviceGuard &) = delete;
  bool ok() const { return ok_; }

private:
  void *previous_ = nullptr; // a CUcontext
  int fallback_device_ = -1; // what to restore when the driver calls are not available
  bool changed_ = false;
  bool ok_ = true;
};

// Clears a non-sticky CUDA error after a failed runtime call, so that it is not reported later
// as the failure of an unrelated launch (the library checks cudaGetLastError after launching).
inline void forget_cuda_error() { (void)cudaGetLastError(); }

} // namespace cureduce_py
