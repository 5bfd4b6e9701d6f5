"""CUDA arrays of any other library, through __dlpack__ (preferred: its stream handshake is
part of the call) or __cuda_array_interface__. The work runs on stream= if given, else on the
producer's stream (the interface's "stream"), else on the legacy default stream. The result is
a DeviceArray in memory of the extension's stream-ordered pool."""

import math

import numpy as np

from . import _cureduce, _numpy, _plan

_DL_CPU, _DL_CUDA, _DL_CUDA_MANAGED = 1, 2, 13  # DLPack device types
_LEGACY = 1  # the legacy default stream as DLPack and the array interface write it (0 is refused there)


class DeviceArray:
    """A result for a CUDA array of no known framework: device memory written on the stream the
    call ran on (``stream``), freed in that stream's order when this object goes (the stream must
    outlive it). Read it through DLPack (torch.from_dlpack, cupy.from_dlpack,
    jax.dlpack.from_dlpack) or the CUDA array interface (cupy.asarray, numba.cuda.as_cuda_array)."""

    def __init__(self, buffer, shape, dtype_name):
        self._buffer = buffer
        self._dtype_id = _plan.DTYPE_IDS[dtype_name]
        self.shape = tuple(shape)
        self.dtype = _numpy.numpy_dtype(dtype_name)

    @property
    def device(self):
        return self._buffer.device

    @property
    def stream(self):
        return self._buffer.stream

    @property
    def __cuda_array_interface__(self):
        return {
            "version": 3,
            "shape": self.shape,
            "typestr": self.dtype.str,
            "data": (self._buffer.ptr, False),
            "strides": None,
            "stream": self._buffer.stream or _LEGACY,
        }

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if stream != -1:  # -1: the consumer asks for no ordering
            consumer = _LEGACY if stream is None else stream
            if consumer != (self._buffer.stream or _LEGACY):
                _cureduce.stream_wait(consumer, self._buffer.stream, self.device)
        given = (("max_version", max_version), ("dl_device", dl_device), ("copy", copy))
        return self._buffer.view(list(self.shape), self._dtype_id).__dlpack__(
            **{k: v for k, v in given if v is not None}
        )

    def __dlpack_device__(self):
        return (_DL_CUDA, self.device)

    def __repr__(self):
        return "cureduce.DeviceArray(shape=%s, dtype=%s, device=cuda:%d)" % (self.shape, self.dtype, self.device)


def reduce(op, x, dim, acc, out, stream):
    if hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__"):
        return _from_dlpack(op, x, dim, acc, out, stream)
    return _from_array_interface(op, x, dim, acc, out, stream)


def _from_dlpack(op, x, dim, acc, out, stream):
    kind, device = x.__dlpack_device__()
    if kind == _DL_CPU:
        return _numpy.reduce(op, np.from_dlpack(x), dim, acc, out, stream)
    if kind not in (_DL_CUDA, _DL_CUDA_MANAGED):
        raise _plan.device_error("a DLPack array on device type %d, not CUDA memory" % kind, _cureduce.HOST_POINTER)
    s = 0 if stream is None else _plan.stream_of(stream, device)
    source = _cureduce.DlpackInput(x.__dlpack__(stream=s or _LEGACY))
    return _finish(op, source.dtype, source.shape, source.strides, source.ptr, device, s, dim, acc, out, source)


def _from_array_interface(op, x, dim, acc, out, stream):
    cai = x.__cuda_array_interface__
    if cai.get("mask") is not None:
        raise TypeError("cureduce: masked arrays are not supported")
    ptr = cai["data"][0]
    shape = tuple(cai["shape"])
    dtype = np.dtype(cai["typestr"])
    if dtype.byteorder == ">":  # CUDA memory holds little-endian values
        raise TypeError("cureduce: big-endian data (typestr %r) is not supported" % cai["typestr"])
    strides = _elements(cai.get("strides"), dtype.itemsize, shape)
    device = _device_of(ptr, shape)
    producer = cai.get("stream")  # None: the data is ready; else the stream to order after
    s = _plan.stream_of(stream, device) if stream is not None else producer if producer is not None else 0
    if producer is not None and (producer or _LEGACY) != (s or _LEGACY):
        _cureduce.stream_wait(s, producer, device)
    name = _plan.dtype_name(getattr(x, "dtype", dtype))
    return _finish(op, name or str(dtype), shape, strides, ptr, device, s, dim, acc, out, x)


def _elements(byte_strides, itemsize, shape):
    if byte_strides is None:  # C order
        return _plan.c_strides(shape)
    if any(s % itemsize for s in byte_strides):
        raise _plan.LayoutError("cureduce: strides %s are not whole elements" % (tuple(byte_strides),))
    return tuple(s // itemsize for s in byte_strides)


def _device_of(ptr, shape):
    """The device of the memory at ptr; the current one for an empty array (no memory)."""
    if math.prod(shape) == 0 or ptr == 0:
        return _cureduce.current_device()
    device = _cureduce.pointer_device(ptr)
    if device < 0:
        raise _plan.device_error("__cuda_array_interface__ names host memory", _cureduce.HOST_POINTER)
    return device


def _finish(op, dtype_name, shape, strides, ptr, device, s, dim, acc, out, keep):
    op_id = _plan.op_id(op)
    if dtype_name not in _plan.DTYPE_IDS:
        raise _plan.unsupported_dtype(dtype_name)
    dtype_id = _plan.DTYPE_IDS[dtype_name]
    acc_id = _plan.result_acc(op_id, dtype_id, _plan.acc_id(acc))
    layout, a, b, c, rshape = _plan.layout(shape, _plan.c_contiguous(shape, strides), strides, dim)
    res_name = _plan.result_name(op_id, acc_id)
    if out is not None:
        out_ptr = _check_out(out, device, rshape, res_name)
        _cureduce.reduce_ptr(op_id, dtype_id, acc_id, layout, ptr, a, b, c, out_ptr, device, s)
        return out
    nbytes = math.prod(rshape) * _cureduce.result_size(op_id, acc_id)
    result = _cureduce.DeviceBuffer(nbytes, device, s)
    _cureduce.reduce_ptr(op_id, dtype_id, acc_id, layout, ptr, a, b, c, result.ptr, device, s)
    result.keep = keep  # the input stays alive until the result goes, so after the kernel
    return DeviceArray(result, rshape, res_name)


def _check_out(out, device, shape, res_name):
    """The address to write of an out= with __cuda_array_interface__, after checking it."""
    cai = getattr(out, "__cuda_array_interface__", None)
    ok = cai is not None and not cai["data"][1] and tuple(cai["shape"]) == tuple(shape)
    if ok:
        dtype = np.dtype(cai["typestr"])
        ok = (
            dtype.byteorder != ">"
            and _plan.dtype_name(getattr(out, "dtype", dtype)) == res_name
            and _plan.c_contiguous(shape, _elements(cai.get("strides"), dtype.itemsize, shape))
        )
    if not ok:
        raise _plan.out_error("writeable CUDA array", _plan.TO_NUMPY[res_name], shape, "cuda:%d" % device)
    ptr = cai["data"][0]
    if math.prod(shape) > 0 and _cureduce.pointer_device(ptr) != device:
        raise _plan.device_error("out= is not memory of cuda:%d" % device, _cureduce.INVALID_VALUE)
    return ptr
