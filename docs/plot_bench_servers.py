"""Draws docs/benchmarks-servers-c-bots.png from docs/data/bench-servers-c-bots.csv: per pair of
alternating `maag bench server --c-bots --nice-bots` runs (one referee, then two), the ratio of
their throughputs against the cores the rest of the machine used meanwhile.

    python docs/plot_bench_servers.py
"""

from __future__ import annotations

import csv
import statistics
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

QUIET = 0.12  # other_cpu_load below which a run had the machine to itself

here = Path(__file__).parent
pairs: dict[int, dict[int, dict[str, str]]] = {}
with open(here / "data" / "bench-servers-c-bots.csv") as f:
    for r in csv.DictReader(f):
        pairs.setdefault(int(r["pair"]), {})[int(r["servers"])] = r
xs, ys = [], []
for p in pairs.values():
    xs.append(max(float(p[1]["other_cpu_load"]), float(p[2]["other_cpu_load"])))
    ys.append(float(p[2]["actions_per_s"]) / float(p[1]["actions_per_s"]))
quiet = [y for x, y in zip(xs, ys, strict=True) if x < QUIET]
fig, ax = plt.subplots(figsize=(7, 4.2))
ax.scatter(xs, ys, c=["tab:blue" if x < QUIET else "tab:gray" for x in xs], s=22)
ax.axhline(1.6, color="tab:red", lw=1, ls="--", label="issue 44: at least 1.6x")
ax.axhline(statistics.median(quiet), color="tab:blue", lw=1,
           label=f"median of the {len(quiet)} quiet pairs: {statistics.median(quiet):.2f}x")
ax.axvline(QUIET, color="k", lw=0.6, ls=":")
ax.set_xlabel("cores the rest of the machine used (other_cpu_load, the larger of the pair's two runs)")
ax.set_ylabel("actions/s, two referees / one")
ax.set_title(f"maag bench server --c-bots --nice-bots, 100 games: {len(pairs)} alternating pairs",
             fontsize=10)
ax.legend(fontsize=8, loc="lower left")
fig.tight_layout()
fig.savefig(here / "benchmarks-servers-c-bots.png", dpi=110)
