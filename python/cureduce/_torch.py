"""PyTorch tensors. CUDA tensors run on the GPU path, on their device and the current stream (or
stream=), CPU tensors on the CPU path; results are tensors from torch's allocator on x's device.

Plain tensors go straight to the extension, the lowest host cost: through _cureduce_torch, linked
with libtorch, where it was built for this torch, else through torch's Python methods. The custom ops
cureduce::reduce and cureduce::reduce_out, whose kernels are that same path, serve
torch.compile and fake or subclassed tensors; the public functions are marked
torch.compiler.allow_in_graph, so that Dynamo records them as calls and AOT tracing turns them
into the ops."""

import warnings
from typing import List, Optional

import torch

import cureduce as _package

from . import _cureduce, _plan

# torch dtypes by the cureduce dtype id, both ways (float8 types exist from torch 2.1 on).
_DTYPE_IDS = {}
for _np_name, _name in _plan.FROM_NUMPY.items():
    _t = getattr(torch, _np_name, None)
    if isinstance(_t, torch.dtype):
        _DTYPE_IDS[_t] = _plan.DTYPE_IDS[_name]
_TORCH_DTYPES = {v: k for k, v in _DTYPE_IDS.items()}
_PLAIN = (torch.Tensor, torch.nn.Parameter)

try:  # the raw cudaStream_t without building a Stream object (what Triton's launcher uses)
    _current_stream = torch._C._cuda_getCurrentRawStream
except AttributeError:

    def _current_stream(device):
        return torch.cuda.current_stream(device).cuda_stream


_is_compiling = torch.compiler.is_compiling
_increment_version = torch.autograd.graph.increment_version
_cureduce.torch_path_setup(torch.Tensor, torch.nn.Parameter, torch.empty_strided, _current_stream)


def _libtorch_path():
    """_cureduce_torch.reduce, the native path linked with libtorch, when it was built and for
    this torch (its C++ interface changes between versions); else None."""
    try:
        from . import _torch_build
    except ImportError:  # built without torch at hand (pip's isolated build, say)
        return None
    if _torch_build.TORCH_VERSION != torch.__version__:
        return None
    try:
        from . import _cureduce_torch
    except ImportError as e:
        warnings.warn("cureduce: the torch module does not load (%s); calls take the slower path" % e, RuntimeWarning)
        return None
    return _cureduce_torch


# The eager path for plain CUDA tensors whose plan is kept: the libtorch one where it can be
# loaded (it keeps its own copy of the plans it has used, dropped by forget_plans), else the
# one through torch's Python methods; both take the same arguments.
_libtorch = _libtorch_path()
NATIVE_PATH = "python-api" if _libtorch is None else "libtorch"
_native = _cureduce.torch_reduce if _libtorch is None else _libtorch.reduce


def reduce(op, x, dim, acc, out, stream):
    # Meta tensors have no memory: the ops' fake kernels answer for them. Dynamo reaches this
    # with plain tensors when it traces the public function itself (cureduce was imported before
    # torch and compiled before any eager call), and must record the op, not the extension.
    if not _is_compiling():
        if stream is None:
            # The whole of _run in one native call for a CUDA tensor whose plan is kept; None
            # for any call it does not take.
            done = _native(_PLANS, op, x, dim, acc, out)
            if done is not None:
                return done
        if type(x) in _PLAIN and (x.is_cuda or x.is_cpu):
            return _run(op, x, dim, acc, out, stream)
    return _through_ops(op, x, dim, acc, out, stream)


_TYPES = {}


def _result_dtype(op_id, dtype, acc):
    """(dtype id, accumulator id, result torch dtype), kept per (op, dtype, acc)."""
    try:
        return _TYPES[op_id, dtype, acc]
    except (KeyError, TypeError):  # TypeError: an unhashable acc, refused below
        pass
    dtype_id = _DTYPE_IDS.get(dtype)
    if dtype_id is None:
        raise _plan.unsupported_dtype(dtype)
    acc_id = _plan.result_acc(op_id, dtype_id, _plan.acc_id(acc))
    found = dtype_id, acc_id, torch.int64 if op_id in _plan.ARG_OP_IDS else _TORCH_DTYPES[acc_id]
    _TYPES[op_id, dtype, acc] = found
    return found


_PLANS = {}


def _plan_of(op, x, dim, acc):
    """(op, dtype, acc ids, result dtype, layout, a, b, c, result shape and strides) of reducing
    x. Kept for an int or no dim (and a strided view's strides): working it out costs more than
    the rest of a call's Python, and the same shapes come back call after call. The native paths
    (_native) read the plans of tensors in C order by the same key."""
    contiguous = x.is_contiguous()
    key = None
    if dim is None or type(dim) is int:  # not bool, which hashes as an int
        key = (op, x.dtype, x.shape, dim, acc) if contiguous else (op, x.dtype, x.shape, x.stride(), dim, acc)
        try:
            return _PLANS[key]
        except KeyError:
            pass
        except TypeError:  # an unhashable acc, refused below
            key = None
    op_id = _plan.op_id(op)
    plan = (op_id,) + _result_dtype(op_id, x.dtype, acc) + _plan.layout(x.shape, contiguous, x.stride, dim)
    plan += (_plan.c_strides(plan[-1]),)
    if key is not None:
        if len(_PLANS) > 4096:
            forget_plans()
        _PLANS[key] = plan
    return plan


def forget_plans():
    """Drops the kept plans, the native path's copies included."""
    _PLANS.clear()
    if _libtorch is not None:
        _libtorch.forget()


def _check_out(out, x, shape, dtype):
    if not isinstance(out, torch.Tensor) or out.dtype != dtype or out.shape != shape or not out.is_contiguous():
        raise _plan.out_error("torch tensor", dtype, shape, x.device)
    device = x.get_device()  # -1 on the CPU
    if out.get_device() != device or (device < 0 and not out.is_cpu):
        status = _cureduce.HOST_POINTER if out.device.type == "cpu" else _cureduce.INVALID_VALUE
        raise _plan.device_error("out= is on %s, x on %s" % (out.device, x.device), status)
    if out.requires_grad and torch.is_grad_enabled():  # as torch's own out= functions refuse it
        raise ValueError(
            "cureduce: out= requires grad, but results carry no autograd history; pass out.detach() "
            "or call under torch.no_grad()"
        )


def _run(op, x, dim, acc, out, stream):
    """The reduction of a plain tensor: checks, the result, then one call of the extension."""
    op_id, dtype_id, acc_id, res_dtype, layout, a, b, c, shape, strides = _plan_of(op, x, dim, acc)
    device = x.get_device()  # -1 on the CPU
    if stream is None:
        s = _current_stream(device) if device >= 0 else 0
    elif device < 0:
        raise ValueError("cureduce: stream= is for CUDA tensors; CPU tensors are reduced on the CPU")
    else:
        s = _plan.stream_of(stream, device)
    if out is None:
        # torch.empty_strided with the plan's strides costs about half of torch.empty(shape,
        # ...), whose argument parser tries a tuple shape against several overloads.
        if stream is None:
            out = torch.empty_strided(shape, strides, dtype=res_dtype, device=x.device)
        else:  # allocated for the stream that writes it, as torch's stream rules want
            with torch.cuda.stream(_torch_stream(stream, s, device)):
                out = torch.empty_strided(shape, strides, dtype=res_dtype, device=x.device)
    else:
        if (
            type(out) not in _PLAIN
            or out.dtype is not res_dtype
            or out.shape != shape
            or out.get_device() != device
            or not out.is_contiguous()
            or out.requires_grad
        ):
            _check_out(out, x, shape, res_dtype)  # raises, unless the full check passes
        _increment_version(out)  # an in-place write, which autograd's checks must see
    _cureduce.reduce_ptr(op_id, dtype_id, acc_id, layout, x.data_ptr(), a, b, c, out.data_ptr(), device, s)
    return out


def _torch_stream(stream, ptr, device):
    if isinstance(stream, torch.cuda.Stream):
        return stream
    return torch.cuda.ExternalStream(ptr, device=device)


def _through_ops(op, x, dim, acc, out, stream):
    if stream is not None:
        raise ValueError(
            "cureduce: stream= is not available under torch.compile or for tensor subclasses; "
            "the op runs on the current stream"
        )
    dims = None if dim is None else list(dim) if isinstance(dim, (tuple, list)) else [dim]
    acc_name = None
    if acc is not None:
        acc_name = _plan.dtype_name(acc)
        if acc_name is None:
            raise _plan.unsupported_dtype(acc)
    if out is None:
        return torch.ops.cureduce.reduce(x, op, dims, acc_name)
    torch.ops.cureduce.reduce_out(x, op, dims, acc_name, out)
    return out


def _run_any_layout(op, x, dims, acc, out):
    """The ops' kernel. Under torch.compile the layout of an intermediate is the compiler's
    choice, not the caller's, so a layout the library cannot read in place is copied here."""
    try:
        return _run(op, x, dims, acc, out, None)
    except _plan.LayoutError:
        return _run(op, x.contiguous(), dims, acc, out, None)


@torch.library.custom_op("cureduce::reduce", mutates_args=())
def _reduce_op(x: torch.Tensor, op: str, dims: Optional[List[int]], acc: Optional[str]) -> torch.Tensor:
    return _run_any_layout(op, x, dims, acc, None)


@_reduce_op.register_fake
def _reduce_fake(x, op, dims, acc):
    _dtype_id, _acc_id, res_dtype = _result_dtype(_plan.op_id(op), x.dtype, acc)
    return x.new_empty(_plan.out_shape(x.shape, dims), dtype=res_dtype)


@torch.library.custom_op("cureduce::reduce_out", mutates_args=("out",))
def _reduce_out_op(x: torch.Tensor, op: str, dims: Optional[List[int]], acc: Optional[str], out: torch.Tensor) -> None:
    _run_any_layout(op, x, dims, acc, out)


@_reduce_out_op.register_fake
def _reduce_out_fake(x, op, dims, acc, out):
    _dtype_id, _acc_id, res_dtype = _result_dtype(_plan.op_id(op), x.dtype, acc)
    _check_out(out, x, _plan.out_shape(x.shape, dims), res_dtype)


for _op_name in _plan.OPS:
    torch.compiler.allow_in_graph(getattr(_package, _op_name))
