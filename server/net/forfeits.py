"""Forfeits: games lost other than by playing them to their end, decided the moment the
referee knows, never left to a clock or a grace period that would say something else.

- `cut_off`: a bot the referee cut off for a protocol error of its own loses each of its
  games at once, verdict `protocol` (at a short time control its clock would run out while
  its connection lingers, and the verdict would say `time`);
- `record`: a game that could not start because a seat's bot failed before it (no hello in
  time, its connection closed before the game) is stored as lost by that seat;
- `watch`: a requested game waits for a seat's bot that has no connection only as long as
  its `Absence` allows, then that seat forfeits it (a bot process that said hello and hung
  up, and lives on, never holds a match or a tournament);
- `admit`, `dropped`: a request naming a hosted process's attached connection that has
  closed fails at once, with the seat to blame (it used to wait for ever).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from maag.engine import Game
from maag.protocol import ErrorCode
from maag.server.net.games import Games, LiveGame
from maag.server.net.lobby import Lobby
from maag.server.net.model import Absence, GameNotStarted, GameRequest, GameSummary, ServerConfig
from maag.server.net.seating import Seating
from maag.server.net.telling import Teller
from maag.server.referee.clock import TimeControl
from maag.server.referee.session import REPLAY_VERSION
from maag.server.storage.base import AsyncStorage

if TYPE_CHECKING:
    from maag.server.net.transport import Client

__all__ = ["Forfeits", "NOT_A_CUT_OFF", "ABSENCE_POLL_S"]

LOG = logging.getLogger("maag.server.net.server")

NOT_A_CUT_OFF = frozenset({ErrorCode.TRUNCATED_FRAME, ErrorCode.SHUTTING_DOWN, ErrorCode.UNAVAILABLE,
                           ErrorCode.INTERNAL_ERROR})
"""Fatal codes that are not the bot's doing (the server stops, its database is away, a bug)
or that only report that the bot's side closed (the stream ended inside a frame: a process
that died mid-write, whose verdict the disconnect policy and a hosted process's probe give)."""

ABSENCE_POLL_S = 0.2  # how often a request with an `absence` looks for a seat away too long


class Forfeits:
    """The referee's forfeits (see the module)."""

    def __init__(self, config: ServerConfig, *, server_id: str, storage: AsyncStorage, lobby: Lobby,
                 seating: Seating[LiveGame], rooms: Games, spawn: Callable[[Coroutine[Any, Any, Any]], None],
                 stopping: Callable[[], bool], teller: Teller) -> None:
        self.config, self.server_id, self.storage, self.lobby = config, server_id, storage, lobby
        self.teller = teller  # (a seat gone, told to the other: telling.py)
        self.seating, self.rooms, self.spawn, self.stopping = seating, rooms, spawn, stopping

    def cut_off(self, c: Client, code: ErrorCode) -> None:
        """The referee cut `c` off for a fatal error `code` (`c.fault` says it): unless the
        error is not the bot's doing (NOT_A_CUT_OFF), each of its games is lost by its seat at
        once, with that verdict. Not for a link (a fleet peer carrying a seat): its bot may
        come back, so its seat keeps the disconnect policy."""
        if code in NOT_A_CUT_OFF or c.link:
            return
        rooms = self.rooms
        now = time.monotonic()
        for gid, game, seats in self.seating.seated(c):
            if game.ending:
                continue
            for seat in seats:
                game.clients[seat] = None
                self.teller.notify(game, game.session.gone(seat, now, c.fault, final=True))  # (final: None)
            rooms.after(game)
            self.seating.unseat(c, gid)

    def attached_gone(self, handle: asyncio.Future[str]) -> bool:
        """Whether the attached connection of `handle` (RefereeServer.attach) has closed:
        before its hello (the future failed) or after it (no connection holds it any more)."""
        if not handle.done():
            return False
        if handle.cancelled() or handle.exception() is not None:
            return True
        return not any(c.hello_future is handle and not c.closing for c in self.lobby.clients)

    def dropped(self, c: Client) -> None:
        """`c` is gone (RefereeServer._drop): the time its bot's last connection closed is noted
        (`watch`), and a request waiting for it as an attached connection fails, naming its seat."""
        if c.bot is not None and not c.pinned and not self.lobby.connections_of(c.bot):
            self.lobby.left[c.bot] = time.monotonic()
        if not c.pinned:
            return
        for req in self.lobby.forget_requests_of(c.hello_future):
            if req.future is not None and not req.future.done():
                seat = req.clients.index(c.hello_future) if req.clients else None
                name = req.seats[seat] if seat is not None else c.bot
                why = f"{name}'s process closed its connection before its game"
                req.future.set_exception(GameNotStarted(why, seat=seat))

    def admit(self, req: GameRequest) -> bool:
        """Whether a new request may wait in the queue: not when an attached connection it
        names has closed already (its future fails at once, GameNotStarted naming the seat).
        One with an `absence` is watched (`watch`)."""
        assert req.future is not None
        for i, handle in enumerate(req.clients or ()):
            if handle is not None and self.attached_gone(handle):
                why = f"{req.seats[i]}'s process closed its connection before its game"
                req.future.set_exception(GameNotStarted(why, seat=i))
                return False
        if req.absence is not None:
            self.spawn(self.watch(req, req.absence))
        return True

    async def watch(self, req: GameRequest, absence: Absence) -> None:
        """While `req` waits in the queue, look for a seat whose bot has been away longer than
        `absence` allows: that seat loses the game by forfeit, the request's future resolves
        to its summary."""
        t0 = time.monotonic()
        fut = req.future
        assert fut is not None
        while not fut.done() and not self.stopping():
            await asyncio.sleep(ABSENCE_POLL_S)
            if req not in self.lobby.requests:
                continue  # being played (or set up): its game decides
            now = time.monotonic()
            for seat, bot in enumerate(req.seats):
                if req.clients is not None and req.clients[seat] is not None:
                    continue  # an attached connection (a hosted process): its host watches it
                away = self.lobby.absent(bot, now)
                if away is None and absence.startup_s is not None and now - t0 >= absence.startup_s:
                    kind, detail = "startup", f"not connected within {absence.startup_s:g} s"
                elif away and away >= absence.gone_s:  # (0.0: connected)
                    kind, detail = "disconnect", (f"its connection closed before its game and it did not "
                                                  f"come back within {absence.gone_s:g} s")
                else:
                    continue
                self.lobby.requests.remove(req)
                LOG.warning("%s vs %s: %s forfeits: %s", req.seats[0], req.seats[1], bot, detail)
                try:
                    summary = await self.record(req.seats, seat, kind, detail, match_id=req.match_id,
                                                tags=req.tags, seed=req.seed, tc=req.tc)
                except Exception as e:  # (the database is away: the caller hears it)
                    if not fut.done():
                        fut.set_exception(e)
                    return
                if not fut.done():
                    fut.set_result(summary)
                return

    async def record(self, seats: tuple[str, str], loser: int, verdict: str, detail: str, *,
                     match_id: str | None = None, tags: dict[str, Any] | None = None,
                     seed: int | None = None, tc: TimeControl | None = None,
                     host: dict[str, Any] | None = None) -> GameSummary:
        """Store a game that could not start because seat `loser`'s bot failed before it
        (its process never said hello in time, or closed its connection before the game:
        verdict `startup` or `disconnect`): lost by that seat, no actions, the verdict in its
        result. `tc`: the request's time control (None: the server's); `host`: what the host
        kept of its processes (their log tails: `maag replay` shows them), as a game's."""
        cfg = self.config
        tc = tc or cfg.tc
        full_config = Game(cfg.game, cfg.game_config).config
        db_id = await self.storage.create_game(cfg.game, full_config, seats, str(tc), match_id,
                                              self.server_id)
        winner = 1 - loser
        v = {"seat": loser + 1, "kind": verdict, "detail": detail}
        result_text = "1-0" if winner == 0 else "0-1"
        replay = {"version": REPLAY_VERSION, "game": cfg.game, "config": full_config, "seed": seed,
                  "start_state": None, "time_control": tc.to_dict(), "policy": cfg.policy.to_dict(),
                  "tags": {**(tags or {}), "Game": cfg.game, "Seat1": seats[0], "Seat2": seats[1],
                           "Result": result_text, "Reason": "disconnect", "GameId": str(db_id),
                           **({"Match": match_id} if match_id else {})},
                  "actions": [],
                  "result": {"winner": winner, "reason": "disconnect", "plies": 0, "verdict": v},
                  **({"host": host} if host else {})}
        stored = True
        try:
            await self.storage.finish_game(db_id, replay)
        except Exception:
            LOG.exception("game %s: the forfeit could not be stored", db_id)
            stored = False
        return GameSummary(db_id, seats, winner, "disconnect", 0, (0.0, 0.0), (0.0, 0.0), stored, verdict=v)
