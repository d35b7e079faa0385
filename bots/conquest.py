"""The conquest agents, registered in maag.bots.AGENTS on import as `conquest-<name>`: the
thesis's NE-MCTS, BB-MCTS and OEP (spec/conquest.md §11, searching one move phase with a
decision per territory on a forward model whose battles are the §7.3 estimate) and the
baselines: the §9 playout heuristic, TripleA's Easy, Fast and Hard AIs (§12). They run in C
(maag.engine.games.conquest.agents) and play conquest only.

The generic agents (mcts, ne-mcts, oep, ...) play conquest too, over single-unit moves with
real dice in their rollouts; these follow the thesis's adaptation, which the generic kernels
cannot express: whole-territory decisions, a deterministic battle estimate inside the search,
and 40-phase heuristic playouts (docs/results-conquest.md)."""

from __future__ import annotations

import math

from maag.clients import Option
from maag.engine import State
from maag.engine.games.conquest import agents as cq
from maag.engine.search import SearchResult

from .agents import Agent, AgentError, AgentSpec, register

__all__ = ["ConquestAgent", "NAMES"]


class ConquestAgent(Agent):
    """A conquest agent of maag.engine.games.conquest.agents. Nothing is hidden in conquest:
    the observation is the whole state."""

    def _search(self, root: State, budget_ms: float, iterations: int, seed: int) -> SearchResult:
        if root.game.name != "conquest":
            raise AgentError(f"{self.name} plays conquest only, not {root.game.name}")
        return cq.plan(root, self.spec.kernel, self.kernel_params(), budget_ms=budget_ms,
                       iterations=iterations, seed=seed)


def _reward() -> tuple[Option, ...]:
    return (
        Option(name="max_phases", type="int", default=40, min=1, max=10000,
               help="playout length in move phases (40 = 10 rounds, the thesis)"),
        Option(name="win_base", type="float", default=0.6,
               help="reward of a won playout: win_base + win_bonus * rounds left / rounds"),
        Option(name="win_bonus", type="float", default=0.4, help="see win_base"),
        Option(name="unit_div", type="float", default=2.0, min=0.001,
               help="unfinished playout: (own - enemy units) / (unit_div * all units); the "
                    "thesis 2, its code 2.5 for NE-MCTS and OEP"),
    )


_SUMMARY = {
    "ne-mcts": "thesis NE-MCTS: per-territory decisions, every child once then the best mean, "
               "40-phase heuristic playouts on the battle estimate",
    "bb-mcts": "thesis BB-MCTS: UCT over per-territory decisions, random playout phases with "
               "probability epsilon, the root moves down a decision per slice of the budget",
    "oep": "thesis OEP: genomes of one decision per territory, crossover with repair, "
           "mutation, fitness by a heuristic playout",
    "heuristic": "the thesis's playout heuristic (a simplified Weak AI) as a player, no search",
    "easy": "TripleA's Easy (Weak) AI: walk-ins, attacks at 1.37 times the defence, advance",
    "fast": "TripleA's Fast AI, simplified: ProAI steps with the deterministic battle estimate",
    "hard": "TripleA's Hard AI, simplified: ProAI steps with a Monte-Carlo battle calculator",
}


def _params(name: str) -> tuple[Option, ...]:
    if name == "ne-mcts":
        return (*_reward(),
                Option(name="max_nodes", type="int", default=1 << 21, min=1, help="tree size cap"))
    if name == "bb-mcts":
        return (*_reward(),
                Option(name="c", type="float", default=1 / math.sqrt(2), min=0,
                       help="UCT exploration constant (the thesis 1/sqrt 2, its code 1.4)"),
                Option(name="epsilon", type="float", default=0.5, min=0, max=1,
                       help="probability that a simulated phase of a playout is played at random"),
                Option(name="max_nodes", type="int", default=1 << 21, min=1, help="tree size cap"))
    if name == "oep":
        return (*_reward(),
                Option(name="population", type="int", default=50, min=2, max=100000, help="genomes"),
                Option(name="survival", type="float", default=0.5, min=0.01, max=1,
                       help="fraction of the population kept each generation"),
                Option(name="mutation", type="float", default=0.1, min=0, max=1,
                       help="probability that a child gets one random decision"))
    if name == "hard":
        return (Option(name="hard_runs", type="int", default=100, min=1, max=100000,
                       help="dice simulations per battle: max(16, hard_runs - min(attackers, defenders))"),)
    return ()


NAMES: tuple[str, ...] = tuple(f"conquest-{n}" for n in cq.AGENTS)

for _name in cq.AGENTS:
    register(AgentSpec(f"conquest-{_name}", _name, _SUMMARY[_name], _params(_name),
                        needs_budget=_name in cq.SEARCHING, factory=ConquestAgent, fields={},
                        games=("conquest",)))
