"""The submitted bots a ladder hosts (`maag ladder --submitted also|only`): their active
versions as participants named NAME@VERSION (looked for every HOSTED_REFRESH_S: a new version
joins, a retired one plays no new game), each game played on this machine's sandbox (at most
`slots` at once) or, between two hosted bots with a `cluster`, on a Dask worker.

compete/ladder.py's `Ladder` pairs them like connected bots; this module only runs them. In a
fleet (`maag ladder --fleet`) every member loads the same versions (each package fetched by
hash from the database into this machine's package store, once) and plays the hosted games
the fleet's scheduler assigns to it (`play_assigned`, called by fleet/member.py), at most
`slots` at once, which it publishes (`free_slots`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import secrets
import shutil
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from maag.server.hosting.api import PACKAGE_PREFIX, Host, HostedBot, HostOptions, hosted_bot
from maag.server.net.server import GameNotStarted, GameSummary, RefereeServer, ServerConfig
from maag.server.storage.backend import StorageUnavailable

__all__ = ["HostedEntrants", "HOSTED_REFRESH_S"]

LOG = logging.getLogger("maag.server.compete.ladder")  # (the ladder's log)

HOSTED_REFRESH_S = 5.0
"""How often the ladder looks for newly active (and retired) versions of submitted bots."""


class HostedEntrants:
    """The hosted participants of ladder `name` (see the module). `joined(label)` and
    `left(label)` are told as versions become active or retire."""

    def __init__(self, name: str, db_url: str, config: ServerConfig, *, host_options: HostOptions | None,
                 slots: int | None, log_dir: str | None, cluster: str | None,
                 joined: Callable[[str], None], left: Callable[[str], None]) -> None:
        self.name = name
        self.db_url = db_url
        self.config = config
        self.host_options = host_options or HostOptions()
        self.slots = slots if slots is not None else len(os.sched_getaffinity(0))
        """Hosted games at once on this machine at most."""
        self.log_dir = Path(log_dir) if log_dir else Path(tempfile.mkdtemp(prefix="maag-ladder-"))
        self.cluster = cluster
        """A Dask scheduler (or "local": a LocalCluster of `slots` workers) on which games between
        two hosted bots are played; each worker fetches the packages by hash and caches them."""
        self.joined, self.left = joined, left
        self.bots: dict[str, HostedBot] = {}  # NAME@VERSION -> its package, while it is active
        self.games = 0  # hosted games being played on this machine (or its cluster)
        self.restarted: dict[int, int] = {}
        """Games taken over here from a lost member, by id: how many of their hosted seats run
        here (`restart`). Each takes one of the `slots` as a game started here does."""
        self.dask: tuple[Any, Any] | None = None
        self._tokens: dict[str, str] = {}
        self._versions: dict[str, str] = {}  # NAME@VERSION -> package spec (package:sha256:HEX)
        self._host: Host | None = None
        self._server: RefereeServer | None = None
        self._workdir: Path | None = None
        self._refreshed = -math.inf
        self._played = 0  # games sent to the cluster, for their keys

    async def start(self, server: RefereeServer) -> None:
        """Host on `server` (the ladder's referee): the active versions join now."""
        self._server = server
        self._host = Host(server, self.host_options, log_dir=self.log_dir)
        self._workdir = Path(tempfile.mkdtemp(prefix="maag-ladder-packages-"))
        self.refresh()
        if self.cluster:
            from maag.server.compete.runner import connect_dask

            cluster = self.cluster
            self.dask = await asyncio.to_thread(connect_dask, cluster, self.slots)

    def due(self) -> bool:
        """Time to look for new and retired versions again."""
        return self._host is not None and time.monotonic() - self._refreshed > HOSTED_REFRESH_S

    def refresh(self) -> None:
        """The submitted bots' active versions, as hosted participants (NAME@VERSION): a new
        version joins (unrated: it starts from no games, its earlier versions keep theirs),
        a retired one plays no new game (those in progress finish). The database out of reach
        (restarting, this machine's link cut): the versions stay as they were, and it looks again
        HOSTED_REFRESH_S later (a fleet member once exited with a traceback here, status 1, not
        the 3 of a lost lease)."""
        active = self.active_versions()
        if active is not None:
            self.apply(active)

    def active_versions(self) -> dict[str, Any] | None:
        """The active versions by label, read from the database (blocking: a fleet member reads
        them in a thread, `asyncio.to_thread`, as a database that waits on a lost member's locks
        would stall its event loop past its lease); None when the database is out of reach."""
        from maag.server.storage.submissions import open_submission_store

        try:
            store = open_submission_store(self.db_url)
            try:
                return {v.label: v for v in store.versions(status="active")}
            finally:
                store.close()
        except StorageUnavailable as e:
            LOG.warning("ladder %s: the submitted bots' versions not read (%s); trying again in %g s",
                        self.name, e, HOSTED_REFRESH_S)
            self._refreshed = time.monotonic()
            return None

    def apply(self, active: dict[str, Any]) -> None:
        """Versions `active` (from `active_versions`) as the hosted participants: see `refresh`."""
        assert self._server is not None and self._workdir is not None
        for label in sorted(set(self.bots) - set(active)):
            del self.bots[label]
            self.left(label)
        for label, v in sorted(active.items()):
            if label in self.bots:
                continue
            try:
                bot = hosted_bot(PACKAGE_PREFIX + v.run_sha256, label, self.host_options, self._workdir,
                                 self.db_url)
            except (ValueError, KeyError, OSError) as e:
                LOG.error("ladder %s: %s cannot be hosted: %s", self.name, label, e)
                continue
            assert bot is not None
            if label not in self._tokens:
                self._tokens[label] = "ladder_" + secrets.token_urlsafe(18)
                self._server.add_token(self._tokens[label], label)  # in memory only
            self.bots[label] = bot
            self._versions[label] = PACKAGE_PREFIX + v.run_sha256
            self.joined(label)
        self._refreshed = time.monotonic()

    async def play(self, seats: tuple[str, str], seed: int | None, *, match_id: str,
                   started: Callable[[int], None], paired: Callable[[], None]) -> GameSummary:
        """Play one game of which at least one seat is hosted: on a Dask worker if both are and
        there is a cluster (`paired` is told then: its id is known once it is over), else on
        this machine (`started` with its stored id when it begins)."""
        assert self._host is not None
        bots = [self.bots.get(seats[0]), self.bots.get(seats[1])]
        self.games += 1
        try:
            if self.dask is not None and all(s in self.bots for s in seats):
                paired()
                return await self._play_on_cluster(seats, seed, match_id)
            return await self._host.play(seats, bots, [self._tokens.get(seats[0], ""),
                                                       self._tokens.get(seats[1], "")],
                                         match_id=match_id, seed=seed, tags={"Ladder": self.name},
                                         on_start=started)
        finally:
            self.games -= 1

    def free_slots(self) -> int:
        """Hosted games this member can start now (a fleet's scheduler reads it): its slots
        less the games it plays, those taken over here with their hosted bots started again
        included (they once ran on top of its slots)."""
        return max(0, self.slots - self.games - len(self.restarted))

    async def play_assigned(self, seats: tuple[str, str], hosted: tuple[bool, bool],
                            pins: tuple[asyncio.Future[str] | None, asyncio.Future[str] | None], *,
                            seed: int | None, match_id: str, on_start: Callable[[int], None],
                            on_request: Callable[[asyncio.Future[GameSummary]], None]) -> GameSummary:
        """Play a game a fleet's scheduler assigned to this member: each seat in `hosted` a
        fresh sandboxed process of its version, the other seat the bot connected here or the
        link of its `pins` entry (fleet/member.py). GameNotStarted when a hosted version is
        not loaded here (it retired, or its package could not be hosted): nothing is played."""
        assert self._host is not None
        missing = [s for s, h in zip(seats, hosted, strict=True) if h and s not in self.bots]
        if missing:
            raise GameNotStarted(f"{', '.join(missing)} not hosted here")
        bots = [self.bots[s] if h else None for s, h in zip(seats, hosted, strict=True)]
        self.games += 1
        try:
            return await self._host.play(seats, bots, [self._tokens.get(s, "") for s in seats],
                                         match_id=match_id, seed=seed, tags={"Ladder": self.name},
                                         on_start=on_start, pins=pins, on_request=on_request,
                                         handover=True)  # (at our stop: to the member taking it over)
        finally:
            self.games -= 1

    async def restart(self, label: str, gid: int,
                      seat: int) -> tuple[asyncio.Future[str], Callable[[], Awaitable[None]]] | None:
        """A fresh process of hosted version `label` for a seat of game `gid`, which this member
        took over from a lost one (Host.restart), once it said hello within its start-up budget
        (its future's result then is its name); None when `label` is not hosted here. The
        caller awaits the returned `close` once the game is over. The game takes one of this
        member's slots (`free_slots`) from now until its last such process is closed."""
        bot = self.bots.get(label)
        if bot is None or self._host is None:
            return None
        self.restarted[gid] = self.restarted.get(gid, 0) + 1

        def release() -> None:
            n = self.restarted.pop(gid, 1) - 1
            if n > 0:
                self.restarted[gid] = n

        try:
            hello, close = await self._host.restart(bot, self._tokens.get(label, ""), gid, seat)
        except BaseException:
            release()
            raise
        try:
            await asyncio.wait_for(asyncio.shield(hello), self.host_options.limits.hello_s)
        except BaseException:
            try:
                await close()
            finally:
                release()
            raise

        async def closed() -> None:
            try:
                await close()
            finally:
                release()

        return hello, closed

    async def _play_on_cluster(self, seats: tuple[str, str], seed: int | None, match_id: str) -> GameSummary:
        """One game between two hosted bots on a Dask worker: the worker's arena (its own
        referee on the same database, the bots in its sandbox, the packages fetched by hash)
        stores the game under this ladder's match id. A worker that dies mid-game: Dask plays
        the game again elsewhere; the dead worker's row is marked aborted once its lease lapses."""
        from maag.server.compete.formats import BotSpec, TournamentSpec
        from maag.server.compete.runner import play_on_worker

        assert self.dask is not None
        client = self.dask[0]
        bots = tuple(BotSpec(s, self._versions[s]) for s in sorted(set(seats)))
        spec = TournamentSpec(format="round-robin", bots=bots, games_per_pair=2, tc=str(self.config.tc),
                              seed=None, game=self.config.game,
                              config=tuple(sorted(self.config.game_config.items())),
                              name=f"ladder-{self.name}-{'-'.join(b.name for b in bots)}",
                              extra=(("policy", self.config.policy.to_dict()),))
        self._played += 1
        key = f"ladder-{self._played}-{secrets.token_hex(4)}"
        game = {"key": key, "round": 0, "seq": 0, "seat0": seats[0], "seat1": seats[1],
                "seed": seed if seed is not None else secrets.randbits(63)}

        def run() -> dict[str, Any]:
            fut = client.submit(play_on_worker, spec.to_dict(), self.db_url, spec.id, game,
                                str(self.log_dir), self.host_options.to_dict(), match_id,
                                {"Ladder": self.name}, pure=False, key=f"maag-{key}")
            return dict(fut.result())

        res = await asyncio.to_thread(run)
        w = res.get("winner")
        return GameSummary(int(res["game_id"]), (seats[0], seats[1]), None if w is None else int(w),
                           str(res["reason"]), int(res.get("plies") or 0), (0.0, 0.0), (0.0, 0.0),
                           bool(res["stored"]), verdict=res.get("verdict"))

    async def close(self) -> None:
        """Stop hosting (after the ladder's referee has stopped): the sandbox's host, the
        cluster's arenas and client, the unpacked packages."""
        if self._host is not None:
            self._host.close()
            self._host = None
        if self.dask is not None:
            from maag.server.compete.runner import close_worker_arenas

            client, cluster = self.dask
            self.dask = None
            with contextlib.suppress(Exception):
                await asyncio.to_thread(client.run, close_worker_arenas)
            await asyncio.to_thread(client.close)
            if cluster is not None:
                await asyncio.to_thread(cluster.close)
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None
