// The status of the kernel launch this thread just made. Layer: dispatch.
#pragma once

#include "cureduce.h"

#include <cuda_runtime.h>

namespace cr {

// A launch fails synchronously (bad configuration, no kernel image for this GPU); a fault
// inside the kernel shows up later, on the stream, where the caller looks for it.
inline cureduce_status launch_status() {
  return cudaGetLastError() == cudaSuccess ? CUREDUCE_SUCCESS : CUREDUCE_ERROR_CUDA;
}

} // namespace cr
