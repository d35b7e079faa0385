"""Draws docs/benchmarks-servers-c-bots.png from docs/data/bench-servers-c-bots*.csv: per pair
of alternating `maag bench server --c-bots --nice-bots` runs (one referee, then two), the ratio
of their throughputs against the cores the rest of the machine used meanwhile; one colour per
sitting (before and after issue 42's fast path).

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
SITTINGS = (("bench-servers-c-bots.csv", "before the fast path", "tab:blue"),
            ("bench-servers-c-bots-fastpath.csv", "with the fast path", "tab:green"))


def ratios(name: str) -> tuple[list[float], list[float]]:
    """(the larger other_cpu_load of each pair, its two referees' throughput over one's)."""
    pairs: dict[int, dict[int, dict[str, str]]] = {}
    with open(here / "data" / name) as f:
        for r in csv.DictReader(f):
            pairs.setdefault(int(r["pair"]), {})[int(r["servers"])] = r
    xs = [max(float(p[1]["other_cpu_load"]), float(p[2]["other_cpu_load"])) for p in pairs.values()]
    ys = [float(p[2]["actions_per_s"]) / float(p[1]["actions_per_s"]) for p in pairs.values()]
    return xs, ys


here = Path(__file__).parent
fig, ax = plt.subplots(figsize=(7, 4.2))
for name, label, colour in SITTINGS:
    xs, ys = ratios(name)
    quiet = [y for x, y in zip(xs, ys, strict=True) if x < QUIET]
    ax.scatter(xs, ys, c=[colour if x < QUIET else "tab:gray" for x in xs], s=18)
    mid = statistics.median(quiet)
    ax.axhline(mid, color=colour, lw=1,
               label=f"{label}: median of {len(quiet)} quiet pairs of {len(xs)}, {mid:.2f}x")
ax.axhline(1.6, color="tab:red", lw=1, ls="--", label="issue 44: at least 1.6x")
ax.axvline(QUIET, color="k", lw=0.6, ls=":")
ax.set_xlabel("cores the rest of the machine used (other_cpu_load, the larger of the pair's two runs)")
ax.set_ylabel("actions/s, two referees / one")
ax.set_title("maag bench server --c-bots --nice-bots, 100 games, alternating pairs (grey: not quiet)",
             fontsize=10)
ax.legend(fontsize=8, loc="lower left")
fig.tight_layout()
fig.savefig(here / "benchmarks-servers-c-bots.png", dpi=110)
