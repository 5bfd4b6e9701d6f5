#include "torch_path.h"

#include "reduce_call.h"

#include <cstdint>

namespace nb = nanobind;

namespace cureduce_py {

namespace {

// What torch_path_setup was given, and the names the path looks up: kept for the life of the
// interpreter (never released, as a module's globals are at exit).
struct Torch {
  PyObject *tensor = nullptr, *parameter = nullptr; // the plain tensor types
  PyObject *empty_strided = nullptr, *current_stream = nullptr;
  PyObject *result_kwnames = nullptr; // ("dtype", "device"), empty_strided's keywords
  PyObject *is_cuda = nullptr, *is_contiguous = nullptr, *get_device = nullptr, *data_ptr = nullptr;
  PyObject *dtype = nullptr, *shape = nullptr, *device = nullptr;
};

Torch *torch_refs = nullptr;

// A new reference as an object, or the pending Python exception thrown.
nb::object checked(PyObject *o) {
  if (!o)
    throw nb::python_error();
  return nb::steal(o);
}

bool plain(const Torch &t, PyObject *o) {
  const auto *type = reinterpret_cast<PyObject *>(Py_TYPE(o));
  return type == t.tensor || type == t.parameter;
}

long long as_long(PyObject *o) {
  const long long v = PyLong_AsLongLong(o);
  if (v == -1 && PyErr_Occurred())
    throw nb::python_error();
  return v;
}

unsigned long long as_address(PyObject *o) {
  const unsigned long long v = PyLong_AsUnsignedLongLong(o);
  if (v == static_cast<unsigned long long>(-1) && PyErr_Occurred())
    throw nb::python_error();
  return v;
}

long long method_long(PyObject *o, PyObject *name) {
  return as_long(checked(PyObject_CallMethodNoArgs(o, name)).ptr());
}

bool is_contiguous(const Torch &t, PyObject *o) {
  return checked(PyObject_CallMethodNoArgs(o, t.is_contiguous)).ptr() == Py_True;
}

// Whether `out` is where the plan's result may go: the same checks as _torch._run, which
// raises the error for one that fails them.
bool fits(const Torch &t, PyObject *out, PyObject *dtype, PyObject *shape, long long device) {
  if (!plain(t, out) || checked(PyObject_GetAttr(out, t.dtype)).ptr() != dtype)
    return false;
  const int same = PyObject_RichCompareBool(checked(PyObject_GetAttr(out, t.shape)).ptr(), shape, Py_EQ);
  if (same < 0)
    throw nb::python_error();
  return same == 1 && method_long(out, t.get_device) == device && is_contiguous(t, out);
}

// The reduction of x as _torch._run does it, for a CUDA tensor in C order whose plan
// plans[(op, x.dtype, x.shape, dim, acc)] is kept, on the current stream: the result tensor
// (`out` itself when given). None when this path does not take the call, for the Python path
// to make it or explain why it cannot be made.
nb::object torch_reduce(nb::handle plans, nb::handle op, nb::handle x, nb::handle dim, nb::handle acc,
                        nb::handle out) {
  const Torch *refs = torch_refs;
  if (!refs || !PyDict_CheckExact(plans.ptr()) || !plain(*refs, x.ptr()) ||
      !(dim.is_none() || PyLong_CheckExact(dim.ptr())))
    return nb::none();
  const Torch &t = *refs;
  // Other accelerators' tensors have a device index too; only CUDA tensors are taken here.
  if (checked(PyObject_GetAttr(x.ptr(), t.is_cuda)).ptr() != Py_True || !is_contiguous(t, x.ptr()))
    return nb::none();
  const nb::object dtype = checked(PyObject_GetAttr(x.ptr(), t.dtype));
  const nb::object shape = checked(PyObject_GetAttr(x.ptr(), t.shape));
  const nb::object key = checked(PyTuple_Pack(5, op.ptr(), dtype.ptr(), shape.ptr(), dim.ptr(), acc.ptr()));
  PyObject *found = PyDict_GetItemWithError(plans.ptr(), key.ptr()); // borrowed
  if (!found) {
    PyErr_Clear(); // an unhashable acc: the Python path says what is wrong with it
    return nb::none();
  }
  // (op, dtype, acc ids, result dtype, layout, a, b, c, result shape, result strides)
  const nb::object plan = nb::borrow(found); // held: nothing below may drop it from the dict
  if (!PyTuple_CheckExact(found) || PyTuple_GET_SIZE(found) != 10)
    return nb::none();
  const long long device = method_long(x.ptr(), t.get_device); // >= 0: x is a CUDA tensor
  PyObject *const res_dtype = PyTuple_GET_ITEM(found, 3);
  PyObject *const res_shape = PyTuple_GET_ITEM(found, 8);
  nb::object result;
  if (out.is_none()) {
    const nb::object where = checked(PyObject_GetAttr(x.ptr(), t.device));
    PyObject *args[] = {res_shape, PyTuple_GET_ITEM(found, 9), res_dtype, where.ptr()};
    result = checked(PyObject_Vectorcall(t.empty_strided, args, 2, t.result_kwnames));
  } else if (fits(t, out.ptr(), res_dtype, res_shape, device)) {
    result = nb::borrow(out);
  } else {
    return nb::none();
  }
  const nb::object index = checked(PyLong_FromLongLong(device));
  const unsigned long long stream =
      as_address(checked(PyObject_CallOneArg(t.current_stream, index.ptr())).ptr());
  const unsigned long long in = as_address(checked(PyObject_CallMethodNoArgs(x.ptr(), t.data_ptr)).ptr());
  const unsigned long long to =
      as_address(checked(PyObject_CallMethodNoArgs(result.ptr(), t.data_ptr)).ptr());
  auto item = [&](Py_ssize_t i) { return as_long(PyTuple_GET_ITEM(found, i)); };
  const Call k = make_call((int)item(0), (int)item(1), (int)item(2), (int)item(4), (uintptr_t)in,
                           (uint64_t)item(5), (uint64_t)item(6), (uint64_t)item(7), (uintptr_t)to);
  reduce_or_raise(k, (int)device, (uintptr_t)stream);
  return result;
}

PyObject *interned(const char *name) {
  PyObject *s = PyUnicode_InternFromString(name);
  if (!s)
    throw nb::python_error();
  return s;
}

void torch_path_setup(nb::handle tensor, nb::handle parameter, nb::handle empty_strided,
                      nb::handle current_stream) {
  if (torch_refs)
    return; // torch is imported once; its objects do not change
  auto *t = new Torch;
  t->tensor = tensor.inc_ref().ptr();
  t->parameter = parameter.inc_ref().ptr();
  t->empty_strided = empty_strided.inc_ref().ptr();
  t->current_stream = current_stream.inc_ref().ptr();
  t->dtype = interned("dtype");
  t->device = interned("device");
  t->result_kwnames = checked(PyTuple_Pack(2, t->dtype, t->device)).release().ptr();
  t->is_cuda = interned("is_cuda");
  t->is_contiguous = interned("is_contiguous");
  t->get_device = interned("get_device");
  t->data_ptr = interned("data_ptr");
  t->shape = interned("shape");
  torch_refs = t;
}

} // namespace

void bind_torch_path(nb::module_ &m) {
  m.def("torch_path_setup", &torch_path_setup, nb::arg("tensor"), nb::arg("parameter"),
        nb::arg("empty_strided"), nb::arg("current_stream"),
        "The torch objects torch_reduce uses: the plain tensor types, torch.empty_strided, and "
        "current_stream(device) giving the raw cudaStream_t.");
  m.def("torch_reduce", &torch_reduce, nb::arg("plans"), nb::arg("op"), nb::arg("x"), nb::arg("dim").none(),
        nb::arg("acc").none(), nb::arg("out").none(),
        "The eager reduction of a plain CUDA tensor in C order whose plan is in `plans`, on the current "
        "stream; None when the Python path must take the call.");
}

} // namespace cureduce_py
