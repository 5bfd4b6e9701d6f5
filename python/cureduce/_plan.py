"""What every kind of array shares: op and dtype names, the axes `dim` names, the memory layout a
reduction reads (C order, or a 2-d view with one unit stride), stream arguments and device
errors. Plain Python over the extension's small functions; it imports no framework."""

import math
import operator

import numpy as np

from . import _cureduce

# How _cureduce.reduce_ptr reads its input (the same numbers as Layout in _cureduce.cpp).
FULL, AXIS, ROWS, COLS = 0, 1, 2, 3

OPS = ("sum", "min", "max", "absmax", "sumsq", "argmin", "argmax", "mean", "sum_exact", "mean_exact")
OP_IDS = {name: _cureduce.op_from_name(name) for name in OPS}
ARG_OP_IDS = frozenset((OP_IDS["argmin"], OP_IDS["argmax"]))

# NumPy and ml_dtypes names (CuPy, JAX and PyTorch use the same) as cureduce names them.
FROM_NUMPY = {
    "float32": "f32",
    "float64": "f64",
    "float16": "f16",
    "bfloat16": "bf16",
    "float8_e4m3fn": "e4m3",
    "float8_e5m2": "e5m2",
    "int8": "i8",
    "int32": "i32",
    "int64": "i64",
}
TO_NUMPY = {v: k for k, v in FROM_NUMPY.items()}
DTYPE_IDS = {name: _cureduce.dtype_from_name(name) for name in TO_NUMPY}


def op_id(op):
    try:
        return OP_IDS[op]
    except (KeyError, TypeError):
        raise ValueError("cureduce: unknown op %r (one of %s)" % (op, ", ".join(OPS))) from None


def unsupported_dtype(dtype):
    return TypeError("cureduce: unsupported dtype %s (supported: %s)" % (dtype, ", ".join(FROM_NUMPY)))


def dtype_name(dtype):
    """The cureduce name of a dtype given as a cureduce name, a NumPy name or spelling ("float64",
    "f8", "double", "<f8"), a NumPy or ml_dtypes dtype, or a torch dtype; None when cureduce has
    no such dtype. cureduce's names come first: "f16" is float16, not NumPy's 16-byte float."""
    if isinstance(dtype, str):
        if dtype in TO_NUMPY:
            return dtype
        if dtype.startswith("torch."):
            return FROM_NUMPY.get(dtype[6:])
        if dtype in FROM_NUMPY:
            return FROM_NUMPY[dtype]
        # else NumPy's other spellings, through np.dtype below
    text = str(dtype)
    if text.startswith("torch."):  # torch dtypes print as torch.float32 and are no NumPy dtypes
        return FROM_NUMPY.get(text[6:])
    try:
        return FROM_NUMPY.get(np.dtype(dtype).name)
    except TypeError:
        return None


def dtype_id(dtype):
    name = dtype_name(dtype)
    if name is None:
        raise unsupported_dtype(dtype)
    return DTYPE_IDS[name]


_ACC_IDS = {None: _cureduce.ACC_DEFAULT}
_RESOLVED = {}


def acc_id(acc):
    """The accumulator argument as a dtype id (ACC_DEFAULT for None); TypeError when unknown."""
    try:
        return _ACC_IDS[acc]
    except (KeyError, TypeError):  # TypeError: an unhashable argument
        found = dtype_id(acc)
    try:
        _ACC_IDS[acc] = found
    except TypeError:
        pass
    return found


def result_acc(op, dtype, acc):
    """The accumulator (op, dtype, acc) runs with, ids all; TypeError carrying the library's
    message when the combination is refused."""
    key = (op, dtype, acc)
    found = _RESOLVED.get(key)
    if found is None:
        found = _RESOLVED[key] = _cureduce.resolve_acc(op, dtype, acc)
    return found


def result_name(op, acc):
    """The cureduce name of the result's dtype: the accumulator's, int64 for the arg ops."""
    return "i64" if op in ARG_OP_IDS else _cureduce.dtype_name(acc)


def axes(ndim, dim):
    """(first, last) of the axes dim names, last exclusive; None for the whole array."""
    if dim is None:
        return None
    dims = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
    if not dims:
        raise ValueError("cureduce: dim=() names no axis; use dim=None for the whole array")
    picked = []
    for d in dims:
        try:
            if isinstance(d, bool):
                raise TypeError
            d = operator.index(d)
        except TypeError:
            raise TypeError("cureduce: dim must be None, an int or a tuple of ints, got %r" % (dim,)) from None
        if not -ndim <= d < ndim:
            raise ValueError("cureduce: dim %d is out of range for an array of %d dimensions" % (d, ndim))
        picked.append(d % ndim)
    picked.sort()
    if len(set(picked)) != len(picked) or picked[-1] - picked[0] != len(picked) - 1:
        raise ValueError("cureduce: the axes of dim=%r must be distinct and adjacent" % (dim,))
    return picked[0], picked[-1] + 1


def out_shape(shape, dim):
    """The result's shape: shape without the axes of dim (works on symbolic shapes too)."""
    span = axes(len(shape), dim)
    if span is None:
        return ()
    return tuple(shape[: span[0]]) + tuple(shape[span[1] :])


_C_ORDER_PLANS = {}


def c_order(shape, dim):
    """(layout, a, b, c, result shape) of a C-contiguous array reduced over dim. Plans of an int or
    no dim are kept, since working one out costs more than the rest of a call's Python."""
    if dim is None or type(dim) is int:  # not bool, which hashes as an int
        key = (shape, dim)
        plan = _C_ORDER_PLANS.get(key)
        if plan is None:
            if len(_C_ORDER_PLANS) > 4096:
                _C_ORDER_PLANS.clear()
            plan = _C_ORDER_PLANS[key] = _c_order(shape, dim)
        return plan
    return _c_order(shape, dim)


def _c_order(shape, dim):
    span = axes(len(shape), dim)
    if span is None:
        return FULL, math.prod(shape), 0, 0, ()
    first, last = span
    outer, length, inner = math.prod(shape[:first]), math.prod(shape[first:last]), math.prod(shape[last:])
    result = tuple(shape[:first]) + tuple(shape[last:])
    if outer == 1 and inner == 1:  # one result: the whole-array kernels
        return FULL, length, 0, 0, result
    return AXIS, outer, length, inner, result


class LayoutError(ValueError):
    """A memory layout the library cannot read in place."""


def strided_2d(shape, strides, dim):
    """(layout, a, b, c, result shape) of a 2-d view with strides in elements, one of them 1:
    rows of a wider matrix (x[:, :k], ld = the row stride) or its transpose. ValueError for any
    other layout: reading it in place is not possible and a silent copy would hide its cost."""
    matrix = None
    if len(shape) == 2:
        rows, cols = shape
        s0, s1 = strides
        if cols == 1:  # the stride of an axis of length 1 is never used
            s1 = 1
        if rows == 1 and s1 != 1:
            s0 = 1
        if s1 == 1 and s0 >= cols:  # x itself, row i at i * s0
            matrix, within_rows_axis = (rows, cols, s0), 1
        elif s0 == 1 and s1 >= rows:  # x.T, its row j (x's column j) at j * s1
            matrix, within_rows_axis = (cols, rows, s1), 0
    if matrix is None:
        raise LayoutError(
            "cureduce: an array of shape %s and strides %s (elements) is neither C-contiguous nor a 2-d "
            "view with one unit stride; make it contiguous first" % (tuple(shape), tuple(strides))
        )
    span = axes(2, dim)
    if span is None or span == (0, 2):
        raise LayoutError(
            "cureduce: a strided 2-d view (strides %s) reduces along one axis, dim=0 or dim=1; make it "
            "contiguous to reduce all of it" % (tuple(strides),)
        )
    m_rows, m_cols, ld = matrix
    if span[0] == within_rows_axis:
        return ROWS, m_rows, m_cols, ld, (m_rows,)
    return COLS, m_rows, m_cols, ld, (m_cols,)


def layout(shape, contiguous, strides, dim):
    """c_order or strided_2d; `strides` is only read when the array is not contiguous, and may be
    a callable giving them."""
    if contiguous:
        return c_order(shape, dim)
    return strided_2d(shape, strides() if callable(strides) else strides, dim)


def c_strides(shape):
    """C order's strides in elements, as torch and NumPy give them (an axis of length 0 counts
    as 1)."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def c_contiguous(shape, strides):
    """Whether strides (in elements) are C order's, ignoring axes of length 1; empty arrays are."""
    if 0 in shape:
        return True
    expected = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1 and s != expected:
            return False
        expected *= n
    return True


def stream_of(stream, device):
    """The cudaStream_t (as int) of a stream= argument: a torch.cuda.Stream, a CuPy stream, an
    object with __cuda_stream__, or an int. ValueError when the stream says it is on another
    device than `device`."""
    if isinstance(stream, bool):
        raise TypeError("cureduce: stream= must be a stream or an int, got a bool")
    if isinstance(stream, int):
        return stream
    on = None
    if hasattr(stream, "cuda_stream"):  # torch.cuda.Stream, torch.cuda.ExternalStream
        ptr, on = stream.cuda_stream, getattr(stream, "device_index", None)
    elif hasattr(stream, "ptr") and hasattr(stream, "device_id"):  # CuPy
        ptr, on = stream.ptr, stream.device_id
    elif hasattr(stream, "__cuda_stream__"):  # the CUDA stream protocol: (version, address)
        ptr = stream.__cuda_stream__()[1]
    else:
        raise TypeError(
            "cureduce: stream= must be a torch.cuda.Stream, a CuPy stream, an object with __cuda_stream__ "
            "or a cudaStream_t as int, got %s" % type(stream).__name__
        )
    if on is not None and on >= 0 and on != device:
        raise device_error("stream= is on cuda:%d, the array on cuda:%d" % (on, device), _cureduce.INVALID_VALUE)
    return int(ptr)


def device_error(message, status):
    """ValueError for memory or a stream on the wrong device, ending with the library's sentence
    for `status` (HOST_POINTER or INVALID_VALUE)."""
    return ValueError("cureduce: %s: %s" % (message, _cureduce.status_string(status)))


def out_error(kind, dtype, shape, device):
    return ValueError(
        "cureduce: out must be a C-contiguous %s of dtype %s and shape %s on %s" % (kind, dtype, tuple(shape), device)
    )
