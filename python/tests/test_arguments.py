"""What the package decides before any reduction runs, with no GPU needed: the layouts it reads
in place (C order, 2-d views with one unit stride) and those it refuses, dtype and accumulator
names, stream arguments, and the errors for arrays it cannot reach."""
import os
import subprocess
import sys

import numpy as np
import pytest

import cureduce
from cureduce import _cureduce, _plan


@pytest.mark.parametrize(
    "shape,dim,plan",
    [
        ((6, 7), None, (_plan.FULL, 42, 0, 0, ())),
        ((6, 7), 1, (_plan.AXIS, 6, 7, 1, (6,))),
        ((6, 7), 0, (_plan.AXIS, 1, 6, 7, (7,))),
        ((3, 4, 5), (1, 2), (_plan.AXIS, 3, 20, 1, (3,))),
        ((3, 4, 5), (0, 1, 2), (_plan.FULL, 60, 0, 0, ())),
        ((1, 9, 1), 1, (_plan.FULL, 9, 0, 0, (1, 1))),
        ((2, 0, 3), 2, (_plan.AXIS, 0, 3, 1, (2, 0))),
    ],
)
def test_c_order_arrays_are_read_as_outer_length_inner(shape, dim, plan):
    assert _plan.c_order(shape, dim) == plan


def test_rows_of_a_wider_matrix_are_read_with_their_leading_dimension():
    # x[:, :5] of a 4 x 9 matrix: strides (9, 1)
    assert _plan.strided_2d((4, 5), (9, 1), 1) == (_plan.ROWS, 4, 5, 9, (4,))
    assert _plan.strided_2d((4, 5), (9, 1), 0) == (_plan.COLS, 4, 5, 9, (5,))
    assert _plan.strided_2d((4, 5), (9, 1), -1) == (_plan.ROWS, 4, 5, 9, (4,))


def test_a_transposed_view_is_read_as_rows_of_its_transpose():
    # y = x[:3, :].T of a 3 x 8 C-order x: shape (8, 3), strides (1, 8)
    assert _plan.strided_2d((8, 3), (1, 8), 0) == (_plan.ROWS, 3, 8, 8, (3,))
    assert _plan.strided_2d((8, 3), (1, 8), 1) == (_plan.COLS, 3, 8, 8, (8,))


def test_axes_of_length_one_may_have_any_stride():
    assert _plan.strided_2d((4, 1), (10, 7), 0) == (_plan.COLS, 4, 1, 10, (1,))
    assert _plan.strided_2d((1, 4), (5, 3), 1) == (_plan.COLS, 4, 1, 3, (1,))


@pytest.mark.parametrize(
    "shape,strides,dim",
    [
        ((4, 5), (10, 2), 1),  # no unit stride
        ((4, 5), (3, 1), 1),  # rows overlap
        ((4, 5), (-5, 1), 1),  # reversed rows
        ((4, 5), (0, 1), 0),  # broadcast rows
        ((2, 3, 4), (24, 4, 1), 1),  # 3-d and not C order
        ((4, 5), (9, 1), None),  # a strided view as a whole
        ((4, 5), (9, 1), (0, 1)),
    ],
)
def test_other_layouts_are_refused_not_copied(shape, strides, dim):
    with pytest.raises(ValueError, match="contiguous"):
        _plan.strided_2d(shape, strides, dim)


def test_c_contiguity_ignores_axes_of_length_one_and_empty_arrays():
    assert _plan.c_contiguous((3, 1, 4), (4, 99, 1))
    assert _plan.c_contiguous((3, 0), (7, 7))
    assert not _plan.c_contiguous((3, 4), (1, 3))


@pytest.mark.parametrize(
    "given,name",
    [("f64", "f64"), ("float64", "f64"), (np.float16, "f16"), (np.dtype("int8"), "i8"), ("torch.bfloat16", "bf16"),
     ("bfloat16", "bf16"), ("complex64", None), ("f128", None), ("f8", "f64"), ("double", "f64"), ("<f4", "f32"),
     (">f8", "f64"), ("half", "f16"), ("float", "f64"), ("i4", "i32"), ("f16", "f16"), ("torch.float128", None),
     ("nonsense", None)],
)
def test_dtype_names_of_every_spelling(given, name):
    assert _plan.dtype_name(given) == name


class _TorchLikeStream:
    cuda_stream = 0x1234
    device_index = 0


class _CupyLikeStream:
    ptr = 0x5678
    device_id = 1


class _ProtocolStream:
    def __cuda_stream__(self):
        return (0, 0x9ABC)


def test_streams_of_every_kind_give_their_handle():
    assert _plan.stream_of(7, 0) == 7
    assert _plan.stream_of(_TorchLikeStream(), 0) == 0x1234
    assert _plan.stream_of(_CupyLikeStream(), 1) == 0x5678
    assert _plan.stream_of(_ProtocolStream(), 3) == 0x9ABC


def test_a_stream_of_another_device_is_refused_with_the_library_message():
    with pytest.raises(ValueError, match="an argument is out of range"):
        _plan.stream_of(_CupyLikeStream(), 0)
    with pytest.raises(TypeError):
        _plan.stream_of("stream", 0)
    with pytest.raises(TypeError):
        _plan.stream_of(True, 0)


class _HostMemoryInterface:
    """Claims CUDA memory through __cuda_array_interface__ but points at host memory."""

    def __init__(self, a):
        self.a = a
        self.__cuda_array_interface__ = {
            "shape": a.shape, "typestr": a.dtype.str, "data": (a.__array_interface__["data"][0], False),
            "version": 3, "strides": None, "stream": None,
        }


def test_host_memory_through_the_gpu_path_is_a_value_error_with_the_library_message():
    with pytest.raises(ValueError, match="a host pointer was passed where device memory is required"):
        cureduce.sum(_HostMemoryInterface(np.ones(8, np.float32)))


class _DlpackOnCpu:
    def __init__(self, a):
        self.a = a

    def __dlpack__(self, **kwargs):
        return self.a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def test_a_dlpack_array_on_the_cpu_takes_the_cpu_path():
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    np.testing.assert_array_equal(cureduce.sum(_DlpackOnCpu(a), dim=1), a.sum(axis=1))


def test_stream_is_refused_for_numpy_arrays():
    with pytest.raises(ValueError, match="stream="):
        cureduce.sum(np.ones(3, np.float32), stream=0)


class _DlpackWithoutDevice:
    def __init__(self, a):
        self.a = a

    def __dlpack__(self, **kwargs):
        return self.a.__dlpack__(**kwargs)


def test_objects_that_are_no_arrays_are_a_type_error():
    for x in ([1.0, 2.0], 3.0, "abc", _DlpackWithoutDevice(np.ones(3))):
        with pytest.raises(TypeError, match="NumPy array or a CUDA array"):
            cureduce.max(x)


def test_unknown_ops_are_a_value_error():
    with pytest.raises(ValueError, match="unknown op"):
        _plan.op_id("median")


def test_handle_counts_name_the_three_kinds_of_handle():
    assert set(_cureduce.handle_counts()) == {"eager", "captured", "spare"}


def test_the_distributed_module_imports_without_a_framework():
    """cureduce.distributed imports torch only when called, and offers every op."""
    # In a process of its own: the test files that use torch import it when pytest collects them.
    package_dir = os.path.dirname(os.path.dirname(cureduce.__file__))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [package_dir, os.environ.get("PYTHONPATH")])))
    probe = "import sys, cureduce.distributed; print(sorted(m for m in ('torch', 'cupy', 'jax') if m in sys.modules))"
    run = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "[]", run.stdout + run.stderr
    import cureduce.distributed as crd

    assert sorted(crd.__all__) == sorted(_plan.OPS)
    assert all(callable(getattr(crd, op)) for op in _plan.OPS)
    assert _cureduce.dist_local_op(_plan.OP_IDS["mean"], _plan.DTYPE_IDS["f64"]) == _plan.OP_IDS["sum"]
    assert _cureduce.dist_local_op(_plan.OP_IDS["mean"], _plan.DTYPE_IDS["f32"]) == _plan.OP_IDS["mean"]
