// The Python extension's native part: the C API's reductions over memory a framework owns,
// named by pointers and a layout the Python layer (cureduce/_plan.py) works out from the array's
// shape, strides and dim. The GPU path runs on the caller's device and stream, with handles
// cached per (device, stream) (handle_cache.h). Nothing here knows about any framework; torch
// tensors' eager calls have a native route of their own (torch_path.h, and torch_native.cpp,
// which reaches this module's reduction through the capsule of capi.h).
#include "capi.h"
#include "cuda_context.h"
#include "cureduce.h"
#include "distributed.h"
#include "errors.h"
#include "handle_cache.h"
#include "interop.h"
#include "reduce_call.h"
#include "torch_path.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <chrono>
#include <cstdint>
#include <new>
#include <string>

namespace nb = nanobind;
using namespace cureduce_py;

namespace {

using bytes_in = nb::ndarray<const uint8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using bytes_out = nb::ndarray<uint8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

std::string op_label(int op) {
  const char *name = cureduce_op_name(static_cast<cureduce_op>(op));
  return std::string("cureduce.") + (name ? name : "reduce");
}

cureduce_status run_cpu(const Call &k) {
  switch (k.layout) {
  case FULL: return cureduce_cpu_reduce(k.op, k.dtype, k.in, k.a, k.acc, k.out);
  case AXIS: return cureduce_cpu_reduce_axis(k.op, k.dtype, k.in, k.a, k.b, k.c, k.acc, k.out);
  case ROWS: return cureduce_cpu_reduce_rows(k.op, k.dtype, k.in, k.a, k.b, k.c, k.acc, k.out);
  case COLS: return cureduce_cpu_reduce_cols(k.op, k.dtype, k.in, k.a, k.b, k.c, k.acc, k.out);
  default: return CUREDUCE_ERROR_INVALID_VALUE;
  }
}

cureduce_status run_gpu(cureduce_handle h, const Call &k, void *stream) {
  switch (k.layout) {
  case FULL: return cureduce_reduce(h, k.op, k.dtype, k.in, k.a, k.acc, k.out, stream);
  case AXIS: return cureduce_reduce_axis(h, k.op, k.dtype, k.in, k.a, k.b, k.c, k.acc, k.out, stream);
  case ROWS: return cureduce_reduce_rows(h, k.op, k.dtype, k.in, k.a, k.b, k.c, k.acc, k.out, stream);
  case COLS: return cureduce_reduce_cols(h, k.op, k.dtype, k.in, k.a, k.b, k.c, k.acc, k.out, stream);
  default: return CUREDUCE_ERROR_INVALID_VALUE;
  }
}

// Finds the handle of `stream` on `device` (the current device), explaining a stream that is
// none or belongs to another device, where a launch would fail less clearly.
Outcome prepare_gpu(int device, cudaStream_t stream, cureduce_handle *h) {
  int stream_device = device;
  const cureduce_status st = handle_for(device, stream, h, &stream_device);
  if (st == CUREDUCE_ERROR_INVALID_VALUE && stream_device != device)
    return {st, "cureduce: the stream belongs to cuda:" + std::to_string(stream_device) +
                    ", the array to cuda:" + std::to_string(device)};
  if (st == CUREDUCE_ERROR_INVALID_VALUE)
    return {st, "cureduce: stream= is not a CUDA stream of this process"};
  if (st != CUREDUCE_SUCCESS)
    return {st, "cureduce: no handle for the stream"};
  return {};
}

// One reduction over memory a framework owns: `layout` says how the input is read, a, b, c its
// sizes. device < 0 runs the CPU path on host memory (synchronous); otherwise the GPU path
// on `stream` of that device (asynchronous: nothing waits for the kernel).
void reduce_ptr(int op, int dtype, int acc, int layout, uintptr_t data, uint64_t a, uint64_t b, uint64_t c,
                uintptr_t out, int device, uintptr_t stream) {
  reduce_or_raise(make_call(op, dtype, acc, layout, data, a, b, c, out), device, stream);
}

// The host time of one bare C call (the GPU path's cureduce_* function with its handle at
// hand), averaged over `calls` calls in a C++ loop: what the Python layer is measured against.
double c_call_seconds(int op, int dtype, int acc, int layout, uintptr_t data, uint64_t a, uint64_t b,
                      uint64_t c, uintptr_t out, int device, uintptr_t stream, int calls) {
  const Call k = make_call(op, dtype, acc, layout, data, a, b, c, out);
  Outcome result;
  double seconds = 0.0;
  {
    nb::gil_scoped_release unlocked;
    DeviceGuard guard(device);
    cureduce_handle h = nullptr;
    const auto s = reinterpret_cast<cudaStream_t>(stream);
    result = guard.ok() ? prepare_gpu(device, s, &h) : Outcome{CUREDUCE_ERROR_NO_DEVICE, "cureduce"};
    if (result.ok()) {
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < calls && result.ok(); ++i)
        result.status = run_gpu(h, k, s);
      const std::chrono::duration<double> spent = std::chrono::steady_clock::now() - start;
      seconds = spent.count() / (calls > 0 ? calls : 1);
    }
  }
  if (result.what.empty())
    result.what = op_label(op);
  result.raise_if_failed();
  return seconds;
}

// op over the middle axis of `data` (outer x length x inner elements of dtype, C order), into
// `out` (outer x inner results of cureduce_result_size bytes): NumPy's buffers, checked in size.
void cpu_reduce(int op, int dtype, int acc, bytes_in data, uint64_t outer, uint64_t length, uint64_t inner,
                bytes_out out) {
  const auto o = static_cast<cureduce_op>(op);
  const auto d = static_cast<cureduce_dtype>(dtype);
  const auto a = static_cast<cureduce_dtype>(acc);
  if (data.size() != outer * length * inner * cureduce_dtype_size(d))
    throw nb::value_error("the data buffer does not hold outer x length x inner elements");
  if (out.size() != outer * inner * cureduce_result_size(o, a))
    throw nb::value_error("the output buffer does not hold outer x inner results");
  cureduce_status st;
  {
    nb::gil_scoped_release unlocked; // long reductions let other Python threads run
    st = run_cpu(Call{o, d, a, AXIS, data.data(), outer, length, inner, out.data()});
  }
  if (st != CUREDUCE_SUCCESS)
    raise_status(st, op_label(op));
}

int dtype_from_name(const std::string &name) {
  cureduce_dtype d;
  const cureduce_status st = cureduce_dtype_from_name(name.c_str(), &d);
  if (st != CUREDUCE_SUCCESS)
    raise_status(st, "cureduce: dtype '" + name + "'");
  return static_cast<int>(d);
}

int op_from_name(const std::string &name) {
  cureduce_op o;
  const cureduce_status st = cureduce_op_from_name(name.c_str(), &o);
  if (st != CUREDUCE_SUCCESS)
    raise_status(st, "cureduce: op '" + name + "'");
  return static_cast<int>(o);
}

int resolve_acc(int op, int dtype, int acc) {
  cureduce_dtype a;
  const cureduce_status st = cureduce_resolve_acc(
      static_cast<cureduce_op>(op), static_cast<cureduce_dtype>(dtype), static_cast<cureduce_dtype>(acc), &a);
  if (st != CUREDUCE_SUCCESS)
    raise_status(st, op_label(op) + " of " + cureduce_dtype_name(static_cast<cureduce_dtype>(dtype)));
  return static_cast<int>(a);
}

} // namespace

void cureduce_py::reduce_or_raise(const Call &k, int device, uintptr_t stream) {
  Outcome result;
  {
    nb::gil_scoped_release unlocked; // other Python threads run meanwhile
    if (device < 0) {
      result.status = run_cpu(k);
    } else {
      DeviceGuard guard(device);
      cureduce_handle h = nullptr;
      const auto s = reinterpret_cast<cudaStream_t>(stream);
      if (!guard.ok())
        result = {CUREDUCE_ERROR_NO_DEVICE, "cureduce: cuda:" + std::to_string(device)};
      else
        result = prepare_gpu(device, s, &h);
      if (result.ok())
        result.status = run_gpu(h, k, s);
    }
  }
  if (!result.ok() && result.what.empty())
    result.what = op_label(k.op);
  result.raise_if_failed();
}

void cureduce_py::on_gpu_or_raise(int device, uintptr_t stream, const std::string &what,
                                  const std::function<cureduce_status(cureduce_handle, void *)> &work) {
  Outcome result;
  {
    nb::gil_scoped_release unlocked;
    DeviceGuard guard(device);
    cureduce_handle h = nullptr;
    const auto s = reinterpret_cast<cudaStream_t>(stream);
    result = guard.ok() ? prepare_gpu(device, s, &h)
                        : Outcome{CUREDUCE_ERROR_NO_DEVICE, "cureduce: cuda:" + std::to_string(device)};
    if (result.ok())
      result.status = work(h, s);
  }
  if (!result.ok() && result.what.empty())
    result.what = what;
  result.raise_if_failed();
}

namespace {

int reduce_for_capi(const Call *k, int device, uintptr_t stream) {
  try {
    reduce_or_raise(*k, device, stream);
    return 0;
  } catch (nb::python_error &e) {
    e.restore();
  } catch (const std::bad_alloc &) {
    PyErr_NoMemory();
  } catch (const std::exception &e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (...) { // nothing may cross the capsule's C boundary
    PyErr_SetString(PyExc_RuntimeError, "cureduce: an unknown C++ exception");
  }
  return -1;
}

const CApi capi{CAPI_VERSION, &reduce_for_capi};

} // namespace

NB_MODULE(_cureduce, m) {
  m.doc() = "cureduce's native part (use the cureduce package)";
  m.def("reduce_ptr", &reduce_ptr, nb::arg("op"), nb::arg("dtype"), nb::arg("acc"), nb::arg("layout"),
        nb::arg("data"), nb::arg("a"), nb::arg("b"), nb::arg("c"), nb::arg("out"), nb::arg("device"),
        nb::arg("stream"),
        "Reduce memory at `data` into `out` (addresses); layout FULL/AXIS/ROWS/COLS with sizes a, b, c. "
        "device < 0: host memory, synchronous; else asynchronous on `stream` (a cudaStream_t as int).");
  m.def("c_call_seconds", &c_call_seconds, nb::arg("op"), nb::arg("dtype"), nb::arg("acc"), nb::arg("layout"),
        nb::arg("data"), nb::arg("a"), nb::arg("b"), nb::arg("c"), nb::arg("out"), nb::arg("device"),
        nb::arg("stream"), nb::arg("calls"),
        "Host seconds per bare C call, timed over `calls` calls in C++.");
  m.def("cpu_reduce", &cpu_reduce, nb::arg("op"), nb::arg("dtype"), nb::arg("acc"), nb::arg("data"),
        nb::arg("outer"), nb::arg("length"), nb::arg("inner"), nb::arg("out"),
        "Reduce a C-order byte buffer (outer x length x inner elements) along its middle axis into `out`.");
  m.def("dtype_from_name", &dtype_from_name, nb::arg("name"));
  m.def("op_from_name", &op_from_name, nb::arg("name"));
  m.def("dtype_name", [](int d) {
    const char *n = cureduce_dtype_name(static_cast<cureduce_dtype>(d));
    return std::string(n ? n : "");
  });
  m.def("result_size", [](int op, int acc) {
    return cureduce_result_size(static_cast<cureduce_op>(op), static_cast<cureduce_dtype>(acc));
  });
  m.def("resolve_acc", &resolve_acc, nb::arg("op"), nb::arg("dtype"), nb::arg("acc"),
        "The accumulator op uses for dtype given acc (ACC_DEFAULT allowed); TypeError if refused.");
  m.def("status_string",
        [](int st) { return std::string(cureduce_status_string(static_cast<cureduce_status>(st))); });
  m.def(
      "handle_counts",
      [] {
        const HandleCounts n = handle_counts();
        nb::dict d;
        d["eager"] = n.eager;
        d["captured"] = n.captured;
        d["spare"] = n.spare;
        return d;
      },
      "Handles held: per (device, stream), owned by live CUDA graphs, and spare.");
  bind_interop(m);
  bind_torch_path(m);
  bind_distributed(m);
  m.attr("ACC_DEFAULT") = static_cast<int>(CUREDUCE_ACC_DEFAULT);
  m.attr("HOST_POINTER") = static_cast<int>(CUREDUCE_ERROR_HOST_POINTER);
  m.attr("INVALID_VALUE") = static_cast<int>(CUREDUCE_ERROR_INVALID_VALUE);
  m.attr("version") = cureduce_version();
  m.attr("_C_API") = nb::capsule(&capi, CUREDUCE_PY_CAPI);
}
