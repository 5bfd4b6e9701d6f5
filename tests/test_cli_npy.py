"""`cureduce run FILE` on .npy files reduces the whole array (any shape, C order) and gives
NumPy's answers: exactly for min, max, argmin, argmax and integer sums, within a tolerance for
float sums. Covers every dtype, N-d files, Fortran order, big-endian data, the bf16 and fp8
files ml_dtypes writes (with --dtype, and the error without it), and a clear error with exit
status 1 for each bad or unreadable file. Runs on the GPU when there is one, else on the CPU.

usage: test_cli_npy.py PATH_TO_CUREDUCE"""
import math
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

try:
    import ml_dtypes
except ImportError:  # the files are then written by hand, with the descrs ml_dtypes uses
    ml_dtypes = None

CLI = os.path.abspath(sys.argv[1])
failures = []
seed = int(os.environ.get("CUREDUCE_TEST_SEED", "12345"))
rng = np.random.default_rng(seed)
print(f"# random seed {seed} (replay with CUREDUCE_TEST_SEED={seed}); ml_dtypes "
      + (ml_dtypes.__version__ if ml_dtypes else "missing: its files are written by hand"))


def run(*args):
    p = subprocess.run([CLI, "run", *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def value(stdout, label):
    """The number after 'label = ' or 'label (acc X) = ' at the start of a line."""
    m = re.search(rf"^{re.escape(label)}(?: \([^)]*\))? = (\S+)", stdout, re.M)
    if not m:
        return None
    return float(m.group(1)) if re.search(r"[.eEn]", m.group(1)) else int(m.group(1))


def check(name, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else f": {detail}"))
    if not ok:
        failures.append(name)


def check_file(name, path, ref, *extra):
    """Every op on the file at path against NumPy on ref (float64 or int64 values, C order)."""
    flat = ref.ravel()
    for op, want in (("min", flat.min()), ("max", flat.max()), ("argmin", int(np.argmin(flat))),
                     ("argmax", int(np.argmax(flat)))):
        rc, out, err = run("--npy", path, "--op", op, *extra)
        got = value(out, op)
        check(f"{name} {op}", rc == 0 and got == want, f"rc={rc} got={got} want={want} {err}")
    rc, out, err = run("--npy", path, "--op", "sum", "--exact", *extra)
    if flat.dtype.kind == "i":
        want = int(flat.sum())
        check(f"{name} sum", rc == 0 and value(out, "sum") == want, f"want {want}: {out} {err}")
        return
    exact = math.fsum(flat.tolist())  # correctly rounded, as --exact promises
    got_exact = value(out, "exact sum")
    check(f"{name} exact sum equals math.fsum", rc == 0 and got_exact == exact, f"got {got_exact!r} want {exact!r} {err}")
    got = value(out, "sum")
    tol = 1e-5 * float(np.abs(flat).sum()) + 1e-30
    check(f"{name} sum", rc == 0 and got is not None and abs(got - exact) <= tol, f"got {got} want {exact}")


def save_check(tmp, name, arr, *extra):
    path = os.path.join(tmp, name + ".npy")
    np.save(path, arr)
    ref = arr.astype(np.int64 if arr.dtype.kind == "i" else np.float64)
    check_file(name, path, ref, *extra)
    return path


def test_dtypes(tmp):
    save_check(tmp, "f32", rng.standard_normal(100003).astype(np.float32))
    save_check(tmp, "f64", rng.standard_normal(4099) * 1e10)
    save_check(tmp, "f16", rng.uniform(-1, 1, 70001).astype(np.float16))
    save_check(tmp, "i8", rng.integers(-128, 128, 1 << 20, dtype=np.int8))
    save_check(tmp, "i32", rng.integers(-2**31, 2**31, 65537, dtype=np.int32))
    save_check(tmp, "i64", rng.integers(-2**40, 2**40, 1023, dtype=np.int64))
    save_check(tmp, "0-d scalar", np.array(2.5, dtype=np.float32))


def test_shapes_and_layouts(tmp):
    """N-d files are reduced whole, in C order: argmin/argmax give NumPy's flat index, also for
    Fortran-order and big-endian files (the reader hands back C-order, native-order data)."""
    a2 = rng.standard_normal((257, 33)).astype(np.float32)
    a3 = rng.integers(-1000, 1000, (6, 7, 9), dtype=np.int32)
    save_check(tmp, "2-D f32", a2)
    save_check(tmp, "3-D i32", a3)
    save_check(tmp, "Fortran 2-D f32", np.asfortranarray(a2))
    save_check(tmp, "Fortran 3-D i32", np.asfortranarray(a3))
    save_check(tmp, "Fortran 2-D f64", np.asfortranarray(rng.standard_normal((31, 17))))
    for t in (">f4", ">f8", ">f2", ">i4", ">i8"):
        arr = (rng.standard_normal(5001) * 100).astype(t)
        save_check(tmp, f"big-endian {t}", arr)
    save_check(tmp, "big-endian Fortran 2-D >f8", np.asfortranarray(rng.standard_normal((40, 23)).astype(">f8")))
    save_check(tmp, "big-endian 3-D >i8", rng.integers(-2**40, 2**40, (4, 5, 6)).astype(">i8"))
    # The argmax line names the flat index and its multi-index in the file's shape.
    path = os.path.join(tmp, "2-D f32.npy")
    rc, out, err = run("--npy", path, "--op", "argmax")
    i = int(np.argmax(a2))
    want = f"argmax = {i} (flat C-order index of the first maximum, [{i // 33}, {i % 33}] in shape (257, 33); compared in f32)"
    check("argmax of a 2-D file: flat index and multi-index", rc == 0 and want in out, out + err)


def write_npy(path, descr, shape, raw):
    """A version 1.0 .npy file with descr and raw data bytes, as np.save lays it out."""
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, repr(tuple(shape)))
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as fh:
        fh.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + raw)


def e4m3_values(bits):
    """float8_e4m3fn bytes as float64: bias 7, no infinities, NaN only at 0x7f and 0xff."""
    b = bits.astype(np.int64)
    sign = np.where(b & 0x80, -1.0, 1.0)
    exp, man = (b >> 3) & 0xF, b & 0x7
    mag = np.where(exp == 0, man * 2.0**-9, (1 + man / 8.0) * 2.0 ** (exp - 7))
    return sign * mag


def ml_dtypes_cases():
    """(name, --dtype spellings, descr ml_dtypes writes, raw bits, their values as float64)."""
    f = rng.uniform(-4, 4, 5000).astype(np.float32)
    bf16 = (f.view(np.uint32) >> 16).astype(np.uint16)  # truncation: exact bf16 values
    e4m3 = rng.integers(0, 256, 3001, dtype=np.uint8)
    e4m3 = e4m3[(e4m3 & 0x7F) != 0x7F]  # no NaN
    e5m2 = rng.integers(0, 256, 3001, dtype=np.uint8)
    e5m2 = e5m2[(e5m2 & 0x7C) != 0x7C]  # no inf or NaN
    return [
        ("bf16", ("bf16", "bfloat16"), "<V2", bf16, (bf16.astype(np.uint32) << 16).view(np.float32).astype(np.float64)),
        ("e4m3", ("e4m3", "float8_e4m3fn"), "<V1", e4m3, e4m3_values(e4m3)),
        ("e5m2", ("e5m2", "float8_e5m2"), "<f1", e5m2, (e5m2.astype(np.uint16) << 8).view(np.float16).astype(np.float64)),
    ]


def test_ml_dtypes(tmp):
    for name, spellings, descr, bits, ref in ml_dtypes_cases():
        path = os.path.join(tmp, f"ml_{name}.npy")
        shape = (bits.size // 7, 7)
        bits, ref = bits[: shape[0] * 7], ref[: shape[0] * 7].reshape(shape)
        if ml_dtypes:
            t = getattr(ml_dtypes, spellings[1])
            check(f"{name}: the test's decoding agrees with ml_dtypes",
                  np.array_equal(bits.view(t).astype(np.float64), ref.ravel()))
            np.save(path, bits.view(t).reshape(shape))
        else:
            write_npy(path, descr, shape, bits.tobytes())
        with open(path, "rb") as fh:
            check(f"{name}: the file's descr is {descr!r}", f"'descr': '{descr}'".encode() in fh.read(128))
        for spelling in spellings:
            check_file(f"ml_dtypes {name} file, --dtype {spelling}", path, ref, "--dtype", spelling)
        if descr == "<f1":  # float8_e5m2, ml_dtypes' only '<f1': no --dtype needed, another refused
            check_file(f"ml_dtypes {name} file without --dtype", path, ref)
            rc, out, err = run("--npy", path, "--dtype", "e4m3")
            check(f"ml_dtypes {name} file, --dtype e4m3: a usage error", rc == 2 and "--dtype says e4m3" in err,
                  f"rc={rc} {err!r}")
            continue
        rc, out, err = run("--npy", path, "--op", "max")
        check(f"ml_dtypes {name} file without --dtype: a usage error naming --dtype", rc == 2 and "--dtype" in err,
              f"rc={rc} {err!r}")
    # Raw 2-byte values saved by NumPy alone (view as V2) are bf16 when --dtype says so.
    f = rng.uniform(-4, 4, 5000).astype(np.float32)
    bits = (f.view(np.uint32) >> 16).astype(np.uint16)
    path = os.path.join(tmp, "raw_v2.npy")
    np.save(path, bits.view("V2"))
    check_file("NumPy raw V2 read as bf16", path, (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64),
               "--dtype", "bf16")


def test_bad_files(tmp):
    def expect_error(name, path, phrase, *extra, code=1):
        rc, out, err = run("--npy", path, *extra)
        ok = rc == code and re.search(phrase, err, re.I) and os.path.basename(path) in err
        check(f"bad file: {name}", ok, f"rc={rc} stderr={err!r}")

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
    p = os.path.join(tmp, "mismatch.npy")
    np.save(p, np.arange(4, dtype=np.float32))
    expect_error("--dtype contradicting the file", p, "--dtype says", "--dtype", "bf16", code=2)
    p = os.path.join(tmp, "text.npy")
    with open(p, "w") as fh:
        fh.write("hello, not numpy\n")
    expect_error("not a .npy file", p, "not a .npy file")
    expect_error("missing file", os.path.join(tmp, "nope.npy"), "no such file")
    d = os.path.join(tmp, "adir.npy")
    os.mkdir(d)
    expect_error("a directory", d, "directory")


def test_empty_files(tmp):
    for shape in ((0,), (0, 3), (4, 0, 2)):
        p = os.path.join(tmp, f"empty{len(shape)}.npy")
        np.save(p, np.zeros(shape, dtype=np.float32))
        for op in ("min", "max", "absmax", "argmin", "argmax", "mean"):
            rc, out, err = run("--npy", p, "--op", op)
            want = f"the {op} of an empty array (0 elements) is undefined; no result"
            check(f"empty file {shape}, {op}: no result, exit 1", rc == 1 and want in err, f"rc={rc} {err!r}")
        for op in ("sum", "sumsq"):
            rc, out, err = run("--npy", p, "--op", op)
            check(f"empty file {shape}, {op} is 0", rc == 0 and value(out, op) == 0.0, out + err)


with tempfile.TemporaryDirectory() as tmpdir:
    test_dtypes(tmpdir)
    test_shapes_and_layouts(tmpdir)
    test_ml_dtypes(tmpdir)
    test_bad_files(tmpdir)
    test_empty_files(tmpdir)
print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
