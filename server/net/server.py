"""The referee server, the composition root: it builds the rooms (named in net/__init__.py;
the fleet's in maag.server.fleet), hands each only its collaborators, listens and logs bots in
(tokens checked against storage, revoked ones closed). What a frame means is decided by
maag.protocol, what a message does by the referee core (maag.server.referee.session); the
rooms move bytes and keep time.

Limits, per connection: frame size (`max_frame`, checked by the protocol before a frame is
buffered whole), messages per second (`max_rate`, then `rate_limited` and the connection is
closed), and the bytes the server may buffer for a peer that does not read (`max_out_buffer`;
then the connection is dropped). Every protocol violation is answered with an `error`; fatal
codes close the connection; a bot's own fatal error loses its games at once (forfeits.py).
Nothing a connection sends reaches another connection's games except through its own seats.

Logging (`maag.server.net.server`): INFO for connections and games, DEBUG for every message
(`<<` received, `>>` sent, with the connection id and game)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
import time
from collections.abc import Callable
from typing import Any

from maag.engine import Game
from maag.protocol import (
    FATAL,
    Error,
    ErrorCode,
    Hello,
    Message,
    Ping,
    Play,
    Pong,
    ProtocolError,
    Welcome,
)
from maag.server.fleet.fleets import build_fleet
from maag.server.fleet.interface import Fleet, FleetParts
from maag.server.net.acts import Acts
from maag.server.net.forfeits import Forfeits
from maag.server.net.games import Games, LiveGame
from maag.server.net.keeper import StorageKeeper
from maag.server.net.lobby import Lobby, host_of
from maag.server.net.model import SERVER_NAME, Absence, GameNotStarted, GameRequest, GameSummary, ServerConfig
from maag.server.net.seating import Seating
from maag.server.net.telling import Teller
from maag.server.net.transport import Client, RateLimiter
from maag.server.net.watchers import GameChange, Watchers
from maag.server.referee.clock import TimeControl
from maag.server.referee.session import GameSession
from maag.server.storage.base import AsyncStorage, Storage, hash_token

__all__ = ["ServerConfig", "RefereeServer", "GameRequest", "Absence", "GameSummary", "GameNotStarted",
           "GameChange", "RateLimiter", "SERVER_NAME"]

LOG = logging.getLogger(__name__)


class RefereeServer:
    """A referee server. `await start()`, then `request_game` or let bots pair; `await
    stop()` aborts running games (stored as aborted) and closes every connection."""

    def __init__(self, config: ServerConfig, storage: Storage) -> None:
        self.config = config
        self.storage = AsyncStorage(storage)
        Game(config.game, config.game_config)  # fail now on a bad configuration
        self.port = config.port
        self.server_id = secrets.token_hex(8)
        self.stopping = False
        self.failed: str | None = None
        """Why the server gave up (the database away too long); then `failed_event` is set."""
        self.failed_event = asyncio.Event()
        self.stats = {"connections": 0, "messages_in": 0, "messages_out": 0, "actions": 0, "games_started": 0,
                      "games_finished": 0, "errors_sent": 0}
        self.latencies_ms: list[float] = []
        self.cpu_ms: list[float] = []  # the same, in CPU time of the event-loop thread
        self.seating: Seating[LiveGame] = Seating()  # who is seated where, who has a free slot
        self.keeper = StorageKeeper(self.storage, self.server_id, lease_s=config.lease_s,
                                    outage_limit_s=config.storage_outage_limit_s, spill_dir=config.spill_dir,
                                    on_back=self._pair, on_fail=self._fail,
                                    live_connections=lambda: [c.id for c in self.clients if c.counted])
        self.lobby = Lobby(config, seating=self.seating, begin=self._begin,
                           blocked=lambda: not self.keeper.ok,
                           call_later=lambda d, fn: asyncio.get_running_loop().call_later(d, fn))
        self.watchers = Watchers()
        self.teller = Teller(self.stats)  # what the sessions say, written to the seats
        self.rooms = Games(config, server_id=self.server_id, storage=self.storage, lobby=self.lobby,
                           seating=self.seating, keeper=self.keeper, watchers=self.watchers, stats=self.stats,
                           spawn=self.spawn, new_secret=lambda: self.fleet.new_secret(),
                           close_links=lambda c: self.fleet.close_links(c), teller=self.teller)
        self.acts = Acts(self.rooms, self.teller)  # every act, turn and resignation, handed to its game
        self.plain_play = self.acts.plain_play  # (the transport's Host: a plain frame's play)
        self.forfeits = Forfeits(config, server_id=self.server_id, storage=self.storage, lobby=self.lobby,
                                 seating=self.seating, rooms=self.rooms, spawn=self.spawn,
                                 stopping=lambda: self.stopping, teller=self.teller)
        self.fleet: Fleet = build_fleet(FleetParts(  # (ServerConfig.fleet: a fleet's referee, or alone)
            config=config, server_id=self.server_id, storage=self.storage, keeper=self.keeper,
            lobby=self.lobby, seating=self.seating, rooms=self.rooms, watchers=self.watchers,
            stats=self.stats, spawn=self.spawn, violation=self.violation, drop=self._drop, fail=self._fail,
            stopping=lambda: self.stopping, tasks=lambda: self._tasks, request_game=self.request_game))
        self._local_tokens: dict[str, str] = {}  # hash of a token of this run only -> bot
        self._server: asyncio.base_events.Server | None = None
        self._loops: list[asyncio.Task[Any]] = []
        self._tasks: set[asyncio.Task[Any]] = set()

    # -- what the rooms hold, under the names users know -------------------------------
    @property
    def clients(self) -> set[Client]:
        return self.lobby.clients

    @property
    def requests(self) -> Any:
        return self.lobby.requests

    @property
    def explicit_only(self) -> set[str]:
        """Bots paired only by explicit requests (`request_game`), never automatically nor by a
        ladder's scheduler: a person's seat and the agent started to play it (maag.server.web)."""
        return self.lobby.explicit_only

    @property
    def games(self) -> dict[str, LiveGame]:
        return self.rooms.games

    @property
    def storage_ok(self) -> bool:
        return self.keeper.ok

    # -- lifecycle ----------------------------------------------------------------------
    async def start(self) -> None:
        cfg = self.config
        await self.keeper.start(f"{socket.gethostname()}:{cfg.port} pid {os.getpid()}")
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(lambda: Client(self), cfg.host, cfg.port,
                                                reuse_address=True, reuse_port=cfg.reuse_port or None)
        self.port = self._server.sockets[0].getsockname()[1]
        await self.fleet.listen(lambda: Client(self, via_link=True))
        LOG.info("referee listening on %s:%d (game %s, tc %s)", cfg.host, self.port, cfg.game, cfg.tc)
        self._loops.append(loop.create_task(self.keeper.run()))
        self._loops += [loop.create_task(c) for c in self.fleet.loops()]

    async def serve_forever(self) -> None:
        assert self._server is not None
        await self._server.serve_forever()

    async def stop(self) -> None:
        """Hand the running games over to the fleet's other referees (fleet/takeover.py), or abort
        them (stored as aborted, `game_over` sent); say `shutting_down`; close everything."""
        self.stopping = True
        self.lobby.stop()
        for w in self._loops:
            w.cancel()
        if self._server is not None:
            self._server.close()
        await self.fleet.hand_over()  # (to peers on the database, if any; what is left is aborted)
        self.rooms.abort_all("server shutdown")
        for t in list(self._tasks):
            with contextlib.suppress(Exception):
                await t
        for r in self.lobby.requests:
            if r.future is not None and not r.future.done():
                r.future.cancel()
        await self.keeper.stop()
        for c in list(self.clients):
            if c.conn.their_error is None and c.bot is not None:
                c.queue(Error(code=ErrorCode.SHUTTING_DOWN.value, message="the server is stopping"))
                c.flush()
            c.close()
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)
        self.storage.close()

    def spawn(self, coro: Any) -> None:
        t = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(t)
        t.add_done_callback(self._tasks.discard)

    def _fail(self, why: str) -> None:
        self.failed = why
        self.failed_event.set()

    def watch(self, fn: Callable[[GameChange], None]) -> Callable[[], None]:
        """Call `fn` on every game change (see GameChange), in the event loop, right after the
        referee acted: `fn` must return quickly (the web view only marks the game for its next
        push). Returns the function that stops the calls."""
        return self.watchers.add(fn)

    def running(self) -> list[GameSession]:
        """The sessions of the games being played, in order of start."""
        return [g.session for g in self.games.values() if not g.ending]

    def add_token(self, token: str, bot: str, *, explicit_only: bool = False) -> None:
        """Accept `token` for bot `bot` in this server's lifetime only (never stored; kept by its
        hash); with `explicit_only`, the bot is paired only by explicit requests."""
        self._local_tokens[hash_token(token)] = bot
        if explicit_only:
            self.explicit_only.add(bot)

    # -- games ----------------------------------------------------------------------------
    def request_game(self, seat1: str, seat2: str, *, match_id: str | None = None,
                     tags: dict[str, Any] | None = None, seed: int | None = None,
                     start_state: dict[str, Any] | None = None,
                     on_start: Callable[[int], None] | None = None,
                     requeue: bool = True, tc: TimeControl | None = None,
                     clients: tuple[Any, Any] | None = None, on_prompt: Callable[[int], None] | None = None,
                     annotate: Callable[[], dict[str, Any]] | None = None,
                     handover: bool = False, absence: Absence | None = None) -> asyncio.Future[GameSummary]:
        """Queue a game between bots `seat1` and `seat2` (by name); the future resolves to its
        summary once stored (GameRequest.requeue: a seat that leaves before the game starts;
        Forfeits.admit: `absence`, `clients` closed already); `tc`: this game's time control."""
        fut: asyncio.Future[GameSummary] = asyncio.get_running_loop().create_future()
        req = GameRequest((seat1, seat2), match_id, dict(tags or {}), seed, start_state, fut, on_start,
                          requeue, tc, clients, on_prompt, annotate, handover, absence)
        if self.forfeits.admit(req):
            self.lobby.requests.append(req)
        self._pair()
        return fut

    def _pair(self) -> None:
        if not self.stopping:
            self.lobby.pair()

    def _begin(self, req: GameRequest, a: Client, b: Client) -> None:
        self.spawn(self.rooms.start(req, a, b, self.lobby.game_index))

    def attach(self, sock: socket.socket, *,
               probe: Callable[[], Any] | None = None) -> asyncio.Future[str]:
        """Take a connection the host made itself (one end of a socket pair handed to a
        sandboxed bot process): it logs in like any other, but plays one game only, and only
        the game of a request naming it (`request_game(..., clients=(...))`, with the future
        this returns as its handle). The future resolves to the bot's name once it has said
        hello, or fails with ConnectionError if it closes or is refused first. `probe` is
        awaited when the connection closes during its game: it returns (verdict, detail)
        of the process (crash, memory) or None."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[str] = loop.create_future()
        # A host that gave up on this process (its opponent failed first) may never await it.
        fut.add_done_callback(lambda f: f.cancelled() or f.exception())
        self.spawn(loop.connect_accepted_socket(lambda: Client(self, pinned=fut, probe=probe), sock))
        return fut

    async def record_forfeit(self, seats: tuple[str, str], loser: int, verdict: str, detail: str, *,
                             match_id: str | None = None, tags: dict[str, Any] | None = None,
                             seed: int | None = None, tc: TimeControl | None = None,
                             host: dict[str, Any] | None = None) -> GameSummary:  # (Forfeits.record)
        return await self.forfeits.record(seats, loser, verdict, detail, match_id=match_id, tags=tags,
                                          seed=seed, tc=tc, host=host)

    # -- connections (called by the transport) -------------------------------------------
    def opened(self, c: Client) -> bool:
        """A new connection: False refuses it (too many connections without hello)."""
        if not c.pinned:
            why = self.lobby.over_pending_limit(c.peer)
            if why is not None:
                LOG.warning("%s refused: %s", c, why)
                return False
        self.clients.add(c)
        self.stats["connections"] += 1
        LOG.info("%d connected from %s", c.id, c.peer)
        if c.sock is not None:
            with contextlib.suppress(OSError):
                c.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return True

    def act(self, c: Client, p: Play, now: float) -> None:
        """An act, turn or resignation of `c`, however read (`Acts.act`), read at `now`; its
        time and CPU recorded for the benchmarks (one input in 16: `c.cpu0`)."""
        self.acts.act(c, p, now)
        if c.cpu0:
            self.latencies_ms.append((time.monotonic() - now) * 1000)
            self.cpu_ms.append((time.thread_time() - c.cpu0) * 1000)

    def on_message(self, c: Client, m: Message, now: float) -> None:
        """A message after the hello, other than an act, turn or resignation (`act`)."""
        if isinstance(m, Ping) and c.link:
            self.fleet.link_pinged(c, m)  # (the bot's round trip from its member: fleet/links.py)
        elif isinstance(m, Ping):
            c.queue(Pong(id=m.id))
            c.flush()
        else:
            self.violation(c, ErrorCode.UNEXPECTED_MESSAGE, f"{m.TYPE} is not expected here")

    async def ended(self, c: Client) -> None:
        """The connection is over: its seats are given up (after learning, for a hosted
        process, why it ended), then it is closed (gracefully after a fatal error)."""
        try:
            seated = self.seating.seated(c)
            if c.probe is not None and any(not g.ending for _, g, _ in seated):
                # A hosted process: learn why it ended (a crash, its memory limit) before its seat is
                # given up, so that the verdict says so; its clock (and its games') waits meanwhile.
                self.rooms.hold(c)
                with contextlib.suppress(Exception):
                    why = await asyncio.wait_for(c.probe(), 3.0)
                    if why is not None:
                        c.fault = why
            if c in self.clients or self.seating.seated(c):
                self._drop(c)
            if c.linger:
                await c.linger_and_close()
            c.close()
        finally:
            fut = c.hello_future
            if fut is not None and not fut.done():
                fut.set_exception(ConnectionError(c.fault[1] if c.fault else "closed before its hello"))

    def violation(self, c: Client, code: ErrorCode, message: str) -> None:
        LOG.info("%s: %s: %s", c, code.value, message)
        self.stats["errors_sent"] += 1
        with contextlib.suppress(ProtocolError):
            c.out.append(c.conn.send(Error(code=code.value, message=message[:1900])))
        c.flush()
        if code in FATAL:
            c.closed = c.linger = True
            c.fault = ("protocol", f"{code.value}: {message[:200]}")
            self.forfeits.cut_off(c, code)  # its games lost now on `protocol`, not on the clock

    async def hello(self, c: Client, h: Hello) -> None:
        if self.stopping:
            self.violation(c, ErrorCode.SHUTTING_DOWN, "the server is stopping")
            return
        if c.via_link:  # a fleet peer carrying a seat (fleet/links.py): never a bot's token
            self.fleet.link_hello(c, h)
            return
        digest = hash_token(h.token)
        name = self._local_tokens.get(digest)
        if name is None:
            try:
                name = await self.storage.bot_by_token(h.token)
            except Exception as e:
                self.keeper.lost(e)
                self.violation(c, ErrorCode.UNAVAILABLE,
                               "the server's database is unavailable; try again later")
                return
            if name is not None:
                c.token_hash = digest
        if name is None:
            delay = await self.fleet.auth_delay([f"address {host_of(c.peer)}", f"name {h.name}"])
            if delay > 0:
                await asyncio.sleep(delay)
            self.violation(c, ErrorCode.AUTH_FAILED, "unknown or revoked token")
            return
        if self.config.game not in h.games:
            self.violation(c, ErrorCode.UNSUPPORTED_GAME, f"this server referees {self.config.game} only")
            return
        limit = self.config.max_connections_per_bot
        if not c.pinned:
            # This referee's count; then, for a stored token, every referee's on this database
            # (the host's own bot processes, tokens in memory, are per referee). `counted` is set
            # before the write, which a heartbeat meanwhile must not undo; None: database away.
            c.counted = self.lobby.connections_of(name) < limit and c.token_hash is not None
            counted = await self.keeper.count_connection(c.id, name, limit) if c.counted else None
            c.counted = counted is True
            if counted is False or self.lobby.connections_of(name) >= limit:
                self.violation(c, ErrorCode.ALREADY_CONNECTED, f"{name!r} has {limit} connection(s) already")
                return
            if not await self.fleet.admit(c, name):  # (counted first: its old referee has lapsed)
                return
        c.bot = name
        c.display = h.name
        c.want_legal = h.want_legal
        c.want_groups = bool(h.want_groups)
        c.turn_events = h.turn_events
        self.seating.join(c, concurrency=1 if c.pinned else h.concurrency,
                          max_games=1 if c.pinned else h.max_games)
        c.queue(Welcome(bot=name, server=SERVER_NAME, max_frame=self.config.max_frame,
                        max_rate=self.config.max_rate))
        c.flush()
        LOG.info("%s: hello as %s, calling itself %r (concurrency %d)", c, name, h.name, h.concurrency)
        if c.hello_future is not None:
            if not c.hello_future.done():
                c.hello_future.set_result(name)
            self._pair()
            return  # a hosted process plays the one game it is started for, never an old seat
        self.rooms.reattach(c)
        if self.fleet.link_address is not None and c.token_hash is not None:
            # Its seats in games hosted by the fleet's others. Not for a token of this referee
            # only (a tournament arena's bot processes): the same names play elsewhere, apart.
            self.spawn(self.fleet.find_seats(c))
        self._pair()

    def _drop(self, c: Client) -> None:
        """Forget a connection: its seats are disconnected (the socket is closed by the caller)."""
        c.closed = True
        self.clients.discard(c)
        LOG.info("%s disconnected", c)
        if c.counted:  # its row goes now (or with the next heartbeat, if the database is away)
            self.spawn(self.keeper.forget_connections())
        self.forfeits.dropped(c)
        self.rooms.leave(c)
