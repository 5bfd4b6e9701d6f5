// A failed cureduce_status as the exception a Python user expects: a refused combination or
// dtype is a TypeError, another bad argument (host memory included) a ValueError, a failure
// of the machine a RuntimeError. The message ends with the library's own sentence.
#pragma once

#include "cureduce.h"

#include <nanobind/nanobind.h>

#include <string>

namespace cureduce_py {

// The Python exception class of a failed status.
inline PyObject *status_exception(cureduce_status st) {
  switch (st) {
  case CUREDUCE_ERROR_UNSUPPORTED:
  case CUREDUCE_ERROR_INVALID_DTYPE:
  case CUREDUCE_ERROR_INVALID_OP: return PyExc_TypeError;
  case CUREDUCE_ERROR_NULL_POINTER:
  case CUREDUCE_ERROR_INVALID_VALUE:
  case CUREDUCE_ERROR_HOST_POINTER:
  case CUREDUCE_EMPTY: return PyExc_ValueError;
  default: return PyExc_RuntimeError;
  }
}

// Sets the exception of `st` (the GIL held) and throws it to nanobind, which passes it on.
[[noreturn]] inline void raise_status(cureduce_status st, const std::string &what) {
  const std::string msg = what + ": " + cureduce_status_string(st);
  PyErr_SetString(status_exception(st), msg.c_str());
  throw nanobind::python_error();
}

// A status with the words that say what failed, so work done without the GIL can report after it.
struct Outcome {
  cureduce_status status = CUREDUCE_SUCCESS;
  std::string what;
  bool ok() const { return status == CUREDUCE_SUCCESS; }
  void raise_if_failed() const {
    if (!ok())
      raise_status(status, what);
  }
};

} // namespace cureduce_py
