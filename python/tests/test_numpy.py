"""The Python package on NumPy arrays (the CPU path): results against NumPy and exact
references, every dtype, axes, accumulators, out=, and the errors a user can make."""
import math
import random
from fractions import Fraction

import numpy as np
import pytest

import cureduce

ml_dtypes = pytest.importorskip("ml_dtypes")

FLOATS = [np.float32, np.float64, np.float16, ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2]
INTS = [np.int8, np.int32, np.int64]


def data(dtype, shape, seed=1):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "i":
        return rng.integers(-100, 100, shape).astype(dtype)
    return rng.uniform(-4, 4, shape).astype(dtype)


@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_whole_array_ops_match_numpy(dtype):
    x = data(dtype, 1001)
    w = x.astype(np.float64)
    assert float(cureduce.max(x)) == float(w.max())
    assert float(cureduce.min(x)) == float(w.min())
    assert int(cureduce.argmax(x)) == int(np.argmax(w))
    assert int(cureduce.argmin(x)) == int(np.argmin(w))
    assert float(cureduce.absmax(x)) == float(np.abs(w).max())
    s = float(cureduce.sum(x))
    assert abs(s - w.sum()) <= 1e-5 * np.abs(w).sum() + 1e-3


@pytest.mark.parametrize("dtype", FLOATS)
def test_exact_sum_is_fsum_rounded_once(dtype):
    x = data(dtype, 5003)
    x[::7] = x[::7] * 2 ** (3 if np.dtype(dtype).itemsize == 1 else 10)  # a wider range of exponents
    exact = math.fsum(x.astype(np.float64).tolist())  # correctly rounded to f64
    assert float(cureduce.sum_exact(x, acc="f64")) == exact
    assert cureduce.sum_exact(x, acc="f64").dtype == np.float64
    assert cureduce.sum_exact(x).dtype == (np.float64 if dtype is np.float64 else np.float32)
    own = cureduce.sum_exact(x, acc=np.dtype(dtype).name)
    assert own.dtype == np.dtype(dtype)


@pytest.mark.parametrize("shape,dim", [((6, 7), 0), ((6, 7), 1), ((6, 7), -1), ((3, 4, 5), 1), ((3, 4, 5), 0),
                                       ((3, 4, 5), 2), ((2, 0, 3), 2), ((5,), 0)])
def test_axes_match_numpy(shape, dim):
    x = data(np.float32, shape)
    got = cureduce.sum(x, dim=dim, acc="f64")
    np.testing.assert_allclose(got, x.astype(np.float64).sum(axis=dim), rtol=1e-12, atol=1e-12)
    assert got.shape == np.sum(x, axis=dim).shape
    if x.shape[dim] > 0:
        np.testing.assert_array_equal(cureduce.argmax(x, dim=dim), np.argmax(x, axis=dim))
        np.testing.assert_array_equal(cureduce.max(x, dim=dim), np.max(x, axis=dim))


@pytest.mark.parametrize("dim", [(0, 1), (1, 2), (-1, -2), (0, 1, 2), [2, 1]])
def test_adjacent_axes_reduce_together(dim):
    x = data(np.float64, (3, 4, 5))
    np.testing.assert_allclose(cureduce.sum(x, dim=dim), x.sum(axis=tuple(dim)), rtol=1e-13)
    np.testing.assert_array_equal(cureduce.max(x, dim=dim), x.max(axis=tuple(dim)))


def test_argmax_over_several_axes_is_the_flat_index_within_them():
    x = data(np.float32, (3, 4, 5))
    np.testing.assert_array_equal(cureduce.argmax(x, dim=(1, 2)), np.argmax(x.reshape(3, 20), axis=1))
    np.testing.assert_array_equal(cureduce.argmin(x, dim=(0, 1)), np.argmin(x.reshape(12, 5), axis=0))


def test_axes_that_are_not_adjacent_or_repeat_are_refused():
    x = data(np.float64, (3, 4, 5))
    for dim in [(0, 2), (1, 1), (), (0, 3)]:
        with pytest.raises(ValueError):
            cureduce.sum(x, dim=dim)


def test_out_is_written_and_returned():
    x = data(np.float32, (4, 9))
    out = np.empty(4, np.float32)
    assert cureduce.sum(x, dim=1, out=out) is out
    np.testing.assert_allclose(out, x.sum(axis=1), rtol=1e-5)


def test_out_that_overlaps_x_gives_numpys_result():
    # NumPy's out= reads x as if first copied; the library refuses the overlap, so x is copied
    y = np.ones((4, 2), np.float64)
    want = np.sum(np.ones((4, 2)), axis=1)
    got = cureduce.sum(y, dim=1, out=y.reshape(-1)[2:6])
    np.testing.assert_array_equal(got, want)


def test_integer_sums_wrap_and_default_to_int64():
    x = np.full(3, 2 ** 62, np.int64)
    assert cureduce.sum(x).dtype == np.int64
    assert int(cureduce.sum(x)) == (3 * 2 ** 62 + 2 ** 63) % 2 ** 64 - 2 ** 63
    assert cureduce.mean(np.arange(4, dtype=np.int32)).dtype == np.float64


def test_special_values():
    x = np.array([1.0, np.nan, -2.0], np.float32)
    assert math.isnan(float(cureduce.max(x)))
    assert int(cureduce.argmin(x)) == 1
    z = np.array([-0.0, -0.0], np.float64)
    assert math.copysign(1.0, float(cureduce.sum_exact(z))) == -1.0
    assert float(cureduce.sum(np.zeros(0, np.float32))) == 0.0


def test_bad_arguments_raise_and_write_nothing():
    x = data(np.float32, (3, 4))
    out = np.full(3, 7.0, np.float32)
    with pytest.raises(TypeError, match="not supported"):
        cureduce.sum(x, acc="i32")
    with pytest.raises(TypeError):
        cureduce.sum_exact(np.arange(4, dtype=np.int32))
    with pytest.raises(TypeError, match="unsupported dtype"):
        cureduce.sum(np.arange(4, dtype=np.uint16))
    with pytest.raises(TypeError, match="unsupported dtype"):
        cureduce.sum(x, acc="complex64")
    with pytest.raises(ValueError, match="out of range"):
        cureduce.sum(x, dim=2)
    with pytest.raises(TypeError, match="dim"):
        cureduce.sum(x, dim=1.5)
    with pytest.raises(ValueError, match="out must be"):
        cureduce.sum(x, dim=1, out=np.empty(3, np.float64))
    with pytest.raises(ValueError, match="out must be"):
        cureduce.sum(x, dim=1, out=np.empty(4, np.float32))
    with pytest.raises(ValueError, match="zero elements"):
        cureduce.max(np.zeros(0, np.float32))
    with pytest.raises(ValueError, match="zero elements"):
        cureduce.max(np.zeros((3, 0), np.float32), dim=1, out=out)
    np.testing.assert_array_equal(out, np.full(3, 7.0, np.float32))
    with pytest.raises(TypeError, match="NumPy array"):
        cureduce.sum([1.0, 2.0])


def test_fortran_order_and_views_are_read_as_numpy_sees_them():
    x = np.asfortranarray(data(np.float64, (5, 6)))
    np.testing.assert_allclose(cureduce.sum(x, dim=0), x.sum(axis=0), rtol=1e-13)
    v = data(np.float64, (10, 10))[::2, 1:]
    np.testing.assert_allclose(cureduce.sum(v, dim=1), v.sum(axis=1), rtol=1e-13)


def test_random_shapes_and_dims_against_numpy():
    rng = random.Random(3)
    for _ in range(50):
        shape = tuple(rng.randint(1, 6) for _ in range(rng.randint(1, 4)))
        dim = rng.randrange(-len(shape), len(shape))
        x = data(np.float64, shape, seed=rng.randint(0, 1000))
        np.testing.assert_allclose(cureduce.mean(x, dim=dim), x.mean(axis=dim), rtol=1e-12)
        np.testing.assert_array_equal(cureduce.argmin(x, dim=dim), np.argmin(x, axis=dim))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32, np.int64])
def test_byte_swapped_arrays_are_read_in_their_own_order(dtype):
    x = data(dtype, (7, 9))
    swapped = x.astype(x.dtype.newbyteorder(">" if x.dtype.byteorder in "=<" else "<"))
    assert not swapped.dtype.isnative and np.array_equal(swapped, x)
    for op in ("sum", "max", "argmax", "mean"):
        for dim in (None, 1):
            np.testing.assert_array_equal(getattr(cureduce, op)(swapped, dim=dim), getattr(cureduce, op)(x, dim=dim))
    if x.dtype.kind == "f":
        np.testing.assert_array_equal(cureduce.sum_exact(swapped, dim=0), cureduce.sum_exact(x, dim=0))


def test_masked_arrays_are_refused():
    m = np.ma.array([1.0, 2.0, 3.0], mask=[0, 1, 0])
    for op in ("sum", "max", "sum_exact"):
        with pytest.raises(TypeError, match="masked"):
            getattr(cureduce, op)(m)


# (significand bits, smallest normal exponent) of each float output, for rounding a Fraction.
_FORMATS = {
    "float64": (53, -1022),
    "float32": (24, -126),
    "float16": (11, -14),
    "bfloat16": (8, -126),
    "float8_e4m3fn": (4, -6),
    "float8_e5m2": (3, -14),
}


def _round_fraction(q, dtype):
    """q rounded once to nearest, ties to even, into dtype's precision and subnormal range (the
    callers keep clear of overflow), as a float."""
    p, emin = _FORMATS[np.dtype(dtype).name]
    if q == 0:
        return 0.0
    a = abs(q)
    e = a.numerator.bit_length() - a.denominator.bit_length()  # 2^e <= a < 2^(e + 2)
    if Fraction(2) ** e > a:
        e -= 1
    if Fraction(2) ** (e + 1) <= a:
        e += 1
    quantum = Fraction(2) ** (max(e, emin) - p + 1)
    m = a / quantum
    whole = m.numerator // m.denominator
    rest = m - whole
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and whole % 2):
        whole += 1
    return math.copysign(float(whole * quantum), q)


@pytest.mark.parametrize("dtype", FLOATS)
def test_exact_sums_and_means_round_once_into_every_output(dtype):
    """sum_exact and mean_exact into f64, f32 and x's own dtype, over the whole array and along
    an axis, against the exact rational sum rounded once. The values' exponents spread wide, so
    most sums lie between two outputs and a rounding through f64 first would often differ."""
    rng = np.random.default_rng(11)
    finfo = ml_dtypes.finfo(dtype)
    top = min(float(finfo.max) / 64, 2.0 ** 60)  # 6 x 7 values stay clear of overflow in every output
    low = max(float(finfo.smallest_subnormal), 2.0 ** -80)
    exps = rng.uniform(math.log2(low), math.log2(top), (6, 7))
    x = (rng.choice([-1.0, 1.0], (6, 7)) * rng.uniform(1, 2, (6, 7)) * 2.0 ** exps).astype(dtype)
    values = [[Fraction(float(v)) for v in row] for row in x.astype(np.float64)]
    outputs = ["float64", "float32", np.dtype(dtype).name]
    for out in outputs:
        acc = np.dtype(out) if out in ("float64", "float32", "float16") else getattr(ml_dtypes, out)
        whole = sum(sum(row) for row in values)
        assert float(cureduce.sum_exact(x, acc=acc)) == _round_fraction(whole, out), out
        assert float(cureduce.mean_exact(x, acc=acc)) == _round_fraction(whole / x.size, out), out
        rows = cureduce.sum_exact(x, dim=1, acc=acc)
        assert rows.dtype == np.dtype(acc)
        assert [float(v) for v in rows] == [_round_fraction(sum(row), out) for row in values], out
        cols = cureduce.mean_exact(x, dim=0, acc=acc)
        want = [_round_fraction(sum(row[j] for row in values) / x.shape[0], out) for j in range(x.shape[1])]
        assert [float(v) for v in cols] == want, out
