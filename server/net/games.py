"""The games' life cycle: a paired game's row and session set up (or called off), one timer
per game for its deadlines (a late turn the clock ended), a seat back or gone, and the
game's end: stored, then `game_over`; what the session says happened is written to the
seats by the `Teller` the composition root hands it (telling.py; what a seat sends reaches
its game through acts.py).

Each game row is created in storage when the game starts; its result and replay are
committed before `game_over` is sent (while the database is away, the result waits with the
storage keeper, `game_over` goes out without a `replay_id`; with peers on the database, it
waits for the result to be stored: keeper.py's `held`). A game whose seat's connection
closes between the pairing and the game's first message is stored as aborted and its
request goes back to the front of the queue (see `start`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from maag.engine import Game
from maag.engine.seeds import derive_seed
from maag.server.net.keeper import StorageKeeper
from maag.server.net.lobby import Lobby
from maag.server.net.model import GameNotStarted, GameRequest, GameSummary, ServerConfig
from maag.server.net.seating import Seating
from maag.server.net.telling import Teller
from maag.server.net.watchers import Watchers
from maag.server.referee.session import REPLAY_VERSION, GameSession
from maag.server.storage.base import AsyncStorage, LeaseLost, StorageUnavailable

if TYPE_CHECKING:
    from maag.server.net.transport import Client

__all__ = ["LiveGame", "Games"]

LOG = logging.getLogger("maag.server.net.server")

@dataclass(slots=True, eq=False)
class LiveGame:
    session: GameSession
    clients: list[Client | None]
    bots: tuple[str, str]
    db_id: int
    request: GameRequest | None
    timer: asyncio.TimerHandle | None = None
    timer_at: float = 0.0  # clock time the timer fires at
    ending: bool = False
    held: bool = False  # a seat's connection closed, its cause being learnt: no deadline acts
    link_secret: str | None = None  # what the fleet's other referees link its seats with (fleet/links.py)


class Games:
    """The running games of one referee, by id (see the module)."""

    def __init__(self, config: ServerConfig, *, server_id: str, storage: AsyncStorage, lobby: Lobby,
                 seating: Seating[LiveGame], keeper: StorageKeeper, watchers: Watchers, stats: dict[str, int],
                 spawn: Callable[[Coroutine[Any, Any, Any]], None], new_secret: Callable[[], str | None],
                 close_links: Callable[[Client], None], teller: Teller) -> None:
        """`new_secret`: a game's link secret (None: no fleet listener); `close_links`: a
        closing connection's seats in games hosted elsewhere (fleet/links.py); `teller`: what
        the sessions say, written to the seats (telling.py)."""
        self.config, self.server_id, self.storage, self.lobby = config, server_id, storage, lobby
        self.seating = seating
        self.keeper, self.watchers, self.stats, self.spawn = keeper, watchers, stats, spawn
        self.new_secret, self.close_links, self.teller = new_secret, close_links, teller
        self.games: dict[str, LiveGame] = {}

    # -- start --------------------------------------------------------------------------
    async def start(self, req: GameRequest, a: Client, b: Client, index: int) -> None:
        cfg = self.config
        seating = self.seating
        secret = self.new_secret()
        try:
            full_config = Game(cfg.game, cfg.game_config).config
            db_id = await self.storage.create_game(cfg.game, full_config, req.seats, str(req.tc or cfg.tc),
                                                  req.match_id, self.server_id, secret)
        except Exception as e:
            # Nothing was played: an explicit request waits at the front of the queue until
            # the database is back (pairing is paused meanwhile); an automatic pairing is
            # made again then.
            seating.release(a)
            seating.release(b)
            self._not_played(a, b)
            if req.future is not None and not req.future.done():
                self.lobby.requests.appendleft(req)
            self.keeper.lost(e)
            return
        seating.release(a)
        seating.release(b)
        gid = str(db_id)
        seed = req.seed if req.seed is not None else (
            derive_seed(cfg.seed, index) if cfg.seed is not None else None)
        tags = {**req.tags, "Date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "Index": index,
                # The names the bots gave in hello, beside the registered names (Seat1, Seat2).
                "Seat1Hello": a.display or "", "Seat2Hello": b.display or ""}
        if req.match_id:
            tags["Match"] = req.match_id
        try:
            session = GameSession(gid, cfg.game, req.seats, config=cfg.game_config, tc=req.tc or cfg.tc,
                                  policy=cfg.policy, seed=seed, start_state=req.start_state,
                                  want_legal=(a.want_legal, b.want_legal),
                                  want_groups=(a.want_groups, b.want_groups),
                                  turn_events=(a.turn_events, b.turn_events), tags=tags)
        except Exception as e:  # e.g. a start state the engine refuses: no game, stored aborted
            self._not_played(a, b)
            await self._refuse(req, db_id, seed, tags, e)
            return
        if a.closing or b.closing:
            # A seat's connection closed while the game's row was being written (typically a
            # bot leaving right after its previous game, just as the referee paired it
            # again). Nothing has been sent about this game, so it is not played: starting it
            # would only record a forfeit by disconnect that says nothing about the bots.
            self._not_played(a, b)
            await self._cancel(req, session, db_id, 0 if a.closing else 1, a if a.closing else b)
            return
        game = LiveGame(session, [a, b], req.seats, db_id, req, link_secret=secret)
        self.games[gid] = game
        for seat, c in enumerate((a, b)):
            seating.sit(c, gid, game, seat)
        self.stats["games_started"] += 1
        LOG.info("game %s: %s vs %s (seed %d)", gid, req.seats[0], req.seats[1], session.seed)
        if req.on_start is not None:
            req.on_start(db_id)
        self.teller.open(game, session.begin(time.monotonic()))
        if self.watchers:
            self.watchers.tell("start", session)
        self.after(game)

    def _not_played(self, *clients: Client) -> None:
        """A paired game that does not start does not count against hello.max_games."""
        for c in clients:
            self.seating.not_played(c)

    async def _refuse(self, req: GameRequest, db_id: int, seed: int | None, tags: dict[str, Any],
                      error: Exception) -> None:
        """A paired game whose session cannot be set up (its start state or configuration is
        refused): the request fails with GameNotStarted naming the reason, the row is stored
        as aborted (with the reason in its replay), and both seats are free again."""
        why = f"game {db_id} could not start: {type(error).__name__}: {error}"
        LOG.warning("%s", why)
        if req.future is not None and not req.future.done():
            req.future.set_exception(GameNotStarted(why))
        self.lobby.pair()
        replay = {"version": REPLAY_VERSION, "game": self.config.game, "config": self.config.game_config,
                  "seed": seed, "start_state": req.start_state, "tags": {**tags, "Reason": "aborted"},
                  "actions": [], "result": {"winner": None, "reason": "aborted", "plies": 0}, "error": why}
        try:
            await self.storage.finish_game(db_id, replay)
        except Exception:
            LOG.exception("game %s: could not be stored as aborted", db_id)

    async def _cancel(self, req: GameRequest, session: GameSession, db_id: int, seat: int,
                      gone: Client) -> None:
        """Call off a paired game before its first message: its row is stored as aborted, an
        explicit request goes back to the front of the queue (as if it had never been
        paired: it is played once its bots have free slots again) or, without `requeue`,
        fails with GameNotStarted; an automatic pairing is simply dropped, and the other
        seat's slot is offered again."""
        LOG.info("game %s not started: %s closed its connection before the game's first message",
                 session.game_id, gone)
        session.abort("a seat's connection closed before the game started")
        if req.future is not None and not req.future.done():  # (stop() cancels what is queued)
            if req.requeue:
                self.lobby.requests.appendleft(req)
            else:
                why = f"{gone.bot} left before game {session.game_id} started"
                req.future.set_exception(GameNotStarted(why, seat=seat))
        self.lobby.pair()
        try:
            await self.storage.finish_game(db_id, session.replay())
        except Exception:
            LOG.exception("game %s: could not be stored as aborted", session.game_id)

    def after(self, game: LiveGame) -> None:
        """After any change to a game: end it, or make sure its timer fires by its next
        deadline. The timer is moved only when the deadline comes earlier than it fires (a
        timer that fires early finds nothing to do and is armed again)."""
        s = game.session
        if self.watchers and not game.ending:
            self.watchers.tell("move", s)
        if s.finished:
            if not game.ending:
                game.ending = True
                if game.timer is not None:
                    game.timer.cancel()
                    game.timer = None
                self.spawn(self._end(game))
            return
        dl = s.next_deadline()
        if dl is None or game.held or (game.timer is not None and game.timer_at <= dl):
            return
        if game.timer is not None:
            game.timer.cancel()
        loop = asyncio.get_running_loop()
        # The event loop's clock is time.monotonic on every platform asyncio supports.
        game.timer_at = dl
        when = loop.time() + max(0.0, dl - time.monotonic()) + 0.0005
        game.timer = loop.call_at(when, self._on_timer, game)

    def _on_timer(self, game: LiveGame) -> None:
        game.timer = None
        if game.ending or game.held:
            return
        due = game.session.expire(time.monotonic())
        if due is not None:  # a late turn the clock ended: no result for the seat
            self.teller.tell(game, due[0], due[1], result=False)
        self.after(game)

    # -- end ----------------------------------------------------------------------------
    async def _end(self, game: LiveGame) -> None:
        s = game.session
        replay = s.replay()
        req = game.request
        if req is not None and req.annotate is not None:
            try:
                replay["host"] = req.annotate()
            except Exception:
                LOG.exception("game %s: the host's annotation failed", s.game_id)
        stored = True
        waiting = False
        try:
            await self.storage.finish_game(game.db_id, replay, actions_json=s.log_json())
        except StorageUnavailable as e:
            # Kept (in memory and in the spill file) and written when the database is back;
            # the bots are told now (replay_id null): their game is over either way.
            stored = False
            waiting = True
            self.keeper.keep(game.db_id, replay)
            LOG.warning("game %s: result kept until storage is back", s.game_id)
            self.keeper.lost(e)
        except LeaseLost as e:  # another referee took the game over: our result is not its
            self.keeper.revoked(str(e))
            return
        except Exception:
            stored = False
            LOG.exception("game %s: result could not be stored", s.game_id)
        o = s.outcome
        assert o is not None
        if waiting and self.keeper.peers:  # told once stored (keeper.held: a peer may take it over)
            def tell(ok: bool, game: LiveGame = game) -> None:
                if ok:
                    self.teller.end(game, game.session.game_id)
            self.keeper.held[game.db_id] = tell
        else:
            self.teller.end(game, s.game_id if stored else None)
        self.games.pop(s.game_id, None)
        for c in set(game.clients):
            if c is not None:
                self.seating.unseat(c, s.game_id, now=time.monotonic())
        self.stats["games_finished"] += 1
        rep = s.clock_report()
        srch = s.search_report()
        LOG.info("game %s over: %s (%s) after %d actions", s.game_id, o.result_text, o.reason.value, o.plies)
        summary = GameSummary(game.db_id, game.bots, o.winner, o.reason.value, o.plies,
                              (rep["think_ms"][0], rep["think_ms"][1]),
                              (rep["transport_ms"][0], rep["transport_ms"][1]), stored,
                              search=(srch[0], srch[1]), verdict=o.verdict, host=replay.get("host"))
        if self.watchers:
            self.watchers.tell("over", s, summary)
        if waiting and self.keeper.waiting(game.db_id):  # the request's future waits for the write
            self.keeper.pending[game.db_id] = (replay, req, summary)
        elif req is not None and req.future is not None and not req.future.done():
            req.future.set_result(summary)
        self.lobby.pair()

    def abort_all(self, why: str) -> None:
        """Stop every running game without a winner (stored as aborted, `game_over` sent)."""
        for g in list(self.games.values()):
            if not g.ending:
                g.session.abort(why)
                self.after(g)

    # -- seats --------------------------------------------------------------------------
    def reattach(self, c: Client) -> None:
        """Give `c` the disconnected seats of its bot in running games (reconnection)."""
        now = time.monotonic()
        for game in list(self.games.values()):
            if game.ending:  # (its free slots do not matter: these games were the bot's already,
                continue  # though it may have been paired again meanwhile, as after a takeover)
            for seat in (0, 1):
                if game.bots[seat] == c.bot and game.clients[seat] is None:
                    self.seat_back(c, game, seat, now)
                    break

    def seat_back(self, c: Client, game: LiveGame, seat: int, now: float | None = None) -> None:
        """`c` holds `seat` of `game` again (the bot reconnected, here or through a link)."""
        game.clients[seat] = c
        # (played on this connection: it counts towards its hello's max_games)
        self.seating.sit(c, game.session.game_id, game, seat, again=True)
        game.session.set_want_legal(seat, c.want_legal)
        game.session.set_want_groups(seat, c.want_groups)
        game.session.set_turn_events(seat, c.turn_events)
        LOG.info("game %s: seat %d reconnected (%s)", game.session.game_id, seat + 1, c)
        self.teller.open(game, game.session.back(seat, time.monotonic() if now is None else now))
        self.after(game)

    def hold(self, c: Client) -> None:
        """`c`'s connection closed and the server learns why (a hosted process's probe, up
        to seconds) before its seats are given up (`leave`): its games' deadlines wait, so
        that the clock does not decide first (`time` for a process that crashed)."""
        for _, game, _ in self.seating.seated(c):
            game.held = True
            if game.timer is not None:
                game.timer.cancel()
                game.timer = None

    def leave(self, c: Client) -> None:
        """`c` is gone: its seats are disconnected (a hosted process's for good), its links closed."""
        if self.seating.links(c):
            self.close_links(c)
        now = time.monotonic()
        for gid, game, seats in self.seating.seated(c):
            if game.ending:
                continue
            if c.fault is not None and c.fault[0] == "outside" and c.pinned:
                # A hosted process killed from outside (sandbox/jail.py's OUTSIDE: an admin's
                # kill -9, the machine's OOM killer): its bot did nothing wrong, so the game is
                # aborted, unrated, instead of lost by it.
                LOG.warning("game %s aborted: %s's process was %s", gid, c.bot, c.fault[1])
                game.session.abort(f"killed from outside: {c.bot}'s process was {c.fault[1]}")
                self.after(game)
                self.seating.unseat(c, gid)
                continue
            game.held = False
            for seat in seats:
                game.clients[seat] = None
                final = c.pinned and not c.link  # a hosted process cannot come back; a link's bot can
                self.teller.notify(game, game.session.gone(seat, now, c.fault, final=final))
            self.after(game)
            self.seating.unseat(c, gid)
