"""One reduction over a tensor sharded across the ranks of a torch.distributed process group with
the NCCL backend, one GPU a rank: what the C library's multi-GPU calls give (cureduce_nccl.h,
docs/multi_gpu.md), over torch's own collectives.

    import torch.distributed as dist
    import cureduce.distributed as crd
    dist.init_process_group("nccl")
    total = crd.sum_exact(shard)          # on every rank: the exact sum of all ranks' shards
    best = crd.argmax(block, dim=-1)      # columns split over the ranks: a global index a row

``x`` is this rank's shard: a C-contiguous CUDA tensor. ``dim=None`` reduces the whole array,
the concatenation in rank order of every rank's x, flattened (the shards' sizes may differ, and a
rank may hold none). ``dim=-1`` (or x.ndim - 1) reduces the last dimension, split over the ranks:
every rank holds the same leading dimensions and its own columns, rank r's after rank r - 1's,
and the result has the leading shape. Every op, dtype and ``acc`` of cureduce is offered:
  - argmin and argmax give the global index (the elements of lower ranks plus the local index);
  - sum_exact and mean_exact give the bits one GPU gives over the whole array, for any number of
    ranks and any sharding: each rank adds its shard to exact states, one all-reduce adds the
    states as integers, and each result is rounded once;
  - min, max, absmax and integer sums give the whole array's value;
  - float sum, sumsq and mean add the ranks' partial results in double in rank order and round
    once: the same bits for the same sharding on every run.
The partials are packed and combined by the C library's own kernels, so the bits are those of
cureduce_dist_reduce and cureduce_dist_reduce_rows.

Each call is a collective of ``group`` (None: the default group): every rank of it calls with the
same op, dtype, acc, dim and leading shape, in the same order. The work runs on the current stream
(torch orders its collectives after it), the host never waits, and the results and the small
buffers come from torch's allocator. With one rank holding elements, the call is cureduce's own.

Empty arrays. Whether every rank's shard is empty is known only after a collective, so no
exception can say so without a host synchronisation: where no rank holds an element (one rank
or many alike), sum, sumsq
and sum_exact give 0; mean_exact, and min, max, absmax and mean into a float, give NaN; min, max
and absmax into an integer give 0; argmin and argmax give -1.
"""

import cureduce as _package

from . import _cureduce, _plan

__all__ = list(_plan.OPS)

_EXACT = frozenset((_plan.OP_IDS["sum_exact"], _plan.OP_IDS["mean_exact"]))
_IDENTITY = frozenset((_plan.OP_IDS["sum"], _plan.OP_IDS["sumsq"], _plan.OP_IDS["sum_exact"]))


def _group_of(group, torch):
    dist = torch.distributed
    if not dist.is_available() or not dist.is_initialized():
        raise RuntimeError("cureduce.distributed: no process group (call torch.distributed.init_process_group)")
    rank = dist.get_rank(group)
    if rank < 0:
        raise ValueError("cureduce.distributed: this process is not a rank of the group")
    if "nccl" not in str(dist.get_backend(group)).lower():
        raise ValueError("cureduce.distributed: the group's backend is %s; CUDA tensors need nccl" % dist.get_backend(group))
    return rank, dist.get_world_size(group)


def _shape_of(x, dim):
    """(rows, cols, result shape) of reducing x's last dimension, or all of x as one row."""
    if dim is None:
        return 1, x.numel(), ()
    if type(dim) is not int or dim not in (-1, x.dim() - 1) or x.dim() == 0:
        raise ValueError("cureduce.distributed: dim must be None or the last dimension (-1), got %r" % (dim,))
    shape = tuple(x.shape[:-1])
    rows = 1
    for d in shape:
        rows *= d
    return rows, x.shape[-1], shape


def _reduce(op, x, dim, acc, group):
    from . import _torch

    torch = _torch.torch
    if not isinstance(x, torch.Tensor):
        raise TypeError("cureduce.distributed: expected a torch tensor, got %s" % type(x).__name__)
    if not x.is_cuda:
        raise ValueError("cureduce.distributed: x is on %s; the shards must be CUDA tensors" % x.device)
    if not x.is_contiguous():
        raise ValueError("cureduce.distributed: x must be C-contiguous")
    op_id = _plan.op_id(op)
    dtype_id, acc_id, res_dtype = _torch._result_dtype(op_id, x.dtype, acc)
    rows, cols, shape = _shape_of(x, dim)
    rank, world = _group_of(group, torch)
    if world == 1 and cols > 0:  # one rank holding elements: the package's call, the same bits
        return getattr(_package, op)(x, dim=dim, acc=acc)
    device = x.get_device()
    stream = _torch._current_stream(device)
    out = torch.empty(rows, dtype=res_dtype, device=x.device)
    if rows == 0:
        return out.reshape(shape)
    if op_id in _EXACT:
        states = torch.zeros(rows * _cureduce.EXACT_STATE_WORDS, dtype=torch.int64, device=x.device)
        _cureduce.exact_accumulate_rows(dtype_id, x.data_ptr(), rows, cols, cols, states.data_ptr(), device, stream)
        torch.distributed.all_reduce(states, group=group)
        _cureduce.exact_finish_rows(op_id, states.data_ptr(), rows, acc_id, out.data_ptr(), device, stream)
        return out.reshape(shape)
    local_op = _cureduce.dist_local_op(op_id, acc_id)
    local = torch.empty(rows * 8, dtype=torch.uint8, device=x.device)
    if cols > 0:  # a whole array as cureduce_reduce reduces it, as the C API does
        layout = _plan.FULL if dim is None else _plan.ROWS
        _cureduce.reduce_ptr(local_op, dtype_id, acc_id, layout, x.data_ptr(), cols if dim is None else rows,
                             cols, cols, local.data_ptr(), device, stream)
    words = rows * _cureduce.PARTIAL_WORDS
    mine = torch.empty(words, dtype=torch.int64, device=x.device)
    parts = torch.empty(world * words, dtype=torch.int64, device=x.device)
    _cureduce.dist_pack(op_id, dtype_id, acc_id, x.data_ptr(), rows, cols, cols, local.data_ptr(),
                        mine.data_ptr(), device, stream)
    torch.distributed.all_gather_into_tensor(parts, mine, group=group)
    if op_id not in _IDENTITY:  # what an all-empty row keeps: the combine writes nothing there
        out.fill_(-1 if op_id in _plan.ARG_OP_IDS else float("nan") if res_dtype.is_floating_point else 0)
    _cureduce.dist_combine(op_id, acc_id, parts.data_ptr(), world, rows, out.data_ptr(), device, stream)
    return out.reshape(shape)


def sum(x, dim=None, acc=None, group=None):
    """Sum over all ranks' shards (float sums: the ranks' sums added in rank order; integer sums wrap)."""
    return _reduce("sum", x, dim, acc, group)


def min(x, dim=None, acc=None, group=None):
    """Minimum over all ranks' shards; NaN propagates."""
    return _reduce("min", x, dim, acc, group)


def max(x, dim=None, acc=None, group=None):
    """Maximum over all ranks' shards; NaN propagates."""
    return _reduce("max", x, dim, acc, group)


def absmax(x, dim=None, acc=None, group=None):
    """Largest magnitude over all ranks' shards; NaN propagates."""
    return _reduce("absmax", x, dim, acc, group)


def sumsq(x, dim=None, acc=None, group=None):
    """Sum of squares over all ranks' shards."""
    return _reduce("sumsq", x, dim, acc, group)


def argmin(x, dim=None, acc=None, group=None):
    """Global index of the first minimum (of the first NaN, if any), as int64."""
    return _reduce("argmin", x, dim, acc, group)


def argmax(x, dim=None, acc=None, group=None):
    """Global index of the first maximum (of the first NaN, if any), as int64."""
    return _reduce("argmax", x, dim, acc, group)


def mean(x, dim=None, acc=None, group=None):
    """The ranks' sums added in rank order, over the global count, rounded once."""
    return _reduce("mean", x, dim, acc, group)


def sum_exact(x, dim=None, acc=None, group=None):
    """The exact sum over all ranks' shards rounded once: the same bits for any sharding."""
    return _reduce("sum_exact", x, dim, acc, group)


def mean_exact(x, dim=None, acc=None, group=None):
    """The exact sum over the global count, rounded once: the same bits for any sharding."""
    return _reduce("mean_exact", x, dim, acc, group)
