"""CuPy arrays: the GPU path on the array's device and CuPy's current stream of that device (or
stream=). Results come from CuPy's memory pool, allocated for the stream that writes them."""

import cupy

from . import _cureduce, _numpy, _plan

def _takes_device():
    """Whether this CuPy keeps a current stream per device (get_current_stream(device_id))."""
    try:
        cupy.cuda.get_current_stream(0)
    except TypeError:
        return False
    except Exception:  # the argument was taken; no device to answer for
        return True
    return True


if _takes_device():

    def _current_stream(device):
        return cupy.cuda.get_current_stream(device).ptr

else:

    def _current_stream(device):
        with cupy.cuda.Device(device):
            return cupy.cuda.get_current_stream().ptr


def reduce(op, x, dim, acc, out, stream):
    op_id = _plan.op_id(op)
    dtype_id = _plan.dtype_id(x.dtype)
    acc_id = _plan.result_acc(op_id, dtype_id, _plan.acc_id(acc))
    res_dtype = _numpy.numpy_dtype(_plan.result_name(op_id, acc_id))
    layout, a, b, c, shape = _plan.layout(x.shape, x.flags.c_contiguous, lambda: _strides(x), dim)
    device = x.device.id
    s = _current_stream(device) if stream is None else _plan.stream_of(stream, device)
    if out is not None:
        _check_out(out, device, shape, res_dtype)
    else:
        out = _empty(shape, res_dtype, device, None if stream is None else _cupy_stream(stream, s, device))
    _cureduce.reduce_ptr(op_id, dtype_id, acc_id, layout, x.data.ptr, a, b, c, out.data.ptr, device, s)
    return out


def _strides(x):
    """Strides in elements; a stride that is no whole number of elements cannot be read."""
    size = x.itemsize
    if any(s % size for s in x.strides):
        raise _plan.LayoutError("cureduce: strides %s are not whole elements" % (x.strides,))
    return tuple(s // size for s in x.strides)


def _check_out(out, device, shape, dtype):
    if not isinstance(out, cupy.ndarray) or out.dtype != dtype or out.shape != shape or not out.flags.c_contiguous:
        raise _plan.out_error("CuPy array", dtype, shape, "cuda:%d" % device)
    if out.device.id != device:
        raise _plan.device_error(
            "out= is on cuda:%d, x on cuda:%d" % (out.device.id, device), _cureduce.INVALID_VALUE
        )


def _empty(shape, dtype, device, stream):
    """cupy.empty on `device`, for `stream` when given (CuPy's pool keys memory by the stream
    current at allocation)."""
    if cupy.cuda.runtime.getDevice() != device:
        with cupy.cuda.Device(device):
            return _empty(shape, dtype, device, stream)
    if stream is None:
        return cupy.empty(shape, dtype)
    with stream:
        return cupy.empty(shape, dtype)


class _StreamRef:
    """A bare cudaStream_t under the CUDA stream protocol, for cupy.cuda.Stream.from_external."""

    def __init__(self, ptr):
        self.ptr = ptr

    def __cuda_stream__(self):
        return (0, self.ptr)


def _cupy_stream(stream, ptr, device):
    if type(stream).__module__.startswith("cupy"):
        return stream
    if hasattr(cupy.cuda.Stream, "from_external"):
        return cupy.cuda.Stream.from_external(_StreamRef(ptr))
    return cupy.cuda.ExternalStream(ptr, device)
