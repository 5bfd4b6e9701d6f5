"""cureduce against PyTorch on the same tensors: speed and result of torch.sum, torch.amax and
torch.argmax, with cureduce called through its Python package (cureduce.sum etc. writing into
a preallocated out=, on the tensors' device memory and current stream).

With --rows: the row and column sums of the shapes in docs/rows.md (f32 and bf16) against
torch.sum(dim=1) and torch.sum(dim=0).

usage: python3 bench/torch_compare.py [--build build] [--csv FILE] [--rows]
Needs a CUDA GPU, PyTorch, and the cureduce package: installed (pip install .) or built in
the build folder given by --build (its python/ folder is put first on the path)."""
import argparse
import os
import sys

import torch

DTYPE_NAMES = {torch.float32: "f32", torch.bfloat16: "bf16", torch.float16: "f16", torch.int8: "i8",
               torch.float8_e4m3fn: "e4m3"}


def timed(fn):
    """Hot median per call at the GPU's pace: 7 reps of 100 calls queued behind a spin kernel
    (cureduce.bench.held_batch_us). One call a rep timed the host instead: bf16 65536x128 rows
    read 101 us against 6.5 us from the CLI's bench."""
    from cureduce.bench import held_batch_us  # importable once main() has found the package

    return held_batch_us(fn, 100, 7)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build", help="build folder whose python/ holds the package")
    ap.add_argument("--csv", default=None)
    ap.add_argument("--rows", action="store_true", help="rows and columns instead of whole arrays")
    args = ap.parse_args()
    package = os.path.join(args.build, "python")
    if os.path.isdir(os.path.join(package, "cureduce")):
        sys.path.insert(0, package)
    import cureduce

    if not torch.cuda.is_available():
        sys.exit("torch_compare needs a CUDA GPU")
    if args.rows:
        sys.exit(compare_rows(cureduce, args.csv))
    sys.exit(compare_whole(cureduce, args.csv))


def compare_whole(cureduce, csv):
    gpu = torch.cuda.get_device_name()
    torch.manual_seed(0)
    cases = [(torch.float32, 1 << 20), (torch.float32, 1 << 28), (torch.bfloat16, 1 << 28), (torch.float16, 1 << 28),
             (torch.float8_e4m3fn, 1 << 28), (torch.int8, 1 << 30)]
    lines = ["gpu,impl,dtype,op,n,hot_us,gbps,torch_speedup,agrees"]
    print(f"torch_compare on {gpu} (torch {torch.__version__}, cureduce {cureduce.__version__})")
    print(f"{'case':24} {'cureduce us':>12} {'torch us':>10} {'speed-up':>9}  result")
    failures = 0
    for d, n in cases:
        if d == torch.int8:
            x = torch.randint(-128, 128, (n,), dtype=torch.int8, device="cuda")
        else:
            x = (torch.rand(n, device="cuda") * 2 - 1).to(d)
        fp8 = d == torch.float8_e4m3fn
        for op in ("sum", "max", "argmax"):
            fn = getattr(cureduce, op)
            out = fn(x)  # allocated once; the timed calls write into it
            ours = lambda: fn(x, out=out)  # noqa: E731
            torch_fn = {"sum": lambda: torch.sum(x.float()) if fp8 else torch.sum(x, dtype=out.dtype),
                        "max": lambda: torch.amax(x.float()) if fp8 else torch.amax(x),
                        "argmax": lambda: torch.argmax(x.float()) if fp8 else torch.argmax(x)}[op]
            try:
                ref = torch_fn()
                t_torch = timed(torch_fn)
                note = " (torch upcasts fp8 first)" if fp8 else ""
            except RuntimeError as e:
                ref, t_torch, note = None, float("nan"), f" (torch: {str(e)[:40]})"
            t_ours = timed(ours)
            torch.cuda.synchronize()
            got = out.item()
            if ref is None:
                agrees = True
            elif op == "sum" and d != torch.int8:
                exact = x.double().sum().item()
                agrees = abs(got - exact) <= 1e-5 * x.double().abs().sum().item()
            else:
                agrees = got == ref.item()
            failures += not agrees
            gbps = n * x.element_size() / t_ours / 1e3
            name = f"{DTYPE_NAMES[d]} {op} n=2^{n.bit_length() - 1}"
            print(f"{name:24} {t_ours:12.1f} {t_torch:10.1f} {t_torch / t_ours:8.2f}x  "
                  f"{'agrees' if agrees else 'DIFFERS'}: {got} vs {ref.item() if ref is not None else '-'}{note}")
            lines.append(f"{gpu},cureduce,{DTYPE_NAMES[d]},{op},{n},{t_ours:.3f},{gbps:.1f},{t_torch / t_ours:.3f},"
                         f"{int(agrees)}")
            lines.append(f"{gpu},torch,{DTYPE_NAMES[d]},{op},{n},{t_torch:.3f},"
                         f"{n * x.element_size() / t_torch / 1e3:.1f},1.0,1")
        del x
    if csv:
        with open(csv, "w") as fh:
            fh.write("\n".join(lines) + "\n")
    return 1 if failures else 0


ROW_SHAPES = [(4096, 4096), (32768, 1024), (1024, 65536), (65536, 128), (1048576, 32),
              (8, 16777216), (16384, 8192)]


def compare_rows(cureduce, csv):
    """torch.sum(x, dim=1) and dim=0 against cureduce.sum(x, dim=1) and dim=0 on the same tensors."""
    gpu = torch.cuda.get_device_name()
    torch.manual_seed(0)
    lines = ["gpu,impl,dtype,op,rows,cols,axis,hot_us,gbps,torch_speedup,agrees"]
    print(f"torch_compare --rows on {gpu} (torch {torch.__version__}, cureduce {cureduce.__version__})")
    print(f"{'case':30} {'cureduce us':>12} {'torch us':>10} {'speed-up':>9}  result")
    failures = 0
    for d in (torch.float32, torch.bfloat16):
        for rows, cols in ROW_SHAPES:
            x = (torch.rand(rows, cols, device="cuda") * 2 - 1).to(d)
            exact_rows, exact_cols = x.double().sum(dim=1), x.double().sum(dim=0)
            for axis in (1, 0):
                out = torch.empty(rows if axis == 1 else cols, dtype=torch.float32, device="cuda")
                ours = lambda: cureduce.sum(x, dim=axis, out=out)  # noqa: E731
                theirs = lambda: torch.sum(x, dim=axis, dtype=torch.float32)  # noqa: E731
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
