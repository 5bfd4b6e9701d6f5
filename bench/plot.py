"""Charts for the cureduce tools, drawn from the CSV files they write.

usage: plot.py ladder|shmoo|bench CSV PNG"""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def ladder(rows, png):
    roof = next(r for r in rows if r["rung"] == "roof")
    bars = [r for r in rows if r["rung"] != "roof"]
    gbps = [float(r["gbps"]) for r in bars]
    labels = [f'{r["rung"]} {r["name"]}' for r in bars]
    fig, ax = plt.subplots(figsize=(11, 6))
    colors = ["tab:gray" if r["rung"] == "cub" else "tab:blue" for r in bars]
    ax.barh(labels[::-1], gbps[::-1], color=colors[::-1])
    ax.axvline(float(roof["gbps"]), color="tab:red", linestyle="--", label=f'read roofline {float(roof["gbps"]):.0f} GB/s')
    first = float(bars[0]["hot_us"])
    for i, r in enumerate(bars[::-1]):
        ax.text(float(r["gbps"]), i, f'  {first / float(r["hot_us"]):.0f}x' + ("" if r["bitwise_stable"] == "1" else " (not reproducible)"),
                va="center", fontsize=8)
    r0 = rows[0]
    ax.set_xlabel("GB/s (hot, higher is better); label: speed-up over rung 1")
    ax.set_title(f'Reduction ladder: {r0["op"]} {r0["dtype"]}, n = {r0["n"]}, {r0["gpu"]}')
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def lines(rows, png, key, title, xlabel="n (elements)"):
    series = defaultdict(list)
    for r in rows:
        series[key(r)].append((int(r["n"]), float(r["gbps"])))
    fig, ax = plt.subplots(figsize=(11, 6))
    for name, pts in sorted(series.items()):
        pts.sort()
        style = "--" if "roof" in name else ("-." if "cub" in name else "-")
        ax.plot([p[0] for p in pts], [p[1] for p in pts], style, marker="o", markersize=3, label=name)
    ax.set_xscale("log", base=2)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("GB/s (hot)")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


DEFAULT_ACC = {"f32": "f32", "f64": "f64", "f16": "f32", "bf16": "f32", "e4m3": "f32",
               "e5m2": "f32", "i8": "i64", "i32": "i64", "i64": "i64"}


def bench_grid(rows, png, panels, pick, title):
    """One panel per key; in each, GB/s against n for cureduce, CUB and the read roofline."""
    cols = 3
    nrows = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(15, 4 * nrows), squeeze=False)
    for ax, key in zip(axes.flat, panels):
        for impl, style in (("cureduce", "-"), ("cub", "-."), ("roofline", "--")):
            pts = sorted((int(r["n"]), float(r["gbps"])) for r in rows if r["impl"] == impl and pick(r, key))
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style, marker="o", markersize=3, label=impl)
        ax.set_xscale("log", base=2)
        ax.set_title(key)
        ax.set_ylabel("GB/s (hot)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(png, dpi=90)


def main():
    kind, path, png = sys.argv[1:4]
    rows = read(path)
    if not rows:
        sys.exit(f"{path}: no rows")
    r0 = rows[0]
    if kind == "ladder":
        ladder(rows, png)
    elif kind == "shmoo":
        lines(rows, png, lambda r: f'{r["rung"]} {r["name"]}',
              f'Reduction ladder sweep: {r0["op"]} {r0["dtype"]}, {r0["gpu"]}')
    elif kind == "bench":
        dtypes = list(dict.fromkeys(r["dtype"] for r in rows))
        bench_grid(rows, png, dtypes,
                   lambda r, d: r["dtype"] == d and (r["impl"] == "roofline" or
                                                    (r["op"] == "sum" and r["acc"] == DEFAULT_ACC[d])),
                   f'sum, default accumulator: cureduce, CUB and the read roofline ({r0["gpu"]})')
    elif kind == "bench-ops":
        d = "bf16" if any(r["dtype"] == "bf16" for r in rows) else rows[0]["dtype"]
        ops = list(dict.fromkeys(r["op"] for r in rows if r["impl"] == "cureduce"))
        def pick(r, op):
            if r["dtype"] != d:
                return False
            if r["impl"] == "roofline":
                return True
            return r["op"] == op and r["acc"] in (DEFAULT_ACC[d], "f64" if op == "mean" and d.startswith("i") else "")
        bench_grid(rows, png, ops, pick, f'every op on {d}: cureduce, CUB and the read roofline ({r0["gpu"]})')
    else:
        sys.exit(f"unknown chart kind {kind}")


if __name__ == "__main__":
    main()
