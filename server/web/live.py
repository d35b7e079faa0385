"""The live part of the web view: what spectators are pushed over their WebSockets.

`LiveGames` watches a `RefereeServer` (`RefereeServer.watch`) and keeps, per running game,
the public evaluation series; a page subscribes to the lobby (the running games, the last
finished ones and the standings) or to one game (its spectator snapshot). A change only
marks what is stale; a push follows at most every `interval` seconds per game, and every
`lobby_interval` seconds for the lobby, whose standings are refitted for it (pushes are
coalesced: a game that moves a hundred times in that interval is sent once),
and one encoded frame goes to every subscriber of it. There is no polling: nothing is sent
while nothing changes.

A game's snapshot (`snapshot`) holds its public view (maag.server.referee.spectator: no
hand, no deck order), the actions as the opponent saw them (the game's `public_action`),
the clocks, the evaluation series and the board's layout; the full state is never read
into it while the game runs. A page is sent the whole log when it subscribes, and each push
then carries the entries from `log_from` on, which the page appends to the ones it has.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from maag.server.net.server import GameChange, RefereeServer
from maag.server.referee.session import GameSession
from maag.server.referee.spectator import public_value, public_view

__all__ = ["LiveGames", "game_snapshot", "layout_of", "public_log"]

LOG = logging.getLogger(__name__)

Standings = Callable[[], Awaitable[dict[str, Any] | None]]
Finished = Callable[[], Awaitable[list[dict[str, Any]]]]


_LAYOUTS: dict[str, dict[str, Any] | None] = {}


def layout_of(game: str, config: dict[str, Any]) -> dict[str, Any] | None:
    """The board's fixed layout of a configuration (the game's `layout`), or None. Kept per
    configuration: a layout never changes, and every snapshot carries it."""
    key = game + json.dumps(config, sort_keys=True, default=str)
    if key not in _LAYOUTS:
        from maag.engine import registry

        fn = registry.get(game).layout
        if len(_LAYOUTS) >= 256:  # configurations are few; a server that sees many keeps it bounded
            _LAYOUTS.clear()
        _LAYOUTS[key] = fn(config) if fn is not None else None
    return _LAYOUTS[key]


def _clocks(s: GameSession) -> list[dict[str, Any]]:
    now = time.monotonic()
    out = []
    for i, seat in enumerate(s.seats):
        c = seat.clock
        left = c.available_ms()
        if s.to_move == i and seat.prompt_at is not None and not s.finished:
            left -= (now - seat.prompt_at) * 1000.0
        out.append({"name": seat.name, "think_ms": round(c.think_total_ms), "bank_ms": round(c.bank_ms),
                    "turn_left_ms": None if math.isinf(left) else round(max(0.0, left)),
                    "to_move": s.to_move == i and not s.finished})
    return out


def public_log(s: GameSession, done: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The game's actions as the opponent saw them; `done`, the list for an earlier point of
    the same game, is extended in place with the entries after it and returned (a log only
    grows, and converting every entry again at each push cost most of a push)."""
    spec = s.game.spec
    out = [] if done is None else done
    out.extend({"seat": e["seat"] + 1, "action": spec.public_action(e["action"]), "auto": bool(e.get("auto"))}
               for e in s.log[len(out):])
    return out


def game_snapshot(s: GameSession, values: list[list[Any]],
                  log: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A spectator's snapshot of a running (or just finished) game; `log`: its public log
    (`public_log`) when the caller keeps one."""
    spec = s.game.spec
    o = s.outcome
    return {
        "type": "game", "game_id": s.game_id, "game": s.game.name, "config": s.game.config,
        "seats": [seat.name for seat in s.seats], "tags": s.tags, "turn": s.turn_no,
        "view": public_view(s.state),
        "log": public_log(s) if log is None else log,
        "clocks": _clocks(s), "values": values, "value_scale": spec.value_scale,
        "layout": layout_of(s.game.name, s.game.config),
        "result": None if o is None else {"winner": o.winner, "reason": o.reason.value, "plies": o.plies},
    }


def game_row(s: GameSession) -> dict[str, Any]:
    """One line of the lobby's list of running games."""
    return {"game_id": s.game_id, "game": s.game.name, "seats": [seat.name for seat in s.seats],
            "plies": len(s.log), "turn": s.turn_no}


class LiveGames:
    """Spectator subscriptions over one referee server."""

    def __init__(self, referee: RefereeServer, standings: Standings, finished: Finished,
                 interval: float = 0.1, lobby_interval: float = 1.0) -> None:
        self.referee = referee
        self.standings = standings
        self.finished = finished
        self.interval = interval
        self.lobby_interval = lobby_interval
        self.lobby: set[web.WebSocketResponse] = set()
        self.watchers: dict[str, set[web.WebSocketResponse]] = {}
        self.values: dict[str, list[list[Any]]] = {}  # game id -> [ply, value] at ends of turns
        self.logs: dict[str, list[dict[str, Any]]] = {}  # game id -> its public log so far
        self.pushed: dict[str, int] = {}  # game id -> entries of its log all its watchers have
        # game id -> (its change count, when, its whole snapshot encoded): a page that
        # subscribes while nothing moved, within one push interval, gets the frame the
        # previous one got (spectators arrive together; the clocks in it are that recent)
        self._changes: dict[str, int] = {}
        self._first: dict[str, tuple[int, float, str]] = {}
        self._sessions: dict[str, GameSession] = {}
        self._stale: set[str] = set()
        self._over: set[str] = set()
        self._lobby_stale = False
        self._timer: asyncio.TimerHandle | None = None
        self._lobby_timer: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._unwatch = referee.watch(self._on_change)
        self.frames_sent = 0
        for s in referee.running():
            self._sessions[s.game_id] = s
            self.values[s.game_id] = []

    def close(self) -> None:
        self._unwatch()
        for timer in (self._timer, self._lobby_timer):
            if timer is not None:
                timer.cancel()
        for t in list(self._tasks):
            t.cancel()

    # -- the referee's side -----------------------------------------------------------
    def _on_change(self, ch: GameChange) -> None:
        s = ch.session
        gid = s.game_id
        if ch.kind == "start":
            self._sessions[gid] = s
            self.values[gid] = []
            self._lobby_stale = True
        elif ch.kind == "over":
            self._lobby_stale = True
        self._track_value(s)
        self._changes[gid] = self._changes.get(gid, 0) + 1
        if self.watchers.get(gid):
            self._stale.add(gid)
        if ch.kind == "over":
            self._over.add(gid)  # forgotten after the next push, which sends the result
        if (self._stale or self._over) and self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self.interval, self._flush)
        if self._lobby_stale and self.lobby and self._lobby_timer is None:
            self._lobby_timer = asyncio.get_running_loop().call_later(self.lobby_interval, self._flush_lobby)

    def _track_value(self, s: GameSession) -> None:
        """Append the public evaluation after each new end of turn (and at the end)."""
        series = self.values.get(s.game_id)
        if series is None:
            return
        plies = len(s.log)
        last = series[-1][0] if series else -1
        if plies == last or not (plies == 0 or s.finished or s.log[-1].get("hash") is not None):
            return
        if s.state.is_terminal:
            w = s.state.winner
            v: float | None = 0.0 if w == -1 else (1.0 if w == 0 else -1.0) * s.game.spec.value_scale
        else:
            v = public_value(s.state)
        series.append([plies, v])

    # -- pushing ----------------------------------------------------------------------
    def _flush(self) -> None:
        self._timer = None
        stale, self._stale = self._stale, set()
        for gid in stale:
            s = self._sessions.get(gid)
            subs = self.watchers.get(gid)
            if s is None or not subs:
                continue
            frame = self._snapshot(s, self.pushed.get(gid, 0))
            self.pushed[gid] = frame["log_from"] + len(frame["log"])  # every watcher has it all now
            self._send_all(subs, json.dumps(frame))
        for gid in self._over:
            self._sessions.pop(gid, None)
            self.values.pop(gid, None)
            self.logs.pop(gid, None)
            self.pushed.pop(gid, None)
            self._changes.pop(gid, None)
            self._first.pop(gid, None)
            self.watchers.pop(gid, None)  # the pages keep the final position; nothing more comes
        self._over.clear()

    def _flush_lobby(self) -> None:
        self._lobby_timer = None
        if self._lobby_stale and self.lobby:
            self._lobby_stale = False
            self._spawn(self._push_lobby())

    def _send_all(self, subs: set[web.WebSocketResponse], frame: str) -> None:
        for ws in list(subs):
            if ws.closed:
                subs.discard(ws)
                continue
            self.frames_sent += 1
            self._spawn(ws.send_str(frame))

    def _spawn(self, coro: Any) -> None:
        t = asyncio.ensure_future(coro)
        self._tasks.add(t)
        t.add_done_callback(self._done)

    def _done(self, t: asyncio.Task[Any]) -> None:
        self._tasks.discard(t)
        if not t.cancelled() and t.exception() is not None:
            LOG.debug("a push failed: %r", t.exception())

    async def lobby_frame(self) -> str:
        games = [game_row(s) for s in self.referee.running()]
        return json.dumps({"type": "lobby", "games": games, "finished": await self.finished(),
                           "standings": await self.standings()})

    async def _push_lobby(self) -> None:
        frame = await self.lobby_frame()
        self._send_all(self.lobby, frame)

    # -- the subscribers' side ----------------------------------------------------------
    async def subscribe_lobby(self, ws: web.WebSocketResponse) -> None:
        self.lobby.add(ws)
        await ws.send_str(await self.lobby_frame())

    def unsubscribe(self, ws: web.WebSocketResponse) -> None:
        self.lobby.discard(ws)
        for subs in self.watchers.values():
            subs.discard(ws)
        for gid in [g for g, subs in self.watchers.items() if not subs]:
            del self.watchers[gid]

    async def subscribe_game(self, ws: web.WebSocketResponse, gid: str) -> bool:
        """Watch game `gid`; False when no such game is running."""
        s = self._sessions.get(gid)
        if s is None:
            return False
        self.watchers.setdefault(gid, set()).add(ws)
        version, now = self._changes.get(gid, 0), time.monotonic()
        cached = self._first.get(gid)
        if cached is None or cached[0] != version or now - cached[1] > self.interval:
            frame = self._snapshot(s)  # the whole log
            cached = self._first[gid] = (version, now, json.dumps(frame))
            log_len = len(frame["log"])
        else:
            log_len = len(self.logs[gid])  # unchanged since that frame was made
        if len(self.watchers[gid]) == 1:  # else the others lack what they lacked: pushes go on from there
            self.pushed[gid] = log_len
        await ws.send_str(cached[2])
        return True

    def _snapshot(self, s: GameSession, log_from: int = 0) -> dict[str, Any]:
        """The game's snapshot with its log from entry `log_from` on (`log_from` in the
        frame; the page keeps the entries before it). Pushes send only what every watcher
        lacks: resending the whole log at every push was most of a push's bytes and time."""
        gid = s.game_id
        log = self.logs[gid] = public_log(s, self.logs.get(gid))
        snap = game_snapshot(s, self.values.get(gid, []), log[log_from:])
        snap["log_from"] = log_from
        return snap

    @property
    def spectators(self) -> int:
        return len(self.lobby) + sum(len(v) for v in self.watchers.values())

