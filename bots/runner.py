"""A `Bot` that plays any agent of maag.bots (`maag bot run AGENT`): each turn it plans
the rest of the turn from its observation, within the time the referee allows."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, ClassVar

from maag.clients import Bot, BotError, Info, Limit, Observation, TurnResult
from maag.engine import Game, registry
from maag.engine import Observation as EngineObservation

from .agents import AGENTS, AgentError, make_agent

# Milliseconds kept back from `time_left_ms` for what follows the search: the plan's
# encoding, the message's way to the referee and the referee's reading of it, and the
# search's own overshoot when the process is preempted near its deadline. The referee
# charges all of it (its lag allowance forgives only the kernel's measure of transport,
# microseconds on one machine) and a late turn is lost whole. Measured through the referee
# on a loaded 2-core machine (load 3-5): 3-6 ms median, outliers up to 40 ms; a 15 ms margin
# lost games on time at 100 ms per turn. The time from reading `your_turn` to the search's
# start is taken off as measured.
DEFAULT_MARGIN_MS = 30
# After a late turn the margin grows (doubling) up to this much more; it is halved again after
# every EASE_TURNS turns planned without a late one. (Kept for the process's life, one late
# turn on a briefly loaded machine cost every later turn of a long match up to half a second:
# a 60-game match at 1 s per turn searched 873 ms a turn on average instead of 950.)
MAX_EXTRA_MS = 500.0
EASE_TURNS = 20
# The share of what is left (after the margin) that a turn's search may use.
DEFAULT_TIME_USE = 0.98
# In a game with chance inside a turn (or for an agent that re-searches before every action,
# `reuse`) a bot plans again after each action; each plan gets
# this share of what is left of the turn (the first the most, as the turn's bulk is there).
CHANCE_SHARE = 3
# Above this `time_left_ms` the turn counts as unlimited (the referee's "no limit" value).
UNLIMITED_MS = 2**31 - 2


def agent_bot(name: str, params: Sequence[str] = (), *, budget_ms: float | None = None,
              margin_ms: float = DEFAULT_MARGIN_MS, time_use: float = DEFAULT_TIME_USE,
              seed: int | None = None) -> type[Bot]:
    """A Bot class playing agent `name` of maag.bots with "key=value" `params`.

    budget_ms: a fixed thinking time per turn (still capped by the clock). Without it, a
    turn uses `time_use` of what is left of the turn's budget when the search starts (the
    time since the `your_turn` was read taken off), less `margin_ms`; with an unlimited
    clock, the agent's default budget. BotError for an unknown agent or
    parameter (checked now, not at the first turn)."""
    try:
        make_agent(name, *params)
    except AgentError as e:
        raise BotError(str(e)) from None
    rng = random.Random(seed)
    # Added to margin_ms after a late turn of this process (doubling, up to MAX_EXTRA_MS; eased
    # after EASE_TURNS turns in time, see above): a machine loaded past what the margin allows
    # costs one turn, not the game.
    extra_ms = [0.0, 0.0]  # the extra margin, and turns planned since the last late one

    class AgentBot(Bot):
        games: ClassVar[tuple[str, ...]] = AGENTS[name].games or tuple(registry.names())

        def __init__(self, settings: Any = None) -> None:
            super().__init__(settings)
            self.agent = make_agent(name, *params)

        def think_ms(self, limit: Limit) -> float | None:
            left = limit.time_left_ms
            if left is None or left >= UNLIMITED_MS:
                return budget_ms
            usable = max(1.0, (left - limit.elapsed_ms() - margin_ms - extra_ms[0]) * time_use)
            return min(usable, budget_ms) if budget_ms is not None else usable

        async def on_event(self, kind: str, seat: int, action: dict[str, Any] | None) -> None:
            if kind == "timeout" and self.game is not None and seat == self.game.seat:
                extra_ms[0] = min(MAX_EXTRA_MS, max(2 * extra_ms[0], margin_ms))
                extra_ms[1] = 0.0

        def _ease(self) -> None:
            """One more turn planned since the last late one: halve the extra margin every
            EASE_TURNS of them."""
            if extra_ms[0] <= 0.0:
                return
            extra_ms[1] += 1
            if extra_ms[1] >= EASE_TURNS:
                extra_ms[1] = 0.0
                extra_ms[0] = extra_ms[0] / 2 if extra_ms[0] / 2 >= 1.0 else 0.0

        def choose_turn(self, observation: Observation, limit: Limit) -> TurnResult:
            self._ease()
            view = engine_view(observation)
            self.agent.for_game(view.game.name)  # `best` resolves its agent, which may be stepwise
            # the agent's `reuse` plans again after each action too (one action a turn's plan)
            stepwise = view.game.spec.chance_within_turn or getattr(self.agent, "stepwise", False)
            think = self.think_ms(limit)
            if stepwise and think is not None:
                think /= CHANCE_SHARE  # the turn's budget is shared by several plans
            plan = self.agent.plan(view, budget_ms=think, seed=rng.getrandbits(62))
            if not plan:
                plan_dicts: list[dict[str, Any]] = [{"type": "end_turn"}]
            else:
                plan_dicts = [a.to_dict() for a in plan]
            if stepwise:
                # A draw or a random target may make the rest of the plan illegal: send the
                # first action only; the referee asks again for the rest of the turn.
                plan_dicts = plan_dicts[:1]
            info = Info()
            stats = getattr(getattr(self.agent, "last", None), "stats", None)
            if stats is not None:
                info["iterations"], info["nodes"] = stats.iterations, stats.nodes
                info["time_ms"], info["score"] = stats.elapsed_ms, stats.value
            return TurnResult(plan_dicts, info=info)

    AgentBot.name = name
    AgentBot.__name__ = AgentBot.__qualname__ = f"AgentBot[{name}]"
    return AgentBot


@lru_cache(maxsize=64)
def _engine_game(name: str, config_json: str) -> Game:
    return Game(name, json.loads(config_json))


def engine_view(observation: Observation) -> EngineObservation:
    """The SDK's observation (the wire's map) as the engine's `Observation`, what every agent
    of maag.bots plans from. The SDK itself never loads the engine."""
    info = observation.game
    game = _engine_game(info.game, json.dumps(dict(info.config), sort_keys=True))
    return EngineObservation.from_json(game, dict(observation.data))
