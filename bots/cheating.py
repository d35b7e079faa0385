"""Cheating twins, for measuring what hidden information costs: the same agent, searching
the true state instead of what its seat may see. For experiments only (`maag experiment
hidden`, `maag arena --view full`): nothing here is registered in maag.bots.AGENTS, so
`maag bot run` and the referee cannot build one, and their bots are only ever given an
Observation (the wire carries nothing else). Through `maag match` a twin plays only as the
lab's own bot process (`maag experiment twin-bot`, maag.lab.twin_bot), which rebuilds the
true state from the match's seed and what it has seen, never from the referee.

    >>> from maag.bots import make_agent
    >>> from maag.bots.cheating import CheatingAgent
    >>> twin = CheatingAgent(make_agent("ismcts"))
    >>> plan = twin.plan(true_state, iterations=2000, seed=1)

The twin of a plain agent runs its kernel on the true state; the twin of `pimc` runs its K
searches all on the true state (the same compute, no sampling); the twin of `ismcts` runs
the same tree with every iteration's "determinization" being the truth.

A peeking twin (`PeekingAgent`) knows less: every hand and secret, but not the order of the
decks, which it shuffles again before each plan. Set against the cheating twin it splits
what hidden information is worth into the hidden cards themselves (what determinization
samples) and the future draws (chance to every honest agent alike). It needs a game whose
state lists each player's deck in drawing order (cards)."""

from __future__ import annotations

import random

from maag.engine import Action, Observation, State
from maag.engine.observation import observer_of
from maag.engine.search import SearchResult

from .agents import Agent

__all__ = ["CheatingAgent", "PeekingAgent", "shuffle_decks"]


def _check_full(state: State | Observation, twin: str) -> None:
    if isinstance(state, Observation) or observer_of(state) is not None:
        raise ValueError(f"a {twin} twin plans from the full state, not an observation")


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
        _check_full(state, "cheating")
        return self.agent._plan_root(state, budget_ms, iterations, seed)


def shuffle_decks(state: State, rng: random.Random) -> State:
    """A copy of the full `state` with each player's deck in a new random order (hands,
    secrets and everything else unchanged). ValueError for a game whose state does not list
    its decks in drawing order."""
    obj = state.to_json()
    players = obj.get("players") if isinstance(obj, dict) else None
    if not isinstance(players, list) or not all(isinstance(p, dict) and isinstance(p.get("deck"), list)
                                                for p in players):
        raise ValueError(f"{state.game.name}: its state lists no decks in drawing order to shuffle")
    for p in players:
        rng.shuffle(p["deck"])
    return state.game.state_from_json(obj)


class PeekingAgent(CheatingAgent):
    """Wraps an agent so that it plans from the true state with the decks shuffled again
    before every plan: it sees both hands and all secrets, not the next draws (experiments
    only)."""

    @property
    def name(self) -> str:
        return f"peeking-{self.agent.name}"

    def __repr__(self) -> str:
        return f"peeking({self.agent!r})"

    def plan(self, state: State, budget_ms: float | None = None, iterations: int | None = None,
             seed: int | None = None) -> list[Action]:
        """The wrapped agent's plan, searched on `state` with its decks shuffled (seeded by
        `seed`); ValueError for an observation or a game without ordered decks."""
        _check_full(state, "peeking")
        view = shuffle_decks(state, random.Random(seed))
        return self.agent._plan_root(view, budget_ms, iterations, seed)
