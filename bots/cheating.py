"""Cheating twins, for measuring what hidden information costs: the same agent, searching
the true state instead of what its seat may see. For experiments only (`maag experiment
hidden`, `maag arena --view full`): nothing here is registered in maag.bots.AGENTS, so
`maag bot run`, `maag match` and the referee cannot build one, and their bots are only
ever given an Observation (the wire carries nothing else).

    >>> from maag.bots import make_agent
    >>> from maag.bots.cheating import CheatingAgent
    >>> twin = CheatingAgent(make_agent("ismcts"))
    >>> plan = twin.plan(true_state, iterations=2000, seed=1)

The twin of a plain agent runs its kernel on the true state; the twin of `pimc` runs its K
searches all on the true state (the same compute, no sampling); the twin of `ismcts` runs
the same tree with every iteration's "determinization" being the truth."""

from __future__ import annotations

from maag.engine import Action, State
from maag.engine.observation import observer_of
from maag.engine.search import SearchResult

from .agents import Agent

__all__ = ["CheatingAgent"]


class CheatingAgent:
    """Wraps an agent so that it plans from the true state (experiments only)."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent

    @property
    def name(self) -> str:
        return f"cheating-{self.agent.name}"

    @property
    def last(self) -> SearchResult | None:
        return self.agent.last

    def __repr__(self) -> str:
        return f"cheating({self.agent!r})"

    def plan(self, state: State, budget_ms: float | None = None, iterations: int | None = None,
             seed: int | None = None) -> list[Action]:
        """The wrapped agent's plan, searched on the full `state` (ValueError for an
        observation: a cheating twin needs the truth)."""
        if observer_of(state) is not None:
            raise ValueError("a cheating twin plans from the full state, not an observation")
        return self.agent._plan_root(state, budget_ms, iterations, seed)
