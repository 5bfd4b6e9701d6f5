"""JAX arrays on the GPU path: dtypes against the CPU path, dims, JAX results that later JAX work
can use, inputs dropped right after the call, many calls (the result pool), and the errors."""
import gc
import os

import numpy as np
import pytest

# JAX would take 75% of the GPU's memory at its first use, leaving little to the other tests
# of the same process.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

try:
    GPU = jax.devices("gpu")[0]
except RuntimeError:  # no GPU backend
    pytest.skip("no GPU for JAX: jax.devices('gpu') is empty", allow_module_level=True)

import cureduce  # noqa: E402
from reference import DTYPES, OPS, applies, check, data  # noqa: E402

X64 = jax.config.jax_enable_x64
JAX_DTYPES = [d for d in DTYPES if X64 or d not in ("float64", "int64")]


def on_gpu(a):
    return jax.device_put(a, GPU)


@pytest.mark.parametrize("dtype", JAX_DTYPES)
@pytest.mark.parametrize("op", OPS)
def test_every_dtype_and_op_matches_the_cpu_path(dtype, op):
    if not applies(op, dtype):  # exact sums take float inputs only
        with pytest.raises(TypeError, match="not supported"):
            getattr(cureduce, op)(on_gpu(data(dtype, 10)))
        return
    for shape, dims in [((33, 257), (None, 0, 1)), ((3, 5, 7), ((1, 2), -1))]:
        a = data(dtype, shape)
        x = on_gpu(a)
        for dim in dims:
            got = getattr(cureduce, op)(x, dim=dim)
            want = getattr(cureduce, op)(a, dim=dim)
            assert isinstance(got, jax.Array) and got.devices() == {GPU}
            # JAX narrows int64 and float64 results unless jax_enable_x64 is set; here those
            # are integer sums, indices and means of integers, the same bits on CPU and GPU
            assert got.dtype == jax.dtypes.canonicalize_dtype(want.dtype)
            if got.dtype != want.dtype:
                np.testing.assert_array_equal(np.asarray(got), want.astype(got.dtype))
            else:
                check(op, np.asarray(got), a, dim)


def test_results_feed_later_jax_work():
    x = on_gpu(data("float32", (64, 1000)))
    r = cureduce.sum(x, dim=1)
    np.testing.assert_allclose(np.asarray(jnp.sum(r * 2)), 2 * np.asarray(x, np.float64).sum(), rtol=1e-5)


def test_an_input_dropped_right_after_the_call_is_still_read():
    for _ in range(20):
        r = cureduce.sum(jnp.ones(1 << 22, jnp.float32, device=GPU) * 2)
        gc.collect()
        assert float(r) == 2.0 * (1 << 22)


def test_many_calls_reuse_result_memory():
    x = on_gpu(data("bfloat16", (128, 512)))
    want = cureduce.max(np.asarray(x), dim=0)
    for _ in range(2000):
        r = cureduce.max(x, dim=0)
    np.testing.assert_array_equal(np.asarray(r), want)


def test_arguments_jax_cannot_take_are_refused():
    x = on_gpu(np.ones((3, 4), np.float32))
    with pytest.raises(ValueError, match="immutable"):
        cureduce.sum(x, dim=1, out=x[:, 0])
    with pytest.raises(ValueError, match="stream="):
        cureduce.sum(x, stream=0)
    with pytest.raises(TypeError, match="tracers"):
        jax.jit(cureduce.sum)(x)
    with pytest.raises(ValueError, match="zero elements"):
        cureduce.max(on_gpu(np.ones((3, 0), np.float32)), dim=1)


def test_cpu_arrays_take_the_cpu_path():
    x = jax.device_put(np.arange(12, dtype=np.float32).reshape(3, 4), jax.devices("cpu")[0])
    r = cureduce.sum(x, dim=1)
    assert isinstance(r, jax.Array)
    np.testing.assert_array_equal(np.asarray(r), [6.0, 22.0, 38.0])


def test_results_are_read_after_the_kernel_while_the_stream_is_busy():
    # A large reduction first keeps the stream the kernels run on busy for a while: reading the
    # small result right after must still wait for its kernel, whatever stream JAX reads on.
    big = jnp.ones((1 << 27,), jnp.float32)
    small = on_gpu(np.arange(1000, dtype=np.float32))
    big.block_until_ready()
    small.block_until_ready()
    for _ in range(3):
        b = cureduce.sum(big)
        r = cureduce.sum(small)
        assert float(np.asarray(r)) == 499500.0
        assert float(np.asarray(b)) == float(1 << 27)
