"""cureduce for Python: GPU reductions of PyTorch, CuPy and JAX arrays (and of any CUDA array with
__dlpack__ or __cuda_array_interface__), and CPU reductions of NumPy arrays.

    import cureduce
    cureduce.sum(x)                        # x: a torch/CuPy/JAX/NumPy array; f32 accumulation for bf16
    cureduce.argmax(x, dim=1)              # int64 indices
    cureduce.sum_exact(x, dim=(1, 2))      # the exact sum, rounded once

Every function takes ``x``, ``dim`` (None for the whole array, one axis, negative counting from
the end, or a tuple of adjacent axes), ``acc`` (the accumulator dtype: a cureduce name such as
"f64", a NumPy name or dtype, or a torch dtype; None for the default), ``out`` (an array of the
result's dtype and shape, C-contiguous, on x's device, to write into) and ``stream``. The result
has the accumulator's dtype (int64 indices for argmin and argmax; over several axes the flat
C-order index within them) and the shape of ``x`` without ``dim``. Supported dtypes: float32,
float64, float16, bfloat16, float8_e4m3fn, float8_e5m2, int8, int32, int64. Bad arguments raise
TypeError (an array, dtype or accumulator cureduce does not take, or an argument of the wrong
type, such as dim=1.5) or ValueError (a bad value: dim out of range, out, layout, device,
stream, an empty min or max), carrying the library's message, before anything runs: nothing is
written.

Arrays and results. A GPU array must be C-contiguous, or a 2-d view with one unit stride (such
as ``x[:, :k]`` of a wider matrix, or its transpose), reduced along dim 0 or 1; other layouts
raise ValueError rather than being copied behind your back. NumPy arrays are read in any layout
and byte order; masked arrays are refused.
  - PyTorch: CUDA tensors run on the GPU, CPU tensors on the CPU path; the result is a tensor on
    x's device from torch's allocator (so it follows torch's stream rules). Results carry no
    autograd history.
  - CuPy: the result comes from CuPy's memory pool on x's device.
  - JAX: arrays on one GPU; the result is a JAX array (see below). ``out=`` is refused (JAX
    arrays are immutable), and so is ``stream=``. JAX converts int64 and float64 results to
    int32 and float32 unless jax_enable_x64 is set. Not usable inside jax.jit.
  - Other CUDA arrays (__dlpack__ preferred, else __cuda_array_interface__): the result is a
    cureduce.DeviceArray, readable through both protocols (torch.from_dlpack, cupy.asarray, ...).
  - NumPy arrays, and JAX arrays on the CPU: the library's CPU path; the result is of x's kind.

Streams. Work is queued, never waited for: no call synchronises the host. By default it goes on
the framework's current stream of x's device (torch.cuda.current_stream, cupy's current
stream); ``stream=`` takes a torch.cuda.Stream, a CuPy stream, any object with __cuda_stream__,
or a cudaStream_t as an int, on x's device. As with any work on a side stream, order it after
whatever produced x (and keep x alive, e.g. with Tensor.record_stream) yourself. The call makes
x's device current while it runs and restores the previous context afterwards.

Handles. The library's handles own a device workspace that serves one stream at a time; the
extension keeps one per (device, stream), created on first use (a short synchronous allocation
of about 5 MB) and reused from any thread. Work captured into a CUDA graph
(torch.cuda.graph, stream capture) gets a handle of its own for each capture, created under
relaxed capture mode so that the capture stays valid, and owned by the graph: replays may run
on any stream without sharing a workspace, and the handle is reused once CUDA destroys the
graph. Handles are not freed at exit (the CUDA context may be gone by then).

PyTorch and torch.compile. Plain tensors go straight to the extension (the lowest host cost),
through a module linked with libtorch where the package was built with torch installed, and
for the torch now imported; else through torch's Python methods.
The ops torch.ops.cureduce.reduce and torch.ops.cureduce.reduce_out (with fake kernels giving
the result's shape and dtype) serve torch.compile, fake and other subclassed tensors; the
public functions are registered with torch.compiler.allow_in_graph, so that
torch.compile(fullgraph=True) puts them into the graph as those ops. This happens when cureduce
first sees torch: import torch before cureduce, or call cureduce once on a tensor before
compiling. CUDA graph capture works in both modes.

JAX. JAX has no current stream and no mutable arrays. cureduce takes x through DLPack with the
stream JAX gives for external work (device.get_stream_for_external_ready_events()), so that
stream waits for x without blocking the host; runs there; writes the result to memory of its
own stream-ordered pool on that device; and hands it to JAX through DLPack on the same stream,
so JAX orders its later use after the kernel. The result's memory goes back to the pool when
JAX frees the array, and x's buffer is held until then.

Many GPUs. cureduce.distributed has the same functions over a torch tensor sharded across the
ranks of a torch.distributed process group with the NCCL backend (its docstring says how).
"""

import sys as _sys

import numpy as _np

from . import _cureduce, _numpy
from ._generic import DeviceArray

__all__ = [
    "sum",
    "min",
    "max",
    "absmax",
    "sumsq",
    "argmin",
    "argmax",
    "mean",
    "sum_exact",
    "mean_exact",
    "DeviceArray",
]
__version__ = "%d.%d.%d" % (_cureduce.version // 10000, _cureduce.version // 100 % 100, _cureduce.version % 100)

# The function reducing each type of array seen so far, found from the type's module on first
# sight, so that a framework is imported only once one of its arrays arrives.
_HANDLERS = {_np.ndarray: _numpy.reduce}


def _handler(x):
    kind = type(x).__module__.partition(".")[0]
    if isinstance(x, _np.ma.MaskedArray):
        raise TypeError("cureduce: masked arrays are not supported (reduce x.compressed() or x.filled(v))")
    if isinstance(x, _np.ndarray):
        return _numpy.reduce
    if kind == "torch":
        from . import _torch

        if isinstance(x, _torch.torch.Tensor):
            return _torch.reduce
    elif kind == "cupy":
        from . import _cupy

        return _cupy.reduce
    elif kind in ("jax", "jaxlib"):
        from . import _jax

        return _jax.reduce
    if (hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__")) or hasattr(x, "__cuda_array_interface__"):
        from . import _generic

        return _generic.reduce
    raise TypeError(
        "cureduce: expected a NumPy array or a CUDA array (PyTorch, CuPy, JAX, __dlpack__ with "
        "__dlpack_device__, or __cuda_array_interface__), got %s" % type(x).__name__
    )


def _reduce(op, x, dim, acc, out, stream):
    handler = _HANDLERS.get(type(x))
    if handler is None:
        handler = _HANDLERS[type(x)] = _handler(x)
    return handler(op, x, dim, acc, out, stream)


def sum(x, dim=None, acc=None, out=None, stream=None):
    """Sum (float sums pairwise in the accumulator; integer sums wrap)."""
    return _reduce("sum", x, dim, acc, out, stream)


def min(x, dim=None, acc=None, out=None, stream=None):
    """Minimum; NaN propagates."""
    return _reduce("min", x, dim, acc, out, stream)


def max(x, dim=None, acc=None, out=None, stream=None):
    """Maximum; NaN propagates."""
    return _reduce("max", x, dim, acc, out, stream)


def absmax(x, dim=None, acc=None, out=None, stream=None):
    """Largest magnitude (fp8 scaling); NaN propagates."""
    return _reduce("absmax", x, dim, acc, out, stream)


def sumsq(x, dim=None, acc=None, out=None, stream=None):
    """Sum of squares, each square rounded in the accumulator."""
    return _reduce("sumsq", x, dim, acc, out, stream)


def argmin(x, dim=None, acc=None, out=None, stream=None):
    """Index of the first minimum (of the first NaN, if any), as int64."""
    return _reduce("argmin", x, dim, acc, out, stream)


def argmax(x, dim=None, acc=None, out=None, stream=None):
    """Index of the first maximum (of the first NaN, if any), as int64."""
    return _reduce("argmax", x, dim, acc, out, stream)


def mean(x, dim=None, acc=None, out=None, stream=None):
    """Sum over n, the division rounded once in the accumulator."""
    return _reduce("mean", x, dim, acc, out, stream)


def sum_exact(x, dim=None, acc=None, out=None, stream=None):
    """The exact sum of float elements rounded once into acc (f64, f32 or x's own dtype)."""
    return _reduce("sum_exact", x, dim, acc, out, stream)


def mean_exact(x, dim=None, acc=None, out=None, stream=None):
    """The exact sum over n, rounded once into acc (f64, f32 or x's own dtype)."""
    return _reduce("mean_exact", x, dim, acc, out, stream)


# With torch already imported, register the ops and the compile hooks now, so that a first call
# inside torch.compile finds them; otherwise that happens at the first tensor cureduce sees.
if "torch" in _sys.modules:
    from . import _torch  # noqa: E402,F401
