"""Run every GPU test under compute-sanitizer's memcheck, racecheck, initcheck and synccheck.

The test commands come from CTest (label gpu), so new GPU tests are picked up by themselves.
usage: sanitize.py BUILD_DIR LOG_FILE [JOBS] [NAME_REGEX] [TOOLS]
  TOOLS: e.g. initcheck,synccheck (all four by default); NAME_REGEX "" for every GPU test.

NCCL probes its kernels when a communicator starts, and CUDA reports each miss
(cudaErrorNoKernelImageForDevice in ncclCommInit*) as an API error. memcheck of the tests that
start NCCL (test_nccl_*) therefore leaves API errors out of its count; memory errors still count."""
import concurrent.futures as cf
import json
import os
import subprocess
import sys

build, log_path = sys.argv[1], sys.argv[2]
jobs = int(sys.argv[3]) if len(sys.argv) > 3 else 4
only = ["-R", sys.argv[4]] if len(sys.argv) > 4 and sys.argv[4] else []
info = json.loads(subprocess.run(["ctest", "--test-dir", build, "-L", "gpu", *only, "--show-only=json-v1"],
                                 capture_output=True, text=True, check=True).stdout)


def environment(t):
    """The process environment with the test's ENVIRONMENT property (NCCL_NVLS_ENABLE=0, say)."""
    env = dict(os.environ)
    for p in t.get("properties", []):
        if p["name"] == "ENVIRONMENT":
            env.update(kv.split("=", 1) for kv in p["value"] if "=" in kv)
    return env


tests = [(t["name"], t["command"], environment(t)) for t in info["tests"]]
tools = sys.argv[5].split(",") if len(sys.argv) > 5 else ["memcheck", "racecheck", "initcheck", "synccheck"]


def run(tool, name, cmd, env):
    quiet_api = ["--report-api-errors", "no"] if tool == "memcheck" and name.startswith("test_nccl") else []
    p = subprocess.run(["compute-sanitizer", "--tool", tool, *quiet_api, "--error-exitcode", "99", *cmd],
                       capture_output=True, text=True, env=env)
    return tool, name, p.returncode, p.stdout + p.stderr


failures = {t: [] for t in tools}
skipped = {t: [] for t in tools}
SKIP = 77  # CTest's skip code: the test said why (e.g. its size is above CUREDUCE_TEST_MAX_N)
# The log is written line by line, so a run cut short keeps what finished.
with cf.ThreadPoolExecutor(jobs) as pool, open(log_path, "w", buffering=1) as log:
    futures = [pool.submit(run, tool, name, cmd, env) for tool in tools for name, cmd, env in tests]
    for f in cf.as_completed(futures):
        tool, name, rc, out = f.result()
        summary = [l for l in out.splitlines() if "SUMMARY" in l or "PASSED" in l or "FAILED" in l]
        log.write(f"### {tool} {name} rc={rc}\n" + "\n".join(summary) + "\n")
        if rc == SKIP:
            skipped[tool].append(name)
            log.write("\n".join(l for l in out.splitlines() if l.startswith("skipped")) + "\n")
        elif rc != 0:
            failures[tool].append(name)
            log.write("\n".join(out.splitlines()[-40:]) + "\n")
for tool in tools:
    ran = len(tests) - len(skipped[tool])
    print(f"sanitizer {tool}: {ran - len(failures[tool])}/{ran} GPU tests clean"
          + (f"; skipped: {' '.join(skipped[tool])}" if skipped[tool] else "")
          + (f"; FAILING: {' '.join(failures[tool])}" if failures[tool] else ""))
sys.exit(1 if any(failures.values()) else 0)
