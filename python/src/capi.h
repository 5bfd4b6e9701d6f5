// What the extension lends the package's other native module (the libtorch one,
// torch_native.cpp) through the capsule CUREDUCE_PY_CAPI: its reduction, with the same handles,
// streams and exceptions as its own calls, so that the two modules never hold two caches.
#pragma once

#include "reduce_call.h"

#include <cstdint>

#define CUREDUCE_PY_CAPI "cureduce._cureduce._C_API"

namespace cureduce_py {

constexpr int CAPI_VERSION = 1;

struct CApi {
  int version; // CAPI_VERSION of the module that made it
  // reduce_or_raise(*k, device, stream) with the GIL held on entry and return: 0, or -1 with
  // the Python exception set.
  int (*reduce)(const Call *k, int device, uintptr_t stream);
};

} // namespace cureduce_py
