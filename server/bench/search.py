"""`maag bench search`: single-thread speed of the search kernels on a fixed set of
mid-game states (the same 20 states as `maag bench engine`, seeded draws).

Each state gets one search per figure with the time budget in the kernel (500 ms by
default); the rate of a search is its work over the CPU time of the thread that ran it
(so other load on the machine does not count; `wall` figures divide by the elapsed time
measured in C instead); each figure is the median over the states:

- MCTS iterations/s: vanilla MCTS with the paper's settings (C = 1/sqrt(2), egreedy
  rollouts with eps 0.5 and a depth of one turn, transpositions, pruning, rating order);
- OEP generations/s: population 100, survival 0.5, mutation 0.1, heuristic fitness,
  history table;
- greedy turn outcomes/s: distinct end-of-turn states evaluated by the depth-first turn
  search (transposition table, pruning, rating order). A turn small enough to be searched
  completely before the budget ends counts with its own (shorter) time."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from maag.engine import Game
from maag.engine.search import search
from maag.server.bench.engine import midgame_states

# The Java reference clone's own agents on this kind of machine (issue 3): one thread,
# 500 ms searches on 20 mid-game states, paper settings.
REFERENCE = {
    "mcts_iterations_per_s": 78_500.0,
    "oep_generations_per_s": 937.0,
    "greedy_turn_outcomes_per_s": 127_500.0,
}

# figure -> (kernel, parameters); the defaults of mg_search_defaults are the paper's.
FIGURES: dict[str, tuple[str, dict[str, Any]]] = {
    "mcts_iterations_per_s": ("mcts", {}),
    "oep_generations_per_s": ("oep", {}),
    "greedy_turn_outcomes_per_s": ("greedy-turn", {}),
}


@dataclass
class SearchBench:
    mcts_iterations_per_s: float
    oep_generations_per_s: float
    greedy_turn_outcomes_per_s: float
    budget_ms: float
    states: int
    per_state: dict[str, list[float]]
    wall: dict[str, float]  # the same medians over elapsed (wall-clock) time

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {k: round(getattr(self, k), 1) for k in REFERENCE}
        d["ratio_to_reference"] = {k: round(getattr(self, k) / v, 2) for k, v in REFERENCE.items()}
        d["wall"] = {k: round(v, 1) for k, v in self.wall.items()}
        d["budget_ms"] = self.budget_ms
        d["states"] = self.states
        d["per_state"] = {k: [round(x) for x in v] for k, v in self.per_state.items()}
        return d


def run(budget_ms: float = 500.0, count: int = 20, seed: int = 1,
        progress: Callable[[int], None] | None = None) -> SearchBench:
    """Run every figure on `count` mid-game states; `progress(i)` after each state."""
    game = Game("heroes", {"map": "a", "draws": "seeded"})
    states = midgame_states(game, count)
    per_state: dict[str, list[float]] = {k: [] for k in FIGURES}
    wall: dict[str, list[float]] = {k: [] for k in FIGURES}
    for i, st in enumerate(states):
        for key, (kernel, params) in FIGURES.items():
            t0 = time.thread_time()
            r = search(st, kernel, params, budget_ms=budget_ms, seed=seed + i)
            cpu = time.thread_time() - t0
            per_state[key].append(r.stats.iterations / max(cpu, 1e-9))
            wall[key].append(r.stats.iterations / (r.stats.elapsed_ms / 1000.0))
        if progress:
            progress(i + 1)
    med = {k: statistics.median(v) for k, v in per_state.items()}
    return SearchBench(med["mcts_iterations_per_s"], med["oep_generations_per_s"],
                       med["greedy_turn_outcomes_per_s"], budget_ms, len(states), per_state,
                       {k: statistics.median(v) for k, v in wall.items()})
