"""cureduce against PyTorch on the same tensors: speed and result of torch.sum, torch.amax and
torch.argmax, with cureduce called through ctypes on the tensors' device memory and stream.

With --rows: the row and column sums of the shapes in docs/rows.md (f32 and bf16) against
torch.sum(dim=1) and torch.sum(dim=0).

usage: python3 bench/torch_compare.py [--lib build/libcureduce.so] [--csv FILE] [--rows]
Needs a CUDA GPU and PyTorch (as on the lent device machines)."""
import argparse
import ctypes
import statistics
import sys

import torch

# cureduce.h enums (fixed values)
F32, F64, F16, BF16, E4M3, E5M2, I8, I32, I64 = range(9)
SUM, MIN, MAX, ABSMAX, SUMSQ, ARGMIN, ARGMAX, MEAN = range(8)
ACC_DEFAULT = -1
TORCH_DTYPE = {F32: torch.float32, BF16: torch.bfloat16, F16: torch.float16, I8: torch.int8,
               E4M3: torch.float8_e4m3fn}
ACC_OUT = {SUM: {F32: torch.float32, BF16: torch.float32, F16: torch.float32, E4M3: torch.float32, I8: torch.int64},
           MAX: {F32: torch.float32, BF16: torch.float32, F16: torch.float32, E4M3: torch.float32, I8: torch.int64},
           ARGMAX: {d: torch.int64 for d in TORCH_DTYPE}}
DTYPE_NAMES = {F32: "f32", BF16: "bf16", F16: "f16", I8: "i8", E4M3: "e4m3"}
OP_NAMES = {SUM: "sum", MAX: "max", ARGMAX: "argmax"}  # separate: the two enums share values


# GPU cycles the spin kernel waits per call enqueued behind it: about 100 us at 1.5 to 2 GHz,
# several times Python's overhead per call.
HOLD_CYCLES_PER_CALL = 200_000


def timed(fn, reps=7, batch=100):
    """Hot median per call, device-paced: each rep enqueues `batch` back-to-back calls behind a
    spin kernel (torch.cuda._sleep) that holds the GPU while Python enqueues them, so the events
    time the GPU work and not Python's call overhead (tens of microseconds, more than a small
    reduction takes). One call a rep, as this did before, timed the host: bf16 65536x128 rows
    read 101 us against 6.5 us from the CLI's bench."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(HOLD_CYCLES_PER_CALL * batch)
        a.record()
        for _ in range(batch):
            fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1000.0 / batch)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", default="build/libcureduce.so")
    ap.add_argument("--csv", default=None)
    ap.add_argument("--rows", action="store_true", help="rows and columns instead of whole arrays")
    args = ap.parse_args()
    lib = ctypes.CDLL(args.lib)
    if args.rows:
        sys.exit(compare_rows(lib, args.csv))
    lib.cureduce_create.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    lib.cureduce_reduce.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p,
                                    ctypes.c_uint64, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
    handle = ctypes.c_void_p()
    if lib.cureduce_create(ctypes.byref(handle)) != 0:
        sys.exit("cureduce_create failed (no GPU?)")
    gpu = torch.cuda.get_device_name()
    torch.manual_seed(0)
    cases = [(F32, 1 << 20), (F32, 1 << 28), (BF16, 1 << 28), (F16, 1 << 28), (E4M3, 1 << 28), (I8, 1 << 30)]
    lines = ["gpu,impl,dtype,op,n,hot_us,gbps,torch_speedup,agrees"]
    print(f"torch_compare on {gpu} (torch {torch.__version__})")
    print(f"{'case':24} {'cureduce us':>12} {'torch us':>10} {'speed-up':>9}  result")
    failures = 0
    for d, n in cases:
        if d == I8:
            x = torch.randint(-128, 128, (n,), dtype=torch.int8, device="cuda")
        else:
            x = (torch.rand(n, device="cuda") * 2 - 1).to(TORCH_DTYPE[d])
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        for op in (SUM, MAX, ARGMAX):
            out = torch.empty(1, dtype=ACC_OUT[op][d], device="cuda")
            ours = lambda: lib.cureduce_reduce(handle, op, d, ctypes.c_void_p(x.data_ptr()), n, ACC_DEFAULT,
                                               ctypes.c_void_p(out.data_ptr()), stream)
            if ours() != 0:
                sys.exit(f"cureduce_reduce failed for {DTYPE_NAMES[d]} {OP_NAMES[op]}")
            torch_fn = {SUM: lambda: torch.sum(x, dtype=ACC_OUT[SUM][d]) if d != E4M3 else torch.sum(x.float()),
                        MAX: lambda: torch.amax(x) if d != E4M3 else torch.amax(x.float()),
                        ARGMAX: lambda: torch.argmax(x) if d != E4M3 else torch.argmax(x.float())}[op]
            try:
                ref = torch_fn()
                t_torch = timed(torch_fn)
                note = " (torch upcasts fp8 first)" if d == E4M3 else ""
            except RuntimeError as e:
                ref, t_torch, note = None, float("nan"), f" (torch: {str(e)[:40]})"
            t_ours = timed(ours)
            torch.cuda.synchronize()
            got = out.item()
            if ref is None:
                agrees = True
            elif op == SUM and d != I8:
                exact = x.double().sum().item()
                agrees = abs(got - exact) <= 1e-5 * x.double().abs().sum().item()
            else:
                agrees = got == ref.item()
            failures += not agrees
            gbps = n * x.element_size() / t_ours / 1e3
            print(f"{DTYPE_NAMES[d] + ' ' + OP_NAMES[op] + ' n=2^' + str(n.bit_length() - 1):24} {t_ours:12.1f} {t_torch:10.1f} "
                  f"{t_torch / t_ours:8.2f}x  {'agrees' if agrees else 'DIFFERS'}: {got} vs {ref.item() if ref is not None else '-'}{note}")
            lines.append(f"{gpu},cureduce,{DTYPE_NAMES[d]},{OP_NAMES[op]},{n},{t_ours:.3f},{gbps:.1f},{t_torch / t_ours:.3f},{int(agrees)}")
            lines.append(f"{gpu},torch,{DTYPE_NAMES[d]},{OP_NAMES[op]},{n},{t_torch:.3f},{n * x.element_size() / t_torch / 1e3:.1f},1.0,1")
        del x
    if args.csv:
        with open(args.csv, "w") as fh:
            fh.write("\n".join(lines) + "\n")
    sys.exit(1 if failures else 0)


ROW_SHAPES = [(4096, 4096), (32768, 1024), (1024, 65536), (65536, 128), (1048576, 32),
              (8, 16777216), (16384, 8192)]


def compare_rows(lib, csv):
    """torch.sum(x, dim=1) and dim=0 against cureduce_reduce_rows / _cols on the same tensors."""
    for fn in (lib.cureduce_reduce_rows, lib.cureduce_reduce_cols):
        fn.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_uint64,
                       ctypes.c_uint64, ctypes.c_uint64, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
    lib.cureduce_create.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    handle = ctypes.c_void_p()
    if lib.cureduce_create(ctypes.byref(handle)) != 0:
        return "cureduce_create failed (no GPU?)"
    gpu = torch.cuda.get_device_name()
    torch.manual_seed(0)
    lines = ["gpu,impl,dtype,op,rows,cols,axis,hot_us,gbps,torch_speedup,agrees"]
    print(f"torch_compare --rows on {gpu} (torch {torch.__version__})")
    print(f"{'case':30} {'cureduce us':>12} {'torch us':>10} {'speed-up':>9}  result")
    failures = 0
    for d in (F32, BF16):
        for rows, cols in ROW_SHAPES:
            x = (torch.rand(rows, cols, device="cuda") * 2 - 1).to(TORCH_DTYPE[d])
            stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
            exact_rows, exact_cols = x.double().sum(dim=1), x.double().sum(dim=0)
            for axis in (1, 0):
                out = torch.empty(rows if axis == 1 else cols, dtype=torch.float32, device="cuda")
                fn = lib.cureduce_reduce_rows if axis == 1 else lib.cureduce_reduce_cols
                ours = lambda: fn(handle, SUM, d, ctypes.c_void_p(x.data_ptr()), rows, cols, cols, ACC_DEFAULT,
                                  ctypes.c_void_p(out.data_ptr()), stream)
                if ours() != 0:
                    return f"cureduce failed for {DTYPE_NAMES[d]} {rows}x{cols} axis {axis}"
                theirs = lambda: torch.sum(x, dim=axis, dtype=torch.float32)
                t_ours, t_torch = timed(ours), timed(theirs)
                torch.cuda.synchronize()
                exact = exact_rows if axis == 1 else exact_cols
                scale = x.double().abs().sum(dim=axis)
                agrees = bool(((out.double() - exact).abs() <= 1e-5 * scale + 1e-30).all().item())
                failures += not agrees
                nbytes = rows * cols * x.element_size()
                name = f"{DTYPE_NAMES[d]} {rows}x{cols} axis {axis}"
                print(f"{name:30} {t_ours:12.1f} {t_torch:10.1f} {t_torch / t_ours:8.2f}x  "
                      f"{'agrees' if agrees else 'DIFFERS'} with the exact sums")
                lines.append(f"{gpu},cureduce,{DTYPE_NAMES[d]},sum,{rows},{cols},{axis},{t_ours:.3f},"
                             f"{nbytes / t_ours / 1e3:.1f},{t_torch / t_ours:.3f},{int(agrees)}")
                lines.append(f"{gpu},torch,{DTYPE_NAMES[d]},sum,{rows},{cols},{axis},{t_torch:.3f},"
                             f"{nbytes / t_torch / 1e3:.1f},1.0,1")
            del x, exact_rows, exact_cols
    if csv:
        with open(csv, "w") as fh:
            fh.write("\n".join(lines) + "\n")
    return 1 if failures else 0


if __name__ == "__main__":
    main()
