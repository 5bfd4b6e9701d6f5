"""PyTorch on the CPU: CPU tensors take the library's CPU path (2-d views in place too), results
are tensors, and the custom ops pass torch.library.opcheck and compile with fullgraph=True.
Needs torch, not a GPU."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import cureduce  # noqa: E402
from reference import DTYPES, OPS, applies, check, data  # noqa: E402


def to_torch(a):
    """A CPU tensor with the bits of NumPy array a (bf16 and fp8 through a same-size integer view)."""
    name = a.dtype.name
    if hasattr(torch, name) and name in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
        ints = {1: np.uint8, 2: np.int16}[a.itemsize]
        carrier = {1: torch.uint8, 2: torch.int16}[a.itemsize]
        return torch.from_numpy(a.view(ints).copy()).view(carrier).view(getattr(torch, name))
    return torch.from_numpy(a.copy())


def to_numpy(t, like):
    """The NumPy array of tensor t, in the NumPy dtype of `like` (ml_dtypes for bf16 and fp8)."""
    t = t.detach().cpu().contiguous()
    if t.dtype in (torch.bfloat16, torch.float8_e4m3fn, torch.float8_e5m2):
        carrier = {1: torch.uint8, 2: torch.int16}[t.element_size()]
        return t.view(carrier).numpy().view(like)
    return t.numpy()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", OPS)
def test_cpu_tensors_match_the_numpy_path(dtype, op):
    if not applies(op, dtype):  # exact sums take float inputs only
        with pytest.raises(TypeError, match="not supported"):
            getattr(cureduce, op)(to_torch(data(dtype, 10)))
        return
    a = data(dtype, (9, 33))
    for dim in (None, 0, 1, (0, 1)):
        got = getattr(cureduce, op)(to_torch(a), dim=dim)
        assert isinstance(got, torch.Tensor) and got.device.type == "cpu"
        want = getattr(cureduce, op)(a, dim=dim)
        check(op, to_numpy(got, want.dtype), a, dim)


def test_views_of_rows_and_their_transpose_are_read_in_place():
    w = torch.randn(7, 12, dtype=torch.float64)
    for v in (w[:, :5], w[2:, 3:9], w.t()[:, :4], w[::2]):
        assert not v.is_contiguous()
        for dim in (0, 1):
            torch.testing.assert_close(cureduce.sum(v, dim=dim), v.sum(dim), rtol=1e-13, atol=1e-13)
            torch.testing.assert_close(cureduce.argmax(v, dim=dim), v.argmax(dim))


def test_views_of_one_shape_and_other_strides_are_told_apart():
    # Plans are kept per shape and strides: views of one shape with another row stride, or
    # transposed, must each get their own.
    wide = torch.randn(9, 40, dtype=torch.float64)
    narrow = torch.randn(9, 12, dtype=torch.float64)
    columns = torch.randn(6, 20, dtype=torch.float64)[:, :9].t()  # (9, 6), strides (1, 20)
    for _ in range(2):
        for v in (wide[:, :6], narrow[:, :6], columns):
            for dim in (0, 1):
                torch.testing.assert_close(cureduce.sum(v, dim=dim), v.sum(dim), rtol=1e-13, atol=1e-13)


def test_other_layouts_raise_instead_of_copying():
    w = torch.randn(4, 6, 8)
    with pytest.raises(ValueError, match="contiguous"):
        cureduce.sum(w.transpose(0, 2), dim=1)
    with pytest.raises(ValueError, match="contiguous"):
        cureduce.sum(torch.randn(6, 8)[:, ::2], dim=1)
    with pytest.raises(ValueError, match="contiguous"):
        cureduce.sum(torch.randn(6, 8)[:, :4])


def test_out_is_written_and_returned():
    x = torch.randn(5, 7)
    out = torch.empty(5)
    assert cureduce.max(x, dim=1, out=out) is out
    torch.testing.assert_close(out, x.amax(1))


def test_out_that_overlaps_x_is_refused():
    # as torch's own out= functions refuse it; nothing is written
    y = torch.ones(4, 2, dtype=torch.float64)
    with pytest.raises(ValueError, match="overlaps the input"):
        cureduce.sum(y, dim=1, out=y.view(-1)[2:6])
    assert torch.equal(y, torch.ones(4, 2, dtype=torch.float64))


def test_out_that_requires_grad_is_refused_and_writes_count_for_autograd():
    x = torch.randn(5, 7)
    out = torch.full((5,), 7.0, requires_grad=True)
    with pytest.raises(ValueError, match="requires grad"):
        cureduce.sum(x, dim=1, out=out)
    assert torch.equal(out.detach(), torch.full((5,), 7.0))
    with torch.no_grad():  # as torch's own out= functions, allowed where grad mode is off
        cureduce.sum(x, dim=1, out=out)
    torch.testing.assert_close(out.detach(), x.sum(1))
    # A write into a tensor that autograd saved is seen at backward, as any in-place write is.
    a = torch.randn(5, requires_grad=True)
    saved = a.exp()  # exp saves its result for backward
    loss = saved.sum()
    cureduce.sum(x, dim=1, out=saved.detach())
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_bad_arguments_raise_and_write_nothing():
    x = torch.randn(3, 4)
    out = torch.full((3,), 7.0)
    for kwargs, error in [
        (dict(out=torch.empty(3, dtype=torch.float64)), ValueError),
        (dict(out=torch.empty(4)), ValueError),
        (dict(out=torch.empty(6)[::2]), ValueError),
        (dict(acc="i32", out=out), TypeError),
        (dict(acc=torch.complex64, out=out), TypeError),
        (dict(dim=2, out=out), ValueError),
        (dict(stream=0, out=out), ValueError),
    ]:
        kwargs.setdefault("dim", 1)
        with pytest.raises(error):
            cureduce.sum(x, **kwargs)
    with pytest.raises(TypeError, match="unsupported dtype"):
        cureduce.sum(torch.ones(3, dtype=torch.bool))
    with pytest.raises(ValueError, match="zero elements"):
        cureduce.max(torch.ones(3, 0), dim=1, out=out)
    assert torch.equal(out, torch.full((3,), 7.0))


def test_accumulators_are_given_as_torch_dtypes_or_names():
    x = torch.randn(100)
    assert cureduce.sum(x, acc=torch.float64).dtype == torch.float64
    assert cureduce.sum(x.half(), acc="f16").dtype == torch.float16
    assert cureduce.argmax(x).dtype == torch.int64
    assert cureduce.mean(torch.arange(4, dtype=torch.int32)).dtype == torch.float64


@pytest.mark.parametrize(
    "args",
    [
        ("sum", [1], None),
        ("argmax", None, None),
        ("sum_exact", [0, 1], "f64"),
        ("max", [0], "bf16"),
    ],
)
def test_the_custom_op_passes_opcheck(args):
    x = torch.randn(6, 10)
    if args[2] == "bf16":
        x = x.bfloat16()
    torch.library.opcheck(torch.ops.cureduce.reduce.default, (x,) + args)


def test_the_out_op_passes_opcheck():
    x = torch.randn(6, 10)
    torch.library.opcheck(torch.ops.cureduce.reduce_out.default, (x, "max", [0], None, torch.empty(10)))


def test_fake_tensors_get_the_result_shape_and_dtype():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        x = torch.empty(3, 5, 7, dtype=torch.bfloat16)
        r = cureduce.argmax(x, dim=(1, 2))
        assert r.shape == (3,) and r.dtype == torch.int64
        r = cureduce.sum(x, dim=-1, acc=torch.float64)
        assert r.shape == (3, 5) and r.dtype == torch.float64


def test_torch_compile_fullgraph_matches_eager():
    def f(a, o):
        s = cureduce.sum(a * 2, dim=1)
        cureduce.max(a, dim=0, out=o)
        return s + 1, cureduce.argmin(a, dim=(0, 1))

    x = torch.randn(8, 16)
    o_eager, o_compiled = torch.empty(16), torch.empty(16)
    want = f(x, o_eager)
    got = torch.compile(f, fullgraph=True)(x, o_compiled)
    torch.testing.assert_close(got[0], want[0])
    assert torch.equal(got[1], want[1])
    assert torch.equal(o_compiled, o_eager)
