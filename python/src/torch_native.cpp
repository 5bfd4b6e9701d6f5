// cureduce._cureduce_torch: the eager call of a plain CUDA tensor whose plan the Python layer
// has kept, through libtorch. The tensor's fields are read in C++, the result comes from torch's
// CUDA allocator and the stream from c10, with no Python call on the way: torch_path.cpp
// makes the same call through torch's Python methods, about 2 µs more (docs/design.md, "Python
// package"). Built only where torch is importable at build time, against that torch, and
// loaded only under the torch version it was built for (_torch.py). The reduction itself is
// _cureduce's, reached through the capsule of capi.h.
#include <Python.h>

#include "capi.h"

#include <ATen/core/Tensor.h>
#include <ATen/cuda/EmptyTensor.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/SmallVector.h>
#include <torch/csrc/Dtype.h>
#include <torch/csrc/DynamicTypes.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/utils/object_ptr.h>

#include <cstdint>
#include <functional>
#include <tuple>
#include <unordered_map>

namespace {

using cureduce_py::Call;
using Sizes = c10::SmallVector<int64_t, 8>;

const cureduce_py::CApi *api = nullptr;

// A tuple of ints into `into`; false for anything else.
bool int_tuple(PyObject *t, Sizes &into) {
  if (!PyTuple_CheckExact(t))
    return false;
  const Py_ssize_t n = PyTuple_GET_SIZE(t);
  into.resize(n);
  for (Py_ssize_t i = 0; i < n; ++i) {
    into[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(t, i));
    if (into[i] == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      return false;
    }
  }
  return true;
}

bool as_long(PyObject *o, long long *v) {
  *v = PyLong_AsLongLong(o);
  if (*v == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    return false;
  }
  return true;
}

// A tensor this path may read or write: plain (not a subclass), with memory, on a CUDA device,
// in C order.
const at::Tensor *plain_cuda(PyObject *o) {
  if (!THPVariable_CheckExact(o))
    return nullptr;
  const at::Tensor &t = THPVariable_Unpack(o);
  return t.defined() && t.is_cuda() && t.has_storage() && t.is_contiguous() ? &t : nullptr;
}

// A plan as the Python layer keeps it (_torch._plan_of), read into C++: the call without its
// two addresses, and the result's dtype, shape and strides.
struct Plan {
  Call call;
  at::ScalarType result_dtype;
  Sizes shape, strides;
};

// What a plan's key holds: the op and acc objects themselves (the same objects call after
// call, held while here so that no other object takes their address), x's dtype and shape,
// and dim (an int, or none).
struct Key {
  PyObject *op, *acc;
  at::ScalarType dtype;
  bool has_dim;
  long long dim;
  Sizes sizes;
  bool operator==(const Key &o) const {
    return op == o.op && acc == o.acc && dtype == o.dtype && has_dim == o.has_dim && dim == o.dim &&
           sizes == o.sizes;
  }
};

struct KeyHash {
  size_t operator()(const Key &k) const {
    size_t h = std::hash<const void *>()(k.op) ^ std::hash<const void *>()(k.acc) * 31u;
    h = h * 131u + static_cast<size_t>(k.dtype) + (k.has_dim ? static_cast<size_t>(k.dim) + 7u : 0u);
    for (const int64_t n : k.sizes)
      h = h * 1000003u ^ static_cast<size_t>(n);
    return h;
  }
};

// The plans found in `plans` so far: a call with the same key's parts skips building the key
// tuple, the dict lookup and reading the plan (docs/design.md, "Python package"). Plans
// depend on their key only, but forget() (_torch.forget_plans) drops these whenever _PLANS
// is emptied, so that both hold the same plans. Never destroyed: its objects are released by
// forget() only, while the interpreter lives.
std::unordered_map<Key, Plan, KeyHash> &kept() {
  static auto *k = new std::unordered_map<Key, Plan, KeyHash>;
  return *k;
}

// Emptied beyond this many, as _PLANS is. Op and acc objects made afresh for each call (not the
// package's own) always miss, and so empty it every KEPT_MAX calls.
constexpr size_t KEPT_MAX = 4096;

void forget_kept() {
  std::unordered_map<Key, Plan, KeyHash> old;
  old.swap(kept()); // emptied before any object is released, whatever its release runs
  for (auto &entry : old) {
    Py_DECREF(entry.first.op);
    Py_DECREF(entry.first.acc);
  }
}

PyObject *forget(PyObject *, PyObject *) {
  forget_kept();
  Py_RETURN_NONE;
}

// plans[(op, x.dtype, x.shape, dim, acc)] read into `plan`; false where there is none (or it is
// not a plan), with no Python error set.
bool find_in(PyObject *plans, const Key &k, PyObject *dim, Plan *plan) {
  // x.shape is a torch.Size, a tuple with tuple's hash and equality: a plain tuple finds its key.
  THPObjectPtr shape(PyTuple_New(static_cast<Py_ssize_t>(k.sizes.size())));
  if (!shape)
    throw python_error();
  for (size_t i = 0; i < k.sizes.size(); ++i) {
    PyObject *n = PyLong_FromLongLong(k.sizes[i]);
    if (!n)
      throw python_error();
    PyTuple_SET_ITEM(shape.get(), static_cast<Py_ssize_t>(i), n);
  }
  PyObject *const dtype = reinterpret_cast<PyObject *>(torch::getTHPDtype(k.dtype));
  THPObjectPtr key(PyTuple_Pack(5, k.op, dtype, shape.get(), dim, k.acc));
  if (!key)
    throw python_error();
  PyObject *found = PyDict_GetItemWithError(plans, key.get()); // borrowed
  if (!found) {
    PyErr_Clear(); // an unhashable acc: the Python path says what is wrong with it
    return false;
  }
  // (op, dtype, acc ids, result dtype, layout, a, b, c, result shape, result strides)
  Py_INCREF(found);
  const THPObjectPtr held(found); // nothing below may drop it from the dict
  if (!PyTuple_CheckExact(found) || PyTuple_GET_SIZE(found) != 10 ||
      !THPDtype_Check(PyTuple_GET_ITEM(found, 3)) || !int_tuple(PyTuple_GET_ITEM(found, 8), plan->shape) ||
      !int_tuple(PyTuple_GET_ITEM(found, 9), plan->strides))
    return false;
  long long item[8];
  for (Py_ssize_t i : {0, 1, 2, 4, 5, 6, 7})
    if (!as_long(PyTuple_GET_ITEM(found, i), &item[i]))
      return false;
  plan->call =
      cureduce_py::make_call(static_cast<int>(item[0]), static_cast<int>(item[1]), static_cast<int>(item[2]),
                             static_cast<int>(item[4]), 0, static_cast<uint64_t>(item[5]),
                             static_cast<uint64_t>(item[6]), static_cast<uint64_t>(item[7]), 0);
  plan->result_dtype = reinterpret_cast<THPDtype *>(PyTuple_GET_ITEM(found, 3))->scalar_type;
  return true;
}

// reduce(plans, op, x, dim, acc, out): _cureduce.torch_reduce's contract. The reduction of x
// as _torch._run makes it, where x is a plain CUDA tensor in C order whose plan
// plans[(op, x.dtype, x.shape, dim, acc)] is kept (or was, before forget()), on the current
// stream; the result tensor (`out` itself when given). None for any call this path does not
// take, for the Python path to make it or explain why it cannot be made.
PyObject *reduce(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  if (nargs != 6) {
    PyErr_SetString(PyExc_TypeError, "reduce(plans, op, x, dim, acc, out) takes 6 arguments");
    throw python_error(); // raised by HANDLE_TH_ERRORS, after any warnings it holds
  }
  PyObject *const plans = args[0], *const op = args[1], *const dim = args[3], *const acc = args[4];
  PyObject *const out = args[5];
  const at::Tensor *x = plain_cuda(args[2]);
  if (!x || !PyDict_CheckExact(plans) || !(dim == Py_None || PyLong_CheckExact(dim)))
    Py_RETURN_NONE;
  const auto sizes = x->sizes();
  Key key{op, acc, x->scalar_type(), dim != Py_None, 0, Sizes(sizes.begin(), sizes.end())};
  if (key.has_dim && !as_long(dim, &key.dim))
    Py_RETURN_NONE; // beyond any axis: the Python path says so
  auto entry = kept().find(key);
  if (entry == kept().end()) {
    Plan found;
    if (!find_in(plans, key, dim, &found))
      Py_RETURN_NONE;
    if (kept().size() > KEPT_MAX)
      forget_kept();
    bool added = false;
    std::tie(entry, added) = kept().emplace(std::move(key), std::move(found));
    if (added) { // not where the dict lookup's own Python code has put the same key meanwhile
      Py_INCREF(op);
      Py_INCREF(acc);
    }
  }
  const Plan &plan = entry->second;

  at::Tensor made;
  const at::Tensor *result = nullptr;
  if (out == Py_None) {
    // From the CUDA allocator straight, not through the dispatcher, which cost about 1 µs more
    // (docs/design.md, "Python package"). The kernel writes the whole result, so no step a
    // dispatcher adds to torch.empty_strided (a deterministic fill, a dispatch mode's record)
    // has anything to do here.
    made =
        at::Tensor(at::detail::empty_strided_cuda(plan.shape, plan.strides, plan.result_dtype, x->device()));
    result = &made;
  } else {
    // The same checks as _torch._run's, which raises the error for an `out` that fails them
    // (one that requires grad, too: _run lets it through where grad mode is off).
    result = plain_cuda(out);
    if (!result || result->scalar_type() != plan.result_dtype || !result->sizes().equals(plan.shape) ||
        result->device() != x->device() || result->requires_grad())
      Py_RETURN_NONE;
    result->unsafeGetTensorImpl()->bump_version(); // an in-place write, which autograd's checks must see
  }
  const int device = x->get_device();
  const auto stream = reinterpret_cast<uintptr_t>(c10::cuda::getCurrentCUDAStream(device).stream());
  Call k = plan.call;
  k.in = x->const_data_ptr();
  k.out = result->data_ptr();
  if (api->reduce(&k, device, stream) != 0)
    throw python_error();
  if (out == Py_None)
    return THPVariable_Wrap(std::move(made));
  Py_INCREF(out);
  return out;
  END_HANDLE_TH_ERRORS
}

PyMethodDef methods[] = {
    {"forget", &forget, METH_NOARGS, "Drops the plans reduce() has kept (_torch.forget_plans calls it)."},
    {"reduce", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&reduce)), METH_FASTCALL,
     "reduce(plans, op, x, dim, acc, out): the eager reduction of a plain CUDA tensor in C order whose "
     "plan is in `plans` (or was, before forget()), on the current stream; None when the Python path must "
     "take the call."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    "_cureduce_torch",
    "cureduce's eager path for torch tensors, linked with libtorch (use the cureduce package)",
    -1,
    methods,
    nullptr,
    nullptr,
    nullptr,
    nullptr};

} // namespace

PyMODINIT_FUNC PyInit__cureduce_torch() {
  api = static_cast<const cureduce_py::CApi *>(PyCapsule_Import(CUREDUCE_PY_CAPI, 0));
  if (!api)
    return nullptr;
  if (api->version != cureduce_py::CAPI_VERSION) {
    PyErr_SetString(PyExc_ImportError, "cureduce._cureduce_torch does not match cureduce._cureduce");
    return nullptr;
  }
  return PyModule_Create(&module);
}
