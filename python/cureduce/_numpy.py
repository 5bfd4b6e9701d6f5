"""NumPy arrays: the library's CPU path, synchronous. Any layout and byte order is read as NumPy
sees it (a non-contiguous or byte-swapped array is copied to C order and the machine's byte
order first, as NumPy's own reductions would read it)."""

import numpy as np

from . import _cureduce, _plan


def numpy_dtype(name):
    """The NumPy dtype of a cureduce dtype name (ml_dtypes for bf16 and fp8)."""
    np_name = _plan.TO_NUMPY[name]
    if hasattr(np, np_name):
        return np.dtype(np_name)
    import ml_dtypes  # bf16 and fp8 arrays exist only with it, so it is importable here

    return np.dtype(getattr(ml_dtypes, np_name))


def reduce(op, x, dim, acc, out, stream):
    if stream is not None:
        raise ValueError("cureduce: stream= is for GPU arrays; NumPy arrays are reduced on the CPU")
    op_id = _plan.op_id(op)
    dtype_id = _plan.dtype_id(x.dtype)
    acc_id = _plan.result_acc(op_id, dtype_id, _plan.acc_id(acc))
    layout, a, b, c, shape = _plan.c_order(x.shape, dim)
    outer, length, inner = (1, a, 1) if layout == _plan.FULL else (a, b, c)
    res_dtype = numpy_dtype(_plan.result_name(op_id, acc_id))
    if out is None:
        out = np.empty(shape, res_dtype)
    elif (
        not isinstance(out, np.ndarray)
        or out.dtype != res_dtype
        or out.shape != shape
        or not out.flags.c_contiguous
        or not out.flags.writeable
    ):
        raise _plan.out_error("writeable NumPy array", res_dtype.name, shape, "the CPU")
    if not x.dtype.isnative:  # the library reads the machine's byte order
        x = x.astype(x.dtype.newbyteorder("="))
    data = np.ascontiguousarray(x).reshape(-1).view(np.uint8)
    if np.may_share_memory(data, out):  # as NumPy's out=: the result as if x were read first
        data = data.copy()
    # The library writes nothing when it refuses, so `out` is safe to hand over directly.
    _cureduce.cpu_reduce(op_id, dtype_id, acc_id, data, outer, length, inner, out.reshape(-1).view(np.uint8))
    return out
