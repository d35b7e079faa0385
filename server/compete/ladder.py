"""A continuous ladder: a referee server that bots join and leave at will (with the tokens of
`maag bot add`), and a scheduler that keeps pairing the connected ones.

Pairing, each time the scheduler looks (every `tick` seconds, and after each game):

- a bot can take a game when it is connected with a free slot (its connections' declared
  concurrency) and plays fewer than `per_bot` ladder games at the moment;
- among those, the bot that has waited longest picks its opponent at random with weights
  `exp(-|elo_a - elo_b| / spread)`: close ratings first, with some randomness (`spread`, in
  Elo; a rematch of its previous game weighs a quarter);
- seats are drawn at random; the referee's seed comes from the OS, or from `seed`.

Ratings are refitted (maag.stats.ratings) after every game over all finished games of the
ladder, which are stored with match id `ladder:NAME`; a restarted ladder picks its history
up from the database. Forfeits are counted per bot and verdict in the standings, and the
strike policy (maag.server.compete.strikes) takes a bot that keeps forfeiting out of the
pairing for the rest of the run (and of any later run: the history decides). The host's
rulings (maag.server.storage.rulings) are read at start and looked for every RULINGS_S: a
voided game leaves the ratings and the strike histories, a pardon clears a bot's strike
history up to then and a struck-out bot is paired again. A bot that
disconnects mid-game gets the referee's grace period to come
back; the scheduler simply stops offering it games while it is away.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import math
import os
import random
import secrets
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from maag.server.compete.formats import Standings, rate, to_csv, to_html
from maag.server.compete.pairing import choose_pairs
from maag.server.compete.strikes import DEFAULT_STRIKES, StrikePolicy, StrikeRule, histories, verdict_counts
from maag.server.fleet.scheduler import FleetScheduler
from maag.server.hosting.api import Host, HostedBot, HostOptions, hosted_bot
from maag.server.net.server import GameNotStarted, GameSummary, RefereeServer, ServerConfig
from maag.server.referee.session import derive_seed
from maag.server.storage.backend import Database, open_database, resolve_db
from maag.server.storage.base import Storage, open_storage
from maag.server.storage.rulings import latest, list_rulings, pardoned_view, pardons
from maag.stats import live, ratings

__all__ = ["Ladder", "LadderEvent", "choose_pairs", "ladder_match_id", "ladder_standings"]

LOG = logging.getLogger(__name__)

SUBMITTED = ("no", "also", "only")
REFIT_S = 10.0
"""Seconds between full fits of the ratings (in a thread; each game steps them meanwhile)."""
PUBLISH_S = 2.0
"""Seconds between publications of the standings files at most (and once at the end)."""
STANDBY_POLL_S = 0.5
"""A standby ladder tries to take the ladder's lock this often."""
LEAD_CHECK_S = 2.0
"""The leader checks this often that its lock's database connection is alive."""
RULINGS_S = 2.0
"""How often a running ladder looks for the host's new rulings (a void, a pardon)."""


class LadderBusy(RuntimeError):
    """Another process schedules this ladder on this database."""


HOSTED_REFRESH_S = 5.0
"""How often the ladder looks for newly active (and retired) versions of submitted bots."""


def ladder_match_id(name: str) -> str:
    return f"ladder:{name}"


@dataclass(frozen=True, slots=True)
class LadderEvent:
    """kind: standby (another process schedules this ladder: waiting to take over), leading
    (this process schedules it now), listening, join, leave, paired (two bots paired for a
    game whose id is not known yet: refereed by a fleet member or a Dask worker), start (the
    game `game_id` began), finish, struck (the
    strike policy took `bot` out; `reason` is the rule), voided (the host voided game
    `game_id`: left out of the ratings), pardoned (the host cleared `bot`'s strikes; `reason`
    is why)."""

    kind: str
    bot: str | None = None
    seats: tuple[str, str] | None = None
    winner: int | None = None
    reason: str | None = None
    game_id: int | None = None
    games: int = 0


def _outcome(seats: tuple[str, str], winner: int | None) -> ratings.Outcome | None:
    if winner is None:
        return None
    return (seats[0], seats[1], {0: 1.0, 1: 0.0, -1: 0.5}[winner])


def ladder_standings(storage: Storage, name: str, anchor: str | None = None,
                     extra_bots: set[str] | None = None) -> Standings:
    """The ladder's standings from the database (every finished game of `ladder:NAME`)."""
    outcomes = []
    played = []
    for g in reversed(storage.list_games(match_id=ladder_match_id(name), status="finished", limit=2**62)):
        o = _outcome(g.seats, g.winner)
        if o is not None:
            outcomes.append(o)
            played.append((g.seats[0], g.seats[1], g.verdict))
    names = sorted({x for o in outcomes for x in o[:2]} | set(extra_bots or ()))
    return rate(name, "ladder", names, outcomes, anchor=anchor, description=f"Ladder {name}.",
                verdicts=verdict_counts(played))



class Ladder:
    """Runs the server and the scheduler until `stop()` (or `max_games` games have finished)."""

    def __init__(self, db_url: str | None, config: ServerConfig, *, name: str = "main", per_bot: int = 1,
                 spread: float = 100.0, seed: int | None = None, max_games: int | None = None,
                 tick: float = 0.25, anchor: str | None = None,
                 on_event: Callable[[LadderEvent], None] | None = None, out_html: str | None = None,
                 out_csv: str | None = None, out_json: str | None = None,
                 strikes: str = DEFAULT_STRIKES, submitted: str = "no",
                 host_options: HostOptions | None = None, slots: int | None = None,
                 log_dir: str | None = None, cluster: str | None = None, standby: bool = False,
                 fleet: bool = False) -> None:
        if submitted not in SUBMITTED:
            raise ValueError(f"submitted must be one of {', '.join(SUBMITTED)}")
        # None: $MAAG_DB, else the default file, named once here for every process it starts
        self.db_url: str = resolve_db(db_url).url
        self.config = dataclasses.replace(config, auto_pair=False, fleet_ladder=name if fleet else None)
        self.name = name
        self.per_bot = max(1, per_bot)
        self.spread = spread
        self.seed = seed
        self.rng = random.Random(seed)
        self.max_games = max_games
        self.tick = tick
        self.anchor = anchor
        self.on_event = on_event or (lambda e: None)
        self.out_html, self.out_csv, self.out_json = out_html, out_csv, out_json
        self.server: RefereeServer | None = None
        self.outcomes: list[ratings.Outcome] = []
        self.played: list[tuple[str, str, dict[str, Any] | None]] = []  # (seat 1, seat 2, verdict)
        self.played_ids: list[int] = []  # each of `played`'s (and `outcomes`') game id
        self.cleared: dict[str, int] = {}
        """bot -> the newest game its latest pardon cleared (storage/rulings.py)."""
        self._rulings_seen = 0  # the newest ruling applied
        self._rulings_at = time.monotonic()
        self._rulings_task: asyncio.Task[None] | None = None
        self._fit_generation = 0  # raised when games leave the history (a void): stale fits are dropped
        self.strikes = StrikePolicy.parse(strikes)
        self.struck: dict[str, StrikeRule] = {}
        self.live = live.LiveRatings()
        """Ratings for pairing: a step per game, the full fit of the history on a timer."""
        self._fitted = 0  # outcomes the last full fit saw
        self._fitting: asyncio.Task[None] | None = None
        self._fit_at = -math.inf
        self._published_at = -math.inf
        self._publish_due = False
        self.playing: Counter[str] = Counter()  # ladder games in progress per bot
        self.idle_since: dict[str, float] = {}
        self.last_opponent: dict[str, str] = {}
        self.connected: set[str] = set()
        self.started = 0  # games requested in this run (less those that did not start)
        self.finished = 0  # games finished in this run
        self._requests = 0  # every request of this run, for its seed
        self._index0 = 0
        self._tasks: set[asyncio.Task[Any]] = set()
        self._wake = asyncio.Event()
        self._stopping = False
        self.failed: str | None = None
        self.on_close: list[Callable[[], Awaitable[None]]] = []
        """Called (awaited) before the server stops: the web view stops with the ladder."""
        self.submitted = submitted
        """Submitted bots' active versions in the ladder: no, also (with connected bots) or only."""
        self.host_options = host_options or HostOptions()
        self.slots = slots or len(os.sched_getaffinity(0))
        """Hosted games at once on this machine at most."""
        self.log_dir = Path(log_dir) if log_dir else Path(tempfile.mkdtemp(prefix="maag-ladder-"))
        self.hosted: dict[str, HostedBot] = {}  # NAME@VERSION -> its package, while it is active
        self._tokens: dict[str, str] = {}
        self.host: Host | None = None
        self._hosted_games = 0
        self._refreshed = -math.inf
        self._workdir: Path | None = None
        self.cluster = cluster
        """A Dask scheduler (or "local": a LocalCluster of `slots` workers) on which games between
        two hosted bots are played; each worker fetches the packages by hash and caches them."""
        self._dask: tuple[Any, Any] | None = None
        self._versions: dict[str, str] = {}  # NAME@VERSION -> package spec (package:sha256:HEX)
        self.standby = standby
        """If another process schedules this ladder, wait to take over instead of failing."""
        self._lock_db: Database | None = None
        """The connection holding the ladder's lock: one scheduler per ladder and database,
        whatever the number of processes (PostgreSQL: a session advisory lock, released when
        the process dies; SQLite: a file lock)."""
        self._lead_checked = time.monotonic()
        self._lead_check: asyncio.Task[None] | None = None
        self._leading = True  # False while the lock is lost with its database connection
        self._lost_lead: str | None = None
        self.fleet = FleetScheduler(self) if fleet else None
        """With `fleet`: every process on the database is a referee of this ladder, and the one
        holding its lock schedules the bots of all of them (fleet/scheduler.py)."""
        self._lead_tried = -math.inf

    @property
    def port(self) -> int:
        assert self.server is not None
        return self.server.port

    # -- lifecycle --------------------------------------------------------------------
    async def _take_lead(self) -> None:
        """Hold the ladder's lock before reading its history and pairing anyone: LadderBusy
        if another process holds it, or with `standby`, wait until it is released (that
        process stopped or died) and take over."""
        self._lock_db = db = open_database(self.db_url)
        if await asyncio.to_thread(db.try_lock, "ladder", self.name):
            return
        if not self.standby:
            db.close()
            self._lock_db = None
            raise LadderBusy(f"ladder {self.name!r} is already scheduled by another process on this database "
                             "(--standby waits and takes over when it stops)")
        self.on_event(LadderEvent("standby"))
        while not await asyncio.to_thread(db.try_lock, "ladder", self.name):
            if self._stopping:
                raise LadderBusy(f"stopped while standing by for ladder {self.name!r}")
            await asyncio.sleep(STANDBY_POLL_S)
        self.on_event(LadderEvent("leading"))

    def _history(self, storage: Storage) -> list[int]:
        """Read the ladder's games from the database (the ratings' history); their ids."""
        past = storage.list_games(match_id=ladder_match_id(self.name), limit=2**62)
        self._index0 = len(past)
        self.outcomes.clear()
        self.played.clear()
        self.played_ids.clear()
        self._rulings_seen = latest(storage)  # (read first: a later ruling is looked for again)
        self.cleared = pardons(storage)
        for g in reversed(past):  # oldest first (a voided game's status is `voided`: left out)
            o = _outcome(g.seats, g.winner) if g.status == "finished" else None
            if o is not None:
                self.outcomes.append(o)
                self.played.append((g.seats[0], g.seats[1], g.verdict))
                self.played_ids.append(g.id)
        self.struck.clear()
        self._refit()
        self._strike()
        return [g.id for g in past if g.status != "running"]

    async def start(self) -> None:
        if self.fleet is None:
            await self._take_lead()
        else:
            self._leading = False  # a referee of the fleet at once; its scheduler once it holds the lock
        storage = open_storage(self.db_url)
        self._history(storage)
        self.server = RefereeServer(self.config, storage)
        await self.server.start()
        if self.submitted != "no":
            self.host = Host(self.server, self.host_options, log_dir=self.log_dir)
            self._workdir = Path(tempfile.mkdtemp(prefix="maag-ladder-packages-"))
            self._refresh_hosted()
            if self.cluster:
                self._dask = await asyncio.to_thread(self._connect_dask)
        self.on_event(LadderEvent("listening", games=len(self.outcomes)))

    async def run(self) -> None:
        """Schedule until stop() or max_games; then let games in progress finish."""
        if self.server is None:
            await self.start()
        try:
            while not self._stopping:
                if self.server is not None and self.server.failed:
                    self.failed = self.server.failed  # the database away too long: exit non-zero
                    break
                if self._lost_lead:
                    self.failed = self._lost_lead  # another process may schedule now: stop
                    break
                if self.fleet is not None:
                    await self._fleet_tick()
                else:
                    self._schedule()
                self._maintain()
                if self.max_games is not None and self.finished >= self.max_games:
                    break
                self._wake.clear()
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), self.tick)
            if self.failed:  # results still waiting stay in the spill file
                for t in self._tasks:
                    t.cancel()
            self._withdraw_unstarted()
            if self._tasks:
                await asyncio.gather(*list(self._tasks), return_exceptions=True)
        finally:
            await self.close()

    def stop(self) -> None:
        """Stop pairing; run() returns once the games in progress have finished (those paired
        but not begun are called off: they would wait for their bots' free slots, or for the
        games-per-minute limit, up to a minute)."""
        self._stopping = True
        self._withdraw_unstarted()
        self._wake.set()

    def _withdraw_unstarted(self) -> None:
        """Call off this ladder's requests still waiting in the referee's queue: not played,
        not counted (a stopping ladder once waited 65 s for one held by the games-per-minute
        limit, with no game running)."""
        if self.server is None:
            return
        mid = ladder_match_id(self.name)
        lobby = self.server.lobby
        for req in list(lobby.requests):
            if req.match_id == mid and req.future is not None and not req.future.done():
                lobby.requests.remove(req)
                req.future.set_exception(GameNotStarted("the ladder stops"))

    def in_progress(self) -> list[int]:
        """The ids of this ladder's games being played on this process, oldest first."""
        if self.server is None:
            return []
        mid = ladder_match_id(self.name)
        return sorted(g.db_id for g in self.server.rooms.games.values()
                      if not g.ending and g.request is not None and g.request.match_id == mid)

    async def close(self) -> None:
        if self._fitting is not None:
            with contextlib.suppress(Exception):
                await self._fitting
        if self._rulings_task is not None:
            with contextlib.suppress(Exception):
                await self._rulings_task
        if self._publish_due:
            self._publish_due = False
            self._publish()
        for fn in self.on_close:
            await fn()
        self.on_close.clear()
        if self.server is not None:
            await self.server.stop()
            self.server = None
        if self.host is not None:
            self.host.close()
            self.host = None
        if self._dask is not None:
            from maag.server.compete.runner import close_worker_arenas

            client, cluster = self._dask
            self._dask = None
            with contextlib.suppress(Exception):
                await asyncio.to_thread(client.run, close_worker_arenas)
            await asyncio.to_thread(client.close)
            if cluster is not None:
                await asyncio.to_thread(cluster.close)
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None
        if self._lead_check is not None:
            with contextlib.suppress(Exception):
                await self._lead_check
        if self._lock_db is not None:  # last: a standby takes over once every result is stored
            self._lock_db.close()
            self._lock_db = None

    # -- scheduling -------------------------------------------------------------------
    def _refresh_hosted(self) -> None:
        """The submitted bots' active versions, as hosted participants (NAME@VERSION): a new
        version joins (unrated: it starts from no games, its earlier versions keep theirs),
        a retired one plays no new game (those in progress finish)."""
        assert self.server is not None and self._workdir is not None and self.db_url is not None
        from maag.server.hosting.api import PACKAGE_PREFIX
        from maag.server.storage.submissions import open_submission_store

        store = open_submission_store(self.db_url)
        try:
            active = {v.label: v for v in store.versions(status="active")}
        finally:
            store.close()
        for label in sorted(set(self.hosted) - set(active)):
            del self.hosted[label]
            self.on_event(LadderEvent("leave", bot=label))
        for label, v in sorted(active.items()):
            if label in self.hosted:
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
                self.server.add_token(self._tokens[label], label)  # in memory only
            self.hosted[label] = bot
            self._versions[label] = PACKAGE_PREFIX + v.run_sha256
            self.idle_since.setdefault(label, time.monotonic())
            self.on_event(LadderEvent("join", bot=label))
        self._refreshed = time.monotonic()

    def free_slots(self) -> dict[str, int]:
        """Games each connected bot can take now (its free slots, capped by `per_bot`), and
        each hosted one (per_bot, while this machine has hosted slots free)."""
        assert self.server is not None
        free: Counter[str] = Counter()
        now = time.monotonic()
        if self.submitted != "only":
            for c in self.server.clients:
                if c.bot is not None and not c.closed and c.bot not in self.server.explicit_only:
                    free[c.bot] += max(0, c.free_slots)
            # A bot at its games-per-minute limit gets no game now: the request would wait in
            # the referee's queue, holding its opponent, until the minute has passed.
            for b in [b for b in free if not self.server.lobby.games_left(b, now)]:
                del free[b]
        if self._hosted_games < self.slots:
            for label in self.hosted:
                free[label] += self.per_bot
        return {b: min(n, self.per_bot - self.playing[b]) for b, n in free.items()
                if min(n, self.per_bot - self.playing[b]) > 0 and b not in self.struck}

    def _track_connections(self) -> None:
        assert self.server is not None
        now = {c.bot for c in self.server.clients
               if c.bot is not None and not c.closed and c.bot not in self.server.explicit_only}
        for b in sorted(now - self.connected):
            self.idle_since.setdefault(b, time.monotonic())
            self.on_event(LadderEvent("join", bot=b))
        for b in sorted(self.connected - now):
            self.on_event(LadderEvent("leave", bot=b))
        self.connected = now

    def _budget_left(self) -> int | None:
        if self.max_games is None:
            return None
        return self.max_games - self.started

    def _schedule(self) -> None:
        self._track_connections()
        left = self._budget_left()
        if self._stopping or (left is not None and left <= 0):
            return
        assert self.server is not None
        if not self.server.storage_ok or not self._leading:  # paused while the database is away
            return
        if self.host is not None and time.monotonic() - self._refreshed > HOSTED_REFRESH_S:
            self._refresh_hosted()
        if self.hosted:  # hosted games take this machine's slots: no more at once than it has
            room = self.slots - self._hosted_games
            left = room if left is None else min(left, room)
            if left <= 0:
                return
        pairs = choose_pairs(self.free_slots(), self.elo, self.idle_since, self.last_opponent, self.rng,
                             self.spread, limit=left)
        for seats in pairs:
            self._request(seats)
            now = time.monotonic()
            a, b = seats
            self.idle_since[a] = self.idle_since[b] = now
            self.last_opponent[a], self.last_opponent[b] = b, a

    def next_seed(self) -> int | None:
        """The next game's seed (None: from the OS)."""
        seed = derive_seed(self.seed, self._index0 + self._requests) if self.seed is not None else None
        self._requests += 1
        return seed

    # -- the fleet (fleet/scheduler.py) ---------------------------------------------------
    async def _fleet_tick(self) -> None:
        assert self.fleet is not None and self.server is not None
        if not self._leading:
            now = time.monotonic()
            if now - self._lead_tried < STANDBY_POLL_S:
                return
            self._lead_tried = now
            try:
                db: Database = self._lock_db or await asyncio.to_thread(open_database, self.db_url)
                self._lock_db = db
                if not await asyncio.to_thread(db.try_lock, "ladder", self.name):
                    return
            except Exception as e:  # (the database away, or the old lock's connection lost)
                LOG.warning("ladder %s: its lock not tried (%s)", self.name, e)
                self.lost_lead(str(e))
                return
            await self.fleet.lead()
            storage = open_storage(self.db_url)
            try:  # another process scheduled until now: its games are the history
                self.fleet.skip_history(await asyncio.to_thread(self._history, storage))
            finally:
                storage.close()
            self._leading = True
            self.on_event(LadderEvent("leading"))
        await self.fleet.results(self._over)
        left = self._budget_left()
        if self._stopping or (left is not None and left <= 0) or not self.server.storage_ok:
            return
        await self.fleet.round(left, self._paired)

    def _paired(self, seats: tuple[str, str]) -> None:
        self.started += 1
        now = time.monotonic()
        a, b = seats
        self.idle_since[a] = self.idle_since[b] = now
        self.last_opponent[a], self.last_opponent[b] = b, a
        # A fleet member referees it: its stored id is known when a member starts it.
        self.on_event(LadderEvent("paired", seats=seats, games=len(self.outcomes)))

    def _over(self, gid: int, seats: tuple[str, str], winner: int | None, reason: str, verdict: Any) -> None:
        for x in seats:
            self.idle_since[x] = time.monotonic()
        o = _outcome(seats, winner)
        if o is not None:
            self.outcomes.append(o)
            self.played.append((seats[0], seats[1], verdict))
            self.played_ids.append(gid)
            self.live.update(*o)
            self._strike()
        self.finished += 1
        self.on_event(LadderEvent("finish", seats=seats, winner=winner, reason=reason, game_id=gid,
                                  games=len(self.outcomes)))
        self._publish_due = True

    def lost_lead(self, why: str) -> None:
        """Another process schedules the ladder now, or its lock's connection is gone: this one
        stands by again (fleet)."""
        announce = self._leading
        self._leading = False
        if self._lock_db is not None:
            with contextlib.suppress(Exception):
                self._lock_db.close()
            self._lock_db = None
        if announce:
            self.on_event(LadderEvent("standby"))

    def _request(self, seats: tuple[str, str]) -> None:
        assert self.server is not None
        seed = self.next_seed()
        self.started += 1
        for x in seats:
            self.playing[x] += 1
        fut: asyncio.Future[GameSummary]

        def started(gid: int) -> None:
            # Said when the game begins, with the id it is stored under (the same id as in
            # "Finished game", the bots' log files, the web view and `maag replay`).
            self.on_event(LadderEvent("start", seats=seats, game_id=gid, games=len(self.outcomes)))

        if any(s in self.hosted for s in seats):
            assert self.host is not None
            bots = [self.hosted.get(seats[0]), self.hosted.get(seats[1])]
            self._hosted_games += 1

            async def hosted_game() -> GameSummary:
                assert self.host is not None
                try:
                    if self._dask is not None and all(s in self.hosted for s in seats):
                        # A worker referees it: its stored id is known when it is over.
                        self.on_event(LadderEvent("paired", seats=seats, games=len(self.outcomes)))
                        return await self._play_on_cluster(seats, seed)
                    return await self.host.play(seats, bots, [self._tokens.get(seats[0], ""),
                                                              self._tokens.get(seats[1], "")],
                                                match_id=ladder_match_id(self.name), seed=seed,
                                                tags={"Ladder": self.name}, on_start=started)
                finally:
                    self._hosted_games -= 1

            fut = asyncio.ensure_future(hosted_game())
        else:
            fut = self.server.request_game(seats[0], seats[1], match_id=ladder_match_id(self.name), seed=seed,
                                           tags={"Ladder": self.name}, requeue=False, on_start=started)
        task = asyncio.ensure_future(self._finish(seats, fut))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _finish(self, seats: tuple[str, str], fut: asyncio.Future[GameSummary]) -> None:
        try:
            s = await fut
        except GameNotStarted as e:
            # A bot left just as the game was paired: nothing was played, so the game does
            # not count, and the scheduler pairs the bots that are still here (waiting for
            # the one that left would hold its opponent's slot for as long as it is away).
            LOG.info("ladder game %s vs %s not started: %s", seats[0], seats[1], e)
            self.started -= 1
            return
        except (asyncio.CancelledError, Exception) as e:  # the server stopped
            LOG.info("ladder game %s vs %s not played: %r", seats[0], seats[1], e)
            self.finished += 1
            return
        finally:
            for x in seats:
                self.playing[x] -= 1
                self.idle_since[x] = time.monotonic()
            self._wake.set()
        o = _outcome(s.seats, s.winner) if s.stored else None
        if o is not None:
            self.outcomes.append(o)
            self.played.append((s.seats[0], s.seats[1], s.verdict))
            self.played_ids.append(s.game_id)
            self.live.update(*o)  # O(1); the full fit follows on its timer (_maintain)
            self._strike()
        self.finished += 1
        self.on_event(LadderEvent("finish", seats=s.seats, winner=s.winner, reason=s.reason,
                                  game_id=s.game_id, games=len(self.outcomes)))
        self._publish_due = True

    def _connect_dask(self) -> tuple[Any, Any]:
        from maag.server.compete.runner import connect_dask

        assert self.cluster is not None
        return connect_dask(self.cluster, self.slots)

    async def _play_on_cluster(self, seats: tuple[str, str], seed: int | None) -> GameSummary:
        """One game between two hosted bots on a Dask worker: the worker's arena (its own
        referee on the same database, the bots in its sandbox, the packages fetched by hash)
        stores the game under this ladder's match id. A worker that dies mid-game: Dask plays
        the game again elsewhere; the dead worker's row is marked aborted once its lease lapses."""
        from maag.server.compete.formats import BotSpec, TournamentSpec
        from maag.server.compete.runner import play_on_worker

        assert self._dask is not None and self.db_url is not None
        client = self._dask[0]
        bots = tuple(BotSpec(s, self._versions[s]) for s in sorted(set(seats)))
        spec = TournamentSpec(format="round-robin", bots=bots, games_per_pair=2, tc=str(self.config.tc),
                              seed=None, game=self.config.game,
                              config=tuple(sorted(self.config.game_config.items())),
                              name=f"ladder-{self.name}-{'-'.join(b.name for b in bots)}",
                              extra=(("policy", self.config.policy.to_dict()),))
        key = f"ladder-{self._requests}-{secrets.token_hex(4)}"
        game = {"key": key, "round": 0, "seq": 0, "seat0": seats[0], "seat1": seats[1],
                "seed": seed if seed is not None else secrets.randbits(63)}

        def run() -> dict[str, Any]:
            fut = client.submit(play_on_worker, spec.to_dict(), self.db_url, spec.id, game,
                                str(self.log_dir), self.host_options.to_dict(), ladder_match_id(self.name),
                                {"Ladder": self.name}, pure=False, key=f"maag-{key}")
            return dict(fut.result())

        res = await asyncio.to_thread(run)
        w = res.get("winner")
        return GameSummary(int(res["game_id"]), (seats[0], seats[1]), None if w is None else int(w),
                           str(res["reason"]), int(res.get("plies") or 0), (0.0, 0.0), (0.0, 0.0),
                           bool(res["stored"]), verdict=res.get("verdict"))

    def _strike(self) -> None:
        """Take the bots the strike policy strikes out of the pairing."""
        view = pardoned_view(zip(self.played_ids, self.played, strict=True), self.cleared)
        for bot, rule in self.strikes.offenders(histories(view), self.struck).items():
            self.struck[bot] = rule
            LOG.warning("ladder %s: %s struck out (%s)", self.name, bot, rule)
            self.on_event(LadderEvent("struck", bot=bot, reason=str(rule), games=len(self.outcomes)))

    @property
    def elo(self) -> dict[str, float]:
        return self.live.elo

    def _refit(self) -> None:
        """The full fit of the whole history, now (at start)."""
        if self.outcomes:
            self.live.replace(live.fit_points(self.outcomes))
            self._fitted = len(self.outcomes)
        self._fit_at = time.monotonic()

    async def _check_lead(self) -> None:
        """Is the ladder's lock still ours? On PostgreSQL it lives as long as its connection,
        which is not made again by itself: lost (the database restarted, or went away), the
        lock is gone too, and no new game is paired until this process takes it again (the
        games in progress go on; the server's own outage limit ends a long absence with exit
        status 3). If another process took it meanwhile, this one stops."""
        try:
            if self._leading:
                assert self._lock_db is not None
                await asyncio.to_thread(self._lock_db.query, "SELECT 1")
                return
            db = await asyncio.to_thread(open_database, self.db_url)
            if await asyncio.to_thread(db.try_lock, "ladder", self.name):
                old, self._lock_db = self._lock_db, db
                if old is not None:
                    with contextlib.suppress(Exception):
                        old.close()
                self._leading = True
                LOG.warning("ladder %s: holds its lock again; pairing resumes", self.name)
            else:
                db.close()
                self._lost_lead = (f"another process took over ladder {self.name!r} while this one's "
                                   "database connection was lost; stopping (one process schedules a ladder)")
                self._wake.set()
        except Exception as e:
            if self._leading:
                self._leading = False
                LOG.warning("ladder %s: lost its lock with its database connection (%s); no new game until "
                            "it is taken again", self.name, e)
        finally:
            self._lead_check = None

    def _maintain(self) -> None:
        """On the scheduler's tick: check that this process still holds the ladder's lock,
        refit the ratings off the event loop when REFIT_S have passed and games were added,
        and publish the standings at most every PUBLISH_S (once per tick however many games
        finished: the standings' fit is the costly part)."""
        now = time.monotonic()
        due = now - self._lead_checked >= LEAD_CHECK_S
        # (A fleet's process standing by takes the lock in _fleet_tick, which also raises the epoch.)
        if self._lock_db is not None and self._lead_check is None and due and (self.fleet is None
                                                                              or self._leading):
            self._lead_checked = now
            self._lead_check = asyncio.get_running_loop().create_task(self._check_lead())
        if (self._rulings_task is None and self.server is not None and self._leading
                and now - self._rulings_at >= RULINGS_S):
            self._rulings_at = now
            self._rulings_task = asyncio.get_running_loop().create_task(self._look_for_rulings())
        if (self._fitting is None and len(self.outcomes) > self._fitted
                and now - self._fit_at >= REFIT_S):
            snapshot = list(self.outcomes)
            generation = self._fit_generation
            self._fit_at = now

            async def refit() -> None:
                try:
                    elo = await asyncio.to_thread(live.fit_points, snapshot)
                    if generation != self._fit_generation:
                        return  # games left the history meanwhile (a void): fitted again next tick
                    self.live.replace(elo, self.outcomes[len(snapshot):])
                    self._fitted = len(snapshot)
                except Exception:
                    LOG.exception("ladder %s: the ratings' refit failed", self.name)
                finally:
                    self._fitting = None

            self._fitting = asyncio.get_running_loop().create_task(refit())
        if self._publish_due and now - self._published_at >= PUBLISH_S:
            self._publish_due = False
            self._published_at = now
            self._publish()

    # -- the host's rulings (storage/rulings.py) ------------------------------------------
    async def _look_for_rulings(self) -> None:
        """Apply the rulings made since the last look: a voided game leaves the ratings and
        the strike histories; a pardon clears the bot's strike history up to then, and a
        struck-out bot is paired again."""
        try:
            assert self.server is not None
            srv = self.server.storage

            def read(st: Storage) -> tuple[int, list[Any], dict[str, int]] | None:
                newest = latest(st)
                if newest <= self._rulings_seen:
                    return None
                return newest, list_rulings(st), pardons(st)

            got = await srv.run(read, srv.storage)
            if got is not None:
                self._apply_rulings(*got)
        except Exception as e:  # (the database away: looked for again at the next tick)
            LOG.warning("ladder %s: the host's rulings not read (%s)", self.name, e)
        finally:
            self._rulings_task = None

    def _apply_rulings(self, newest: int, rulings: list[Any], cleared: dict[str, int]) -> None:
        fresh = [r for r in rulings if r.id > self._rulings_seen]
        self._rulings_seen = newest
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
            self._fit_generation += 1
            self._refit()  # (the history without them; rare: a host's ruling)
            self._publish_due = True
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
                self.idle_since[bot] = time.monotonic()
                self._publish_due = True
        for r in fresh:
            if r.kind == "pardon" and r.bot is not None:
                self.on_event(LadderEvent("pardoned", bot=r.bot, reason=r.why, games=len(self.outcomes)))
        self._strike()  # (a void can strike too: its game may have been a clean one)
        self._wake.set()

    # -- standings and files ----------------------------------------------------------
    def standings(self) -> Standings:
        names = sorted({x for o in self.outcomes for x in o[:2]} | self.connected | set(self.hosted))
        return rate(self.name, "ladder", names, self.outcomes, anchor=self.anchor,
                    description=f"Ladder {self.name}: {len(self.outcomes)} games.",
                    verdicts=verdict_counts(self.played),
                    withdrawn={b: f"struck out ({r})" for b, r in self.struck.items()})

    def _publish(self) -> None:
        if not (self.out_html or self.out_csv or self.out_json):
            return
        st = self.standings()
        for path, text in ((self.out_html, lambda: to_html(st)), (self.out_csv, lambda: to_csv(st)),
                           (self.out_json, lambda: json.dumps(st.summary(), indent=1))):
            if path:
                try:
                    _write_atomic(path, text())
                except OSError as e:
                    # A leaderboard file that cannot be written (a folder without rights, a
                    # full disk) is the host's to fix; the ladder and its games go on.
                    LOG.error("ladder %s: could not write %s: %s", self.name, path, e)


def _write_atomic(path: str, text: str) -> None:
    """Replace `path` at once (a web server never shows a half-written leaderboard); its
    folder is made if it is missing (the docs' /var/www/html/ladder/ on a new machine)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, p)
