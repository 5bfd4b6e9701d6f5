// The Python extension's native part: the C API's CPU reductions over one axis of a C-order
// array, seen as outer x length x inner. The Python layer (cureduce/__init__.py) maps arrays,
// dtypes and axes onto it; nothing here knows about NumPy beyond its buffers.
#include "cureduce.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace nb = nanobind;

namespace {

using bytes_in = nb::ndarray<const uint8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using bytes_out = nb::ndarray<uint8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

// A failed status as the exception a Python user expects: a refused combination or dtype is a
// TypeError, any other argument a ValueError, a failure of the machine a RuntimeError.
[[noreturn]] void raise_status(cureduce_status st, const std::string &what) {
  const std::string msg = what + ": " + cureduce_status_string(st);
  switch (st) {
  case CUREDUCE_ERROR_UNSUPPORTED:
  case CUREDUCE_ERROR_INVALID_DTYPE:
  case CUREDUCE_ERROR_INVALID_OP: throw nb::type_error(msg.c_str());
  case CUREDUCE_ERROR_NULL_POINTER:
  case CUREDUCE_ERROR_INVALID_VALUE:
  case CUREDUCE_EMPTY: throw nb::value_error(msg.c_str());
  default: throw std::runtime_error(msg);
  }
}

// op over the middle axis of `data` (outer x length x inner elements of dtype, C order), into
// `out` (outer x inner results of cureduce_result_size bytes). Returns the accumulator used.
int cpu_reduce(int op, int dtype, int acc, bytes_in data, uint64_t outer, uint64_t length, uint64_t inner,
               bytes_out out) {
  const auto o = static_cast<cureduce_op>(op);
  const auto d = static_cast<cureduce_dtype>(dtype);
  cureduce_dtype a = static_cast<cureduce_dtype>(acc);
  cureduce_status st = cureduce_resolve_acc(o, d, a, &a);
  if (st != CUREDUCE_SUCCESS)
    raise_status(st, std::string(cureduce_op_name(o) ? cureduce_op_name(o) : "op"));
  const size_t size = cureduce_dtype_size(d), rsize = cureduce_result_size(o, a);
  if (data.size() != outer * length * inner * size)
    throw nb::value_error("the data buffer does not hold outer x length x inner elements");
  if (out.size() != outer * inner * rsize)
    throw nb::value_error("the output buffer does not hold outer x inner results");
  const uint8_t *in = data.data();
  uint8_t *res = out.data();
  {
    nb::gil_scoped_release unlocked; // long reductions let other Python threads run
    if (outer * inner == 0)
      st = CUREDUCE_SUCCESS;
    else if (length == 0) // outer * inner empty reductions: sums give 0, the others EMPTY
      st = cureduce_cpu_reduce_rows(o, d, in, outer * inner, 0, 0, a, res);
    else if (inner == 1)
      st = cureduce_cpu_reduce_rows(o, d, in, outer, length, length, a, res);
    else
      for (uint64_t i = 0; i < outer && st == CUREDUCE_SUCCESS; ++i)
        st = cureduce_cpu_reduce_cols(o, d, in + i * length * inner * size, length, inner, inner, a,
                                      res + i * inner * rsize);
  }
  if (st != CUREDUCE_SUCCESS)
    raise_status(st, std::string(cureduce_op_name(o)));
  return static_cast<int>(a);
}

int dtype_from_name(const std::string &name) {
  cureduce_dtype d;
  const cureduce_status st = cureduce_dtype_from_name(name.c_str(), &d);
  if (st != CUREDUCE_SUCCESS)
    raise_status(st, "dtype '" + name + "'");
  return static_cast<int>(d);
}

int op_from_name(const std::string &name) {
  cureduce_op o;
  const cureduce_status st = cureduce_op_from_name(name.c_str(), &o);
  if (st != CUREDUCE_SUCCESS)
    raise_status(st, "op '" + name + "'");
  return static_cast<int>(o);
}

} // namespace

NB_MODULE(_cureduce, m) {
  m.doc() = "cureduce's native part (use the cureduce package)";
  m.def("cpu_reduce", &cpu_reduce, nb::arg("op"), nb::arg("dtype"), nb::arg("acc"), nb::arg("data"),
        nb::arg("outer"), nb::arg("length"), nb::arg("inner"), nb::arg("out"));
  m.def("dtype_from_name", &dtype_from_name);
  m.def("op_from_name", &op_from_name);
  m.def("dtype_name", [](int d) {
    const char *n = cureduce_dtype_name(static_cast<cureduce_dtype>(d));
    return std::string(n ? n : "");
  });
  m.def("result_size", [](int op, int acc) {
    return cureduce_result_size(static_cast<cureduce_op>(op), static_cast<cureduce_dtype>(acc));
  });
  m.def("resolve_acc", [](int op, int dtype, int acc) {
    cureduce_dtype a;
    const cureduce_status st =
        cureduce_resolve_acc(static_cast<cureduce_op>(op), static_cast<cureduce_dtype>(dtype),
                             static_cast<cureduce_dtype>(acc), &a);
    if (st != CUREDUCE_SUCCESS)
      raise_status(st, std::string("accumulator for ") + cureduce_op_name(static_cast<cureduce_op>(op)));
    return static_cast<int>(a);
  });
  m.attr("ACC_DEFAULT") = static_cast<int>(CUREDUCE_ACC_DEFAULT);
  m.attr("version") = cureduce_version();
}
