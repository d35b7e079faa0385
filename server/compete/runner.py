"""Running a tournament: claim scheduled games from the database, play them through the real
referee (locally in one `Arena`, or spread over a Dask cluster: one task per game, each
worker keeping an arena of its own for the tournament), and record each result exactly once.

Resuming: the runner takes the tournament's runner lock, then settles every game left
`claimed` by a runner that died (`recover`): a finished game the referee stored under its
match id (the runner died after the referee committed it, before the schedule was updated)
is adopted, its verdict too (the strike policy counts it); else it is played again, never
stored twice. Standings count schedule rows, one result each, so nothing is counted twice.
A game the referee could not start (GameNotStarted) is played again too, MAX_ATTEMPTS times
at most; a bot that fails before its game forfeits it (a stored result with its verdict).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from maag.server.compete.formats import (
    Standings,
    TournamentSpec,
    match_id,
    rounds_total,
    schedule_round,
    standings,
    struck,
)
from maag.server.net.model import GameNotStarted
from maag.server.referee.session import LatePolicy, Policy
from maag.server.storage.base import Storage, open_storage
from maag.server.storage.tournaments import GameRow, ScheduledGame, TournamentStore, open_tournament_store
from maag.stats import ratings

if TYPE_CHECKING:
    from maag.server.net.server import GameSummary

__all__ = ["Event", "TournamentRunner", "GameFailed", "play_on_worker", "close_worker_arenas", "recover"]

LOG = logging.getLogger(__name__)

MAX_ATTEMPTS = 5  # a game aborted (not lost or won) this many times stops the tournament


class GameFailed(RuntimeError):
    """A game could not be played (the referee aborted it repeatedly, or a bot keeps crashing)."""


@dataclass(frozen=True, slots=True)
class Event:
    """Progress of a tournament, for the display. kind: resume, round, start, finish, retry,
    sprt (the SPRT decided; no more games are started)."""

    kind: str
    game: ScheduledGame | None = None
    winner: int | None = None
    reason: str | None = None
    game_id: int | None = None
    done: int = 0
    total: int = 0
    info: dict[str, Any] | None = None


def recover(store: TournamentStore, storage: Storage, tid: str, *, cluster: bool = False,
            poll_s: float = 0.5) -> tuple[int, int]:
    """Settle games left claimed by a dead runner: adopt a stored finished result, or put the
    game back to pending. Returns (adopted, released). First, a stored game of theirs still
    running (a referee would take it over and finish it after its replay: stored twice) is
    aborted if its referee is gone, or in a local run its first one (in the dead runner's
    process); a live referee's is waited for, every `poll_s`, until it ends or is gone."""
    claimed = [r for r in store.rows(tid) if r.status == "claimed"]
    waiting = {match_id(tid, r.game.key) for r in claimed}
    while waiting := {m for m in waiting if storage.abort_match(m, first_host_gone=not cluster)}:
        LOG.info("tournament %s: waiting for %d game(s) a live referee is playing", tid, len(waiting))
        time.sleep(poll_s)
    adopted = released = 0
    for row in claimed:
        found = [g for g in storage.list_games(match_id=match_id(tid, row.game.key), status="finished")
                 if g.winner is not None]
        if found:
            g = min(found, key=lambda r: r.id)
            assert g.winner is not None
            store.finish(tid, row.game.key, g.id, int(g.winner), g.reason or "", verdict=g.verdict)
            adopted += 1
        else:
            store.release(tid, row.game.key)
            released += 1
    return adopted, released


def arena_options(spec: TournamentSpec) -> dict[str, Any]:
    """ServerConfig fields of the tournament's arenas (the referee's policy)."""
    d = dict(spec.extra).get("policy")
    if not d:
        return {}
    return {"policy": Policy(late=LatePolicy(d["late"]), max_late=d["max_late"], max_illegal=d["max_illegal"],
                             disconnect_grace_ms=float(d["disconnect_grace_ms"]))}


def sprt_state(spec: TournamentSpec, rows: list[GameRow]) -> ratings.SprtResult | None:
    """The SPRT of the first bot against the second over finished game pairs (pentanomial),
    when the tournament has an SPRT stop rule."""
    extra = dict(spec.extra)
    cfg = extra.get("sprt")
    if not cfg:
        return None
    a = spec.names[0]
    by_seed: dict[tuple[int, int], list[float]] = {}
    for r in rows:
        s = r.score0
        if s is None:
            continue
        by_seed.setdefault((r.game.round, r.game.seed), []).append(s if r.game.seat0 == a else 1 - s)
    penta = [0, 0, 0, 0, 0]
    for scores in by_seed.values():
        if len(scores) == 2:
            penta[int(round((scores[0] + scores[1]) * 2))] += 1
    return ratings.sprt(penta, elo0=float(cfg["elo0"]), elo1=float(cfg["elo1"]), alpha=float(cfg["alpha"]),
                        beta=float(cfg["beta"]))


class TournamentRunner:
    """Plays a tournament to its end (or until the SPRT decides) and returns its standings."""

    def __init__(self, spec: TournamentSpec, db_url: str, *, concurrency: int = 1, cluster: str | None = None,
                 on_event: Callable[[Event], None] | None = None, anchor: str | None = None,
                 log_dir: str | None = None, host: dict[str, Any] | None = None) -> None:
        self.spec = spec
        self.tid = spec.id
        self.db_url = db_url
        self.concurrency = max(1, concurrency)
        self.cluster = cluster
        self.on_event = on_event or (lambda e: None)
        self.anchor = anchor
        self.log_dir = log_dir
        self.host = host
        """HostOptions.to_dict() for hosted bots (packages, --sandbox), or None for the defaults."""
        self.store: TournamentStore | None = None
        self._done = 0
        self._total = 0
        self._stop = False
        self.workers: dict[str, int] = {}  # Dask worker address -> games it played in this run
        self._dask: tuple[Any, Any] | None = None  # (client, LocalCluster or None) for --cluster

    # -- the whole run ----------------------------------------------------------------
    def run(self) -> Standings:
        store = self.store = open_tournament_store(self.db_url)
        try:
            store.lock_runner(self.tid)
            store.open_tournament(self.tid, self.spec.to_dict())
            base = self.spec.seed if self.spec.seed is not None else store.secret(self.tid)
            storage = open_storage(self.db_url)
            try:
                adopted, released = recover(store, storage, self.tid, cluster=bool(self.cluster))
            finally:
                storage.close()
            if adopted or released:
                self.on_event(Event("resume", info={"adopted": adopted, "released": released}))
            if self.cluster:
                self._dask = self._connect_dask()
            for rnd in range(rounds_total(self.spec)):
                rows = store.rows(self.tid)
                if not any(r.game.round == rnd for r in rows):
                    earlier = [r for r in rows if r.game.round < rnd]
                    if any(r.status not in ("done", "withdrawn") for r in earlier):
                        break  # stopped early (SPRT) in an earlier round
                    store.add_games(self.tid, schedule_round(self.spec, rnd, earlier, base))
                    rows = store.rows(self.tid)
                self._total = len(rows) if self.spec.format != "swiss" else \
                    len(rows) + self._swiss_remaining(rnd, rows)
                self._done = sum(r.status == "done" for r in rows)
                self.on_event(Event("round", done=self._done, total=self._total, info={"round": rnd}))
                # A bot struck out earlier plays none of this round's games: Swiss pairs it
                # again, and a resumed run may find its games still pending.
                self._apply_strikes()
                if self._check_sprt(rows):
                    break
                if self.cluster:
                    self._play_cluster()
                else:
                    asyncio.run(self._play_local())
                if self._stop:
                    break
            return self.standings()
        finally:
            self._close_dask()
            store.close()
            self.store = None

    def standings(self) -> Standings:
        assert self.store is not None
        return standings(self.tid, self.spec, self.store.rows(self.tid), anchor=self.anchor)

    def rows(self) -> list[GameRow]:
        assert self.store is not None
        return self.store.rows(self.tid)

    def _swiss_remaining(self, rnd: int, rows: list[GameRow]) -> int:
        per_round = sum(r.game.round == rnd for r in rows)
        return per_round * (rounds_total(self.spec) - rnd - 1)

    def _check_sprt(self, rows: list[GameRow]) -> bool:
        res = sprt_state(self.spec, rows)
        if res is not None and res.decision != "continue":
            if not self._stop:
                self.on_event(Event("sprt", done=self._done, total=self._total, info=res.as_dict()))
            self._stop = True
            return True
        return False

    # -- one game's bookkeeping -------------------------------------------------------
    def _claim(self) -> ScheduledGame | None:
        assert self.store is not None
        if self._stop:
            return None
        got = self.store.claim(self.tid, 1)
        if not got:
            return None
        g = got[0]
        self.on_event(Event("start", g, done=self._done, total=self._total))
        return g

    def _record(self, g: ScheduledGame, res: dict[str, Any]) -> None:
        """Store a played game's result (or put it back when the referee aborted it)."""
        assert self.store is not None
        winner = res.get("winner")
        if winner is None or not res.get("stored", False):
            self.store.release(self.tid, g.key)
            row = next(r for r in self.store.rows(self.tid) if r.game.key == g.key)
            self.on_event(Event("retry", g, reason=str(res.get("reason")), done=self._done,
                                total=self._total))
            if row.attempts >= MAX_ATTEMPTS:
                raise GameFailed(f"game {g.key} ({g.seat0} vs {g.seat1}) aborted {row.attempts} times: "
                                 f"{res.get('reason')}")
            return
        if self.store.finish(self.tid, g.key, res["game_id"], int(winner), str(res["reason"]),
                             search=res.get("search"), verdict=res.get("verdict")):
            self._done += 1
        self._apply_strikes()
        self.on_event(Event("finish", g, winner=int(winner), reason=str(res["reason"]),
                            game_id=res["game_id"], done=self._done, total=self._total))
        if dict(self.spec.extra).get("sprt"):
            self._check_sprt(self.store.rows(self.tid))

    def _apply_strikes(self) -> None:
        """Take out the bots the strike policy strikes: their games not yet played are
        withdrawn (games in flight finish and count)."""
        assert self.store is not None
        rows = self.store.rows(self.tid)
        for bot, rule in struck(self.spec, rows).items():
            n = self.store.withdraw(self.tid, bot)
            if n:
                self._total -= n
                LOG.warning("tournament %s: %s struck out (%s); %d game(s) withdrawn", self.tid, bot, rule, n)
                self.on_event(Event("withdrawn", done=self._done, total=self._total,
                                    info={"bot": bot, "rule": str(rule), "games": n}))

    def _tags(self, g: ScheduledGame) -> dict[str, Any]:
        return {"Tournament": self.tid, "Round": g.round, "GameKey": g.key}

    # -- local: one arena in this process ---------------------------------------------
    async def _play_local(self) -> None:
        from maag.server.compete.arena import Arena

        spec = self.spec
        async with Arena(spec.bots, self.db_url, game=spec.game, game_config=dict(spec.config), tc=spec.tc,
                         slots=self.concurrency, log_dir=self.log_dir,
                         server_options=arena_options(spec), host=self.host) as arena:
            inflight: dict[asyncio.Task[Any], ScheduledGame] = {}
            while True:
                while len(inflight) < self.concurrency:
                    g = await asyncio.to_thread(self._claim)
                    if g is None:
                        break
                    task = asyncio.ensure_future(arena.play(g.seat0, g.seat1, seed=g.seed, tags=self._tags(g),
                                                            match_id=match_id(self.tid, g.key)))
                    inflight[task] = g
                if not inflight:
                    return
                done, _ = await asyncio.wait(list(inflight), return_when=asyncio.FIRST_COMPLETED)
                for t in done:
                    g = inflight.pop(t)
                    try:
                        s = t.result()  # a crashed arena (BotCrashed) ends the run here
                    except GameNotStarted as e:  # (set up refused: tried again, MAX_ATTEMPTS at most)
                        await asyncio.to_thread(self._record, g, not_started(e))
                        continue
                    await asyncio.to_thread(self._record, g, {
                        "game_id": s.game_id, "winner": s.winner, "reason": s.reason, "stored": s.stored,
                        "search": list(s.search), "verdict": s.verdict})

    # -- Dask: one task per game on the workers ---------------------------------------
    def _connect_dask(self) -> tuple[Any, Any]:
        """The Dask client (and, for "local", its LocalCluster) of the whole run: made once,
        not once a round (a LocalCluster starts its worker processes anew each time)."""
        assert self.cluster is not None
        return connect_dask(self.cluster, self.concurrency)

    def _close_dask(self) -> None:
        if self._dask is None:
            return
        client, cluster = self._dask
        self._dask = None
        with contextlib.suppress(Exception):
            client.run(close_worker_arenas, self.tid)
        client.close()
        if cluster is not None:
            cluster.close()

    def _play_cluster(self) -> None:
        from distributed import wait

        assert self._dask is not None
        client = self._dask[0]
        spec_dict = self.spec.to_dict()
        inflight: dict[Any, ScheduledGame] = {}
        while True:
            while len(inflight) < self.concurrency:
                g = self._claim()
                if g is None:
                    break
                fut = client.submit(play_on_worker, spec_dict, self.db_url, self.tid, _game_dict(g),
                                    self.log_dir, self.host, pure=False,
                                    key=f"maag-{self.tid}-{g.key}-{id(g)}")
                inflight[fut] = g
            if not inflight:
                return
            finished = wait(list(inflight), return_when="FIRST_COMPLETED").done
            for fut in finished:
                g = inflight.pop(fut)
                res = fut.result()
                if res.get("worker"):
                    self.workers[res["worker"]] = self.workers.get(res["worker"], 0) + 1
                self._record(g, res)


def not_started(e: GameNotStarted) -> dict[str, Any]:
    """A game's result when the referee could not start it (GameNotStarted): no winner, so
    the runner puts it back and plays it again, up to MAX_ATTEMPTS times (GameFailed then).
    A bot that fails before its game forfeits it instead (a stored result with a verdict)."""
    return {"game_id": None, "winner": None, "reason": f"not started: {e}", "stored": False}


def connect_dask(address: str, workers: int) -> tuple[Any, Any]:
    """A Dask client of the scheduler at `address`, or for "local" of a new LocalCluster of
    `workers` single-threaded worker processes: (client, cluster or None)."""
    from distributed import Client, LocalCluster

    if address == "local":
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=":0")
        return Client(cluster), cluster
    return Client(address), None


def _game_dict(g: ScheduledGame) -> dict[str, Any]:
    return {"key": g.key, "round": g.round, "seq": g.seq, "seat0": g.seat0, "seat1": g.seat1, "seed": g.seed}


def _worker_address() -> str | None:
    try:
        from distributed import get_worker

        return str(get_worker().address)
    except (ImportError, ValueError):
        return None


class _WorkerArena:
    """An arena kept alive on a Dask worker between the games of one tournament: its own
    event loop on a thread, the referee, and every bot's process (one slot per worker
    thread). It closes itself after `idle_s` seconds without a game (e.g. when the runner
    died), and at the end of the tournament (`close_worker_arenas`)."""

    def __init__(self, spec: TournamentSpec, db_url: str, log_dir: str | None, slots: int,
                 idle_s: float, host: dict[str, Any] | None = None) -> None:
        from maag.server.compete.arena import Arena

        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="maag-arena", daemon=True)
        self.thread.start()
        self.arena = Arena(spec.bots, db_url, game=spec.game, game_config=dict(spec.config), tc=spec.tc,
                           slots=slots, log_dir=log_dir, server_options=arena_options(spec), host=host)
        self.idle_s = idle_s
        self.busy = 0
        self.last_used = time.monotonic()
        self.closed = False
        self._run(self.arena.start())
        self.loop.call_soon_threadsafe(self._schedule_idle_check)

    def _run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def _schedule_idle_check(self) -> None:
        self.loop.call_later(self.idle_s / 4, self._idle_check)

    def _idle_check(self) -> None:
        # Under the lock that play_on_worker holds while it picks this arena and marks it
        # busy: an arena is never closed between being picked and its game starting.
        with _WORKER_LOCK:
            if self.closed:
                return
            idle = self.busy == 0 and time.monotonic() - self.last_used > self.idle_s
            if idle:
                for k, v in list(_WORKER_ARENAS.items()):
                    if v is self:
                        del _WORKER_ARENAS[k]
                self.closed = True
        if not idle:
            self._schedule_idle_check()
            return
        LOG.info("closing an idle tournament arena")
        self.loop.create_task(self._shutdown())

    async def _shutdown(self) -> None:
        await self.arena.stop()
        self.loop.stop()

    def play(self, g: ScheduledGame, tid: str, match: str | None = None,
             tags: dict[str, Any] | None = None) -> GameSummary:
        """Play one game; the caller has counted it in `busy` (under _WORKER_LOCK)."""
        try:
            return cast("GameSummary", self._run(self.arena.play(
                g.seat0, g.seat1, seed=g.seed, match_id=match or match_id(tid, g.key),
                tags=tags or {"Tournament": tid, "Round": g.round, "GameKey": g.key})))
        finally:
            with _WORKER_LOCK:
                self.busy -= 1
                self.last_used = time.monotonic()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            self._run(self.arena.stop())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)


_WORKER_ARENAS: dict[tuple[str, str], _WorkerArena] = {}
_WORKER_LOCK = threading.RLock()
WORKER_IDLE_S = 300.0  # a worker's arena outlives its last game by this much at most


def _worker_slots() -> int:
    try:
        from distributed import get_worker

        return max(1, int(get_worker().state.nthreads))
    except (ImportError, ValueError, AttributeError):
        return 1


def play_on_worker(spec_dict: dict[str, Any], db_url: str, tid: str, game: dict[str, Any],
                   log_dir: str | None = None, host: dict[str, Any] | None = None,
                   match: str | None = None, tags: dict[str, Any] | None = None) -> dict[str, Any]:
    """Play one scheduled game on this (Dask worker) process and return its summary:
    game_id, winner (0, 1, -1, None if aborted), reason, plies, stored, search (per seat, what
    its bot reported of its search), verdict, seats, worker. The worker keeps one arena per
    tournament (referee and bot processes) across games. `match` and `tags`: the stored
    game's match id and tags, when not the tournament's (the hosted ladder's games)."""
    spec = TournamentSpec.from_dict(spec_dict)
    g = ScheduledGame(**game)
    key = (tid, db_url)
    with _WORKER_LOCK:
        arena = _WORKER_ARENAS.get(key)
        if arena is None or arena.closed:
            arena = _WORKER_ARENAS[key] = _WorkerArena(spec, db_url, log_dir, _worker_slots(), WORKER_IDLE_S,
                                                       host)
        arena.busy += 1  # with the lookup, under the lock: the idle check cannot close it now
    try:
        s = arena.play(g, tid, match, tags)
    except GameNotStarted as e:  # the game could not be set up; the arena is fine
        return {**not_started(e), "worker": _worker_address()}
    except Exception:
        with _WORKER_LOCK:  # a broken arena (a bot that keeps crashing) is not reused
            if _WORKER_ARENAS.get(key) is arena:
                del _WORKER_ARENAS[key]
        arena.close()
        raise
    return {"game_id": s.game_id, "winner": s.winner, "reason": s.reason, "plies": s.plies,
            "stored": s.stored, "search": list(s.search), "verdict": s.verdict, "seats": list(s.seats),
            "worker": _worker_address()}


def close_worker_arenas(tid: str | None = None) -> int:
    """Close this process's arenas (of tournament `tid`, or all); returns how many."""
    with _WORKER_LOCK:
        keys = [k for k in _WORKER_ARENAS if tid is None or k[0] == tid]
        arenas = [_WORKER_ARENAS.pop(k) for k in keys]
    for a in arenas:
        a.close()
    return len(arenas)
