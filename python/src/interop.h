// Arrays of frameworks the Python layer has no native route for (JAX, and any object with
// __dlpack__ or __cuda_array_interface__): DLPack import, device memory for their results, and
// the stream and pointer queries their protocols need.
#pragma once

#include <nanobind/nanobind.h>

namespace cureduce_py {

void bind_interop(nanobind::module_ &m);

} // namespace cureduce_py
