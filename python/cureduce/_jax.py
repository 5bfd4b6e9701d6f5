"""JAX arrays. JAX has no current stream and no mutable arrays, so an array on one GPU goes
through DLPack both ways on the stream JAX offers for external work:

  - x.__dlpack__(stream=S) makes S wait for x to be ready (no host wait) and hands over a
    reference that keeps x's buffer alive;
  - the kernel runs on S and writes memory of the extension's stream-ordered pool;
  - jax.dlpack.from_dlpack imports the result as a DeviceArray, whose __dlpack__ orders the
    stream JAX names for the import after S (JAX may name another stream than S there). When
    JAX frees the result, its memory goes back to the pool in S's order and x's reference is
    dropped.

Arrays on the CPU take the NumPy path."""

import math

import jax
import jax.dlpack
import numpy as np

from . import _cureduce, _generic, _numpy, _plan

_TRACER = getattr(jax.core, "Tracer", ())


def reduce(op, x, dim, acc, out, stream):
    if isinstance(x, _TRACER):
        raise TypeError("cureduce: JAX tracers (inside jax.jit, grad or vmap) are not supported; pass a concrete array")
    if out is not None:
        raise ValueError("cureduce: JAX arrays are immutable; out= is not accepted")
    if stream is not None:
        raise ValueError(
            "cureduce: JAX arrays are reduced on the stream JAX gives for external work; stream= is not accepted"
        )
    devices = x.devices()
    if len(devices) != 1:
        raise ValueError("cureduce: this JAX array spans %d devices; cureduce reduces arrays on one" % len(devices))
    (device,) = devices
    if device.platform == "cpu":
        return jax.numpy.asarray(_numpy.reduce(op, np.asarray(x), dim, acc, None, None))
    if device.platform != "gpu":
        raise ValueError("cureduce: JAX arrays on %s are not supported (GPU or CPU)" % device.platform)

    op_id = _plan.op_id(op)
    dtype_id = _plan.dtype_id(x.dtype)
    acc_id = _plan.result_acc(op_id, dtype_id, _plan.acc_id(acc))
    layout, a, b, c, shape = _plan.c_order(x.shape, dim)
    s = device.get_stream_for_external_ready_events()
    source = _cureduce.DlpackInput(x.__dlpack__(stream=s))
    if not _plan.c_contiguous(source.shape, source.strides):
        raise _plan.LayoutError("cureduce: this JAX array's buffer is not in C order (strides %s)" % (source.strides,))
    nbytes = math.prod(shape) * _cureduce.result_size(op_id, acc_id)
    result = _cureduce.DeviceBuffer(nbytes, source.device_id, s)
    _cureduce.reduce_ptr(op_id, dtype_id, acc_id, layout, source.ptr, a, b, c, result.ptr, source.device_id, s)
    result.keep = source
    return jax.dlpack.from_dlpack(_generic.DeviceArray(result, shape, _plan.result_name(op_id, acc_id)))
