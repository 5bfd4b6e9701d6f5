"""CUDA arrays of no known framework, through __dlpack__ or __cuda_array_interface__ (PyTorch
tensors wrapped to show only one of them): results as cureduce.DeviceArray, read back through
either protocol, out= through the interface, and the producer's stream."""
import gc

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA GPU: torch.cuda.is_available() is False", allow_module_level=True)

import cureduce  # noqa: E402


class OnlyDlpack:
    def __init__(self, t):
        self.t = t

    def __dlpack__(self, **kwargs):
        return self.t.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


class OnlyInterface:
    def __init__(self, t):
        self.t = t
        self.__cuda_array_interface__ = t.__cuda_array_interface__


@pytest.mark.parametrize("wrap", [OnlyDlpack, OnlyInterface])
def test_results_read_back_through_both_protocols(wrap):
    x = torch.randn(300, 70, device="cuda")
    for dim in (None, 0, 1):
        r = cureduce.sum(wrap(x), dim=dim)
        want = x.sum() if dim is None else x.sum(dim)
        assert isinstance(r, cureduce.DeviceArray) and r.shape == tuple(want.shape)
        torch.testing.assert_close(torch.from_dlpack(r), want, rtol=1e-5, atol=1e-4)
        torch.testing.assert_close(torch.as_tensor(r, device="cuda"), want, rtol=1e-5, atol=1e-4)
    i = cureduce.argmax(wrap(x), dim=1)
    assert torch.equal(torch.from_dlpack(i), x.argmax(1))


def test_bf16_comes_through_dlpack():
    x = torch.randn(1000, device="cuda")
    torch.testing.assert_close(
        torch.from_dlpack(cureduce.max(OnlyDlpack(x.bfloat16()))), x.bfloat16().float().max()
    )


def test_strided_views_through_the_interface():
    w = torch.randn(50, 80, device="cuda", dtype=torch.float64)
    v = w[:, :30]
    r = cureduce.sum(OnlyInterface(v), dim=1)
    torch.testing.assert_close(torch.from_dlpack(r), v.sum(1), rtol=1e-12, atol=1e-12)


def test_out_through_the_interface_is_written():
    x = torch.randn(20, 30, device="cuda")
    out = torch.empty(20, device="cuda")
    assert cureduce.max(OnlyDlpack(x), dim=1, out=OnlyInterface(out)).t is out
    assert torch.equal(out, x.amax(1))
    with pytest.raises(ValueError, match="out must be"):
        cureduce.max(OnlyDlpack(x), dim=1, out=OnlyInterface(torch.empty(21, device="cuda")))


def test_pinned_host_memory_is_refused_with_the_library_message():
    t = torch.ones(16).pin_memory()
    pinned = OnlyInterface.__new__(OnlyInterface)
    pinned.__cuda_array_interface__ = {
        "shape": (16,), "typestr": "<f4", "data": (t.data_ptr(), False), "version": 3, "strides": None, "stream": None,
    }
    with pytest.raises(ValueError, match="a host pointer was passed where device memory is required"):
        cureduce.sum(pinned)


@pytest.mark.parametrize("wrap", [OnlyDlpack, OnlyInterface])
def test_the_input_lives_as_long_as_the_result(wrap):
    x = torch.full((1 << 20,), 2.0, device="cuda")
    held = torch.cuda.memory_allocated()  # the result comes from cureduce's pool, not torch's
    r = cureduce.sum(wrap(x))
    del x
    gc.collect()
    assert torch.cuda.memory_allocated() == held  # x's memory is still the result's to read
    assert torch.from_dlpack(r).item() == 2.0 * (1 << 20)
    del r
    gc.collect()
    assert torch.cuda.memory_allocated() == held - 4 * (1 << 20)


def test_a_consumer_on_another_stream_is_ordered_after_the_result():
    x = torch.randn(1 << 20, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        torch.cuda._sleep(100_000_000)
    r = cureduce.sum(OnlyDlpack(x), stream=s)  # held behind the sleep
    got = torch.from_dlpack(r).clone()  # torch asks for its current stream: made to wait
    torch.testing.assert_close(got, x.sum(), rtol=1e-5, atol=1e-3)
