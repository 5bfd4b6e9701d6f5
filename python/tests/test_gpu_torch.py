"""PyTorch CUDA tensors on the GPU path: every dtype and op against the CPU path, dims, 2-d views
read in place, out=, the current stream and stream=, handles per stream from several threads,
torch.compile(fullgraph=True), CUDA graph capture and replay, and the errors (raised before
anything is written)."""
import gc
import threading
import time

import numpy as np
import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA GPU: torch.cuda.is_available() is False", allow_module_level=True)

import cureduce  # noqa: E402
from cureduce import _cureduce  # noqa: E402
from reference import DTYPES, OPS, applies, check, data  # noqa: E402
from test_torch_cpu import to_numpy, to_torch  # noqa: E402

CUDA = torch.device("cuda", torch.cuda.current_device())


@pytest.fixture(autouse=True)
def _current_device_is_cuda():
    """These tests make arrays on CUDA and streams and graphs on the current device. Another
    module's import or tests can change the current device (on two GPUs, cuda:1 was current
    when this module was collected and cuda:0 when it ran): keep the two the same."""
    with torch.cuda.device(CUDA):
        yield


def gpu(a):
    return to_torch(a).to(CUDA)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", OPS)
def test_every_dtype_and_op_matches_the_cpu_path(dtype, op):
    if not applies(op, dtype):  # exact sums take float inputs only
        with pytest.raises(TypeError, match="not supported"):
            getattr(cureduce, op)(gpu(data(dtype, 10)))
        return
    for shape, dims in [((33, 257), (None, 0, 1, (0, 1))), ((3, 5, 7), (1, (1, 2), (0, 1), -1)), ((1000,), (None, 0))]:
        a = data(dtype, shape)
        x = gpu(a)
        for dim in dims:
            got = getattr(cureduce, op)(x, dim=dim)
            want = getattr(cureduce, op)(a, dim=dim)
            assert got.device == CUDA and tuple(got.shape) == want.shape
            check(op, to_numpy(got, want.dtype), a, dim)


@pytest.mark.parametrize("n", [0, 1, 31, 32, 33, 1023, 1025, 65537, (1 << 20) + 1, 1 << 24])
def test_edge_sizes(n):
    a = data("float32", n, seed=n)
    x = gpu(a)
    check("sum", cureduce.sum(x).cpu().numpy(), a)
    if n:
        check("max", cureduce.max(x).cpu().numpy(), a)
        check("argmax", cureduce.argmax(x).cpu().numpy(), a)
    else:
        with pytest.raises(ValueError, match="zero elements"):
            cureduce.max(x)


def test_misaligned_starts_are_read():
    a = data("bfloat16", 4099)
    x = gpu(a)
    for start in (1, 3, 7):
        check("sum", to_numpy(cureduce.sum(x[start:]), np.float32), a[start:])
        check("argmin", to_numpy(cureduce.argmin(x[start:]), np.int64), a[start:])


def test_special_values():
    x = torch.tensor([[1.0, float("nan"), -2.0], [float("inf"), 0.5, -1.0]], device=CUDA)
    assert torch.isnan(cureduce.max(x, dim=1)[0])
    assert cureduce.argmin(x, dim=1).tolist() == [1, 2]
    assert cureduce.max(x, dim=1)[1].item() == float("inf")
    z = torch.tensor([-0.0, -0.0], device=CUDA, dtype=torch.float64)
    assert torch.signbit(cureduce.sum_exact(z))


def test_results_are_tensors_of_the_accumulator_dtype_on_the_input_device():
    x = torch.randn(64, 32, device=CUDA, dtype=torch.bfloat16)
    assert cureduce.sum(x, dim=1).dtype == torch.float32
    assert cureduce.sum(x, dim=1, acc=torch.float64).dtype == torch.float64
    assert cureduce.sum(x, dim=1, acc="bf16").dtype == torch.bfloat16
    assert cureduce.argmax(x, dim=0).dtype == torch.int64
    assert cureduce.sum(torch.ones(5, dtype=torch.int8, device=CUDA)).dtype == torch.int64
    assert cureduce.sum(x).shape == ()


def test_views_of_rows_and_their_transpose_are_read_in_place():
    w = torch.randn(300, 700, device=CUDA, dtype=torch.float64)
    for v in (w[:, :500], w[7:, 3:333], w.t()[:, :250], w[::3]):
        assert not v.is_contiguous()
        for dim in (0, 1):
            torch.testing.assert_close(cureduce.sum(v, dim=dim), v.sum(dim), rtol=1e-12, atol=1e-12)
            assert torch.equal(cureduce.argmax(v, dim=dim), v.argmax(dim))
            assert torch.equal(cureduce.min(v, dim=dim), v.amin(dim))


def test_views_of_one_shape_and_other_strides_are_told_apart():
    # Plans are kept per shape and strides: views of one shape with another row stride, or
    # transposed, must each get their own.
    wide = torch.randn(9, 40, device=CUDA, dtype=torch.float64)
    narrow = torch.randn(9, 12, device=CUDA, dtype=torch.float64)
    columns = torch.randn(6, 20, device=CUDA, dtype=torch.float64)[:, :9].t()  # (9, 6), strides (1, 20)
    for _ in range(2):
        for v in (wide[:, :6], narrow[:, :6], columns):
            for dim in (0, 1):
                torch.testing.assert_close(cureduce.sum(v, dim=dim), v.sum(dim), rtol=1e-12, atol=1e-12)


def test_other_layouts_raise_instead_of_copying():
    with pytest.raises(ValueError, match="contiguous"):
        cureduce.sum(torch.randn(4, 6, 8, device=CUDA).transpose(0, 2), dim=1)
    with pytest.raises(ValueError, match="contiguous"):
        cureduce.sum(torch.randn(6, 8, device=CUDA)[:, ::2], dim=0)
    with pytest.raises(ValueError, match="contiguous"):
        cureduce.sum(torch.randn(6, 8, device=CUDA)[:, :4])  # a strided view as a whole


def test_out_is_written_in_place_and_returned():
    x = torch.randn(40, 50, device=CUDA)
    out = torch.empty(40, device=CUDA)
    ptr = out.data_ptr()
    assert cureduce.sum(x, dim=1, out=out) is out
    assert out.data_ptr() == ptr
    torch.testing.assert_close(out, x.sum(1), rtol=1e-5, atol=1e-5)


def _native_paths():
    """The eager native paths this build has: through torch's Python methods, and the libtorch
    module where it was built for this torch."""
    from cureduce import _torch

    paths = [pytest.param(_cureduce.torch_reduce, id="python-api")]
    if _torch.NATIVE_PATH == "libtorch":
        paths.append(pytest.param(_torch._native, id="libtorch"))
    return paths


@pytest.mark.parametrize("native", _native_paths())
def test_the_native_path_takes_kept_plans_and_hands_back_the_rest(native):
    """A native path makes the eager call of a CUDA tensor in C order once its plan is kept;
    every call it does not take comes back as None, for the Python path to make or refuse."""
    from cureduce import _torch

    x = torch.randn(37, 41, device=CUDA)
    _torch.forget_plans()
    assert native(_torch._PLANS, "sum", x, 1, "f64", None) is None  # no plan kept yet
    expected = cureduce.sum(x, dim=1, acc="f64")  # keeps it
    got = native(_torch._PLANS, "sum", x, 1, "f64", None)
    assert got.dtype == torch.float64 and got.shape == (37,) and got.device == x.device
    assert torch.equal(got, expected)
    assert torch.equal(native(_torch._PLANS, "sum", x, 1, "".join(["f", "64"]), None), expected)  # an equal acc
    out = torch.full((37,), 7.0, dtype=torch.float64, device=CUDA)
    assert native(_torch._PLANS, "sum", x, 1, "f64", out) is out
    assert torch.equal(out, expected)
    untouched = [
        torch.full((37,), 7.0, device=CUDA),  # f32, not the result's f64
        torch.full((38,), 7.0, dtype=torch.float64, device=CUDA),
        torch.full((74,), 7.0, dtype=torch.float64, device=CUDA)[::2],
        torch.full((37,), 7.0, dtype=torch.float64),  # on the CPU
    ]
    for wrong in untouched:
        assert native(_torch._PLANS, "sum", x, 1, "f64", wrong) is None
        with pytest.raises(ValueError):
            cureduce.sum(x, dim=1, acc="f64", out=wrong)
    torch.cuda.synchronize()
    for wrong in untouched:
        assert torch.equal(wrong.cpu(), torch.full(wrong.shape, 7.0, dtype=wrong.dtype))
    cureduce.sum(x.T, dim=0, acc="f64")  # a strided view's plan is kept under its strides
    assert native(_torch._PLANS, "sum", x.T, 0, "f64", None) is None
    cureduce.sum(x.cpu(), dim=1, acc="f64")
    assert native(_torch._PLANS, "sum", x.cpu(), 1, "f64", None) is None
    assert native(_torch._PLANS, "sum", x, (1,), "f64", None) is None  # plans are kept for an int dim
    assert native(_torch._PLANS, "sum", x, True, "f64", None) is None  # True hashes as 1 but is no dim
    with pytest.raises(TypeError, match="dim must be"):
        cureduce.sum(x, dim=True, acc="f64")
    assert native(_torch._PLANS, "sum", x, 1, ["f64"], None) is None  # unhashable: the Python path says why

    class Sub(torch.Tensor):
        pass

    assert native(_torch._PLANS, "sum", x.as_subclass(Sub), 1, "f64", None) is None
    empty = torch.ones(3, 0, device=CUDA)
    with pytest.raises(ValueError, match="zero elements"):
        cureduce.max(empty, dim=1)  # keeps the plan, then refuses
    with pytest.raises(ValueError, match="zero elements"):
        native(_torch._PLANS, "max", empty, 1, None, None)


@pytest.mark.parametrize("native", _native_paths())
def test_the_native_path_runs_whole_arrays_on_the_current_stream(native):
    from cureduce import _torch

    x = torch.randn(1 << 16, device=CUDA, dtype=torch.float64)
    expected = cureduce.sum(x)  # keeps the plan (dim=None: the whole array, a 0-d result)
    s = torch.cuda.Stream()
    before = _cureduce.handle_counts()["eager"]
    with torch.cuda.stream(s):
        got = native(_torch._PLANS, "sum", x, None, None, None)
    assert _cureduce.handle_counts()["eager"] == before + 1  # a handle for s: the call ran there
    s.synchronize()
    assert got.shape == () and torch.equal(got, expected)


def test_the_libtorch_path_is_taken_where_it_was_built_for_this_torch():
    from cureduce import _torch

    try:
        from cureduce import _torch_build
    except ImportError:
        pytest.skip("built where torch was not importable: no libtorch module")
    want = "libtorch" if _torch_build.TORCH_VERSION == torch.__version__ else "python-api"
    assert _torch.NATIVE_PATH == want


def test_bad_arguments_raise_before_anything_is_written():
    x = torch.randn(3, 4, device=CUDA)
    out = torch.full((3,), 7.0, device=CUDA)
    cases = [
        (dict(out=torch.empty(3, dtype=torch.float64, device=CUDA)), ValueError, "out must be"),
        (dict(out=torch.empty(4, device=CUDA)), ValueError, "out must be"),
        (dict(out=torch.empty(6, device=CUDA)[::2]), ValueError, "out must be"),
        (dict(out=torch.empty(3)), ValueError, "host pointer"),
        (dict(acc="i32", out=out), TypeError, "not supported"),
        (dict(acc="complex64", out=out), TypeError, "unsupported dtype"),
        (dict(dim=2, out=out), ValueError, "out of range"),
        (dict(dim=(1, 1), out=out), ValueError, "adjacent"),
        (dict(stream="s", out=out), TypeError, "stream"),
    ]
    for kwargs, error, words in cases:
        kwargs.setdefault("dim", 1)
        with pytest.raises(error, match=words):
            cureduce.sum(x, **kwargs)
    with pytest.raises(TypeError, match="unsupported dtype"):
        cureduce.sum(torch.ones(3, dtype=torch.uint8, device=CUDA))
    with pytest.raises(TypeError):
        cureduce.sum_exact(torch.ones(3, dtype=torch.int32, device=CUDA))
    with pytest.raises(ValueError, match="zero elements"):
        cureduce.max(torch.ones(3, 0, device=CUDA), dim=1, out=out)
    torch.cuda.synchronize()
    assert torch.equal(out, torch.full((3,), 7.0, device=CUDA))


def test_empty_sums_are_zero_and_empty_outputs_are_empty():
    assert torch.equal(cureduce.sum(torch.ones(3, 0, device=CUDA), dim=1), torch.zeros(3, device=CUDA))
    assert cureduce.max(torch.ones(0, 5, device=CUDA), dim=1).shape == (0,)


def test_work_goes_on_the_current_stream():
    """A kernel held behind a long sleep on stream s: a copy of the result made on another
    stream without waiting still sees the old contents; after waiting for s, the sum."""
    x = torch.randn(1 << 20, device=CUDA)
    out = torch.full((), -1.0, device=CUDA)
    want = x.double().sum().float()
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        torch.cuda._sleep(200_000_000)
        cureduce.sum(x, out=out)
    early = out.clone()  # on the default stream, not ordered after s
    s.synchronize()
    assert early.item() == -1.0
    torch.testing.assert_close(out, want, rtol=1e-5, atol=1e-3)


@pytest.mark.parametrize("as_", ["torch", "int"])
def test_stream_argument_runs_there(as_):
    x = torch.randn(1 << 20, device=CUDA)
    out = torch.full((), -1.0, device=CUDA)
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        torch.cuda._sleep(200_000_000)
    cureduce.sum(x, out=out, stream=s if as_ == "torch" else s.cuda_stream)
    early = out.clone()
    s.synchronize()
    assert early.item() == -1.0
    torch.testing.assert_close(out, x.double().sum().float(), rtol=1e-5, atol=1e-3)


def test_results_allocated_for_a_given_stream_belong_to_it():
    x = torch.randn(1000, 10, device=CUDA)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    r = cureduce.sum(x, dim=1, stream=s)
    torch.cuda.current_stream().wait_stream(s)
    torch.testing.assert_close(r, x.sum(1), rtol=1e-5, atol=1e-5)


def test_a_stream_keeps_its_handle():
    x = torch.randn(1000, device=CUDA)
    s = torch.cuda.Stream()
    cureduce.sum(x, stream=s)
    first = _cureduce.handle_counts()
    for _ in range(5):
        cureduce.sum(x, stream=s)
    assert _cureduce.handle_counts() == first
    torch.cuda.synchronize()


def test_threads_with_their_own_streams_get_right_results():
    xs = [torch.randn(257, 1000 + 17 * i, device=CUDA) for i in range(8)]
    wants = [x.double().sum(1) for x in xs]
    torch.cuda.synchronize()
    results = [None] * len(xs)
    errors = []

    def work(i):
        try:
            s = torch.cuda.Stream()
            with torch.cuda.stream(s):
                for _ in range(50):
                    r = cureduce.sum(xs[i], dim=1, acc="f64")
                results[i] = r
            s.synchronize()
        except Exception as e:  # reported below: a thread's exception would be lost
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(xs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for r, w in zip(results, wants):
        torch.testing.assert_close(r, w, rtol=1e-12, atol=1e-9)


def test_threads_sharing_the_default_stream_get_right_results():
    x = torch.randn(64, 4096, device=CUDA)
    want = x.amax(1)
    outs = [torch.empty(64, device=CUDA) for _ in range(8)]
    threads = [threading.Thread(target=lambda o=o: [cureduce.max(x, dim=1, out=o) for _ in range(100)]) for o in outs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    torch.cuda.synchronize()
    for o in outs:
        assert torch.equal(o, want)


def test_torch_compile_fullgraph_matches_eager():
    def f(a, o):
        s = cureduce.sum(a * 2, dim=1)
        cureduce.max(a, dim=0, out=o)
        return s + 1, cureduce.argmin(a, dim=(0, 1)), cureduce.sum_exact(a.bfloat16(), dim=0, acc=torch.float64)

    x = torch.randn(64, 256, device=CUDA)
    o_eager, o_compiled = torch.empty(256, device=CUDA), torch.empty(256, device=CUDA)
    want = f(x, o_eager)
    got = torch.compile(f, fullgraph=True)(x, o_compiled)
    torch.testing.assert_close(got[0], want[0])
    assert torch.equal(got[1], want[1]) and torch.equal(got[2], want[2])
    assert torch.equal(o_compiled, o_eager)


def test_torch_compile_with_cuda_graphs_matches_eager():
    def f(a):
        return cureduce.sum(a, dim=1) * 3

    x = torch.randn(128, 512, device=CUDA)
    compiled = torch.compile(f, mode="reduce-overhead", fullgraph=True)
    for _ in range(3):  # recorded on the second or third call, then replayed
        got = compiled(x)
    torch.testing.assert_close(got, f(x))


def test_cuda_graph_capture_and_replay():
    x = torch.randn(256, 1024, device=CUDA)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm-up outside capture, as torch's graph docs ask
        cureduce.sum(x, dim=1)
    torch.cuda.current_stream().wait_stream(s)
    before = _cureduce.handle_counts()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = cureduce.sum(x, dim=1)
        i = cureduce.argmax(x, dim=0)
    assert _cureduce.handle_counts()["captured"] == before["captured"] + 1
    for _ in range(3):
        x.copy_(torch.randn_like(x))
        g.replay()
        torch.cuda.synchronize()
        torch.testing.assert_close(y, x.sum(1), rtol=1e-5, atol=1e-4)
        assert torch.equal(i, x.argmax(0))
    del g
    gc.collect()
    torch.cuda.synchronize()
    deadline = time.time() + 10  # CUDA runs the graph's destructor callback on its own thread
    while _cureduce.handle_counts()["captured"] != before["captured"] and time.time() < deadline:
        time.sleep(0.01)
    after = _cureduce.handle_counts()
    assert after["captured"] == before["captured"]
    assert after["spare"] == before["spare"] + 1


def test_two_graphs_replayed_on_two_streams_do_not_share_a_workspace():
    xs = [torch.randn(4096, 512, device=CUDA) for _ in range(2)]
    graphs, ys = [], []
    for x in xs:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            ys.append(cureduce.sum(x, dim=0))
        graphs.append(g)
    streams = [torch.cuda.Stream() for _ in xs]
    for _ in range(20):
        for g, s in zip(graphs, streams):
            with torch.cuda.stream(s):
                g.replay()
    torch.cuda.synchronize()
    for x, y in zip(xs, ys):
        torch.testing.assert_close(y, x.sum(0), rtol=1e-5, atol=1e-4)


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_arrays_on_another_device_run_there_and_mismatches_are_refused():
    other = torch.device("cuda", 1 - CUDA.index if CUDA.index < 2 else 0)
    x = torch.randn(1000, device=other)
    before = torch.cuda.current_device()
    r = cureduce.sum(x)
    assert r.device == other and torch.cuda.current_device() == before
    torch.testing.assert_close(r, x.sum(), rtol=1e-5, atol=1e-4)
    with pytest.raises(ValueError, match="an argument is out of range"):
        cureduce.sum(x, out=torch.empty((), device=CUDA))
    with torch.cuda.device(CUDA):
        with pytest.raises(ValueError, match="an argument is out of range"):
            cureduce.sum(x, stream=torch.cuda.current_stream(CUDA))
