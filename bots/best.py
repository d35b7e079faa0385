"""The agent `best`: each game's strongest bundled agent and setting, resolved per game from
the first position it plans (what a host or a researcher reaches for first, and what
`maag match best X` plays). The choice follows the results' tables until tournaments decide
otherwise; `BEST` names, beside each choice, the table that made it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from maag.engine import State

from .agents import ITERATIONS, Agent, AgentError, AgentSpec, parse_agent, register

__all__ = ["BEST", "BestAgent"]

# Per game: the agent spec `best` plays, and the figure that chose it (docs/results-*.md).
BEST: dict[str, tuple[str, str]] = {
    # the round robin of every bundled agent at 1 s through the referee: first, +214 Elo
    # [+114, +315], 70.4% over 54 games; and 0.663 [0.559, 0.766] over 80 games against
    # OpenSpiel's MCTS with the heuristic at 100 ms, as ismcts (docs/results-cards.md); kept
    # by the fifth sitting there: no rollout, leaf, solver, exploration, early-end or evaluation
    # change beat it against that opponent at equal work (6,000 iterations a plan, 400 simulations)
    "cards": ("mcts", "docs/results-cards.md, 'Every bundled agent at 1 s per turn': first of ten"),
    # greedy reply, first of the round robin of nine agents at 1 s (70% [58-80]), with the
    # mover's turn after the answer by greedy action and 65% of the time to its own turn
    # (fifth sitting; sixth: 0.713 [0.646, 0.771] against greedy turn, 0.743 against OEP's
    # paper preset over 200 games each at 500 ms), and (seventh sitting) the opponent's answers
    # and its own turn searched by iterative widening: against greedy turn at 500 ms, 0.768
    # over 200 games played beside the setting before on the same deals (0.740), 0.550 head
    # to head over 40: a few points at best, within the intervals; (eighth sitting) the
    # issue's tables, 200 games each at 500 ms: 0.815 [0.755, 0.863] against greedy turn, 0.845
    # [0.788, 0.889] against OEP's paper preset (docs/results-heroes.md, "Per simulation
    # (issue 58)", fifth to eighth sittings)
    "heroes": ("greedy-reply:quick=true,share=0.65,widen=true,widen_own=true",
               "docs/results-heroes.md, 'Eighth sitting': 0.815 [0.755, 0.863] against greedy "
               "turn and 0.845 [0.788, 0.889] against OEP's paper preset, 200 games each at 500 ms"),
    # the thesis agents and Hard at 1 s a move phase: BB-MCTS first, 83.3% pooled [66, 93]
    # (docs/results-conquest.md)
    "conquest": ("conquest-bb-mcts", "docs/results-conquest.md, '1 s per move phase: the full round "
                                     "robin': first, 83.3% [66, 93]"),
    # no table yet: the generic MCTS (nim is the smallest game, a quick opponent)
    "nim": ("mcts", "no table yet: the generic MCTS"),
}


class BestAgent(Agent):
    """`best`: plans with BEST's agent for the game of the position (made on the first plan
    of a game, and again if the game changes)."""

    def __init__(self, spec: AgentSpec, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(spec, options)
        self.inner: Agent | None = None

    def for_game(self, game: str) -> None:
        super().for_game(game)
        if self.inner is None or self.inner.game != game:
            self.inner = parse_agent(resolve(game))
            self.inner.for_game(game)

    @property
    def stepwise(self) -> bool:
        return self.inner.stepwise if self.inner is not None else False

    def __repr__(self) -> str:
        return f"best({self.inner!r})" if self.inner is not None else "best"

    def _plan_root(self, root: State, budget_ms: float | None, iterations: int | None,
                   seed: int | None) -> list[Any]:
        self.for_game(root.game.name)
        assert self.inner is not None
        if iterations is None and self.options["iterations"]:
            iterations = self.options["iterations"]  # `best:iterations=N`, whatever it plays
        plan = self.inner._plan_root(root, budget_ms, iterations, seed)
        self.last = self.inner.last
        return plan


def resolve(game: str) -> str:
    """The agent spec `best` plays in `game`; AgentError for a game without one."""
    if game not in BEST:
        raise AgentError(f"agent 'best' has no choice for game {game!r} (it knows {', '.join(BEST)})")
    return BEST[game][0]


register(AgentSpec(
    "best", "best",
    "each game's strongest bundled agent and setting by the results' tables: "
    + "; ".join(f"{g} {spec}" for g, (spec, _) in BEST.items()),
    (ITERATIONS,), needs_budget=True, factory=BestAgent, fields={}, games=tuple(BEST)))
