"""The lobby: who is connected, who has a free game slot, and who plays whom next.

Pure bookkeeping, no sockets: a connection is any object with `bot`, `pinned`,
`hello_future`, `closing`, `closed` and `peer` (the transport's `Client`, or a stand-in in
`tests/server/test_lobby.py`); who is seated where and who has a free slot is the lobby's
`Seating` (seating.py), handed in by the composition root. `pair()` decides and calls
`begin(request, a, b)` for each game it makes: explicit requests first (`request_game`, in
order; a request naming `attach`ed connections waits for exactly those), then, with
`auto_pair`, free bots first come first served, never a bot against itself. It also keeps the
abuse limits that are about who connects: connections before `hello`, failed logins, games
per bot per minute.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import Any

from maag.server.net.model import GameRequest, ServerConfig
from maag.server.net.seating import Seating

__all__ = ["Lobby", "host_of"]


def host_of(peer: Any) -> str:
    """The address part of a peer name ((host, port) for TCP)."""
    return str(peer[0]) if isinstance(peer, tuple) and peer else str(peer)


class Lobby:
    """The connections, the requests waiting and the pairing (see the module)."""

    def __init__(self, config: ServerConfig, *, seating: Seating[Any],
                 begin: Callable[[GameRequest, Any, Any], None],
                 call_later: Callable[[float, Callable[[], None]], Any],
                 blocked: Callable[[], bool] = lambda: False) -> None:
        self.config = config
        self.seating = seating
        self.begin = begin
        self.blocked = blocked  # pairing waits while this says so (the database is away)
        self.call_later = call_later
        self.clients: set[Any] = set()
        self.requests: deque[GameRequest] = deque()
        self.explicit_only: set[str] = set()
        """Bots paired only by explicit requests, never automatically nor by a ladder's
        scheduler: a person's seat and the agent started to play it (maag.server.web)."""
        self.paused = False  # no pairing (the database is away, the server stops)
        self.game_index = 0  # games paired so far: the next game's index
        self._starts: dict[str, deque[float]] = {}  # bot -> start times of its recent games
        self.elsewhere: dict[str, list[float]] = {}
        """bot -> start times (this clock) of its games started by the other referees on the
        database in the last minute (fleet/limits.py refreshes it): the limit is the fleet's."""
        self._auth_failures: dict[str, tuple[int, float]] = {}  # address or name -> (count, last)
        self._repair: Any = None  # the timer that pairs again when a per-minute limit allows
        self.left: dict[str, float] = {}
        """bot -> when its last connection here closed (while it has none; `absent`)."""

    # -- pairing ------------------------------------------------------------------------
    def pair(self) -> None:
        """Make every game that can start now (calls `begin` for each)."""
        if self.paused or self.blocked():
            return
        for req in list(self.requests):
            pin = req.clients or (None, None)
            a = self.pinned(pin[0]) if pin[0] is not None else self.free(req.seats[0])
            if a is None:
                continue
            self.seating.reserve(a)  # (so that `a`'s bot is not its own opponent on one slot)
            b = self.pinned(pin[1]) if pin[1] is not None else self.free(req.seats[1])
            self.seating.release(a)
            if b is None:
                continue
            self.requests.remove(req)
            self._begin(req, a, b)
        if self.config.auto_pair and not self.requests:
            seating = self.seating
            while True:
                now = time.monotonic()
                # (who may have a free slot, as the seating keeps it: not a scan of every
                # connection, which after every game's end was a twentieth of a busy referee)
                clients = self.clients
                free = sorted((c for c in seating.maybe_free() if c in clients and seating.free(c) > 0
                               and not c.pinned and c.bot not in self.explicit_only
                               and self.games_left(str(c.bot), now)),
                              key=seating.free_since)
                pair = next(((x, y) for i, x in enumerate(free) for y in free[i + 1:] if x.bot != y.bot),
                            None)
                if pair is None:
                    return
                x, y = pair if self.game_index % 2 == 0 else (pair[1], pair[0])  # alternate seats
                self._begin(GameRequest((str(x.bot), str(y.bot))), x, y)

    def _begin(self, req: GameRequest, a: Any, b: Any) -> None:
        if self.config.max_games_per_minute:
            now = time.monotonic()
            for bot in {str(a.bot), str(b.bot)}:
                self._starts.setdefault(bot, deque()).append(now)
        self.seating.paired(a)
        self.seating.paired(b)
        self.begin(req, a, b)
        self.game_index += 1

    def free(self, bot: str, exclude: Any = None) -> Any:
        """The connection of `bot` free the longest (not an attached one), or None."""
        best = None
        if not self.games_left(bot, time.monotonic()):
            return None
        seating = self.seating
        for c in self.clients:
            if c.bot == bot and not c.pinned and seating.free(c) > (1 if c is exclude else 0):
                if best is None or seating.free_since(c) < seating.free_since(best):
                    best = c
        return best

    def pinned(self, handle: Any) -> Any:
        """The attached connection whose hello future is `handle`, if it is free."""
        for c in self.clients:
            if c.hello_future is handle:
                return c if self.seating.free(c) > 0 else None
        return None

    def connections_of(self, bot: str) -> int:
        """Live connections of `bot` (attached ones not counted)."""
        return sum(1 for x in self.clients if x.bot == bot and not x.pinned)

    def absent(self, bot: str, now: float) -> float | None:
        """How long `bot` has had no connection here (attached ones not counted): 0.0 while
        it has one, None if it never had one (nor has now)."""
        if self.connections_of(bot):
            return 0.0
        t = self.left.get(bot)
        return None if t is None else now - t

    def forget_requests_of(self, handle: Any) -> list[GameRequest]:
        """Take out the requests naming the attached connection `handle` (it closed)."""
        gone = [r for r in self.requests if r.clients and handle in r.clients]
        for r in gone:
            self.requests.remove(r)
        return gone

    # -- limits -------------------------------------------------------------------------
    def games_left(self, bot: str, now: float) -> bool:
        """May `bot` start a game now (max_games_per_minute)?"""
        limit = self.config.max_games_per_minute
        if not limit:
            return True
        starts = self._starts.get(bot)
        others = [t for t in self.elsewhere.get(bot, ()) if now - t < 60.0]
        if starts is None and not others:
            return True
        starts = starts if starts is not None else deque()
        while starts and now - starts[0] >= 60.0:
            starts.popleft()
        if len(starts) + len(others) < limit:
            return True
        if self._repair is None:  # pair again when the oldest of those games is a minute old
            def again() -> None:
                self._repair = None
                self.pair()
            oldest = min(([starts[0]] if starts else []) + others)
            self._repair = self.call_later(60.0 - (now - oldest) + 0.01, again)
        return False

    def over_pending_limit(self, peer: Any) -> str | None:
        """Why a new connection from `peer` is refused (too many without `hello`), or None."""
        cfg = self.config
        pending = [c for c in self.clients if c.bot is None and not c.closed]
        if cfg.max_pending and len(pending) >= cfg.max_pending:
            return f"{len(pending)} connections have not said hello yet (max_pending)"
        host = host_of(peer)
        same = sum(1 for c in pending if host_of(c.peer) == host)
        if cfg.max_pending_per_address and same >= cfg.max_pending_per_address:
            return f"{same} connections from {host} have not said hello yet (max_pending_per_address)"
        return None

    def auth_delay(self, keys: list[str], failures: int = 0) -> float:
        """Record a failed login under `keys` and return how long to wait before answering
        (`failures`: the most the fleet counted under one of them, fleet/limits.py)."""
        cfg = self.config
        now = time.monotonic()
        worst = failures
        for k in keys:
            n, last = self._auth_failures.get(k, (0, now))
            n = 1 if now - last > cfg.auth_window_s else n + 1
            self._auth_failures[k] = (n, now)
            worst = max(worst, n)
        if len(self._auth_failures) > 100_000:  # forget the oldest keys: memory stays bounded
            for k, _ in sorted(self._auth_failures.items(), key=lambda kv: kv[1][1])[:50_000]:
                del self._auth_failures[k]
        return min(cfg.auth_delay_max_ms, cfg.auth_delay_ms * 2 ** min(worst - 1, 30)) / 1000

    def stop(self) -> None:
        self.paused = True
        if self._repair is not None:
            self._repair.cancel()
            self._repair = None
