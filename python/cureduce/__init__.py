"""cureduce for Python: reductions of NumPy arrays through the library's CPU path.

    import numpy as np, cureduce
    cureduce.sum(np.ones((3, 4), np.float16), dim=1)          # f32 accumulation by default
    cureduce.sum_exact(x)                                     # the exact sum, rounded once

Every function takes ``x`` (a C-contiguous NumPy array of float32, float64, float16,
bfloat16, float8_e4m3fn, float8_e5m2 -- the last three from ml_dtypes -- int8, int32 or
int64), ``dim`` (None for the whole array, one axis, negative counting from the end, or a tuple of
adjacent axes),
``acc`` (the accumulator dtype as a cureduce or NumPy name; None for the default) and ``out``
(an array of the result's dtype and shape to write into). The result is an array of the
accumulator's dtype (int64 indices for argmin and argmax) with the shape of ``x`` without
``dim``; argmin and argmax over several axes give the flat (C-order) index within them. Bad
arguments raise TypeError or ValueError carrying the library's message, and nothing is
written.

GPU arrays (PyTorch, CuPy, JAX) are not accepted yet: they raise TypeError.
"""

import numpy as _np

from . import _cureduce

__all__ = ["sum", "min", "max", "absmax", "sumsq", "argmin", "argmax", "mean", "sum_exact", "mean_exact"]
__version__ = "%d.%d.%d" % (_cureduce.version // 10000, _cureduce.version // 100 % 100, _cureduce.version % 100)

# NumPy dtype names as cureduce names them.
_FROM_NUMPY = {
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
_TO_NUMPY = {v: k for k, v in _FROM_NUMPY.items()}


def _numpy_dtype(name):
    """The NumPy dtype of a cureduce dtype name (ml_dtypes for bf16 and fp8)."""
    np_name = _TO_NUMPY[name]
    if hasattr(_np, np_name):
        return _np.dtype(np_name)
    import ml_dtypes  # bf16 and fp8 arrays exist only with it, so it is importable here

    return _np.dtype(getattr(ml_dtypes, np_name))


def _dtype_id(dtype):
    name = _FROM_NUMPY.get(_np.dtype(dtype).name) if not isinstance(dtype, str) else _FROM_NUMPY.get(dtype, dtype)
    if name is None or name not in _TO_NUMPY:
        raise TypeError("cureduce: unsupported dtype %s (supported: %s)" % (dtype, ", ".join(_FROM_NUMPY)))
    return _cureduce.dtype_from_name(name)


def _reduce(op, x, dim, acc, out):
    if not isinstance(x, _np.ndarray):
        kind = type(x).__module__.split(".")[0]
        if kind in ("torch", "cupy", "jax", "jaxlib"):
            raise TypeError("cureduce: %s arrays on the GPU are not supported yet; pass a NumPy array" % kind)
        raise TypeError("cureduce: expected a NumPy array, got %s" % type(x).__name__)
    op_id = _cureduce.op_from_name(op)
    dtype_id = _dtype_id(x.dtype)
    acc_id = _cureduce.ACC_DEFAULT if acc is None else _dtype_id(acc)
    acc_id = _cureduce.resolve_acc(op_id, dtype_id, acc_id)
    if dim is None:
        outer, length, inner, shape = 1, x.size, 1, ()
    else:
        dims = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
        if not dims:
            raise ValueError("cureduce: dim=() names no axis; use dim=None for the whole array")
        for d in dims:
            if isinstance(d, bool) or not isinstance(d, (int, _np.integer)):
                raise TypeError("cureduce: dim must be None, an int or a tuple of ints, got %r" % (dim,))
            if not -x.ndim <= d < x.ndim:
                raise ValueError("cureduce: dim %d is out of range for an array of %d dimensions" % (d, x.ndim))
        axes = sorted(int(d) % x.ndim for d in dims)
        if len(set(axes)) != len(axes) or axes[-1] - axes[0] != len(axes) - 1:
            raise ValueError("cureduce: the axes of dim=%r must be distinct and adjacent" % (dim,))
        first, last = axes[0], axes[-1] + 1
        outer = int(_np.prod(x.shape[:first], dtype=_np.int64))
        length = int(_np.prod(x.shape[first:last], dtype=_np.int64))
        inner = int(_np.prod(x.shape[last:], dtype=_np.int64))
        shape = x.shape[:first] + x.shape[last:]
    res_dtype = _np.dtype(_np.int64) if op in ("argmin", "argmax") else _numpy_dtype(_cureduce.dtype_name(acc_id))
    if out is not None:
        if not isinstance(out, _np.ndarray) or out.dtype != res_dtype or out.shape != shape:
            raise ValueError(
                "cureduce: out must be a NumPy array of dtype %s and shape %s" % (res_dtype.name, shape)
            )
        if not out.flags.c_contiguous or not out.flags.writeable:
            raise ValueError("cureduce: out must be C-contiguous and writeable")
    data = _np.ascontiguousarray(x).reshape(-1).view(_np.uint8)
    result = _np.empty(shape, res_dtype)
    _cureduce.cpu_reduce(op_id, dtype_id, acc_id, data, outer, length, inner, result.reshape(-1).view(_np.uint8))
    if out is None:
        return result
    out[...] = result  # written only once the reduction succeeded
    return out


def sum(x, dim=None, acc=None, out=None):
    """Sum (float sums pairwise in the accumulator; integer sums wrap)."""
    return _reduce("sum", x, dim, acc, out)


def min(x, dim=None, acc=None, out=None):
    """Minimum; NaN propagates."""
    return _reduce("min", x, dim, acc, out)


def max(x, dim=None, acc=None, out=None):
    """Maximum; NaN propagates."""
    return _reduce("max", x, dim, acc, out)


def absmax(x, dim=None, acc=None, out=None):
    """Largest magnitude (fp8 scaling); NaN propagates."""
    return _reduce("absmax", x, dim, acc, out)


def sumsq(x, dim=None, acc=None, out=None):
    """Sum of squares, each square rounded in the accumulator."""
    return _reduce("sumsq", x, dim, acc, out)


def argmin(x, dim=None, acc=None, out=None):
    """Index of the first minimum (of the first NaN, if any), as int64."""
    return _reduce("argmin", x, dim, acc, out)


def argmax(x, dim=None, acc=None, out=None):
    """Index of the first maximum (of the first NaN, if any), as int64."""
    return _reduce("argmax", x, dim, acc, out)


def mean(x, dim=None, acc=None, out=None):
    """Sum over n, the division rounded once in the accumulator."""
    return _reduce("mean", x, dim, acc, out)


def sum_exact(x, dim=None, acc=None, out=None):
    """The exact sum of float elements rounded once into acc (f64, f32 or x's own dtype)."""
    return _reduce("sum_exact", x, dim, acc, out)


def mean_exact(x, dim=None, acc=None, out=None):
    """The exact sum over n, rounded once into acc (f64, f32 or x's own dtype)."""
    return _reduce("mean_exact", x, dim, acc, out)
