"""cureduce against PyTorch (and CuPy's sum, when CuPy is importable) on the same tensors.

    python -m cureduce.bench [--out DIR] [--max-n N] [--reps R]

Three parts, each result checked before it is timed (a mismatch is reported and makes the exit
status 1):
  - whole arrays of 2^10 .. max-n elements (f32, bf16, f16): sum, max, argmax;
  - rows and columns: (8192, 8192) along dim 0 and 1, (2^20, 64) along 1, (64, 2^20) along 0,
    and the strided view (8192, 8192)[:, :4096] along 1;
  - host cost per call, the median over 4R rounds in which each of these runs a loop of 2000
    calls in turn: the bare C call (timed in a C++ loop), the extension's call from Python, the
    public Python call, the same through torch.ops.cureduce.reduce, and torch's own op; the
    Python call into out= should cost at most 3 us more than the C call (an allocating call
    adds the result's allocation; torch.empty_strided from Python is timed beside it).
Times: GPU-paced (a batch of calls queued behind a spin kernel, between two events: the GPU's
own time per call, median of R repeats) and host-paced (wall time per call of a loop of calls
with no synchronisation but at its end: the launch rate, or the GPU's time where that is
longer; the libraries' loops take turns, median of R). Writes python_bench.csv and python_bench_summary.txt
into DIR. Needs a CUDA GPU and PyTorch."""

import argparse
import csv
import os
import statistics
import sys
import time

import torch

import cureduce
from cureduce import _cureduce, _plan, _torch

HOLD_CYCLES_PER_CALL = 200_000  # GPU cycles of spin per queued call: well above Python's cost per call
HOST_OVERHEAD_LIMIT_US = 3.0


def gpu_paced_us(fn, nbytes, reps):
    """Median GPU time per call, batches of about 20 ms of reading nbytes (held_batch_us)."""
    return held_batch_us(fn, max(3, min(100, int(20e-3 / max(nbytes / 2.5e12, 1e-7)))), reps)


def held_batch_us(fn, batch, reps):
    """Median GPU time per call: each repeat queues `batch` calls behind a spin kernel that
    holds the GPU while Python queues them, so the events time the GPU work, not the host."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(HOLD_CYCLES_PER_CALL * batch)
        start.record()
        for _ in range(batch):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000.0 / batch)
    return statistics.median(times)


def host_paced_us(fns, calls, reps):
    """For each function, the median wall time per call of a loop of `calls` calls with no
    synchronisation inside, up to the end of the last call's work: the host's launch rate, or
    the GPU's time where that is longer. The functions' loops take turns (in_turns_us)."""
    return in_turns_us([timed_loop(fn, calls, until_done=True) for fn in fns], reps)


def timed_loop(fn, calls, until_done=False):
    """A loop of `calls` calls of fn, returning its microseconds per call: up to the end of the
    work it queued when until_done, else the host's own time (that work is waited for after the
    clock stops)."""

    def timed():
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        if until_done:
            torch.cuda.synchronize()
        us = (time.perf_counter() - t0) * 1e6 / calls
        torch.cuda.synchronize()
        return us

    return timed


def c_loop(args, calls):
    """timed_loop's counterpart for the bare C call, timed by the extension in a C++ loop."""

    def timed():
        us = _cureduce.c_call_seconds(*args, calls) * 1e6
        torch.cuda.synchronize()
        return us

    return timed


def in_turns_us(loops, rounds):
    """The median per call of each loop (a function returning its microseconds per call) over
    `rounds` rounds in which the loops take turns, so that a slow spell of the host falls on all
    of them alike (docs/design.md, "Python package")."""
    for loop in loops:
        loop()
    times = [[] for _ in loops]
    for _ in range(rounds):
        for loop, mine in zip(loops, times):
            mine.append(loop())
    return [statistics.median(t) for t in times]


def exact_sums(x, dim=None):
    """Sums of x and of |x| in f64 over dim (None: all of x), a slab of rows at a time so that
    the f64 copy stays small."""
    rows = x.reshape(-1, 1) if x.dim() == 1 else x
    step = max(1, (1 << 26) // rows.shape[1])
    axis = 1 if dim == 1 else 0
    sums, scales = [], []
    for i in range(0, rows.shape[0], step):
        slab = rows[i : i + step].double()
        sums.append(slab.sum(axis))
        scales.append(slab.abs().sum(axis))
    if dim == 1:
        return torch.cat(sums), torch.cat(scales)
    total, scale = torch.stack(sums).sum(0), torch.stack(scales).sum(0)
    return (total.sum(), scale.sum()) if dim is None else (total, scale)


def agrees(op, got, x, dim, ref):
    """Exact for max and argmax (the same first index), within an f32 rounding bound for sums."""
    if op == "sum":
        exact, scale = exact_sums(x, dim)
        return bool(((got.double() - exact).abs() <= 1e-5 * scale + 1e-30).all())
    return bool(torch.equal(got, ref))


class Bench:
    def __init__(self, args):
        self.args = args
        self.gpu = torch.cuda.get_device_name()
        self.rows = []
        self.mismatches = []
        try:
            import cupy

            self.cupy = cupy
        except ImportError:
            self.cupy = None

    def record(self, part, impl, dtype, op, shape, dim, nbytes, gpu_us, host_us, ok, torch_us):
        self.rows.append(dict(gpu=self.gpu, part=part, impl=impl, dtype=dtype, op=op,
                              shape="x".join(map(str, shape)), dim="" if dim is None else dim,
                              gpu_us="%.3f" % gpu_us, host_us="%.3f" % host_us,
                              gbps="%.1f" % (nbytes / gpu_us / 1e3),
                              speedup_vs_torch="%.3f" % (torch_us / gpu_us), agrees=int(ok)))
        if not ok:
            self.mismatches.append("%s %s %s %s dim=%s" % (impl, dtype, op, shape, dim))

    def compare(self, part, x, op, dim, torch_fn, cupy_fn=None):
        """Times and checks cureduce, torch and (when given) CuPy on one case."""
        reps, dtype = self.args.reps, str(x.dtype).replace("torch.", "")
        nbytes = x.numel() * x.element_size()
        ours = lambda: getattr(cureduce, op)(x, dim=dim)  # noqa: E731
        ref = torch_fn()
        ok = agrees(op, ours(), x, dim, ref)
        t_torch = gpu_paced_us(torch_fn, nbytes, reps)
        t_ours = gpu_paced_us(ours, nbytes, reps)
        fns = [torch_fn, ours] + ([cupy_fn] if cupy_fn is not None else [])
        host = host_paced_us(fns, 20 if nbytes > 1 << 24 else 1000, reps)
        self.record(part, "torch", dtype, op, tuple(x.shape), dim, nbytes, t_torch, host[0],
                    agrees(op, ref, x, dim, ref), t_torch)
        self.record(part, "cureduce", dtype, op, tuple(x.shape), dim, nbytes, t_ours, host[1], ok, t_torch)
        if cupy_fn is not None:
            got = torch.from_dlpack(cupy_fn())
            t_cupy = gpu_paced_us(cupy_fn, nbytes, reps)
            h_cupy = host[2]
            self.record(part, "cupy", dtype, op, tuple(x.shape), dim, nbytes, t_cupy, h_cupy,
                        agrees(op, got.float(), x, dim, ref), t_torch)
        print("%-9s %-9s %-7s %-20s dim=%-4s cureduce %9.2f us  torch %9.2f us  %5.2fx  %s"
              % (part, dtype, op, "x".join(map(str, x.shape)), dim, t_ours, t_torch, t_torch / t_ours,
                 "agrees" if ok else "DIFFERS"), flush=True)

    def whole_arrays(self):
        free = torch.cuda.mem_get_info()[0]
        sizes = [1 << k for k in range(10, 31, 2) if 1 << k <= self.args.max_n]
        for n in sizes:
            if n * 4 * 1.5 > free:
                print("skipping n=%d: %.1f GiB free" % (n, free / 2**30))
                continue
            base = torch.rand(n, device="cuda") * 2 - 1
            for dtype in (torch.float32, torch.bfloat16, torch.float16):
                x = base.to(dtype)
                xc = self.cupy.from_dlpack(x) if self.cupy is not None and dtype != torch.bfloat16 else None
                self.compare("whole", x, "sum", None, lambda: torch.sum(x, dtype=torch.float32),
                             (lambda: xc.sum(dtype=self.cupy.float32)) if xc is not None else None)
                self.compare("whole", x, "max", None, lambda: torch.amax(x).float())
                self.compare("whole", x, "argmax", None, lambda: torch.argmax(x))
            del base

    def rows_and_columns(self):
        shapes = [((8192, 8192), 0), ((8192, 8192), 1), ((1 << 20, 64), 1), ((64, 1 << 20), 0)]
        for dtype in (torch.float32, torch.bfloat16):
            for shape, dim in shapes:
                x = (torch.rand(shape, device="cuda") * 2 - 1).to(dtype)
                self.compare("rows", x, "sum", dim, lambda: torch.sum(x, dim=dim, dtype=torch.float32))
                self.compare("rows", x, "max", dim, lambda: torch.amax(x, dim=dim).float())
            w = (torch.rand(8192, 8192, device="cuda") * 2 - 1).to(dtype)
            v = w[:, :4096]
            self.compare("strided", v, "sum", 1, lambda: torch.sum(v, dim=1, dtype=torch.float32))

    def host_costs(self):
        """Host microseconds per call on small inputs, where launching is all the work."""
        lines = []
        for shape, dim in (((1 << 10,), None), ((64, 1024), 1)):
            x = torch.rand(shape, device="cuda")
            op = _plan.OP_IDS["sum"]
            f32 = _plan.DTYPE_IDS["f32"]
            layout, a, b, c, out_shape = _plan.c_order(tuple(x.shape), dim)
            out = torch.empty(out_shape, device="cuda")
            strides = out.stride()
            dev, s = x.get_device(), torch.cuda.current_stream().cuda_stream
            args = (op, f32, f32, layout, x.data_ptr(), a, b, c, out.data_ptr(), dev, s)
            calls = 2000
            ops_dim = None if dim is None else [dim]
            loops = [
                ("C call (cureduce_* in a C++ loop)", c_loop(args, calls)),
                ("extension call (_cureduce.reduce_ptr)", timed_loop(lambda: _cureduce.reduce_ptr(*args), calls)),
                ("cureduce.sum(x, out=o)", timed_loop(lambda: cureduce.sum(x, dim=dim, out=out), calls)),
                ("cureduce.sum(x)", timed_loop(lambda: cureduce.sum(x, dim=dim), calls)),
                ("torch.ops.cureduce.reduce",
                 timed_loop(lambda: torch.ops.cureduce.reduce(x, "sum", ops_dim, None), calls)),
                ("torch.sum(x)",
                 timed_loop(lambda: torch.sum(x, dim=dim) if dim is not None else torch.sum(x), calls)),
                ("torch.empty_strided (a result's allocation)", timed_loop(
                    lambda: torch.empty_strided(out_shape, strides, dtype=torch.float32, device=x.device), calls)),
            ]
            times = in_turns_us([loop for _, loop in loops], 4 * self.args.reps)
            costs = list(zip([name for name, _ in loops], times))
            c_call = costs[0][1]
            into_out, allocating, alloc = costs[2][1], costs[3][1], costs[6][1]
            verdict = "PASS" if into_out - c_call <= HOST_OVERHEAD_LIMIT_US else "FAIL"
            lines.append("f32 sum of %s, dim=%s (us per call, host):" % ("x".join(map(str, shape)), dim))
            lines += ["  %-42s %7.2f" % (name, us) for name, us in costs]
            lines.append("  Python call (out=) - C call = %.2f us (limit %.1f): %s"
                         % (into_out - c_call, HOST_OVERHEAD_LIMIT_US, verdict))
            lines.append("  Python call (allocating) - C call = %.2f us (torch.empty_strided alone: %.2f us)"
                         % (allocating - c_call, alloc))
            for name, us in costs:
                self.rows.append(dict(gpu=self.gpu, part="host", impl=name, dtype="float32", op="sum",
                                      shape="x".join(map(str, shape)), dim="" if dim is None else dim,
                                      gpu_us="", host_us="%.3f" % us, gbps="", speedup_vs_torch="", agrees=""))
        print("\n".join(lines), flush=True)
        return lines

    def write(self, host_lines):
        os.makedirs(self.args.out, exist_ok=True)
        with open(os.path.join(self.args.out, "python_bench.csv"), "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(self.rows[0]))
            w.writeheader()
            w.writerows(self.rows)
        summary = ["cureduce %s Python bench on %s (torch %s%s; torch path: %s)" % (
            cureduce.__version__, self.gpu, torch.__version__,
            ", cupy %s" % self.cupy.__version__ if self.cupy is not None else "", _torch.NATIVE_PATH)]
        summary.append("us per call, cureduce vs torch (speed-up = torch / cureduce), GPU-paced, then host-paced:")
        case = lambda r: (r["part"], r["dtype"], r["op"], r["shape"], r["dim"])  # noqa: E731
        torch_host = {case(r): float(r["host_us"]) for r in self.rows if r["impl"] == "torch"}
        ours = [r for r in self.rows if r["impl"] == "cureduce"]
        host_wins = 0
        for r in ours:
            host, theirs = float(r["host_us"]), torch_host[case(r)]
            host_wins += host <= theirs
            summary.append("  %-8s %-9s %-7s %-16s dim=%-2s %10s us  %6sx  %6.1f GB/s  host-paced %7.3f us  %5.2fx"
                           % (r["part"], r["dtype"], r["op"], r["shape"], r["dim"], r["gpu_us"],
                              r["speedup_vs_torch"], float(r["gbps"]), host, theirs / host))
        summary.append("GPU-paced: cureduce at or below torch's time in %d of %d cases"
                       % (sum(float(r["speedup_vs_torch"]) >= 1.0 for r in ours), len(ours)))
        summary.append("host-paced: cureduce at or below torch's time in %d of %d cases" % (host_wins, len(ours)))
        summary.append("")
        summary += host_lines
        summary.append("")
        summary.append("mismatches: %s" % ("none" if not self.mismatches else "; ".join(self.mismatches)))
        with open(os.path.join(self.args.out, "python_bench_summary.txt"), "w") as fh:
            fh.write("\n".join(summary) + "\n")
        print("wrote %s/python_bench.csv and python_bench_summary.txt" % self.args.out)


def size(text):
    """An element count as 1048576, 2**20 or 2^20."""
    for sep in ("**", "^"):
        if sep in text:
            base, exp = text.split(sep)
            return int(base) ** int(exp)
    return int(text)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m cureduce.bench", description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="cureduce-results/python", help="folder for the CSV and the summary")
    ap.add_argument("--max-n", type=size, default=1 << 30,
                    help="largest whole-array size, e.g. 2**24 (default 2**30, where memory allows)")
    ap.add_argument("--reps", type=int, default=7, help="repeats per timing (the median is reported)")
    ap.add_argument("--skip", choices=["whole", "rows", "host"], action="append", default=[],
                    help="leave out a part (may be given several times)")
    args = ap.parse_args(argv)
    if not torch.cuda.is_available():
        sys.exit("python -m cureduce.bench needs a CUDA GPU and PyTorch")
    bench = Bench(args)
    print("cureduce Python bench on %s (torch path: %s)" % (bench.gpu, _torch.NATIVE_PATH))
    if "whole" not in args.skip:
        bench.whole_arrays()
    if "rows" not in args.skip:
        bench.rows_and_columns()
    host_lines = bench.host_costs() if "host" not in args.skip else []
    bench.write(host_lines)
    if bench.mismatches:
        print("MISMATCHES: " + "; ".join(bench.mismatches))
    return 1 if bench.mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
