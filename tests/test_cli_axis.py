"""`cureduce run --axis A` reduces along axis A of the input's own shape and gives NumPy's
answers (exactly for min, max, argmin, argmax and integer sums, within a tolerance for float
sums): 2-D files along each axis and negative axes, 3-D and 4-D files along middle axes,
Fortran-order and big-endian files; --rows/--cols reshaping 1-D data and checked against a
file's own shape; axes out of range; axes of length 0. Runs on the GPU when there is one,
else on the CPU.

usage: test_cli_axis.py PATH_TO_CUREDUCE"""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

CLI = os.path.abspath(sys.argv[1])
failures = []
seed = int(os.environ.get("CUREDUCE_TEST_SEED", "12345"))
rng = np.random.default_rng(seed)
print(f"# random seed {seed} (replay with CUREDUCE_TEST_SEED={seed})")
SHOW_ALL = ["--show", str(1 << 40)]


def run(*args):
    p = subprocess.run([CLI, "run", *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def check(name, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else f": {detail}"))
    if not ok:
        failures.append(name)


def results(stdout, op):
    """{multi-index tuple: value} from lines 'op[i, j] = value'."""
    got = {}
    for idx, v in re.findall(rf"^{op}\[([\d, ]*)\] = (\S+)$", stdout, re.M):
        key = tuple(int(i) for i in idx.split(", ")) if idx else ()
        got[key] = float(v) if re.search(r"[.eEn]", v) else int(v)
    return got


def expected(ref, op, axis):
    f = {"min": np.min, "max": np.max, "argmin": np.argmin, "argmax": np.argmax, "sum": np.sum}[op]
    out = f(ref, axis=axis)
    return {idx: out[idx].item() for idx in np.ndindex(out.shape)}


def compare(name, got, want, tol_of=None):
    if set(got) != set(want):
        return check(name, False, f"{len(got)} results, want {len(want)}")
    bad = [(k, got[k], want[k]) for k in want
           if (got[k] != want[k] if tol_of is None else abs(got[k] - want[k]) > tol_of[k])]
    check(name, not bad, f"{len(bad)} wrong, first {bad[:3]}")


def check_axes(name, path, ref, axes, *extra):
    """Every op along each axis of ref (NumPy's own array, values as int64 or float64)."""
    for axis in axes:
        out_shape = tuple(s for d, s in enumerate(ref.shape) if d != axis % ref.ndim)
        for op in ("min", "max", "argmin", "argmax", "sum"):
            rc, out, err = run("--npy", path, "--axis", str(axis), "--op", op, *SHOW_ALL, *extra)
            label = f"{name} --axis {axis} {op}"
            header = re.search(rf"^(\d+) results, shape (\(.*?\)): the {op} along axis {axis % ref.ndim} ", out, re.M)
            if rc != 0 or not header or header.group(2) != repr(out_shape):
                check(label, False, f"rc={rc} {out[-300:]} {err}")
                continue
            want = expected(ref, op, axis)
            tol = None
            if op == "sum" and ref.dtype.kind == "f":
                scale = np.abs(ref).sum(axis=axis)
                tol = {idx: 1e-5 * float(scale[idx]) + 1e-30 for idx in np.ndindex(scale.shape)}
            compare(label, results(out, op), want, tol)


def save(tmp, name, arr):
    path = os.path.join(tmp, name + ".npy")
    np.save(path, arr)
    return path, arr.astype(np.int64 if arr.dtype.kind == "i" else np.float64)


def test_files(tmp):
    a2 = rng.standard_normal((67, 33)).astype(np.float32)
    check_axes("2-D f32", *save(tmp, "a2", a2), (0, 1, -1, -2))
    check_axes("2-D i32", *save(tmp, "i2", rng.integers(-2**31, 2**31, (41, 29), dtype=np.int32)), (0, 1))
    check_axes("3-D f32", *save(tmp, "a3", rng.standard_normal((5, 7, 9)).astype(np.float32)), (0, 1, 2, -2))
    check_axes("3-D i8", *save(tmp, "i3", rng.integers(-128, 128, (6, 50, 3), dtype=np.int8)), (1, -1))
    check_axes("4-D f64", *save(tmp, "a4", rng.standard_normal((3, 4, 5, 6))), (1, 2, -3))
    check_axes("Fortran 2-D f32", *save(tmp, "f2", np.asfortranarray(a2)), (0, 1))
    check_axes("Fortran 3-D f64", *save(tmp, "f3", np.asfortranarray(rng.standard_normal((4, 6, 5)))), (0, 1, 2))
    check_axes("big-endian 2-D >i4", *save(tmp, "b2", rng.integers(-1000, 1000, (13, 11)).astype(">i4")), (0, -1))
    check_axes("big-endian 3-D >f8", *save(tmp, "b3", rng.standard_normal((3, 8, 4)).astype(">f8")), (1,))
    # Size-1 axes around the reduced one take the row and column shortcuts.
    check_axes("3-D (1, 9, 1)", *save(tmp, "o3", rng.standard_normal((1, 9, 1)).astype(np.float32)), (0, 1, 2))
    # A 1-D array along its only axis is the whole reduction: one result, printed as such.
    path, ref = save(tmp, "a1", rng.standard_normal(1000).astype(np.float32))
    for axis in ("0", "-1"):
        rc, out, err = run("--npy", path, "--axis", axis, "--op", "argmax")
        want = f"argmax = {int(np.argmax(ref))} (index of the first maximum"
        check(f"1-D --axis {axis}: the whole reduction", rc == 0 and want in out, out + err)


def test_show_and_labels(tmp):
    path, ref = save(tmp, "s3", rng.standard_normal((4, 5, 6)).astype(np.float32))
    rc, out, err = run("--npy", path, "--axis", "1", "--op", "argmax")
    lines = re.findall(r"^argmax\[.*$", out, re.M)
    head = "24 results, shape (4, 6): the argmax along axis 1 of shape (4, 5, 6) (the index along axis 1 " \
           "of the first maximum; compared in f32)"
    check("--axis prints the result shape, what the index means, and the first 8 by default",
          rc == 0 and head in out and len(lines) == 8 and lines[7].startswith("argmax[1, 1] = ")
          and "16 more" in out, out + err)
    rc, out, err = run("--npy", path, "--axis", "0", "--op", "max", "--show", "0")
    check("--show 0 prints no results", rc == 0 and not re.search(r"^max\[", out, re.M) and "30 more" in out, out)


def test_axis_errors(tmp):
    path, _ = save(tmp, "e2", np.zeros((3, 4), dtype=np.float32))
    for axis in ("2", "-3", "100"):
        rc, out, err = run("--npy", path, "--axis", axis)
        check(f"--axis {axis} of a 2-D file: out of range, naming ndim",
              rc == 2 and f"--axis {axis} is out of range" in err and "ndim is 2" in err, err)
    p0, _ = save(tmp, "scalar", np.array(3.0, dtype=np.float32))
    rc, out, err = run("--npy", p0, "--axis", "0")
    check("--axis of a 0-d file: it has no axes", rc == 2 and "no axes" in err, err)


def test_rows_cols(tmp):
    path, ref = save(tmp, "r2", rng.standard_normal((12, 10)).astype(np.float32))
    rc, out, err = run("--npy", path, "--rows", "10", "--cols", "12", "--axis", "0")
    check("--rows/--cols disagreeing with a 2-D file: an error naming both shapes",
          rc == 2 and "(10, 12)" in err and "(12, 10)" in err, f"rc={rc} {err}")
    path3, _ = save(tmp, "r3", np.zeros((2, 3, 4), dtype=np.float32))
    rc, out, err = run("--npy", path3, "--rows", "6", "--cols", "4")
    check("--rows/--cols with a 3-D file: an error naming both shapes",
          rc == 2 and "(6, 4)" in err and "(2, 3, 4)" in err, f"rc={rc} {err}")
    check_axes("2-D file with agreeing --rows/--cols", path, ref, (0, 1), "--rows", "12", "--cols", "10")
    p1, r1 = save(tmp, "r1", rng.standard_normal(120).astype(np.float32))
    check_axes("1-D file reshaped by --rows 8 --cols 15", p1, r1.reshape(8, 15), (0, 1), "--rows", "8", "--cols", "15")
    rc, out, err = run("--npy", p1, "--rows", "7", "--cols", "15")
    check("a 1-D file --rows x --cols must match its count", rc == 2 and "120 elements" in err, err)
    rc, out, err = run("--npy", p1, "--rows", "8", "--cols", "15", "--op", "argmax")
    check("--rows/--cols without --axis: the whole array, flat index",
          rc == 0 and f"argmax = {int(np.argmax(r1))} (flat C-order index" in out, out + err)
    # Generated data: the axis results and the whole reduction must agree.
    rc, out, err = run("--rows", "9", "--cols", "7", "--op", "max")
    whole = re.search(r"^max \(acc f32\) = (\S+)$", out, re.M)
    for axis in ("0", "1"):
        rc2, out2, err2 = run("--random", "63", "--rows", "9", "--cols", "7", "--axis", axis, "--op", "max", *SHOW_ALL)
        got = results(out2, "max")
        check(f"--random reshaped, --axis {axis}: {len(got)} results whose max is the whole max",
              rc == 0 and rc2 == 0 and whole and len(got) == (7 if axis == "0" else 9)
              and max(got.values()) == float(whole.group(1)), out + out2 + err + err2)


def test_empty_axes(tmp):
    path, _ = save(tmp, "z", np.zeros((4, 0), dtype=np.float32))
    rc, out, err = run("--npy", path, "--axis", "1", "--op", "max")
    check("max along an axis of length 0: undefined, exit 1",
          rc == 1 and "the max along axis 1 of shape (4, 0) is undefined" in err and "no result" in err, err)
    rc, out, err = run("--npy", path, "--axis", "1", "--op", "sum")
    check("sum along an axis of length 0: zeros", rc == 0 and results(out, "sum") == {(i,): 0.0 for i in range(4)},
          out + err)
    rc, out, err = run("--npy", path, "--axis", "0", "--op", "argmax")
    check("argmax along axis 0 of (4, 0): no results, exit 0", rc == 0 and out.count("0 results, shape (0,)") == 1,
          out + err)
    path, _ = save(tmp, "z3", np.zeros((1 << 40, 3, 0), dtype=np.float32))
    rc, out, err = run("--npy", path, "--axis", "1", "--op", "max")
    check("axis 1 of (2^40, 3, 0): zero results at once", rc == 0 and "0 results, shape (1099511627776, 0)" in out,
          out + err)


with tempfile.TemporaryDirectory() as tmpdir:
    test_files(tmpdir)
    test_show_and_labels(tmpdir)
    test_axis_errors(tmpdir)
    test_rows_cols(tmpdir)
    test_empty_axes(tmpdir)
print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
