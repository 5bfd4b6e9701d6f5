"""CuPy arrays on the GPU path: dtypes against the CPU path, dims, 2-d views in place, out=,
CuPy's current stream and stream=, CuPy results, and the errors."""
import numpy as np
import pytest

cupy = pytest.importorskip("cupy")
try:
    _gpus = cupy.cuda.runtime.getDeviceCount()
except Exception:  # no driver or no device: CuPy raises its own CUDA errors
    _gpus = 0
if not _gpus:
    pytest.skip("no CUDA GPU for CuPy", allow_module_level=True)

import cureduce  # noqa: E402
from reference import DTYPES, OPS, applies, check, data  # noqa: E402


def on_gpu(a):
    """a on the GPU, or None when this CuPy has no arrays of a's dtype (bf16 and fp8 need a CuPy
    that takes ml_dtypes)."""
    try:
        return cupy.asarray(a)
    except (TypeError, ValueError):
        return None


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", OPS)
def test_every_dtype_and_op_matches_the_cpu_path(dtype, op):
    if not applies(op, dtype):  # exact sums take float inputs only
        with pytest.raises(TypeError, match="not supported"):
            getattr(cureduce, op)(on_gpu(data(dtype, 10)))
        return
    for shape, dims in [((33, 257), (None, 0, 1)), ((3, 5, 7), ((1, 2), -1))]:
        a = data(dtype, shape)
        x = on_gpu(a)
        if x is None:
            pytest.skip("this CuPy has no %s arrays" % dtype)
        for dim in dims:
            got = getattr(cureduce, op)(x, dim=dim)
            assert isinstance(got, cupy.ndarray) and got.device.id == x.device.id
            check(op, cupy.asnumpy(got), a, dim)


def test_views_of_rows_and_their_transpose_are_read_in_place():
    w = cupy.random.standard_normal((300, 700))
    for v in (w[:, :500], w[7:, 3:333], w.T[:, :250], w[::3]):
        assert not v.flags.c_contiguous
        for dim in (0, 1):
            cupy.testing.assert_allclose(cureduce.sum(v, dim=dim), v.sum(axis=dim), rtol=1e-12, atol=1e-12)
            cupy.testing.assert_array_equal(cureduce.argmax(v, dim=dim), v.argmax(axis=dim))


def test_negative_strides_and_other_layouts_are_refused():
    w = cupy.random.standard_normal((6, 8))
    for v, dim in ((w[::-1], 1), (w[:, ::2], 0), (cupy.ones((2, 3, 4)).transpose(2, 0, 1), 1)):
        with pytest.raises(ValueError, match="contiguous"):
            cureduce.sum(v, dim=dim)


def test_out_and_bad_out():
    x = cupy.random.standard_normal((40, 50)).astype(cupy.float32)
    out = cupy.empty(40, cupy.float32)
    assert cureduce.sum(x, dim=1, out=out) is out
    cupy.testing.assert_allclose(out, x.sum(axis=1), rtol=1e-5, atol=1e-5)
    keep = cupy.full(40, 7.0, cupy.float32)
    for bad in (cupy.empty(40, cupy.float64), cupy.empty(41, cupy.float32), cupy.empty(80, cupy.float32)[::2]):
        with pytest.raises(ValueError, match="out must be"):
            cureduce.sum(x, dim=1, out=bad)
    with pytest.raises(TypeError, match="not supported"):
        cureduce.sum(x, dim=1, acc="i32", out=keep)
    cupy.cuda.Device().synchronize()
    assert bool((keep == 7.0).all())


def test_work_goes_on_cupys_current_stream():
    x = cupy.random.standard_normal(1 << 20).astype(cupy.float32)
    cupy.cuda.Device().synchronize()  # x was written on the default stream, which s does not follow
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        r = cureduce.sum(x)
        t = r * 2  # ordered after the reduction on the same stream
    s.synchronize()
    np.testing.assert_allclose(float(t), 2 * float(cupy.asnumpy(x).astype(np.float64).sum()), rtol=1e-5, atol=1e-3)


@pytest.mark.parametrize("as_", ["cupy", "int"])
def test_stream_argument(as_):
    x = cupy.random.standard_normal((1000, 64)).astype(cupy.float32)
    cupy.cuda.Device().synchronize()
    s = cupy.cuda.Stream(non_blocking=True)
    r = cureduce.max(x, dim=1, stream=s if as_ == "cupy" else s.ptr)
    s.synchronize()
    cupy.testing.assert_array_equal(r, x.max(axis=1))


def test_errors():
    with pytest.raises(TypeError, match="unsupported dtype"):
        cureduce.sum(cupy.ones(3, cupy.uint16))
    with pytest.raises(ValueError, match="zero elements"):
        cureduce.max(cupy.ones((3, 0), cupy.float32), dim=1)
    with pytest.raises(ValueError, match="out of range"):
        cureduce.sum(cupy.ones((3, 4), cupy.float32), dim=3)


def test_first_call_inside_a_capture_on_a_blocking_stream():
    # A blocking stream's capture is invalidated by any work on the legacy default stream: the
    # handle that this first call on the stream creates must zero its workspace elsewhere.
    x = cupy.arange(1 << 20, dtype=cupy.float32) % 7
    s = cupy.cuda.Stream()  # blocking
    with s:
        s.begin_capture()
        out = cureduce.sum(x, stream=s)
        g = s.end_capture()
    g.launch(s)
    s.synchronize()
    assert float(out) == float(cupy.asnumpy(x).astype(np.float64).sum())
