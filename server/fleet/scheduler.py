"""A ladder across a fleet of referee processes (`maag ladder --fleet`): every process is a
referee the bots connect to, and one of them, the one holding the ladder's lock, schedules
for all (`FleetScheduler`), from what the database says rather than from its own
connections:

- who is free where: the presence every referee publishes (fleet/member.py);
- each bot's ladder games in progress: the running games of the ladder on every referee,
  plus the games assigned and not settled yet (fleet/assignments.py), so that `--per-bot`
  holds across the fleet, and across a change of scheduler;
- the results: the games of the ladder stored over since the last look, whoever hosted
  them; the ratings take a step per game and are refitted on the ladder's timer.

A pair is assigned to the referee of its seat-1 bot (the host) and, when seat 2's bot is
connected elsewhere, to that referee too (it links the seat to the host): a bot plays
everybody in the fleet, wherever they are connected. Each round's assignments are written in
one transaction fenced by this scheduler's epoch: a process that lost the lock without
knowing it writes nothing. The scheduler that takes over after a crash starts from the
database: nothing is lost but the round that was being written.
"""

from __future__ import annotations

import logging
import random
import time
from collections import defaultdict
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from maag.server.compete.pairing import choose_pairs
from maag.server.fleet.assignments import (
    StaleScheduler,
    assign,
    finished_after,
    ladder_load,
    lead,
    presence,
)
from maag.server.fleet.links import new_secret
from maag.server.storage.base import AsyncStorage

__all__ = ["FleetScheduler", "ScheduledLadder"]

LOG = logging.getLogger(__name__)

REMATCH_WAIT_S = 0.2
"""A bot whose only free candidate is its previous opponent waits this long for another (the
two bots of a game that just ended are free at the same moment: without it, a small or busy
ladder replays the same pairs)."""


class ScheduledLadder(Protocol):
    """What the scheduler reads and tells of the ladder it pairs (compete/ladder.py's `Ladder`):
    its pairing parameters and state, read each round, and the loss of its lead."""

    @property
    def name(self) -> str: ...
    @property
    def per_bot(self) -> int: ...
    @property
    def spread(self) -> float: ...
    @property
    def rng(self) -> random.Random: ...
    @property
    def struck(self) -> Mapping[str, Any]: ...
    @property
    def elo(self) -> dict[str, float]: ...
    @property
    def idle_since(self) -> dict[str, float]: ...
    @property
    def last_opponent(self) -> dict[str, str]: ...
    def next_seed(self) -> int | None: ...
    def lost_lead(self, why: str) -> None: ...


class FleetScheduler:
    """The scheduling of one ladder over every referee on its database (see the module):
    `storage` is the async store of the ladder's referee, called when a round needs it."""

    def __init__(self, ladder: ScheduledLadder, storage: Callable[[], AsyncStorage]) -> None:
        self.ladder = ladder
        self.storage = storage
        self.epoch: int | None = None  # ours while we lead
        self._after = 0  # games over up to this id have been read (below the oldest running)
        self._seen: set[int] = set()
        self.cross = 0  # games paired between bots on different referees (this run)
        self.local = 0

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await self.storage().apply(fn, *args)

    async def lead(self) -> None:
        """We hold the ladder's lock: raise its epoch (stale schedulers write nothing now)."""
        self.epoch = await self.run(lead, self.ladder.name)
        LOG.info("ladder %s: scheduling the fleet (epoch %d)", self.ladder.name, self.epoch)

    async def results(self, on_over: Callable[[int, tuple[str, str], int | None, str, Any], None]) -> None:
        """Hand every game of the ladder over since the last look to `on_over`, once."""
        lad = self.ladder
        over, after = await self.run(finished_after, f"ladder:{lad.name}", self._after)
        for gid, seats, winner, reason, verdict in over:
            if gid not in self._seen:
                self._seen.add(gid)
                on_over(gid, seats, winner, reason, verdict)
        self._after = after
        self._seen = {g for g in self._seen if g > after}

    def skip_history(self, ids: list[int]) -> None:
        """Games already in the ladder's history when it started: not new results."""
        self._seen.update(ids)

    async def round(self, limit: int | None, started: Callable[[tuple[str, str]], None]) -> int:
        """Pair the free bots of the whole fleet; returns how many games were assigned."""
        lad = self.ladder
        if self.epoch is None:
            return 0
        rows = await self.run(presence)
        load = await self.run(ladder_load, lad.name, f"ladder:{lad.name}")
        where: dict[str, dict[str, int]] = defaultdict(dict)  # bot -> server -> free slots
        total: dict[str, int] = defaultdict(int)
        for server, bot, free, _since in rows:
            where[bot][server] = free
            total[bot] += free
        cap = {}
        for bot, n in total.items():
            room = min(n, lad.per_bot - load[bot])
            if room > 0 and bot not in lad.struck:
                cap[bot] = room
                lad.idle_since.setdefault(bot, time.monotonic())
        pairs = choose_pairs(cap, lad.elo, lad.idle_since, lad.last_opponent, lad.rng, lad.spread,
                             limit=limit, rematch_wait=REMATCH_WAIT_S, now=time.monotonic())
        if not pairs:
            return 0
        games = []
        for a, b in pairs:
            sa, sb = _take_slot(where[a]), _take_slot(where[b])
            seed = lad.next_seed()
            games.append((sa, (a, b), sb, new_secret(), seed))
        try:
            await self.run(assign, lad.name, self.epoch, games)
        except StaleScheduler as e:
            LOG.warning("ladder %s: %s; no longer scheduling", lad.name, e)
            self.epoch = None
            lad.lost_lead(str(e))
            return 0
        for host, seats, server1, _secret, _seed in games:
            if host == server1:
                self.local += 1
            else:
                self.cross += 1
            started(seats)
        return len(games)


def _take_slot(servers: dict[str, int]) -> str:
    """The referee where the bot has the most free slots; one of them is taken."""
    best = max(sorted(servers), key=lambda s: servers[s])
    servers[best] -= 1
    return best
