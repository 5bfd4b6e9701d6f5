// The eager call of a plain torch tensor whose plan the Python layer has kept: its checks, the
// result's allocation and the reduction in one native call, 0.2 to 0.5 µs less than the same
// steps in Python (docs/design.md, "Python package"). Through Python's C API and torch's
// Python methods only: the extension has no link to torch.
#pragma once

#include <nanobind/nanobind.h>

namespace cureduce_py {

void bind_torch_path(nanobind::module_ &m);

} // namespace cureduce_py
