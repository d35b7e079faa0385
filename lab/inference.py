"""An honest agent that infers something of the opponent's hidden hand from its play, for
experiments (`infer:AGENT` in `maag experiment twin-bot`): the cheapest step from the
uniform belief towards the peeking twin (docs/results-cards.md, issue 58).

The rule (the card game; other games keep the uniform belief): a player ends its turn with
mana left only when no card in its hand costs that much or less, The Coin aside (kept on
purpose) and minions aside when its board is full. Mana refills only at the start of a
player's own turn, so on the agent's turn the opponent's `mana` in the observation is what
it left, and its hand is the one it ended its turn with. The agent plans exactly as AGENT
on one determinization of its observation, drawn uniformly as AGENT draws it, but kept only
if the opponent's sampled hand breaks the rule nowhere: of up to `tries` uniform draws, the
first that keeps the rule, else the one that breaks it least. It sees nothing but its
observation: what mana was left is public.

Over 12 games of `mcts` against itself (300 iterations a decision), on the 61 turns whose
opponent had left mana, its true hand broke the rule on 1 (2%), a uniform sample on 32%."""

from __future__ import annotations

import random
import time
from typing import Any

from maag.bots.cheating import CheatingAgent
from maag.engine import Action, Observation, State
from maag.engine.games.cards.pool import POOL, TOKENS

__all__ = ["InferringAgent", "Wrapping", "unspent_mana_breaches"]

COST = {c.id: c.cost for c in POOL + TOKENS}
MINION = {c.id for c in POOL + TOKENS if c.type == "Mi"}
COIN = "T_COIN"
BOARD = 7  # a full board (spec/cards.md): no minion can be played


def unspent_mana_breaches(full: dict[str, Any], opponent: int, mana: int) -> int:
    """How many cards of `opponent`'s hand in the full state `full` (its JSON) it could have
    played with the `mana` it left: cards of that cost or less but The Coin, minions only
    with room on its board."""
    p = full["players"][opponent]
    room = len(p["board"]) < BOARD
    return sum(1 for c in p["hand"]
               if c != COIN and COST.get(c, mana + 1) <= mana and (room or c not in MINION))


class Wrapping:
    """An agent wrapped by another that plans in its stead: the wrapped agent's last search,
    its way of sending a plan (`stepwise`) and its set-up for a game, passed through (the
    inferring agent here, the twins of twin_bot.py)."""

    agent: Any

    @property
    def last(self) -> Any:
        return self.agent.last

    @property
    def stepwise(self) -> bool:
        return bool(self.agent.stepwise)

    def for_game(self, game: str) -> None:
        self.agent.for_game(game)


class InferringAgent(Wrapping):
    """Wraps an agent: it plans on one determinization of its observation that the
    opponent's unspent mana allows (the module's rule), of up to `tries` uniform draws."""

    def __init__(self, agent: Any, tries: int = 16) -> None:
        self.agent = agent
        self.on_sample = CheatingAgent(agent)  # (its way of planning from a full state)
        self.tries = tries
        self.breaches = 0   # plans on a determinization that still broke the rule
        self.plans = 0

    @property
    def name(self) -> str:
        return f"inferring-{self.agent.name}"

    def determinization(self, view: Observation, rng: random.Random) -> State:
        """A full state consistent with `view`, chosen by the rule (cards), else uniform."""
        first = view.determinize(rng.getrandbits(62))
        if view.game.name != "cards":
            return first
        opponent = 1 - view.seat
        mana = int(view.to_json()["players"][opponent]["mana"])
        best, fewest = first, unspent_mana_breaches(first.to_json(), opponent, mana)
        for _ in range(self.tries - 1):
            if fewest == 0:
                break
            st = view.determinize(rng.getrandbits(62))
            n = unspent_mana_breaches(st.to_json(), opponent, mana)
            if n < fewest:
                best, fewest = st, n
        self.plans += 1
        self.breaches += fewest > 0
        return best

    def plan(self, view: Observation, budget_ms: float | None = None, iterations: int | None = None,
             seed: int | None = None) -> list[Action]:
        """The wrapped agent's plan on the chosen determinization; the time spent choosing
        it is taken off `budget_ms`."""
        t0 = time.monotonic()
        full = self.determinization(view, random.Random(seed))
        if budget_ms is not None:
            budget_ms = max(1.0, budget_ms - (time.monotonic() - t0) * 1000)
        return self.on_sample.plan(full, budget_ms=budget_ms, iterations=iterations, seed=seed)
