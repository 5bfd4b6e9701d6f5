"""Markdown tables for docs/exact.md, printed from the CSV files the bench wrote: the exact sums
of full arrays (bench_exact.csv), of rows, columns, segments and axes (bench_rows_exact.csv)
and of the adversarial inputs (bench_exact_cancel.csv, bench_exact_wide.csv).

usage: exact_tables.py bench/results/<gpu>"""
import csv
import sys

res = sys.argv[1]
DTYPES = ["f32", "f64", "f16", "bf16", "e4m3", "e5m2"]


def us(t):
    return f"{t:.1f} µs" if t < 100 else f"{t:.0f} µs"


def frac(r):
    """Fraction of the roofline, from the times (the CSV's roof_fraction is already rounded to 4
    decimals, and rounding it again to 3 can be off by one in the last place)."""
    return float(r["roof_hot_us"]) / float(r["hot_us"])


SIZES = (2**28, 2**26, 2**24)
roof = {}
for r in csv.DictReader(open(f"{res}/bench_exact.csv")):
    if r["impl"] == "cureduce" and r["op"] == "sum_exact" and r["acc"] == "f64":
        roof[r["dtype"], int(r["n"])] = frac(r)
print("| sum_exact into f64, uniform data, hot: fraction of the read roofline | 2^28 | 2^26 | 2^24 |")
print("| --- |" + " --- |" * len(SIZES))
for d in DTYPES:
    print(f"| {d} | " + " | ".join(f"{roof[d, n]:.3f}" for n in SIZES) + " |")
print()

# Sums into the default output (f64 for f64, else f32); the segment mix's running states as
# the row `states`.
cells, order = {}, []
for r in csv.DictReader(open(f"{res}/bench_rows_exact.csv")):
    if r["impl"] not in ("cureduce", "cureduce_states") or r["op"] != "sum_exact":
        continue
    if r["acc"] != ("f64" if r["dtype"] == "f64" else "f32"):
        continue
    if r["impl"] == "cureduce_states":
        key = ("segment mix", "states")
    elif r["axis"] == "segments":
        key = ("segment mix", "segments")
    elif r["axis"] == "mid":
        key = (f"{r['outer']}x{r['rows']}x{r['cols']}", "mid")
    else:
        key = (f"{r['rows']}x{r['cols']}", r["axis"])
    if key not in order:
        order.append(key)
    cells[key, r["dtype"]] = f"{us(float(r['hot_us']))} ({frac(r):.3f})"
print("| shape | axis | " + " | ".join(DTYPES) + " |")
print("| --- | --- |" + " --- |" * len(DTYPES))
for key in order:
    print(f"| {key[0]} | {key[1]} | " + " | ".join(cells.get((key, d), "-") for d in DTYPES) + " |")

hot = {}
for data in ("cancel", "wide"):
    for r in csv.DictReader(open(f"{res}/bench_exact_{data}.csv")):
        if r["impl"] == "cureduce" and r["acc"] == "f64":
            hot[data, r["dtype"], r["op"], int(r["n"])] = float(r["hot_us"])
COLS = (("cancel", 2**20), ("cancel", 2**26), ("wide", 2**20), ("wide", 2**26))
print("\n| sum_exact into f64, hot µs (time / our plain sum) | 2^20 cancel | 2^26 cancel | 2^20 wide | 2^26 wide |")
print("| --- |" + " --- |" * len(COLS))
for d in DTYPES:
    row = []
    for data, n in COLS:
        e, p = hot[data, d, "sum_exact", n], hot[data, d, "sum", n]
        row.append(f"{e:.1f} ({e / p:.1f})" if e < 1000 else f"{e:.0f} ({e / p:.1f})")
    print(f"| {d} | " + " | ".join(row) + " |")
