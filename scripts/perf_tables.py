"""Markdown tables for docs/performance.md and docs/ladder.md, printed from the CSV files the
bench wrote (so the docs quote only measured numbers).

usage: perf_tables.py bench/results/<gpu>"""
import csv
import math
import sys

res = sys.argv[1]
DEF = {"f32": "f32", "f64": "f64", "f16": "f32", "bf16": "f32", "e4m3": "f32", "e5m2": "f32",
       "i8": "i64", "i32": "i64", "i64": "i64"}
OPS = ["sum", "min", "max", "absmax", "sumsq", "argmin", "argmax", "mean"]
rows = list(csv.DictReader(open(f"{res}/bench.csv")))
ours = {(r["dtype"], r["acc"], r["op"], int(r["n"])): r for r in rows if r["impl"] == "cureduce"}
cub = {(r["dtype"], r["acc"], r["op"], int(r["n"])): r for r in rows if r["impl"] == "cub"}


def acc_for(d, op):
    return "f64" if op == "mean" and d.startswith("i") else DEF[d]


for n in (2**26, 2**28, 2**30):
    print(f"\n#### n = 2^{int(math.log2(n))}: fraction of the read roofline (speed-up over CUB), default accumulator\n")
    print("| dtype | " + " | ".join(OPS) + " |")
    print("| --- |" + " --- |" * len(OPS))
    for d in DEF:
        cells = []
        for op in OPS:
            r = ours.get((d, acc_for(d, op), op, n))
            if not r:
                cells.append("-")
                continue
            c = f" ({float(r['cub_speedup']):.2f}x)" if r["cub_speedup"] else ""
            cells.append(f"{float(r['roof_hot_us']) / float(r['hot_us']):.3f}{c}")
        print(f"| {d} | " + " | ".join(cells) + " |")

sizes = [2**10, 2**12, 2**14, 2**16, 2**18, 2**20]
for name, timing in (("bench.csv", "default timing"), ("bench_held.csv", "held, GPU-paced")):
    try:
        table = list(csv.DictReader(open(f"{res}/{name}")))
    except FileNotFoundError:
        continue
    mine = {(r["dtype"], r["acc"], r["op"], int(r["n"])): r for r in table if r["impl"] == "cureduce"}
    peer = {(r["dtype"], r["acc"], r["op"], int(r["n"])): r for r in table if r["impl"] == "cub"}
    print(f"\n#### Small n, sum, default accumulator ({timing}): hot time in µs, ours / CUB / read-roofline kernel\n")
    print("| dtype | " + " | ".join(f"2^{int(math.log2(s))}" for s in sizes) + " |")
    print("| --- |" + " --- |" * len(sizes))
    for d in DEF:
        cells = []
        for s in sizes:
            r = mine.get((d, DEF[d], "sum", s))
            c = peer.get((d, DEF[d], "sum", s))
            cells.append(f"{float(r['hot_us']):.1f} / {float(c['hot_us']):.1f} / {float(r['roof_hot_us']):.1f}" if r and c else "-")
        print(f"| {d} | " + " | ".join(cells) + " |")

print("\n#### Relative error of the sum against the exact sum, n = 2^28 (ours; CUB where it offers the accumulator)\n")
print("| dtype -> acc | ours | CUB |")
print("| --- | --- | --- |")
for (d, a, op, n), r in sorted(ours.items()):
    if op == "sum" and n == 2**28 and d in ("f32", "f16", "bf16", "e4m3", "e5m2", "f64"):
        c = cub.get((d, a, op, n))
        print(f"| {d} -> {a} | {float(r['rel_error']):.2e} | {float(c['rel_error']):.2e} |" if c else f"| {d} -> {a} | {float(r['rel_error']):.2e} | - |")
