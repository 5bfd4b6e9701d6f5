"""cureduce.distributed on torch.distributed process groups (NCCL), one process a GPU: every op,
dtype and accumulator over whole arrays and over matrices split by columns, with random shardings
(empty shards included), against one GPU's cureduce: the same bits where the sharding cannot
matter (min, max, absmax, the arg ops' global indices, the exact sums, integer sums), else the
rank-order combine of each shard's result; the same bits twice; the empty rules; one-rank groups;
a side stream; and the errors raised before any collective. Needs two GPUs or more (up to four ranks are started)."""
import os
import tempfile

import pytest

torch = pytest.importorskip("torch")

import cureduce  # noqa: E402
import cureduce.distributed as crd  # noqa: E402
from reference import DTYPES, OPS, applies, data  # noqa: E402
from test_torch_cpu import to_torch  # noqa: E402

SPLIT_VARIANT = {"sum", "sumsq", "mean"}  # float results that depend on the sharding
EMPTY = {"sum": 0, "sumsq": 0, "sum_exact": 0, "argmin": -1, "argmax": -1}


def test_bad_shards_are_refused_before_any_collective():
    with pytest.raises(TypeError, match="torch tensor"):
        crd.sum([1.0, 2.0])
    with pytest.raises(ValueError, match="CUDA tensors"):
        crd.sum(torch.ones(4))
    if torch.cuda.is_available():
        x = torch.ones(4, 6, device="cuda")
        with pytest.raises(ValueError, match="C-contiguous"):
            crd.sum(x.t())
        with pytest.raises(ValueError, match="last dimension"):
            crd.sum(x, dim=0)
        with pytest.raises(TypeError):
            crd.sum_exact(x.to(torch.int32))
        with pytest.raises(RuntimeError, match="no process group"):
            crd.sum(x)


def _bits(t):
    t = t.contiguous()
    return t.view({1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()]).cpu()


def _same(a, b):
    """Whether two result tensors hold the same bits (any NaN equal to any NaN)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.is_floating_point:
        na, nb = torch.isnan(a.float()).cpu(), torch.isnan(b.float()).cpu()
        return bool(torch.equal(na, nb) and torch.equal(_bits(a)[~na], _bits(b)[~nb]))
    return bool(torch.equal(a.cpu(), b.cpu()))


def _cuts(n, world, gen):
    """Sorted random cuts of n over world ranks, about one in four repeated (empty shards)."""
    inner = sorted(int(v) for v in torch.randint(0, n + 1, (world - 1,), generator=gen))
    cut = [0] + inner + [n]
    for r in range(1, world):
        if int(torch.randint(0, 4, (1,), generator=gen)) == 0:
            cut[r] = cut[r - 1]
    return cut


def _combined(op, pieces, dim, acc, res_dtype):
    """The rank-order combine of float sums: each non-empty piece's result (a mean times its
    count; a mean into f64 is summed locally) added in double from -0.0, a mean divided by the
    total count, rounded once (f16 and bf16 through f32, as the library does)."""
    total, s, shape = 0, None, None
    for piece in pieces:
        m = piece.shape[-1]
        if m == 0:
            continue
        if op == "mean" and res_dtype == torch.float64:
            v = cureduce.sum(piece, dim=dim, acc=acc)
        else:
            v = getattr(cureduce, op)(piece, dim=dim, acc=acc)
        shape = v.shape
        # Python floats: IEEE double additions and division (torch on CUDA divides by a scalar
        # through its reciprocal)
        v = [x * m if op == "mean" and res_dtype != torch.float64 else x for x in v.double().cpu().reshape(-1).tolist()]
        s = [-0.0 + x for x in v] if s is None else [a + b for a, b in zip(s, v)]
        total += m
    if op == "mean":
        s = [a / total for a in s]
    t = torch.tensor(s, dtype=torch.float64).reshape(shape)
    if res_dtype in (torch.float16, torch.bfloat16):
        t = t.float()
    return t.to(res_dtype).to(pieces[0].device)


def _accs(op, dtype):
    accs = [None]
    if not dtype.startswith("int"):
        accs.append("f64")
    if op in ("sum_exact", "mean_exact") and dtype not in ("float32", "float64"):
        accs.append(dtype)
    return accs


def _check_all(rank, world, failures):
    dev = torch.device("cuda", rank)
    gen = torch.Generator().manual_seed(1234)  # the same data and cuts on every rank
    for dtype in DTYPES:
        for n in (0, 1, 1000, 100003):
            full = to_torch(data(dtype, n, seed=n + 7))
            cut = _cuts(n, world, gen)
            shard = full[cut[rank] : cut[rank + 1]].to(dev)
            whole = full.to(dev)
            pieces = [full[cut[r] : cut[r + 1]].to(dev) for r in range(world)]
            for op in OPS:
                for acc in _accs(op, dtype):
                    what = "%s %s acc=%s n=%d cut=%s" % (op, dtype, acc, n, cut)
                    if not applies(op, dtype):
                        try:
                            getattr(crd, op)(shard, acc=acc)
                            failures.append(what + ": not refused")
                        except TypeError:
                            pass
                        continue
                    got = getattr(crd, op)(shard, acc=acc)
                    again = getattr(crd, op)(shard, acc=acc)
                    if not _same(got, again):
                        failures.append(what + ": two calls differ")
                    if n == 0:
                        fill = EMPTY.get(op, float("nan") if got.dtype.is_floating_point else 0)
                        want = torch.tensor(fill, dtype=got.dtype, device=dev)
                    elif op in SPLIT_VARIANT and got.dtype.is_floating_point:
                        want = _combined(op, pieces, None, acc, got.dtype)
                    else:
                        want = getattr(cureduce, op)(whole, acc=acc)
                    if not _same(got, want):
                        failures.append("%s: got %s, want %s" % (what, got.cpu(), want.cpu()))
        for rows, cols in ((5, 1000), (64, 4099)):
            full = to_torch(data(dtype, (rows, cols), seed=rows))
            cut = _cuts(cols, world, gen)
            blocks = [full[:, cut[r] : cut[r + 1]].contiguous().to(dev) for r in range(world)]
            whole = full.to(dev)
            for op in OPS:
                if not applies(op, dtype):
                    continue
                for acc in _accs(op, dtype):
                    what = "%s %s acc=%s %dx%d cut=%s" % (op, dtype, acc, rows, cols, cut)
                    got = getattr(crd, op)(blocks[rank], dim=-1, acc=acc)
                    if op in SPLIT_VARIANT and got.dtype.is_floating_point:
                        want = _combined(op, blocks, -1, acc, got.dtype)
                    else:
                        want = getattr(cureduce, op)(whole, dim=-1, acc=acc)
                    if not _same(got, want):
                        failures.append("%s: rows differ" % what)


def _check_groups_and_streams(rank, world, failures):
    """One-rank groups (the package's bits; the empty rules, not its exceptions), and a call on
    a side stream."""
    import torch.distributed as dist

    dev = torch.device("cuda", rank)
    alone = [dist.new_group([r]) for r in range(world)][rank]  # every rank makes every group
    x = to_torch(data("float32", 4099, seed=rank)).to(dev)
    for op in OPS:
        if not _same(getattr(crd, op)(x, group=alone), getattr(cureduce, op)(x)):
            failures.append("%s over a one-rank group differs from the package's" % op)
    empty = x[:0]
    for op, want in (("min", float("nan")), ("argmax", -1), ("sum", 0.0), ("mean_exact", float("nan"))):
        got = getattr(crd, op)(empty, group=alone)
        if not _same(got, torch.tensor(want, dtype=got.dtype, device=dev)):
            failures.append("%s of an empty array over a one-rank group: %s" % (op, got))
    whole = to_torch(data("bfloat16", 100003, seed=5)).to(dev)
    side = torch.cuda.Stream(dev)
    side.wait_stream(torch.cuda.current_stream(dev))
    with torch.cuda.stream(side):
        got = crd.sum_exact(whole.chunk(world)[rank].contiguous())
    torch.cuda.current_stream(dev).wait_stream(side)
    if not _same(got, cureduce.sum_exact(whole)):
        failures.append("sum_exact on a side stream differs from one GPU's")


def _rank_main(rank, world, init_file, report_dir):
    import datetime

    import torch.distributed as dist

    torch.cuda.set_device(rank)
    dist.init_process_group(
        "nccl",
        init_method="file://" + init_file,
        rank=rank,
        world_size=world,
        timeout=datetime.timedelta(seconds=300),
    )
    failures = []
    try:
        _check_all(rank, world, failures)
        _check_groups_and_streams(rank, world, failures)
        dist.barrier()
    finally:
        dist.destroy_process_group()
    with open(os.path.join(report_dir, "rank%d" % rank), "w") as f:
        f.write("\n".join(failures[:30]) + ("\n%d failures" % len(failures) if failures else ""))


@pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.device_count() < 2, reason="needs two GPUs or more")
def test_shards_over_ranks_give_the_expected_bits():
    import torch.multiprocessing as mp

    world = 4 if torch.cuda.device_count() >= 4 else 2
    os.environ["NCCL_NVLS_ENABLE"] = "0"  # never NVLink multicast on shared machines
    with tempfile.TemporaryDirectory() as tmp:
        mp.spawn(_rank_main, args=(world, os.path.join(tmp, "init"), tmp), nprocs=world, join=True)
        reports = [open(os.path.join(tmp, "rank%d" % r)).read() for r in range(world)]
    bad = [r for r in reports if r]
    assert not bad, "\n".join(bad)
