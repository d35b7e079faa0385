"""The storage keeper: holds this referee's lease in the database and rides out the
database's outages, keeping results that cannot be written (in memory and in a spill file)
until it answers again.

It knows no sockets and no games, only the storage (an `AsyncStorage`), the results waiting
and two callbacks: `on_back` (the database answers again: the server resumes pairing) and
`on_fail` (away longer than the outage limit: the server gives up). Pairing pauses while
`ok` is false. `tests/server/test_keeper.py` drives it with a storage that fails on demand.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import random
import time
from collections.abc import Callable, Iterable
from typing import Any, Protocol, TypeVar

from maag.server.fleet.store import Claimed
from maag.server.net.model import GameRequest, GameSummary
from maag.server.storage.base import LeaseLost, StorageUnavailable
from maag.server.storage.spill import Spill

__all__ = ["KeeperStorage", "StorageKeeper"]

LOG = logging.getLogger("maag.server.net.server")
T = TypeVar("T")


class KeeperStorage(Protocol):
    """What the keeper uses of the loop's storage (an `AsyncStorage`)."""

    async def run(self, fn: Callable[..., T], *args: Any) -> T: ...
    async def register_server(self, server: str, name: str, lease_s: float) -> None: ...
    async def heartbeat(self, server: str) -> int: ...
    async def unregister_server(self, server: str) -> None: ...
    async def add_connection(self, server: str, conn: int, bot: str, limit: int) -> int: ...
    async def keep_connections(self, server: str, live: Iterable[int]) -> None: ...
    async def finish_game(self, game_id: int, replay: dict[str, Any], fenced: bool = True) -> None: ...


class StorageKeeper:
    """The lease, the outages and the results waiting for the database (see the module)."""

    def __init__(self, storage: KeeperStorage, server_id: str, *, lease_s: float, outage_limit_s: float,
                 spill_dir: str | None, on_back: Callable[[], None], on_fail: Callable[[str], None],
                 live_connections: Callable[[], list[int]] | None = None) -> None:
        self.storage = storage
        self.server_id = server_id
        self.lease_s = lease_s
        self.outage_limit_s = outage_limit_s
        self.spill_dir = spill_dir
        self.on_back = on_back
        self.on_fail = on_fail
        self.live_connections = live_connections
        """The ids of this server's connections counted in the database (`add_connection`):
        with every heartbeat, the others' rows go (those whose removal did not reach it)."""
        self.claim_lapsed: Callable[[str, str | None], list[Claimed]] = lambda server, game: []
        """Takes over, on the storage thread, the games of the referees whose lease lapsed (the
        fleet's store, fleet/takeover.py): (our server id, our game) -> the games taken."""
        self.on_claimed: Callable[[list[Claimed]], None] = lambda games: None
        """Called with the games this server took over from referees whose lease lapsed."""
        self.on_lease_lost: Callable[[str], None] = lambda why: None
        """Called when this server's lease was revoked: it must stop (fleet/takeover.py)."""
        self.lease_lost = False
        self.game: str | None = None
        """The game this server referees: it takes over only games of it."""
        self.handed_over = False
        """Our games were handed over at our stop: the lease row stays for the others to claim."""
        self.peers = 0
        """Other referees holding a live lease on the database at the last renewal."""
        self.held: dict[int, Callable[[bool], None]] = {}
        """Per game of `pending`: its `game_over`, told once its result is stored (called with
        False if it is refused: then never), for a referee with peers, one of which may take
        the game over while the result waits, so that a result told might never be stored."""
        self.adopted: set[int] = set()
        """Games of `pending` adopted from another server's spill file: not ours, so their
        results are not fenced by our lease (the bots were told them already)."""
        self.ok = True
        self.down_since: float | None = None
        self.pending: dict[int, tuple[dict[str, Any], GameRequest | None, GameSummary | None]] = {}
        """Results waiting for the database: game id -> (replay, its request, its summary)."""
        self.spill: Spill | None = None
        self._wake = asyncio.Event()

    async def count_connection(self, conn: int, bot: str, limit: int) -> bool | None:
        """Count connection `conn` among `bot`'s to every referee on this database: True
        (counted), False (it has `limit` there already), None (the database is away: not
        counted; the server's own limit holds meanwhile)."""
        try:
            had = await self.storage.add_connection(self.server_id, conn, bot, limit)
        except Exception as e:
            LOG.warning("connection %d: %s's connections not counted across referees (database: %s)",
                        conn, bot, e)
            return None
        return had < limit

    async def forget_connections(self) -> None:
        """Drop the rows of this server's connections that ended (now; else with the next
        heartbeat)."""
        with contextlib.suppress(Exception):
            await self._keep_connections()

    async def _keep_connections(self) -> None:
        if self.live_connections is not None:
            await self.storage.keep_connections(self.server_id, self.live_connections())

    async def start(self, description: str) -> None:
        """Register this server's lease, adopt the results a stopped server left in the spill
        directory (stored first: their bots were told), then take over the games of servers
        whose lease lapsed."""
        await self.storage.register_server(self.server_id, description, self.lease_s)
        if self.spill_dir is not None:
            self.spill = Spill(self.spill_dir, self.server_id)
            adopted = self.spill.adopt()
            for gid, replay in adopted.items():
                self.pending[gid] = (replay, None, None)
                self.adopted.add(gid)
            if adopted:
                self.save_spill()
                LOG.warning("%d result(s) left by a server that could not store them will be stored",
                            len(adopted))
                await self.flush()
            self.spill.forget_adopted()
        await self.claim()

    def lost(self, e: BaseException) -> None:
        """Something could not reach the database: pause pairing, let the keeper retry."""
        if self.ok:
            self.ok = False
            self.down_since = time.monotonic()
            LOG.error("storage unavailable: %s; pairing paused, results kept until it is back", e)
        self._wake.set()

    def wake(self) -> None:
        """Renew the lease now (a write was refused: is it still ours?)."""
        self._wake.set()

    def keep(self, game_id: int, replay: dict[str, Any], request: GameRequest | None = None,
             summary: GameSummary | None = None) -> None:
        """Keep a result the database did not take, until it does (`request`'s future is
        resolved with `summary` then)."""
        self.pending[game_id] = (replay, request, summary)
        self.save_spill()

    def waiting(self, game_id: int) -> bool:
        return game_id in self.pending

    async def run(self) -> None:
        """Renew the lease, abort the games of servers whose lease lapsed, and, while the
        database is away, retry with exponential backoff and jitter: write the results that
        wait, call `on_back` when it answers, `on_fail` after `outage_limit_s`. Logs one line
        per attempt at most, at most every 30 s."""
        beat = self.lease_s / 3
        backoff = 0.25
        last_log = 0.0
        while True:
            wait = beat if self.ok and not self.pending else backoff * random.uniform(0.5, 1.5)
            self._wake.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._wake.wait(), wait)
            try:
                live = await self.storage.heartbeat(self.server_id)
                self.peers = max(0, live - 1) if isinstance(live, int) else 0
                await self._keep_connections()
                await self.claim()
                await self.flush(raise_errors=True)
            except LeaseLost as e:
                self.revoked(str(e))
                return
            except Exception as e:
                self.lost(e)
                down = time.monotonic() - (self.down_since or time.monotonic())
                if time.monotonic() - last_log >= 30.0:
                    last_log = time.monotonic()
                    LOG.error("storage still unavailable after %.0f s (%d result(s) waiting): %s", down,
                              len(self.pending), e)
                if down > self.outage_limit_s:
                    self.fail(f"storage unavailable for {down:.0f} s (limit {self.outage_limit_s:g} s)")
                    return
                backoff = min(10.0, backoff * 2)
                continue
            backoff = 0.25
            if not self.ok:
                down = time.monotonic() - (self.down_since or time.monotonic())
                self.ok = True
                self.down_since = None
                LOG.warning("storage is back after %.1f s; pairing resumed", down)
                self.on_back()

    async def claim(self) -> None:
        """Take over the games of the servers whose lease lapsed (`on_claimed` rebuilds them).
        A claim refused other than for our lease or an outage (a row still locked by a
        referee that was stopped in a transaction) is tried again at the next renewal."""
        try:
            claimed = await self.storage.run(self.claim_lapsed, self.server_id, self.game)
        except (LeaseLost, StorageUnavailable):
            raise
        except Exception as e:
            LOG.warning("takeover deferred: %s", e)
            return
        if claimed:
            LOG.warning("took over %d game(s) of servers whose lease lapsed", len(claimed))
            self.on_claimed(claimed)

    def revoked(self, why: str) -> None:
        """This server's lease was revoked: nothing it writes is accepted any more."""
        if not self.lease_lost:
            self.lease_lost = True
            LOG.critical("lease lost: %s", why)
            self.on_lease_lost(why)

    async def flush(self, raise_errors: bool = False) -> None:
        """Write the results that wait for the database, oldest first."""
        for gid in sorted(self.pending):
            if gid not in self.pending:  # written meanwhile by another flush
                continue
            replay, req, summary = self.pending[gid]
            try:
                await self.storage.finish_game(gid, replay, fenced=gid not in self.adopted)
            except StorageUnavailable:
                if raise_errors:
                    raise
                return
            except LeaseLost as e:  # its game was taken over: it is the new host's to store
                self.held.pop(gid, None)
                if raise_errors:
                    raise
                self.revoked(str(e))
                return
            except Exception:  # refused for good (another result is stored): say so, drop it
                LOG.exception("game %s: its result was refused by storage", gid)
                stored = False
            else:
                stored = True
                LOG.info("game %s: result stored after the database came back", gid)
            self.adopted.discard(gid)
            tell = self.held.pop(gid, None)
            if tell is not None:
                tell(stored)
            if self.pending.pop(gid, None) is None:
                continue
            self.save_spill()
            if req is not None and req.future is not None and not req.future.done() and summary is not None:
                req.future.set_result(dataclasses.replace(summary, stored=stored))

    def save_spill(self) -> None:
        """Write the results still waiting to this server's spill file (if it has one)."""
        if self.spill is not None:
            self.spill.save({g: r for g, (r, _, _) in self.pending.items()})

    def fail(self, why: str) -> None:
        LOG.critical("giving up: %s", why)
        self.on_fail(why)

    async def stop(self) -> None:
        """At the server's stop: a last try to write what waits, then the lease is given back
        (if nothing waits) and the spill file closed."""
        await self.flush()
        if not self.pending and self.ok and not self.lease_lost and not self.handed_over:
            with contextlib.suppress(Exception):
                await self.storage.unregister_server(self.server_id)
        if self.pending:
            LOG.error("%d result(s) could not be stored; they wait in %s for the next server",
                      len(self.pending), self.spill.path if self.spill else "memory (lost: no spill_dir)")
        if self.spill is not None:
            self.spill.close()
