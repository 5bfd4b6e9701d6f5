"""`cureduce run --npy` gives the right answer on files written by NumPy, and a clear error with
a non-zero exit on each bad file. Runs the CLI on the GPU when there is one, else on the CPU.

usage: test_cli_npy.py PATH_TO_CUREDUCE"""
import math
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

CLI = sys.argv[1]
failures = []
seed = int(os.environ.get("CUREDUCE_TEST_SEED", "12345"))
rng = np.random.default_rng(seed)
print(f"# random seed {seed} (replay with CUREDUCE_TEST_SEED={seed})")


def run(*args):
    p = subprocess.run([CLI, "run", *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def value(stdout, label):
    m = re.search(rf"^{re.escape(label)}.* = (\S+)$", stdout, re.M)
    if not m:
        return None
    return float(m.group(1)) if re.search(r"[.eEn]", m.group(1)) else int(m.group(1))


def check(name, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else f": {detail}"))
    if not ok:
        failures.append(name)


def test_results(tmp):
    cases = {
        "f32": rng.standard_normal(100003).astype(np.float32),
        "f64": rng.standard_normal(4099) * 1e10,
        "f16": rng.uniform(-1, 1, 70001).astype(np.float16),
        "i8": rng.integers(-128, 128, 1 << 20, dtype=np.int8),
        "i32": rng.integers(-2**31, 2**31, 65537, dtype=np.int32),
        "i64": rng.integers(-2**40, 2**40, 1023, dtype=np.int64),
        "2d_f32": rng.standard_normal((257, 33)).astype(np.float32),
    }
    for name, arr in cases.items():
        path = os.path.join(tmp, name + ".npy")
        np.save(path, arr)
        for op, ref in (("min", arr.min()), ("max", arr.max())):
            rc, out, err = run("--npy", path, "--op", op)
            got = value(out, op)
            check(f"{name} {op}", rc == 0 and got == ref, f"rc={rc} got={got} want={ref} {err}")
        rc, out, err = run("--npy", path, "--op", "sum", "--exact")
        if arr.dtype.kind == "i":
            want = int(arr.astype(np.int64).sum())
            check(f"{name} sum", rc == 0 and value(out, "sum") == want, f"{out} {err}")
        else:
            exact = math.fsum(arr.astype(np.float64).ravel().tolist())  # correctly rounded
            got_exact = value(out, "exact sum")
            check(f"{name} exact sum equals math.fsum", rc == 0 and got_exact == exact,
                  f"got {got_exact!r} want {exact!r} {err}")
            got = value(out, "sum")
            tol = 1e-5 * float(np.abs(arr.astype(np.float64)).sum()) + 1e-30
            check(f"{name} sum", rc == 0 and got is not None and abs(got - exact) <= tol,
                  f"got {got} want {exact}")


def test_raw_bf16(tmp):
    # NumPy has no bf16: such data travels as raw 2-byte values, named with --dtype.
    f = rng.uniform(-4, 4, 5000).astype(np.float32)
    bits = (f.view(np.uint32) >> 16).astype(np.uint16)  # truncation: exact bf16 values
    path = os.path.join(tmp, "bf16.npy")
    np.save(path, bits.view("V2"))
    want = (bits.astype(np.uint32) << 16).view(np.float32).max()
    rc, out, err = run("--npy", path, "--dtype", "bf16", "--op", "max")
    check("raw V2 read as bf16", rc == 0 and value(out, "max") == want, f"{out} {err}")
    rc, out, err = run("--npy", path, "--op", "max")
    check("raw V2 without --dtype refused", rc != 0 and "--dtype" in err, err)


def test_bad_files(tmp):
    def expect_error(name, path, phrase, *extra):
        rc, out, err = run("--npy", path, *extra)
        check(f"bad file: {name}", rc != 0 and phrase in err, f"rc={rc} stderr={err!r}")

    p = os.path.join(tmp, "fortran.npy")
    np.save(p, np.asfortranarray(rng.standard_normal((8, 5)).astype(np.float32)))
    expect_error("fortran order", p, "fortran")
    p = os.path.join(tmp, "trunc.npy")
    np.save(p, np.arange(1000, dtype=np.float32))
    with open(p, "rb") as fh:
        data = fh.read()
    with open(p, "wb") as fh:
        fh.write(data[:-100])
    expect_error("truncated data", p, "truncated")
    with open(p, "wb") as fh:
        fh.write(data[:20])
    expect_error("truncated header", p, "truncated")
    p = os.path.join(tmp, "complex.npy")
    np.save(p, np.zeros(4, dtype=np.complex64))
    expect_error("complex dtype", p, "unsupported dtype")
    p = os.path.join(tmp, "bool.npy")
    np.save(p, np.zeros(4, dtype=bool))
    expect_error("bool dtype", p, "unsupported dtype")
    p = os.path.join(tmp, "big.npy")
    np.save(p, np.arange(4, dtype=">f4"))
    expect_error("big-endian", p, "big-endian")
    p = os.path.join(tmp, "mismatch.npy")
    np.save(p, np.arange(4, dtype=np.float32))
    expect_error("--dtype contradicting the file", p, "--dtype says", "--dtype", "bf16")
    p = os.path.join(tmp, "text.npy")
    with open(p, "w") as fh:
        fh.write("hello, not numpy\n")
    expect_error("not a .npy file", p, "bad magic")
    expect_error("missing file", os.path.join(tmp, "nope.npy"), "cannot open")
    p = os.path.join(tmp, "empty.npy")
    np.save(p, np.zeros(0, dtype=np.float32))
    expect_error("empty array, min", p, "empty", "--op", "min")
    rc, out, err = run("--npy", p, "--op", "sum")
    check("empty array, sum is 0", rc == 0 and value(out, "sum") == 0.0, out + err)


with tempfile.TemporaryDirectory() as tmp:
    test_results(tmp)
    test_raw_bf16(tmp)
    test_bad_files(tmp)
print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
