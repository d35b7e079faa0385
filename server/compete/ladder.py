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
history up to then and a struck-out bot is paired again. A bot that disconnects mid-game gets
the referee's grace period to come back; the scheduler stops offering it games while away.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import math
import random
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

from maag.engine.seeds import derive_seed
from maag.server.compete.formats import Standings, rate
from maag.server.compete.ladder_hosted import HostedEntrants
from maag.server.compete.ladder_lock import LadderLock
from maag.server.compete.ladder_record import LadderRatings, LadderRecord
from maag.server.compete.ladder_report import LadderEvent, ladder_match_id, publish
from maag.server.compete.pairing import choose_pairs
from maag.server.compete.strikes import DEFAULT_STRIKES, StrikePolicy, verdict_counts
from maag.server.fleet.scheduler import FleetScheduler
from maag.server.hosting.api import HostOptions
from maag.server.net.server import GameNotStarted, GameSummary, RefereeServer, ServerConfig
from maag.server.storage.backend import StorageUnavailable, resolve_db
from maag.server.storage.base import AsyncStorage, Storage, open_storage

__all__ = ["Ladder"]

LOG = logging.getLogger(__name__)

SUBMITTED = ("no", "also", "only")
REFIT_S = 10.0
"""Seconds between full fits of the ratings (in a thread; each game steps them meanwhile)."""
PUBLISH_S = 2.0
"""Seconds between publications of the standings files at most (and once at the end)."""
RULINGS_S = 2.0
"""How often a running ladder looks for the host's new rulings (a void, a pardon)."""
FOLLOW_S = 1.0
"""How often a fleet's member that does not schedule reads the ladder's new results (its
standings and its web view's are the database's, as the scheduler's are)."""


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
        self.max_games, self.tick, self.anchor = max_games, tick, anchor
        self.on_event = on_event or (lambda e: None)
        self.out_html, self.out_csv, self.out_json = out_html, out_csv, out_json
        self.server: RefereeServer | None = None
        self.record = LadderRecord(name, StrikePolicy.parse(strikes), lambda e: self.on_event(e))
        """Rated games, strikes, rulings (ladder_record.py); it tells the `on_event` set last."""
        self.outcomes, self.played, self.struck = self.record.outcomes, self.record.played, self.record.struck
        self._rulings_at = self._followed_at = time.monotonic()
        self._rulings_task: asyncio.Task[None] | None = None
        self.ratings = LadderRatings(name, self.record.outcomes, REFIT_S)
        """Ratings for pairing: a step per game, the full fit of the history on a timer."""
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
        self.hosting = HostedEntrants(name, self.db_url, self.config, host_options=host_options, slots=slots,
                                      log_dir=log_dir, cluster=cluster, joined=self._hosted_joined,
                                      left=lambda label: self.on_event(LadderEvent("leave", bot=label)))
        """The submitted bots' versions this ladder hosts (compete/ladder_hosted.py)."""
        self.hosted = self.hosting.bots
        self.lock = LadderLock(self.db_url, name, standby=standby, on_event=lambda e: self.on_event(e),
                               wake=self._wake.set, stopping=lambda: self._stopping,
                               referee=lambda: None if self.server is None else self.server.server_id)
        """One scheduler per ladder and database (compete/ladder_lock.py)."""
        self.fleet = FleetScheduler(self, self._storage) if fleet else None
        """With `fleet`: every process on the database is a referee of this ladder, and the one
        holding its lock schedules the bots of all of them (fleet/scheduler.py)."""

    @property
    def port(self) -> int:
        assert self.server is not None
        return self.server.port

    def _storage(self) -> AsyncStorage:
        """The async store of this ladder's referee (the fleet's scheduler writes through it)."""
        assert self.server is not None
        return self.server.storage

    # -- lifecycle --------------------------------------------------------------------
    def _history(self, storage: Storage) -> list[int]:
        """Read the ladder's games from the database (the ratings' history); their ids."""
        past = storage.list_games(match_id=ladder_match_id(self.name), limit=2**62)
        self._index0 = len(past)
        self.record.load(storage, past)
        self.ratings.refit()
        self.record.strike()
        return [g.id for g in past if g.status != "running"]

    async def start(self) -> None:
        if self.fleet is None:
            await self.lock.take()
        else:
            self.lock.leading = False  # a referee of the fleet at once; its scheduler once it holds the lock
        storage = open_storage(self.db_url)
        self._history(storage)
        self.server = RefereeServer(self.config, storage)
        await self.server.start()
        if self.submitted != "no":
            await self.hosting.start(self.server)
            if self.fleet is not None:  # every member runs the hosted games assigned to it
                self.server.fleet.host_games(self.hosting)
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
                if self.lock.lost:
                    self.failed = self.lock.lost  # another process may schedule now: stop
                    break
                if self.fleet is not None:
                    with contextlib.suppress(StorageUnavailable):  # (the database away: the keeper waits)
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

    def under_way(self) -> int:
        """This run's games requested and not over (some not begun yet: hosted processes)."""
        return len(self._tasks)

    def in_progress(self) -> list[int]:
        """The ids of this ladder's games being played on this process, oldest first."""
        if self.server is None:
            return []
        mid = ladder_match_id(self.name)
        return sorted(g.db_id for g in self.server.rooms.games.values()
                      if not g.ending and g.request is not None and g.request.match_id == mid)

    async def close(self) -> None:
        await self.ratings.close()
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
        await self.hosting.close()
        await self.lock.close()  # last: a standby takes over once every result is stored

    # -- scheduling -------------------------------------------------------------------
    def _hosted_joined(self, label: str) -> None:
        self.idle_since.setdefault(label, time.monotonic())
        self.on_event(LadderEvent("join", bot=label))

    def free_slots(self) -> dict[str, int]:
        """Games each connected bot can take now (its free slots, capped by `per_bot`), and
        each hosted one (per_bot, while this machine has hosted slots free)."""
        assert self.server is not None
        free: Counter[str] = Counter()
        now = time.monotonic()
        if self.submitted != "only":
            for c in self.server.clients:
                if c.bot is not None and not c.closed and c.bot not in self.server.explicit_only:
                    free[c.bot] += max(0, self.server.seating.free(c))
            # A bot at its games-per-minute limit gets no game now: the request would wait in
            # the referee's queue, holding its opponent, until the minute has passed.
            for b in [b for b in free if not self.server.lobby.games_left(b, now)]:
                del free[b]
        if self.hosting.games < self.hosting.slots:
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
        if not self.server.storage_ok or not self.lock.leading:  # paused while the database is away
            return
        if self.hosting.due():
            self.hosting.refresh()
        if self.hosted:  # hosted games take this machine's slots: no more at once than it has
            room = self.hosting.slots - self.hosting.games
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
    @property
    def hosted_bots(self) -> set[str]:
        """The hosted participants the fleet's scheduler pairs (loaded on every member)."""
        return set(self.hosted)

    @property
    def plays_connected(self) -> bool:
        return self.submitted != "only"

    async def _fleet_tick(self) -> None:
        assert self.fleet is not None and self.server is not None
        if self.submitted != "no" and self.hosting.due() and self.server.storage_ok:  # (see active_versions)
            if (active := await asyncio.to_thread(self.hosting.active_versions)) is not None:
                self.hosting.apply(active)
        if not self.lock.leading:
            if not await self.lock.try_take():
                now = time.monotonic()
                if now - self._followed_at >= FOLLOW_S and self.server.storage_ok:
                    self._followed_at = now
                    await self.fleet.results(self._followed)
                return
            await self.fleet.lead()
            storage = await asyncio.to_thread(open_storage, self.db_url)  # (off the loop: it renews leases)
            try:  # another process scheduled until now: its games are the history
                self.fleet.skip_history(await asyncio.to_thread(self._history, storage))
            finally:
                storage.close()
            self.lock.leading = True
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
        o = self.record.add(gid, seats, winner, verdict)
        if o is not None:
            self.ratings.step(o)
            self.record.strike()
        self.finished += 1
        self.on_event(LadderEvent("finish", seats=seats, winner=winner, reason=reason, game_id=gid,
                                  games=len(self.outcomes)))
        self._publish_due = True

    def _followed(self, gid: int, seats: tuple[str, str], winner: int | None, reason: str,
                  verdict: Any) -> None:
        """A game of the ladder over, read by a member that does not schedule: in its record
        and ratings (its standings, its web view's), told by the scheduler alone."""
        o = self.record.add(gid, seats, winner, verdict)
        if o is not None:
            self.ratings.step(o)
            self.record.strike()

    def lost_lead(self, why: str) -> None:
        """Another process schedules the ladder now, or its lock's connection is gone: stand by (fleet)."""
        self.lock.release(why)

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
            # (A worker referees a game between two hosted bots: its stored id is known when it is over.)
            fut = asyncio.ensure_future(self.hosting.play(
                seats, seed, match_id=ladder_match_id(self.name), started=started,
                paired=lambda: self.on_event(LadderEvent("paired", seats=seats, games=len(self.outcomes)))))
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
        o = self.record.add(s.game_id, s.seats, s.winner, s.verdict) if s.stored else None
        if o is not None:
            self.ratings.step(o)
            self.record.strike()
        self.finished += 1
        self.on_event(LadderEvent("finish", seats=s.seats, winner=s.winner, reason=s.reason,
                                  game_id=s.game_id, games=len(self.outcomes)))
        self._publish_due = True

    @property
    def elo(self) -> dict[str, float]:
        return self.ratings.elo

    def _maintain(self) -> None:
        """On the scheduler's tick: check that this process still holds the ladder's lock,
        refit the ratings off the event loop when REFIT_S have passed and games were added,
        and publish the standings at most every PUBLISH_S (once per tick however many games
        finished: the standings' fit is the costly part)."""
        now = time.monotonic()
        self.lock.maintain(now, fleet=self.fleet is not None)
        if (self._rulings_task is None and self.server is not None
                and (self.lock.leading or self.fleet is not None) and now - self._rulings_at >= RULINGS_S):
            self._rulings_at = now
            self._rulings_task = asyncio.get_running_loop().create_task(self._look_for_rulings())
        self.ratings.maintain(now)
        if self._publish_due and now - self._published_at >= PUBLISH_S:
            self._publish_due = False
            self._published_at = now
            self._publish()

    # -- the host's rulings (storage/rulings.py; applied by ladder_record.py) -----------------
    async def _look_for_rulings(self) -> None:
        """Apply the rulings made since the last look: a voided game leaves the ratings and
        the strike histories; a pardon clears the bot's strike history up to then, and a
        struck-out bot is paired again."""
        try:
            assert self.server is not None
            got = await self.server.storage.apply(self.record.read_rulings)
            if got is not None:
                self.record.apply_rulings(*got, shrunk=self._voided, back=self._pardoned)
                self._wake.set()
        except Exception as e:  # (the database away: looked for again at the next tick)
            LOG.warning("ladder %s: the host's rulings not read (%s)", self.name, e)
        finally:
            self._rulings_task = None

    def _voided(self) -> None:
        self.ratings.refit()  # (the history without them; rare: a host's ruling)
        self._publish_due = True

    def _pardoned(self, bot: str) -> None:
        self.idle_since[bot] = time.monotonic()
        self._publish_due = True

    # -- standings and files ----------------------------------------------------------
    def standings(self) -> Standings:
        names = sorted({x for o in self.outcomes for x in o[:2]} | self.connected | set(self.hosted))
        return rate(self.name, "ladder", names, self.outcomes, anchor=self.anchor,
                    description=f"Ladder {self.name}: {len(self.outcomes)} games.",
                    verdicts=verdict_counts(self.played),
                    withdrawn={b: f"struck out ({r})" for b, r in self.struck.items()})

    def _publish(self) -> None:
        if self.fleet is not None and not self.lock.leading:
            return  # (a fleet's standings files are the scheduler's to write)
        if self.out_html or self.out_csv or self.out_json:
            publish(self.name, self.standings(), html=self.out_html, csv=self.out_csv,
                    json_path=self.out_json)
