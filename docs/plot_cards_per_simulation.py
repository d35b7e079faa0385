"""Draws docs/results-cards-per-simulation.png from docs/data/cards-issue58-*.jsonl (`maag match
--json`, the summary on the last line): `best`'s score in the card game against OpenSpiel's MCTS
with the heuristic at 400 simulations a decision, by `best`'s iterations a plan, with the 95%
intervals `maag match` gives; the 100 ms match (both on the clock) and the equal 1,600 match
as single marks (docs/results-cards.md, "Third sitting").

    python docs/plot_cards_per_simulation.py
"""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

here = Path(__file__).parent
data = here / "data"


def summary(name: str) -> dict:
    with open(data / f"cards-issue58-{name}.jsonl") as f:
        return json.loads(f.read().splitlines()[-1])


curve = [(n, summary(f"curve-{n}")) for n in (25, 100, 1600, 6400)]
curve.append((400, summary("best-openspiel-400sims")))
curve.sort()
xs = [n for n, _ in curve]
ys = [s["score"] for _, s in curve]
err = [[s["score"] - s["score_ci95"][0] for _, s in curve],
       [s["score_ci95"][1] - s["score"] for _, s in curve]]

fig, ax = plt.subplots(figsize=(7.5, 5.2))
ax.errorbar(xs, ys, yerr=err, marker="o", capsize=4,
            label="best:iterations=N vs OpenSpiel MCTS, 400 simulations")
for n, s in curve:
    ax.annotate(f"{s['score']:.2f} (n={s['games']})", (n, s["score"]), textcoords="offset points",
                xytext=(6, -14), fontsize=8)
equal = summary("equal-1600")
lo, hi = equal["score_ci95"]
ax.errorbar([1600 * 1.08], [equal["score"]], yerr=[[equal["score"] - lo], [hi - equal["score"]]], marker="s",
            capsize=4, color="tab:green", linestyle="none", label="both at 1,600 (best vs OpenSpiel)")
timed = summary("best-openspiel-100ms")
lo, hi = timed["score_ci95"]
ax.axhspan(lo, hi, color="tab:orange", alpha=0.15,
           label=f"both at 100 ms a turn: {timed['score']:.2f} (best ~48,000 iterations a turn)")
ax.axhline(0.5, color="grey", linewidth=0.8)
ax.axhline(0.85, color="tab:red", linewidth=0.8, linestyle="--", label="the issue's target at 100 ms (0.85)")
ax.set_xscale("log")
ax.set_xlabel("best's iterations a plan (a card-game bot plans once per action)")
ax.set_ylabel("best's score [95% interval]")
ax.set_ylim(0.25, 0.95)
ax.set_title("Cards: best (mcts) against OpenSpiel's MCTS with the heuristic")
ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2)
fig.tight_layout()
fig.savefig(here / "results-cards-per-simulation.png", dpi=110)
