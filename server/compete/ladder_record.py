"""A ladder's record: its rated games in order (outcomes, seats and verdicts, game ids), the
bots the strike policy took out, and the host's rulings applied to them (storage/rulings.py:
a voided game leaves the record, a pardon clears a bot's strike history up to then); and the
ratings the ladder pairs by, fitted from `outcomes` (`LadderRatings`: an Elo step per game, the
full fit on a timer, in a thread).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Callable
from typing import Any

from maag.server.compete.ladder_report import LadderEvent, outcome
from maag.server.compete.strikes import StrikePolicy, StrikeRule, histories
from maag.server.storage.base import GameRecord, Storage
from maag.server.storage.rulings import latest, list_rulings, pardoned_view, pardons
from maag.stats import live, ratings

__all__ = ["LadderRecord", "LadderRatings"]

LOG = logging.getLogger("maag.server.compete.ladder")  # (the ladder's log)


class LadderRecord:
    """The record of ladder `name` (see the module); `on_event` is told struck, voided and
    pardoned."""

    def __init__(self, name: str, strikes: StrikePolicy, on_event: Callable[[LadderEvent], None]) -> None:
        self.name = name
        self.strikes = strikes
        self.on_event = on_event
        self.outcomes: list[ratings.Outcome] = []
        self.played: list[tuple[str, str, dict[str, Any] | None]] = []  # (seat 1, seat 2, verdict)
        self.played_ids: list[int] = []  # each of `played`'s (and `outcomes`') game id
        self.struck: dict[str, StrikeRule] = {}
        self.cleared: dict[str, int] = {}
        """bot -> the newest game its latest pardon cleared (storage/rulings.py)."""
        self.rulings_seen = 0  # the newest ruling applied

    def load(self, storage: Storage, past: list[GameRecord]) -> None:
        """Start again from the stored games `past` (newest first) and the rulings so far."""
        self.outcomes.clear()
        self.played.clear()
        self.played_ids.clear()
        self.rulings_seen = latest(storage)  # (read first: a later ruling is looked for again)
        self.cleared = pardons(storage)
        for g in reversed(past):  # oldest first (a voided game's status is `voided`: left out)
            o = outcome(g.seats, g.winner) if g.status == "finished" else None
            if o is not None:
                self.outcomes.append(o)
                self.played.append((g.seats[0], g.seats[1], g.verdict))
                self.played_ids.append(g.id)
        self.struck.clear()

    def add(self, gid: int, seats: tuple[str, str], winner: int | None,
            verdict: dict[str, Any] | None) -> ratings.Outcome | None:
        """A game over: its outcome, recorded (None: no result to rate, not recorded)."""
        o = outcome(seats, winner)
        if o is not None:
            self.outcomes.append(o)
            self.played.append((seats[0], seats[1], verdict))
            self.played_ids.append(gid)
        return o

    def strike(self) -> None:
        """Take the bots the strike policy strikes out of the pairing."""
        view = pardoned_view(zip(self.played_ids, self.played, strict=True), self.cleared)
        for bot, rule in self.strikes.offenders(histories(view), self.struck).items():
            self.struck[bot] = rule
            LOG.warning("ladder %s: %s struck out (%s)", self.name, bot, rule)
            self.on_event(LadderEvent("struck", bot=bot, reason=str(rule), games=len(self.outcomes)))

    def read_rulings(self, st: Storage) -> tuple[int, list[Any], dict[str, int]] | None:
        """The rulings to apply, if any were made since the last (on the storage thread)."""
        newest = latest(st)
        if newest <= self.rulings_seen:
            return None
        return newest, list_rulings(st), pardons(st)

    def apply_rulings(self, newest: int, rulings: list[Any], cleared: dict[str, int], *,
                      shrunk: Callable[[], None], back: Callable[[str], None]) -> None:
        """Apply what `read_rulings` read: `shrunk` is called once games have left the record
        (before the events that say so), `back` with each struck-out bot paired again."""
        fresh = [r for r in rulings if r.id > self.rulings_seen]
        self.rulings_seen = newest
        voided = {r.game_id for r in fresh if r.kind == "void"}
        keep = [i for i, gid in enumerate(self.played_ids) if gid not in voided]
        pardoned = {r.bot for r in fresh if r.kind == "pardon" and r.bot is not None}
        # A pardon of NAME covers its hosted versions, NAME@N (storage.rulings.pardoned_view).
        affected = pardoned | {b for b in self.struck if b.split("@", 1)[0] in pardoned}
        affected.update(x for i, gid in enumerate(self.played_ids) if gid in voided
                        for x in self.played[i][:2])
        if len(keep) < len(self.played_ids):
            self.outcomes[:] = [self.outcomes[i] for i in keep]
            self.played[:] = [self.played[i] for i in keep]
            self.played_ids[:] = [self.played_ids[i] for i in keep]
            shrunk()
        for r in fresh:
            if r.kind == "void":
                self.on_event(LadderEvent("voided", game_id=r.game_id, reason=r.why,
                                          games=len(self.outcomes)))
        self.cleared = dict(cleared)
        # A struck bot whose history, without the voided games and with its pardon, breaks no
        # rule any more is paired again.
        view = histories(pardoned_view(zip(self.played_ids, self.played, strict=True), self.cleared))
        for bot in sorted(affected & set(self.struck)):
            if self.strikes.struck(view.get(bot, [])) is None:
                del self.struck[bot]
                back(bot)
        for r in fresh:
            if r.kind == "pardon" and r.bot is not None:
                self.on_event(LadderEvent("pardoned", bot=r.bot, reason=r.why, games=len(self.outcomes)))
        self.strike()  # (a void can strike too: its game may have been a clean one)


class LadderRatings:
    """The ratings a ladder pairs by, kept current at any size: each game steps its two bots'
    ratings (O(1)), and the maximum-likelihood fit of every outcome of the record is
    recomputed in a thread every `refit_s` when games were added, the games finished meanwhile
    stepped onto it; a fit of a history that lost games meanwhile (a void) is dropped."""

    def __init__(self, name: str, outcomes: list[ratings.Outcome], refit_s: float) -> None:
        self.name = name
        self.outcomes = outcomes  # (the record's own list: a reload refills it)
        self.refit_s = refit_s
        self.live = live.LiveRatings()
        self._fitted = 0  # outcomes the last full fit saw
        self._fitting: asyncio.Task[None] | None = None
        self._fit_at = -math.inf
        self._generation = 0  # raised when games leave the history: stale fits are dropped

    @property
    def elo(self) -> dict[str, float]:
        return self.live.elo

    def step(self, o: ratings.Outcome) -> None:
        """One more game's outcome (the full fit follows on its timer)."""
        self.live.update(*o)

    def refit(self) -> None:
        """The full fit of the whole history, now (at start; after games left it)."""
        self._generation += 1
        if self.outcomes:
            self.live.replace(live.fit_points(self.outcomes))
            self._fitted = len(self.outcomes)
        self._fit_at = time.monotonic()

    def maintain(self, now: float) -> None:
        """On the ladder's tick: the full fit off the event loop, when it is due."""
        if (self._fitting is not None or len(self.outcomes) <= self._fitted
                or now - self._fit_at < self.refit_s):
            return
        snapshot = list(self.outcomes)
        generation = self._generation
        self._fit_at = now

        async def refit() -> None:
            try:
                elo = await asyncio.to_thread(live.fit_points, snapshot)
                if generation != self._generation:
                    return  # games left the history meanwhile (a void): fitted again next tick
                self.live.replace(elo, self.outcomes[len(snapshot):])
                self._fitted = len(snapshot)
            except Exception:
                LOG.exception("ladder %s: the ratings' refit failed", self.name)
            finally:
                self._fitting = None

        self._fitting = asyncio.get_running_loop().create_task(refit())

    async def close(self) -> None:
        if self._fitting is not None:
            with contextlib.suppress(Exception):
                await self._fitting
