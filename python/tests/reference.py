"""Shared by the tests: data of every dtype as NumPy arrays, and the check of a result against the
package's CPU path on the same data (exact for min, max, the arg ops and the exact sums, which
the CPU and GPU compute to the same bits; within a rounding bound for the other sums)."""
import numpy as np

import cureduce

ml_dtypes = __import__("pytest").importorskip("ml_dtypes")

DTYPES = ["float32", "float64", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2", "int8", "int32", "int64"]
FLOATS = [d for d in DTYPES if not d.startswith("int")]
OPS = ["sum", "min", "max", "absmax", "sumsq", "argmin", "argmax", "mean", "sum_exact", "mean_exact"]
EXACT_OPS = {"min", "max", "absmax", "argmin", "argmax", "sum_exact", "mean_exact"}


def np_dtype(name):
    return np.dtype(getattr(np, name, None) or getattr(ml_dtypes, name))


def data(dtype, shape, seed=1):
    """Random data of a NumPy or ml_dtypes dtype name: integers in [-100, 100), floats in [-4, 4)."""
    rng = np.random.default_rng(seed)
    if dtype.startswith("int"):
        return rng.integers(-100, 100, shape).astype(dtype)
    return rng.uniform(-4, 4, shape).astype(np_dtype(dtype))


def applies(op, dtype):
    """Whether the library offers op for dtype with the default accumulator."""
    return not (op in ("sum_exact", "mean_exact") and dtype.startswith("int"))


def check(op, got, x, dim=None, acc=None):
    """got (a NumPy array) against the package's CPU path on x (a NumPy array)."""
    want = getattr(cureduce, op)(x, dim=dim, acc=acc)
    got = np.asarray(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    if op in EXACT_OPS or want.dtype.kind == "i":
        np.testing.assert_array_equal(got.astype(np.float64), want.astype(np.float64))
        return
    w = np.abs(x.astype(np.float64))
    if op == "sumsq":
        w = w * w
    axis = None if dim is None else tuple(d % x.ndim for d in (dim if isinstance(dim, tuple) else (dim,)))
    scale = w.sum(axis=axis)
    if op == "mean":
        scale = scale / max(1, x.size // max(1, np.asarray(want).size))
    rtol = 1e-12 if want.dtype == np.float64 else 1e-5
    err = np.abs(got.astype(np.float64) - want.astype(np.float64))
    assert np.all(err <= rtol * scale + 1e-30), (op, float(np.max(err - rtol * scale)))
