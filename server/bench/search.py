"""`maag bench search [--game NAME]`: single-thread speed of the search kernels on a fixed
set of mid-game states (the same 20 states as `maag bench engine`).

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
  completely before the budget ends counts with its own (shorter) time.

For conquest, also the thesis's agents (spec/conquest.md §11, thesis settings): NE-MCTS and
BB-MCTS iterations/s, each iteration with its heuristic playout of up to 40 move phases (it
stops where the game ends; `playout_phases` gives the median length), and OEP generations/s
(population 50). They are compared with the thesis's own figures (84
iterations/s, 9 generations/s: Java on the TripleA engine, thesis §6.3), which cannot be
measured here; heroes' figures are compared with the Java reference clone measured on this
kind of machine (issue 3).

For cards, also the thesis's players (spec/cards.md §8) as the referee's bots run them, from
the observation of the player to act with a fresh determinization per simulation: flat UCB
simulations/s (1,000 bandits generated depth first) and UCT simulations/s, each simulation a
playout of random actions to the end of the game, and ISMCTS iterations/s (egreedy rollouts
of one turn)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from maag.engine import Game, Observation, State
from maag.engine.hidden import run_on_state
from maag.engine.search import SearchResult, search
from maag.server.bench.engine import midgame_states

# What each game's figures are compared with. heroes: the Java reference clone's own agents
# on this kind of machine (issue 3), one thread, 500 ms searches on 20 mid-game states, paper
# settings. conquest: the thesis's figures (§6.3, its Java agents on the TripleA engine).
REFERENCES: dict[str, dict[str, float]] = {
    "heroes": {"mcts_iterations_per_s": 78_500.0, "oep_generations_per_s": 937.0,
               "greedy_turn_outcomes_per_s": 127_500.0},
    "conquest": {"ne_mcts_iterations_per_s": 84.0, "bb_mcts_iterations_per_s": 84.0,
                 "thesis_oep_generations_per_s": 9.0},
}
REFERENCE = REFERENCES["heroes"]
REFERENCE_NAME = {"heroes": "Java reference", "conquest": "thesis (Java)"}

# figure -> (kernel, parameters); the defaults of mg_search_defaults are the paper's.
FIGURES: dict[str, tuple[str, dict[str, Any]]] = {
    "mcts_iterations_per_s": ("mcts", {}),
    "oep_generations_per_s": ("oep", {}),
    "greedy_turn_outcomes_per_s": ("greedy-turn", {}),
}
# conquest's thesis agents: figure -> agent of maag.engine.games.conquest.agents.
CONQUEST_FIGURES = {
    "ne_mcts_iterations_per_s": "ne-mcts",
    "bb_mcts_iterations_per_s": "bb-mcts",
    "thesis_oep_generations_per_s": "oep",
}
# The card game's thesis players (spec/cards.md §8), searching from the observation of the
# player to act with a fresh determinization per simulation, and ISMCTS: figure -> (kernel,
# parameters). UCB and UCT with the thesis's playout: random actions to the end of the game.
_THESIS = {"policy": "rap", "rollout_turns": 1000, "c": 1.4142}
CARDS_FIGURES: dict[str, tuple[str, dict[str, Any]]] = {
    "ucb_simulations_per_s": ("ucb", {**_THESIS, "moves": "dfs", "arms": 1000, "select": "max-wins"}),
    "uct_simulations_per_s": ("uct", _THESIS),
    "ismcts_iterations_per_s": ("ismcts", {}),
}
SETUPS = {"heroes": {"map": "a", "draws": "seeded"}}


@dataclass
class SearchBench:
    game: str
    figures: dict[str, float]  # figure -> median rate over the states (search-thread CPU time)
    budget_ms: float
    states: int
    per_state: dict[str, list[float]]
    wall: dict[str, float]  # the same medians over elapsed (wall-clock) time
    playout_phases: dict[str, float] = field(default_factory=dict)  # conquest: median phases a playout

    def __getattr__(self, name: str) -> float:
        try:
            return self.__dict__["figures"][name]
        except KeyError:
            raise AttributeError(name) from None

    @property
    def reference(self) -> dict[str, float]:
        return REFERENCES.get(self.game, {})

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"game": self.game, **{k: round(v, 1) for k, v in self.figures.items()}}
        d["ratio_to_reference"] = {k: round(self.figures[k] / v, 2) for k, v in self.reference.items()}
        d["wall"] = {k: round(v, 1) for k, v in self.wall.items()}
        if self.playout_phases:
            d["playout_phases"] = {k: round(v, 1) for k, v in self.playout_phases.items()}
        d["budget_ms"] = self.budget_ms
        d["states"] = self.states
        d["per_state"] = {k: [round(x) for x in v] for k, v in self.per_state.items()}
        return d


def _one(st: State, key: str, budget_ms: float, seed: int) -> SearchResult:
    if key in FIGURES:
        kernel, params = FIGURES[key]
        return search(st, kernel, params, budget_ms=budget_ms, seed=seed)
    if key in CARDS_FIGURES:
        kernel, params = CARDS_FIGURES[key]
        obs = Observation.of(st).as_state()
        if kernel == "ismcts":
            return run_on_state("ismcts", obs, "mcts", params, budget_ms=budget_ms, seed=seed)
        return search(obs, kernel, params, budget_ms=budget_ms, seed=seed)
    from maag.engine.games.conquest import agents  # only once conquest is asked for

    return agents.plan(st, CONQUEST_FIGURES[key], budget_ms=budget_ms, seed=seed)


def run(budget_ms: float = 500.0, count: int = 20, seed: int = 1,
        progress: Callable[[int], None] | None = None, game_name: str = "heroes") -> SearchBench:
    """Run every figure of `game_name` on `count` mid-game states; `progress(i)` after each."""
    game = Game(game_name, SETUPS.get(game_name, {}))
    states = midgame_states(game, count)
    extra = {"conquest": list(CONQUEST_FIGURES), "cards": list(CARDS_FIGURES)}.get(game_name, [])
    keys = list(FIGURES) + extra
    per_state: dict[str, list[float]] = {k: [] for k in keys}
    wall: dict[str, list[float]] = {k: [] for k in keys}
    phases: dict[str, list[float]] = {k: [] for k in CONQUEST_FIGURES if k in keys}
    for i, st in enumerate(states):
        for key in keys:
            t0 = time.thread_time()
            r = _one(st, key, budget_ms, seed + i)
            cpu = time.thread_time() - t0
            per_state[key].append(r.stats.iterations / max(cpu, 1e-9))
            wall[key].append(r.stats.iterations / (max(r.stats.elapsed_ms, 1e-6) / 1000.0))
            if key in phases:
                phases[key].append(r.stats.playout_phases)
        if progress:
            progress(i + 1)
    return SearchBench(game_name, {k: statistics.median(v) for k, v in per_state.items()}, budget_ms,
                       len(states), per_state, {k: statistics.median(v) for k, v in wall.items()},
                       {k: statistics.median(v) for k, v in phases.items()})
