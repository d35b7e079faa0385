"""Cheating and peeking twins as bot processes on a referee, for experiments only
(`maag experiment twin-bot`): what an agent that sees what the rules hide scores through
the real path, `maag match`, against agents the in-process experiments cannot run at the
referee's clock (OpenSpiel's, a bot process of one's own).

The referee never sends what a seat may not see, and nothing here asks it to. The twin
rebuilds the true state itself, as the referee's replay does (maag.server.referee.replay):
the game of a reproducible match is `new_state(seed)` with the seed `derive_seed(match
seed, deal)`, and then every action applied, in order: its own (those the referee's
`result` accepted) and the opponent's (its events). So the twin must be told the match's
`--seed`, and it checks itself before every plan: the rebuilt state's observation of its
seat must be the observation the referee sent. When it is not (a restart lost the
actions seen, a timeout ended a turn), the twin plans from its observation like the
honest agent, and counts it (`TwinStats`; logged at the game's end): a bound measured with
such plans is checked on those counts. A late seat's turn is ended for it (an `end_turn`
after the `timeout` event), as the referee does.

    maag match "python3 -m maag.server experiment twin-bot cheat:best --match-seed 58" \\
        openspiel:mcts,evaluator=heuristic --game cards --tc 100ms --games 200 --seed 58

SPEC is `cheat:AGENT` (the true state: every hand and secret and both decks' order, the
next draws) or `peek:AGENT` (every hand and secret, the decks shuffled again before each
plan), as in `maag experiment hidden` (maag.bots.cheating). For comparison with them one
honest agent runs here too: `infer:AGENT` (maag.lab.inference: one determinization that
the opponent's unspent mana allows), which needs neither the match's seed nor the truth."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from maag.bots import parse_agent
from maag.bots.cheating import CheatingAgent, PeekingAgent
from maag.bots.runner import agent_bot, engine_view
from maag.clients import Bot, GameRecord, Limit, Observation, TurnResult
from maag.engine import Action, State
from maag.engine import Observation as EngineObservation
from maag.engine.seeds import derive_seed

from .hidden import CHEAT, PEEK
from .inference import InferringAgent, Wrapping

__all__ = ["INFER", "TwinStats", "twin_bot"]

INFER = "infer:"

LOGGER = logging.getLogger("maag.lab.twin_bot")

# How many deals past the expected one a twin looks through for its game's seed (a bot
# process started again mid-match no longer knows how many games it has played).
SEARCH_DEALS = 2048


@dataclass
class TwinStats:
    """A twin process's plans: those made from the rebuilt true state, and those made from
    the observation because the state could not be rebuilt (`lost`)."""

    cheated: int = 0
    lost: int = 0


class _Twin(Wrapping):
    """The agent the bot plans with: its twin on `truth` when the bot has rebuilt it, the
    honest agent on the observation otherwise."""

    def __init__(self, spec: str, agent: Any, stats: TwinStats) -> None:
        self.agent = agent
        self.twin = PeekingAgent(agent) if spec.startswith(PEEK) else CheatingAgent(agent)
        self.infer = InferringAgent(agent) if spec.startswith(INFER) else None
        self.stats = stats
        self.truth: State | None = None

    def plan(self, view: EngineObservation, budget_ms: float | None = None, iterations: int | None = None,
             seed: int | None = None) -> list[Action]:
        if self.infer is not None:  # honest: the observation only
            return self.infer.plan(view, budget_ms=budget_ms, iterations=iterations, seed=seed)
        if self.truth is None:
            self.stats.lost += 1
            return list(self.agent.plan(view, budget_ms=budget_ms, iterations=iterations, seed=seed))
        self.stats.cheated += 1
        return self.twin.plan(self.truth, budget_ms=budget_ms, iterations=iterations, seed=seed)


def twin_bot(spec: str, match_seed: int | None, *, seed: int | None = None, **runner: Any) -> type[Bot]:
    """A Bot class playing the twin `spec` ("cheat:AGENT" or "peek:AGENT", AGENT as
    maag.bots parses it) in a match seeded with `match_seed` (None only for "infer:AGENT");
    `runner`: agent_bot's timing options. BotError for an unknown agent or setting,
    ValueError for a spec without a twin's prefix or a twin without the match's seed."""
    prefix = next((p for p in (CHEAT, PEEK, INFER) if spec.startswith(p)), None)
    if prefix is None:
        raise ValueError(f"a twin is {CHEAT}AGENT or {PEEK}AGENT (or {INFER}AGENT), not {spec!r}")
    if match_seed is None and prefix != INFER:
        raise ValueError(f"{spec}: a twin rebuilds its games from the match's seed: give it")
    inner = spec[len(prefix):]
    name, _, settings = inner.partition(":")
    base = agent_bot(name.strip(), [s for s in settings.split(",") if s.strip()], seed=seed, **runner)
    stats = TwinStats()
    started = [0]  # games this process has started: game i of the match is deal i // 2

    class TwinBot(base):  # type: ignore[valid-type, misc]
        def __init__(self, settings: Any = None) -> None:
            super().__init__(settings)
            self.agent = _Twin(spec, parse_agent(inner), stats)
            self.deal = started[0] // 2
            started[0] += 1
            self.actions: list[dict[str, Any]] = []  # every action applied, in order
            self.sent: list[dict[str, Any]] = []     # the last turn message's actions
            self.state: State | None = None          # the rebuilt true state ...
            self.applied = 0                         # ... after this many of `actions`
            self.seed: int | None = None
            self.searched = False  # the deals were looked through once this game

        async def on_event(self, kind: str, seat: int, action: dict[str, Any] | None) -> None:
            await super().on_event(kind, seat, action)
            if kind == "action" and action is not None:
                self.actions.append(dict(action))
            elif kind == "timeout":  # a late seat's turn is ended for it (server/referee/deadlines.py)
                self.actions.append({"type": "end_turn"})

        async def on_result(self, accepted: int, error: str | None, message: str | None) -> None:
            await super().on_result(accepted, error, message)
            self.actions.extend(self.sent[:accepted])
            self.sent = []

        async def on_game_over(self, record: GameRecord) -> None:
            await super().on_game_over(record)
            infer = self.agent.infer
            if infer is not None:
                LOGGER.warning("%s: %d plan(s), %d on a determinization the rule could not keep", spec,
                               infer.plans, infer.breaches)
                return
            LOGGER.warning("twin %s: %d plan(s) on the true state, %d on the observation", spec,
                           stats.cheated, stats.lost)

        def choose_turn(self, observation: Observation, limit: Limit) -> TurnResult:
            if prefix != INFER:
                self.agent.truth = self._truth(engine_view(observation))
            result = super().choose_turn(observation, limit)
            self.sent = result.action_dicts()
            return result

        def _truth(self, view: EngineObservation) -> State | None:
            """The true state behind `view`, rebuilt from the game's seed and the actions
            applied so far; None if it cannot be (then it is looked for again next time)."""
            if self.seed is not None and self.state is not None:
                st: State | None = self.state
                try:
                    for a in self.actions[self.applied:]:
                        _apply(st, a)  # type: ignore[arg-type]
                except Exception:  # noqa: BLE001 - any refusal means the rebuilt game is wrong
                    st = None
                self.applied = len(self.actions)
                if st is not None and _sees(st, view):
                    return st
                LOGGER.warning("twin %s: the rebuilt state is not the referee's any more", spec)
                self.seed = self.state = None
            # the expected deal first; every other once a game (a process started again)
            deals = [self.deal] if self.searched else [self.deal, *range(SEARCH_DEALS)]
            self.searched = True
            assert match_seed is not None
            for deal in deals:
                st = _replay(view, derive_seed(match_seed, deal), self.actions)
                if st is not None and _sees(st, view):
                    self.seed, self.state, self.applied = derive_seed(match_seed, deal), st, len(self.actions)
                    return st
            return None

    TwinBot.__name__ = TwinBot.__qualname__ = f"TwinBot[{spec}]"
    TwinBot.stats = stats  # type: ignore[attr-defined]
    return TwinBot


def _replay(view: EngineObservation, seed: int, actions: list[dict[str, Any]]) -> State | None:
    """The game of `view` (its options) from `seed` with `actions` applied; None if one is
    refused."""
    st = view.game.new_state(seed)
    try:
        for a in actions:
            _apply(st, a)
    except Exception:  # noqa: BLE001 - a refusal means another seed
        return None
    return st


def _apply(state: State, action: dict[str, Any]) -> None:
    """Apply `action` as the referee applied it: as it is, or, an opponent's action shown
    as the seat sees it (a secret played face down), the one legal action shown so
    (GameSpec.public_action); ValueError if none or several are."""
    try:
        state.apply(action)
        return
    except Exception:  # noqa: BLE001 - maybe the public face of a hidden action
        pass
    public = state.game.spec.public_action
    found = [a for a in state.legal_actions() if public(a.to_dict()) == action]
    if len(found) != 1:
        raise ValueError(f"{len(found)} legal actions are shown as {action}")
    state.apply(found[0])


def _sees(state: State, view: EngineObservation) -> bool:
    """Whether the seat of `view` sees `state` as `view`."""
    return not state.is_terminal and EngineObservation.of(state, view.seat).to_json() == view.to_json()


def run(spec: str, match_seed: int | None, address: str, token: str, *, concurrency: int = 1,
        seed: int | None = None) -> TwinStats:
    """Play the twin `spec` on the referee at `address` until it closes the connection;
    the twin's plans counted. BotError for a bad agent, address or token."""
    import asyncio

    from maag.clients import Client

    bot = twin_bot(spec, match_seed, seed=seed)
    client = Client(bot, token=token, name=spec[:64], concurrency=concurrency)

    async def main() -> None:
        await client.connect(address)
        await client.run()

    asyncio.run(main())
    return bot.stats  # type: ignore[attr-defined, no-any-return]
