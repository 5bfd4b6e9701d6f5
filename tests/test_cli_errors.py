"""Bad command lines get a message naming the problem and a non-zero exit; --help works for
each subcommand; the no-GPU path says so.

usage: test_cli_errors.py PATH_TO_CUREDUCE"""
import subprocess
import sys

CLI = sys.argv[1]
failures = []


def expect(args, rc_ok, phrase, stream="stderr"):
    p = subprocess.run([CLI, *args], capture_output=True, text=True)
    text = p.stderr if stream == "stderr" else p.stdout
    ok = rc_ok(p.returncode) and phrase in text
    print(("ok   " if ok else "FAIL ") + " ".join(args) + ("" if ok else f": rc={p.returncode} {text!r}"))
    if not ok:
        failures.append(args)


nonzero = lambda rc: rc != 0
zero = lambda rc: rc == 0
expect([], nonzero, "usage")
expect(["frobnicate"], nonzero, "unknown command 'frobnicate'")
expect(["run"], nonzero, "exactly one of --npy FILE and --random N")
expect(["run", "--random", "10", "--npy", "x.npy"], nonzero, "exactly one of")
expect(["run", "--random", "abc"], nonzero, "--random wants a non-negative integer, got 'abc'")
expect(["run", "--random", "-5"], nonzero, "non-negative integer")
expect(["run", "--random"], nonzero, "--random needs a value")
expect(["run", "--random", "10", "--dtype", "f128"], nonzero, "unknown dtype 'f128'")
expect(["run", "--random", "10", "--op", "prod"], nonzero, "unknown op 'prod'")
expect(["run", "--random", "10", "--bogus"], nonzero, "unknown argument '--bogus'")
expect(["run", "--random", "10", "--acc", "i32"], nonzero, "not supported")
expect(["run", "--random", "0", "--op", "max"], nonzero, "empty")
expect(["info", "--bogus"], nonzero, "unknown argument")
expect(["--help"], zero, "commands:", "stdout")
expect(["run", "--help"], zero, "--random N", "stdout")
expect(["info", "--help"], zero, "usage", "stdout")
expect(["run", "--random", "1000", "--cpu"], zero, "running on the CPU", "stdout")
expect(["run", "--random", "1000", "--dtype", "e4m3", "--acc", "f16", "--op", "sum"], zero, "sum (acc f16)", "stdout")
print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
