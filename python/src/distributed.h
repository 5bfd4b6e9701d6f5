// The native steps of cureduce.distributed (cureduce/distributed.py) around torch.distributed's
// collectives: exact states of rows and their rounding, and the multi-GPU library's pack and
// rank-order combine of partials (src/dist/launch.h, the kernels the C API runs), each on the
// caller's device and stream.
#pragma once

#include <nanobind/nanobind.h>

namespace cureduce_py {

void bind_distributed(nanobind::module_ &m);

} // namespace cureduce_py
