"""The command line of `cureduce`: option forms (getopt_long: short and long, --opt=value,
unique prefixes, the FILE argument anywhere, '-' for standard input), usage errors (exit 2,
naming the problem), runtime errors (exit 1), huge counts (an error, never a crash), empty
input, dtype aliases, the accumulator message, the argmin/argmax label, --help, and what
`info` and the CPU fallback say about the GPU.

usage: test_cli_errors.py PATH_TO_CUREDUCE"""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

CLI = os.path.abspath(sys.argv[1])
failures = []
USAGE, RUNTIME, OK = 2, 1, 0
DTYPES = {"f32": "float32", "f64": "float64", "f16": "float16", "bf16": "bfloat16",
          "e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2", "i8": "int8", "i32": "int32", "i64": "int64"}
OPS = ["sum", "min", "max", "absmax", "sumsq", "argmin", "argmax", "mean"]
# Why there is no GPU, in the words `info` and the CPU fallback must use.
NO_GPU_REASONS = ("no NVIDIA driver is installed", "is older than this build needs", "no CUDA GPU found",
                  "--cpu given")


def cli(args, **kw):
    return subprocess.run([CLI, *args], capture_output=True, text=True, **kw)


def check(name, ok, p=None):
    detail = "" if ok or p is None else f": rc={p.returncode} stdout={p.stdout!r} stderr={p.stderr!r}"
    print(("ok   " if ok else "FAIL ") + name + detail)
    if not ok:
        failures.append(name)


def expect(args, rc, phrase, stream="stderr", **kw):
    """rc: the exact exit status wanted; phrase: text that must appear in the stream."""
    p = cli(args, **kw)
    text = p.stderr if stream == "stderr" else p.stdout
    check(" ".join(args) + f" -> {rc}, {phrase!r}", p.returncode == rc and phrase in text, p)
    return p


def test_usage_errors():
    expect([], USAGE, "usage")
    expect(["frobnicate"], USAGE, "unknown command 'frobnicate'")
    expect(["run"], USAGE, "exactly one of")
    expect(["run", "--random", "10", "--npy", "x.npy"], USAGE, "exactly one of")
    expect(["run", "x.npy", "--random", "10"], USAGE, "exactly one of")
    expect(["run", "a.npy", "b.npy"], USAGE, "more than one input file ('a.npy' and 'b.npy')")
    expect(["run", "--npy", "a.npy", "b.npy"], USAGE, "more than one input file")
    expect(["run", "--random", "abc"], USAGE, "--random wants a non-negative integer, got 'abc'")
    expect(["run", "-n", "abc"], USAGE, "--random wants a non-negative integer, got 'abc'")
    expect(["run", "--random", "-5"], USAGE, "non-negative integer")
    # Decimal only: no leading space (strtoull would wrap " -1" to 2^64 - 1), octal or hex.
    expect(["run", "--random", "10", "--seed", " -1"], USAGE, "--seed wants a non-negative integer, got ' -1'")
    expect(["run", "--random", " 5"], USAGE, "--random wants a non-negative integer, got ' 5'")
    expect(["run", "--random", "0x10"], USAGE, "--random wants a non-negative integer, got '0x10'")
    expect(["run", "--random", "10", "--axis", " 0"], USAGE, "--axis wants an integer, got ' 0'")
    expect(["run", "--random", "10", "--axis", "-"], USAGE, "--axis wants an integer, got '-'")
    expect(["run", "--random"], USAGE, "option --random (-n) needs a value")
    expect(["run", "-n"], USAGE, "option --random (-n) needs a value")
    expect(["run", "--random", "10", "--axis"], USAGE, "option --axis needs a value")
    expect(["run", "--random", "10", "--dtype", "f128"], USAGE, "unknown dtype 'f128'")
    expect(["run", "--random", "10", "--op", "prod"], USAGE, "unknown op 'prod'")
    expect(["run", "--random", "10", "--bogus"], USAGE, "unknown argument '--bogus'")
    expect(["run", "--random", "10", "-z"], USAGE, "unknown option '-z'")
    expect(["run", "--random", "10", "--c"], USAGE, "ambiguous option '--c'")
    expect(["run", "--random", "10", "--cpu=yes"], USAGE, "option --cpu takes no value")
    expect(["run", "--rows", "3"], USAGE, "give both --rows R and --cols C")
    expect(["run", "--random", "10", "--rows", "3", "--cols", "4"], USAGE, "--random 10 elements do not fill")
    expect(["run", "--random", "10", "--axis", "x"], USAGE, "--axis wants an integer, got 'x'")
    expect(["run", "--random", "10", "--axis", "1"], USAGE, "ndim is 1")
    expect(["run", "--random", "10", "--axis", "-2"], USAGE, "out of range")
    expect(["run", "--random", "10", "--exact", "--axis", "0"], USAGE, "does not combine with --axis")
    expect(["info", "--bogus"], USAGE, "unknown argument")


def test_flags_that_would_do_nothing():
    # Refused rather than dropped: the user meant them to change something.
    expect(["run", "x.npy", "--seed", "3"], USAGE, "--seed sets the generated data")
    expect(["run", "--random", "10", "--show", "3"], USAGE, "--show K prints the results of --axis")


def test_output_that_cannot_be_written():
    # A full disk (/dev/full): the result is lost, so the exit status must not say success.
    if not os.path.exists("/dev/full"):
        print("skip output to /dev/full: this system has none")
        return
    for args in (["run", "--random", "5", "--cpu"], ["--help"], ["run", "--help"]):
        with open("/dev/full", "w") as full:
            p = subprocess.run([CLI, *args], stdout=full, stderr=subprocess.PIPE, text=True)
        check(" ".join(args) + " > /dev/full -> 1, 'cannot write the output'",
              p.returncode == 1 and "cannot write the output" in p.stderr, p)


def test_unknown_dtype_lists_both_spellings():
    p = cli(["run", "--random", "10", "--dtype", "float128"])
    listed = all(f"{short}/{numpy}" in p.stderr for short, numpy in DTYPES.items())
    check("unknown dtype lists cureduce's and NumPy's names", p.returncode == USAGE and listed, p)
    p = cli(["run", "--random", "10", "--acc", "double"])
    check("unknown --acc dtype lists both names too", p.returncode == USAGE and "f64/float64" in p.stderr, p)


def test_accumulator_message():
    # The allowed list comes from cureduce_supported: check it names exactly the header's rules.
    cases = [
        (["--acc", "f16"], "f16 is not an accumulator for sum of f32; allowed: f32 f64"),
        (["--acc", "i32"], "i32 is not an accumulator for sum of f32; allowed: f32 f64"),
        (["--dtype", "i8", "--acc", "f16"], "f16 is not an accumulator for sum of i8; allowed: f64 i32 i64"),
        (["--dtype", "int32", "--op", "mean", "--acc", "int64"],
         "i64 is not an accumulator for mean of i32; allowed: f64"),
        (["--dtype", "bfloat16", "--acc", "f16"], "f16 is not an accumulator for sum of bf16; allowed: f32 f64 bf16"),
    ]
    for extra, phrase in cases:
        expect(["run", "--random", "10", *extra], USAGE, phrase)


def test_huge_counts():
    # n * element size passes 2^64 (it used to wrap to a small malloc and crash).
    for n, dtype in ((2**62, "f32"), (2**62, "i32"), (2**61, "f64"), (2**63, "f16"), (2**64 - 1, "f16")):
        p = cli(["run", "--random", str(n), "--dtype", dtype])
        check(f"--random {n} --dtype {dtype}: a usage error, no crash",
              p.returncode == USAGE and "more than 64-bit addresses reach" in p.stderr, p)
    # Fits in 64 bits but no machine has it: the allocation fails, and says so.
    p = cli(["run", "--random", str(2**61), "--dtype", "f32"])
    check("--random 2^61 f32 (8 EiB): cannot allocate, exit 1",
          p.returncode == RUNTIME and "cannot allocate 8.0 EiB of host memory" in p.stderr, p)
    expect(["run", "--random", str(2**64 - 1), "--dtype", "i8"], RUNTIME, "cannot allocate 16.0 EiB")
    expect(["run", "--rows", str(2**32), "--cols", str(2**32)], USAGE, "more than 2^64 elements")
    # with --random 0 the product wrapped to 0 and "filled" the shape
    expect(["run", "--rows", str(2**32), "--cols", str(2**32), "--random", "0"], USAGE, "more than 2^64 elements")
    # a bad --axis of generated data is a usage error, found before the data is made (4 EiB here)
    expect(["run", "--rows", str(2**30), "--cols", str(2**30), "--axis", "5"], USAGE, "out of range")
    expect(["run", "--rows", str(2**31), "--cols", str(2**31)], USAGE, "more than 64-bit addresses reach")
    expect(["run", "--rows", str(2**31), "--cols", str(2**31), "--dtype", "i8"], RUNTIME, "cannot allocate")


def test_empty_input():
    for op in OPS + ["sum_exact", "mean_exact"]:
        p = cli(["run", "--random", "0", "--op", op])
        if op in ("sum", "sumsq", "sum_exact"):
            check(f"empty {op} is 0", p.returncode == OK and re.search(rf"^{op} .*= 0$", p.stdout, re.M), p)
            continue
        msg = f"the {op} of an empty array (0 elements) is undefined; no result"
        plain = "min and max" not in p.stderr and "untouched" not in p.stderr
        check(f"empty {op}: says there is no result", p.returncode == RUNTIME and msg in p.stderr and plain, p)


def test_help():
    p = expect(["--help"], OK, "commands:", "stdout")
    for args in (["run", "--help"], ["run", "-h"], ["run", "--random", "5", "--help"]):
        p = cli(args)
        text = p.stdout
        missing = [w for w in OPS if f" {w}" not in text]
        missing += [f"{s}={n}" for s, n in DTYPES.items() if f"{s}={n}" not in text]
        missing += [w for w in ("-f, --npy FILE", "-n, --random N", "-d, --dtype", "-o, --op", "-a, --acc",
                                "-s, --seed", "-e, --exact", "--cpu", "--rows R --cols C", "--axis A",
                                "negative", "--show K", "-h, --help", "accumulators", "exit status")
                    if w not in text]
        check(" ".join(args) + " lists every op, dtype, alias and option" + (f" (missing {missing})" if missing else ""),
              p.returncode == OK and not missing and p.stderr == "", p)
    # the exact ops refuse integers, and the table says so
    p = cli(["run", "--help"])
    check("run --help: integers' exact ops are refused",
          re.search(r"^  i32 .*; refused \(sum_exact, mean_exact\)$", p.stdout, re.M) is not None, p)
    expect(["info", "--help"], OK, "usage", "stdout")


def test_device_messages():
    p = cli(["info"])
    gpu = re.search(r"^GPU 0: ", p.stdout, re.M)
    reason = any(r in p.stdout for r in NO_GPU_REASONS)
    check("info: lists GPUs or says in plain words why there are none",
          p.returncode == OK and (gpu or reason) and "insufficient" not in p.stdout + p.stderr, p)
    p = cli(["run", "--random", "1000"])
    on_cpu = re.search(r"^device: running on the CPU \((.*)\)$", p.stdout, re.M)
    if on_cpu:
        check(f"run without a GPU says why: {on_cpu.group(1)!r}",
              p.returncode == OK and any(r in on_cpu.group(1) for r in NO_GPU_REASONS)
              and "insufficient" not in p.stdout and "GB/s" not in p.stdout, p)
    else:
        timed = re.search(r"^time: [0-9.]+ us \(median of \d+ calls\), [0-9.]+ GB/s$", p.stdout, re.M)
        check("run on a GPU prints the device, the time and the bandwidth",
              p.returncode == OK and re.search(r"^device: GPU \d+, ", p.stdout, re.M) and timed, p)
    p = cli(["run", "--random", "1000", "--cpu"])
    check("--cpu: runs on the CPU, says so, prints no bandwidth",
          p.returncode == OK and "device: running on the CPU (--cpu given)" in p.stdout and "GB/s" not in p.stdout,
          p)


def test_labels():
    expect(["run", "--random", "1000", "--dtype", "e4m3", "--acc", "f16", "--op", "sum"], OK, "sum (acc f16) = ",
           "stdout")
    for op, what in (("argmax", "maximum"), ("argmin", "minimum")):
        p = cli(["run", "--random", "1000", "--op", op, "--cpu"])
        check(f"{op} prints an index label",
              p.returncode == OK and re.search(rf"^{op} = \d+ \(index of the first {what}; compared in f32\)$",
                                               p.stdout, re.M) and "(acc" not in p.stdout, p)


def same_output(name, variants):
    outs = [cli(v) for v in variants]
    ok = all(p.returncode == OK for p in outs) and len({p.stdout for p in outs}) == 1
    check(name, ok, next((p for p in outs if p.returncode != OK or p.stdout != outs[0].stdout), outs[0]))


def test_aliases_and_forms():
    for short, numpy in DTYPES.items():
        same_output(f"--dtype {numpy} is --dtype {short}", [
            ["run", "--random", "100", "--dtype", short, "--op", "max", "--cpu"],
            ["run", "--random", "100", "--dtype", numpy, "--op", "max", "--cpu"]])
    same_output("--acc float64 is --acc f64", [["run", "-n", "100", "-d", "bfloat16", "-a", "float64", "--cpu"],
                                              ["run", "-n", "100", "-d", "bf16", "-a", "f64", "--cpu"]])
    same_output("short options are the long ones", [
        ["run", "--random", "100", "--dtype", "f64", "--op", "max", "--seed", "7", "--exact", "--cpu"],
        ["run", "-n", "100", "-d", "f64", "-o", "max", "-s", "7", "-e", "--cpu"],
        ["run", "-n100", "-df64", "-omax", "-s7", "-e", "--cpu"],
        ["run", "--random=100", "--dtype=f64", "--op=max", "--seed=7", "--exact", "--cpu"],
        ["run", "--cpu", "--ex", "--rand", "100", "--dt", "f64", "--op", "max", "--se", "7"]])
    same_output("--axis -1 equals --axis=-1 and --axis 1 on a matrix", [
        ["run", "--rows", "6", "--cols", "5", "--axis", "-1", "--op", "max", "--cpu"],
        ["run", "--rows", "6", "--cols", "5", "--axis=-1", "--op", "max", "--cpu"],
        ["run", "--rows=6", "--cols=5", "--axis", "1", "--op", "max", "--cpu"]])


def test_file_argument_forms(tmp):
    arr = np.arange(-50, 50, dtype=np.float32)[::-1].copy()
    path = os.path.join(tmp, "a.npy")
    np.save(path, arr)
    np.save(os.path.join(tmp, "-dash.npy"), arr)
    variants = [["run", "--npy", path, "--op", "argmax"], ["run", "-f", path, "--op", "argmax"],
                ["run", path, "--op", "argmax"], ["run", "--op", "argmax", path],
                ["run", "--op", "argmax", "--", path]]
    outs = [cli(v) for v in variants]
    ok = all(p.returncode == OK and re.search(r"^argmax = 0 \(", p.stdout, re.M) for p in outs)
    check("FILE as --npy, -f, a positional argument before or after the options, after --", ok,
          next((p for p in outs if p.returncode != OK), outs[0]))
    p = cli(["run", "--op", "argmax", "--", "-dash.npy"], cwd=tmp)
    check("-- before a file name that starts with '-'", p.returncode == OK and "argmax = 0 (" in p.stdout, p)
    with open(path, "rb") as fh:
        p = cli(["run", "-", "--op", "min"], stdin=fh)
    check("'-' reads the .npy from standard input",
          p.returncode == OK and "input: standard input" in p.stdout and "min (acc f32) = -50\n" in p.stdout, p)


test_usage_errors()
test_flags_that_would_do_nothing()
test_output_that_cannot_be_written()
test_unknown_dtype_lists_both_spellings()
test_accumulator_message()
test_huge_counts()
test_empty_input()
test_help()
test_device_messages()
test_labels()
test_aliases_and_forms()
with tempfile.TemporaryDirectory() as tmpdir:
    test_file_argument_forms(tmpdir)
print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
