// One reduction over memory a framework owns, named by addresses and a layout the Python layer
// works out (cureduce/_plan.py): what the extension's entry points share.
#pragma once

#include "cureduce.h"

#include <cstdint>
#include <functional>
#include <string>

namespace cureduce_py {

// How a reduction reads its input; the Python layer uses the same numbers (_plan.py).
enum Layout : int {
  FULL = 0, // a = n elements, one result
  AXIS = 1, // a x b x c (outer, length, inner) in C order, reduced along b
  ROWS = 2, // a rows of b elements, row i at i * c (ld): one result per row
  COLS = 3, // the same matrix, one result per column
};

struct Call {
  cureduce_op op;
  cureduce_dtype dtype, acc;
  int layout;
  const void *in;
  uint64_t a, b, c;
  void *out;
};

// A call from the Python layer's integers and addresses.
inline Call make_call(int op, int dtype, int acc, int layout, uintptr_t data, uint64_t a, uint64_t b,
                      uint64_t c, uintptr_t out) {
  return Call{static_cast<cureduce_op>(op),
              static_cast<cureduce_dtype>(dtype),
              static_cast<cureduce_dtype>(acc),
              layout,
              reinterpret_cast<const void *>(data),
              a,
              b,
              c,
              reinterpret_cast<void *>(out)};
}

// Runs k with the GIL released: device < 0 the CPU path on host memory (synchronous), else the
// GPU path on `stream` (a cudaStream_t) of that device, asynchronous. A failure raises the
// Python exception errors.h gives its status.
void reduce_or_raise(const Call &k, int device, uintptr_t stream);

// Runs work(handle, stream) with the GIL released on `stream` of `device` (made current for
// the call), with the handle serving that stream; a failure (of the set-up or a status work
// returns) raises as reduce_or_raise does, with `what` saying which call failed.
void on_gpu_or_raise(int device, uintptr_t stream, const std::string &what,
                     const std::function<cureduce_status(cureduce_handle, void *)> &work);

} // namespace cureduce_py
