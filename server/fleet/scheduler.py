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

A pair of connected bots is assigned to the referee of its seat-1 bot (the host) and, when
seat 2's bot is connected elsewhere, to that referee too (it links the seat to the host): a
bot plays everybody in the fleet, wherever they are connected. The ladder's hosted bots
(`--submitted`: every member loads their packages) are free on every member with a free
hosted slot (`--slots`, published in `fleet_hosts`): a game with one is hosted by such a
member (`place`): the connected opponent's own when it has a slot free, else the member with
the most free slots, to which the opponent's seat is linked; a game between two hosted bots by
the member with the most free slots. So hosted games spread over the members, each within its
slots, and `--per-bot` and the strikes hold for hosted bots as for connected ones (both are
counted from the database). Each round's assignments are written in
one transaction fenced by this scheduler's epoch: a process that lost the lock without
knowing it writes nothing. The scheduler that takes over after a crash starts from the
database: nothing is lost but the round that was being written.
"""

from __future__ import annotations

import logging
import random
import time
from collections import defaultdict
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from maag.server.compete.pairing import choose_pairs
from maag.server.fleet.assignments import (
    StaleScheduler,
    assign,
    finished_after,
    hosts,
    ladder_load,
    lead,
    presence,
)
from maag.server.fleet.links import new_secret
from maag.server.storage.base import AsyncStorage

__all__ = ["FleetScheduler", "ScheduledLadder", "Placement", "place"]

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
    @property
    def hosted_bots(self) -> Collection[str]:
        """The hosted participants (NAME@VERSION) the ladder pairs (`--submitted`)."""
    @property
    def plays_connected(self) -> bool:
        """Whether connected bots play (not with `--submitted only`)."""
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
        rows = await self.run(presence) if lad.plays_connected else []
        hosted = set(lad.hosted_bots)
        slots = await self.run(hosts) if hosted else {}
        load = await self.run(ladder_load, lad.name, f"ladder:{lad.name}")
        where: dict[str, dict[str, int]] = defaultdict(dict)  # bot -> server -> free slots
        total: dict[str, int] = defaultdict(int)
        for server, bot, free, _since in rows:
            if bot not in hosted:  # (a connected bot named like a hosted version: not paired twice)
                where[bot][server] = free
                total[bot] += free
        if slots:
            for bot in hosted:
                total[bot] = lad.per_bot
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
        placed = []
        for a, b in pairs:
            p = place((a, b), where, slots, hosted)
            if p is None:
                continue  # no hosted slot left this round: the two wait for the next
            seed = lad.next_seed()
            games.append((p.host, (a, b), p.servers[1], new_secret(), seed))
            placed.append((p.servers[0], p.hosted))
        if not games:
            return 0
        try:
            await self.run(assign, lad.name, self.epoch, games, placed)
        except StaleScheduler as e:
            LOG.warning("ladder %s: %s; no longer scheduling", lad.name, e)
            self.epoch = None
            lad.lost_lead(str(e))
            return 0
        for (host, seats, server1, _secret, _seed), (server0, _hosted) in zip(games, placed, strict=True):
            if host == server1 == server0:
                self.local += 1
            else:
                self.cross += 1
            started(seats)
        return len(games)


@dataclass(frozen=True, slots=True)
class Placement:
    """Where a paired game is played: its host, each seat's referee (the host, or the one
    that links the seat there) and the hosted seats' bits (1: seat 1, 2: seat 2)."""

    host: str
    servers: tuple[str, str]
    hosted: int


def place(seats: tuple[str, str], where: dict[str, dict[str, int]], slots: dict[str, int],
          hosted: Collection[str]) -> Placement | None:
    """Place the game of `seats` (see the module), taking the slots it uses from `where`
    (connected bot -> referee -> free slots) and `slots` (referee -> free hosted slots); None
    when it needs a hosted slot and none is left."""
    a, b = seats
    bits = (1 if a in hosted else 0) | (2 if b in hosted else 0)
    if not bits:
        sa, sb = _take_slot(where[a]), _take_slot(where[b])
        return Placement(sa, (sa, sb), 0)
    if not any(n > 0 for n in slots.values()):
        return None
    connected = b if bits == 1 else a if bits == 2 else None
    own = {s for s, n in where[connected].items() if n > 0} if connected is not None else set()
    mine = {s: n for s, n in slots.items() if n > 0 and s in own}
    host = _take_slot(mine or {s: n for s, n in slots.items() if n > 0})
    slots[host] -= 1
    if connected is None:
        return Placement(host, (host, host), bits)
    server = host if host in own else _take_slot(where[connected])
    if host in own:
        where[connected][host] -= 1
    return Placement(host, (host, server) if connected == b else (server, host), bits)


def _take_slot(servers: dict[str, int]) -> str:
    """The referee where the bot has the most free slots; one of them is taken."""
    best = max(sorted(servers), key=lambda s: servers[s])
    servers[best] -= 1
    return best
