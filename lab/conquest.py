"""The thesis's tables for conquest (spec/conquest.md §13.1, §13.2) in shape: round robins of
the thesis agents (and TripleA's Hard AI where the thesis had it) at several budgets per move
phase, plus the baselines' own round robin (Hard, Fast, Easy).

A budget is a time per move phase ("1s", "5s", "250ms") or a fixed number of MCTS iterations
("84it", "420it": the thesis's 84 iterations a second, so 1 s and 5 s of its Java forward
model). Under an iteration budget OEP gets the generations the thesis reached in the same
time (9 a second: 84it gives 9 generations, 420it gives 45). Hard joins the tables of budgets
worth at most one thesis second, as in the thesis (its Table 6.2 at 5 s has no Hard AI).

Games run in process (maag.lab.arena) in the real game: dice from each game's
seeded generator, agents given their seat's observation (which, without fog, is the state)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .arena import ArenaConfig, ArenaResult, GameResult, run_arena

__all__ = ["Budget", "parse_budget", "THESIS", "BASELINES", "TableSpec", "tables", "run_table", "markdown",
           "plot", "summary"]

THESIS = ["conquest-oep", "conquest-ne-mcts", "conquest-bb-mcts"]
BASELINES = ["conquest-hard", "conquest-fast", "conquest-easy"]
THESIS_RATE = 84.0  # MCTS iterations per second of the thesis's Java agents (§13.3)
THESIS_OEP_RATE = 9.0  # OEP generations per second (population 50)

# The thesis's Table 6.1 (1 s) and 6.2 (5 s): the row agent's tie-adjusted win rate.
THESIS_TABLES: dict[str, dict[tuple[str, str], float]] = {
    "1s": {("conquest-oep", "conquest-ne-mcts"): 0.3775, ("conquest-oep", "conquest-bb-mcts"): 0.475,
           ("conquest-oep", "conquest-hard"): 0.605, ("conquest-ne-mcts", "conquest-bb-mcts"): 0.51,
           ("conquest-ne-mcts", "conquest-hard"): 0.7225, ("conquest-bb-mcts", "conquest-hard"): 0.7275},
    "5s": {("conquest-oep", "conquest-ne-mcts"): 0.465, ("conquest-oep", "conquest-bb-mcts"): 0.3825,
           ("conquest-ne-mcts", "conquest-bb-mcts"): 0.47},
}


@dataclass(frozen=True)
class Budget:
    text: str
    turn_ms: float | None
    iterations: int | None

    @property
    def thesis_seconds(self) -> float:
        """What the budget is worth in thesis seconds."""
        return self.iterations / THESIS_RATE if self.iterations else (self.turn_ms or 0) / 1000.0

    @property
    def thesis_table(self) -> str | None:
        return {1.0: "1s", 5.0: "5s"}.get(round(self.thesis_seconds, 6))


def parse_budget(text: str) -> Budget:
    """'84it', '1s', '250ms' -> Budget; ValueError with the accepted forms otherwise."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(it|s|ms)\s*", text)
    if not m or float(m.group(1)) <= 0:
        raise ValueError(f"a budget is a positive time or iteration count like 1s, 250ms or 84it, "
                         f"not {text!r}")
    x, unit = float(m.group(1)), m.group(2)
    if unit == "it":
        return Budget(f"{int(x)}it", None, int(x))
    ms = x * 1000 if unit == "s" else x
    return Budget(f"{ms / 1000:g}s" if ms >= 1000 else f"{ms:g}ms", ms, None)


@dataclass(frozen=True)
class TableSpec:
    title: str
    agents: list[str]
    budget: Budget | None  # None: the budget-free baselines


def tables(budgets: list[Budget], baselines: bool = True) -> list[TableSpec]:
    out = []
    for b in budgets:
        agents = THESIS + (["conquest-hard"] if b.thesis_seconds <= 1.0 else [])
        out.append(TableSpec(f"{b.text} per move phase", agents, b))
    if baselines:
        out.append(TableSpec("baselines (no search)", BASELINES, None))
    return out


def run_table(t: TableSpec, games: int, *, jobs: int = 1, seed: int = 1,
              on_game: Callable[[GameResult, int, int], None] | None = None) -> ArenaResult:
    """One round robin; `games` per match-up, seats alternating."""
    b = t.budget
    per_agent: dict[str, int] = {}
    if b is not None and b.iterations:
        per_agent["conquest-oep"] = max(1, round(b.iterations * THESIS_OEP_RATE / THESIS_RATE))
    cfg = ArenaConfig(turn_ms=b.turn_ms if b else None, iterations=b.iterations if b else None,
                      game="conquest", game_config={}, view="observation", agent_iterations=per_agent)
    return run_arena(t.agents, games, cfg, jobs=jobs, seed=seed, on_game=on_game)


def _short(spec: str) -> str:
    return {"conquest-oep": "OEP", "conquest-ne-mcts": "NE-MCTS", "conquest-bb-mcts": "BB-MCTS",
            "conquest-hard": "Hard AI", "conquest-fast": "Fast AI",
            "conquest-easy": "Easy AI"}.get(spec, spec)


def markdown(t: TableSpec, res: ArenaResult) -> str:
    """The table as the thesis prints it: the row agent's tie-adjusted win rate, then wins /
    draws / losses; a 95% interval under it; the thesis's figure where it has one."""
    names = res.agents
    thesis = THESIS_TABLES.get(t.budget.thesis_table or "", {}) if t.budget else {}
    head = "| row \\ col | " + " | ".join(_short(n) for n in names) + " | average |"
    lines = [head, "|" + "---|" * (len(names) + 2)]
    for i, a in enumerate(names):
        cells = []
        for j, b in enumerate(names):
            if i == j:
                cells.append("—")
                continue
            s, n, (lo, hi) = res.score(i, j)
            w, d, lo_ = res.pair(i, j)
            ref = thesis.get((a, b))
            ref = 1 - thesis[(b, a)] if ref is None and (b, a) in thesis else ref
            cells.append(f"{100 * s:.1f}% ({w}/{d}/{lo_})<br>[{100 * lo:.0f}, {100 * hi:.0f}]"
                         + (f"<br>thesis {100 * ref:.1f}%" if ref is not None else ""))
        s, n, (lo, hi) = res.overall(i)
        cells.append(f"{100 * s:.1f}% [{100 * lo:.0f}, {100 * hi:.0f}]")
        lines.append(f"| {_short(a)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def summary(t: TableSpec, res: ArenaResult) -> dict[str, Any]:
    return {"table": t.title, "budget": t.budget.text if t.budget else None, **res.as_dict()}


def plot(done: list[tuple[TableSpec, ArenaResult]], path: str) -> None:
    """Each agent's overall score (95% interval) per table, as grouped bars, to a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    agents = THESIS + BASELINES
    fig, ax = plt.subplots(figsize=(9, 4.5))
    width = 0.8 / max(1, len(done))
    for k, (t, res) in enumerate(done):
        xs: list[float] = []
        ys: list[float] = []
        errs: list[list[float]] = [[], []]
        for i, a in enumerate(res.agents):
            s, _, (lo, hi) = res.overall(i)
            xs.append(agents.index(a) + (k - (len(done) - 1) / 2) * width)
            ys.append(s)
            errs[0].append(s - lo)
            errs[1].append(hi - s)
        ax.bar(xs, ys, width, yerr=errs, capsize=3, label=t.title)
    ax.axhline(0.5, color="grey", lw=0.8, ls="--")
    ax.set_xticks(range(len(agents)), [_short(a) for a in agents])
    ax.set_ylabel("score against the table's others (ties = 1/2)")
    ax.set_ylim(0, 1)
    ax.set_title("conquest: thesis agents and TripleA baselines, round robins per budget")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
