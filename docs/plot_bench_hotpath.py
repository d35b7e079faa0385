"""Draws docs/benchmarks-hotpath.png from docs/data/bench-hotpath-floor.csv: per run of
`maag bench server --games 100 --floor` (act and turn mode, before and after the log was
encoded once), the referee's CPU per message beside the bare exchange's and the two-write
exchange's measured in the same run, and the issue's targets (3 times the bare exchange per
act, 4 times per turn) drawn from each run's bare figure.

    python docs/plot_bench_hotpath.py
"""

from __future__ import annotations

import csv
import statistics
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

here = Path(__file__).parent
TARGET = {"act": 3.0, "turn": 4.0}  # issue 42: at most this many times the bare exchange

with open(here / "data" / "bench-hotpath-floor.csv") as f:
    rows = list(csv.DictReader(f))

fig, axes = plt.subplots(1, 2, figsize=(9, 4.2))
for ax, mode in zip(axes, ("act", "turn"), strict=True):
    for x, code in enumerate(("before", "after")):
        rs = [r for r in rows if r["mode"] == mode and r["code"] == code]
        for key, colour, label in (("cpu_us_per_message", "tab:red", "referee"),
                                   ("floor_cpu_us_per_message", "tab:orange", "two-write exchange"),
                                   ("bare_cpu_us_per_message", "tab:blue", "bare exchange")):
            ys = [float(r[key]) for r in rs]
            ax.scatter([x] * len(ys), ys, s=14, color=colour, alpha=0.6, label=label if x == 0 else None)
            ax.hlines(statistics.median(ys), x - 0.2, x + 0.2, color=colour)
        target = statistics.median(TARGET[mode] * float(r["bare_cpu_us_per_message"]) for r in rs)
        ax.hlines(target, x - 0.3, x + 0.3, color="black", linestyles="dashed",
                  label="the issue's target" if x == 0 else None)
        ax.text(x + 0.32, target, f"{TARGET[mode]:g}x bare", fontsize=7, va="center")
    ax.set_xticks([0, 1], ["before", "after"])
    ax.set_xlim(-0.6, 1.9)
    ax.set_ylim(0, None)
    ax.set_title(f"{mode} mode, 100 games")
    ax.set_ylabel(f"CPU µs per {mode} message")
handles, labels = axes[0].get_legend_handles_labels()
fig.legend(handles, labels, fontsize=8, loc="lower center", ncol=4)
fig.suptitle("Referee CPU per message against the bare and two-write exchanges (same runs)", fontsize=10)
fig.tight_layout(rect=(0, 0.07, 1, 1))
fig.savefig(here / "benchmarks-hotpath.png", dpi=110)
print("wrote", here / "benchmarks-hotpath.png")
