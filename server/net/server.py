"""The asyncio referee server: one task per TCP connection, one maag.protocol `Connection`
per socket, one `GameSession` per game. This module only moves bytes and keeps time; the
protocol module decides what a frame means and the referee core what a message does.

Flow of a connection: greeting and `hello` (token checked against storage), `welcome`; the
connection then offers `concurrency` game slots. Slots are paired by explicit requests
(`request_game`, used by `maag match`) first, then, with `auto_pair`, first come first
served between different bots. Each game row is created in storage when the game starts;
its result and replay are committed before `game_over` is sent (while the database is away,
the result waits in memory and in the spill file, `game_over` goes out without a
`replay_id`, and pairing pauses: see `_keep_storage`). Each server holds a lease in the
database; only the games of servers whose lease lapsed are aborted. A connection that is closing
(closed by us, or its peer's EOF received even if not yet read) is never paired, and a game
whose seat's connection closes between the pairing and the game's first message is stored as
aborted and its request goes back to the front of the queue (see `_start_game`).

Limits, per connection: frame size (`max_frame`, checked by the protocol before a frame is
buffered whole), messages per second (a token bucket of `max_rate` per second and as many
in a burst; `rate_limited` and the connection is closed), and the bytes the server may
buffer for a peer that does not read (`max_out_buffer`; then the connection is dropped).
Every protocol violation is answered with an `error` (code and message); fatal codes close
the connection, whose games then see a disconnect (grace period, then forfeit). Nothing a
connection sends reaches another connection's games except through its own seats.

Logging: logger `maag.server.net.server`; INFO for connections and games, DEBUG for every
message with a direction marker (`<<` received, `>>` sent), the connection id and game.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import logging
import os
import random
import secrets
import socket
import struct
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from maag.engine import Game, registry
from maag.protocol import (
    FATAL,
    NEED_DATA,
    Act,
    Connection,
    ConnectionClosed,
    Error,
    ErrorCode,
    Greeting,
    Hello,
    LocalProtocolError,
    Message,
    Ping,
    Pong,
    ProtocolError,
    RemoteProtocolError,
    Resign,
    Result,
    Role,
    Turn,
    Welcome,
    YourTurn,
)
from maag.server.referee.clock import TimeControl
from maag.server.referee.session import REPLAY_VERSION, GameSession, Out, Policy, derive_seed
from maag.server.storage.base import AsyncStorage, Storage, StorageUnavailable, hash_token
from maag.server.storage.spill import Spill

__all__ = ["ServerConfig", "RefereeServer", "GameRequest", "GameSummary", "GameNotStarted", "GameChange"]

LOG = logging.getLogger(__name__)
def _server_name() -> str:
    try:
        return f"maag {version('maag')}"
    except PackageNotFoundError:  # a source tree without metadata
        return "maag"


SERVER_NAME = _server_name()  # welcome.server: the package's name and version


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """How a referee server runs. Times in milliseconds, sizes in bytes."""

    host: str = "127.0.0.1"
    port: int = 7878
    """TCP port; 0 picks a free one (see RefereeServer.port)."""
    reuse_port: bool = False
    """SO_REUSEPORT: several server processes listen on one port (the kernel spreads the
    connections); they share bots, tokens and results through the database."""
    game: str = field(default_factory=registry.default)
    """A registered game (default: the first of games.def)."""
    game_config: dict[str, Any] = field(default_factory=dict)
    tc: TimeControl = field(default_factory=TimeControl)
    policy: Policy = field(default_factory=Policy)
    seed: int | None = None
    """Reproducible runs: game number i (from 0, in order of start) gets derive_seed(seed, i);
    None: every game is seeded from the OS."""
    auto_pair: bool = True
    """Pair free bots with each other when no explicit request is waiting."""
    max_frame: int = 256 * 1024
    max_rate: int = 2000
    """Messages per second per connection (and burst size); 0: unlimited."""
    max_out_buffer: int = 8 * 1024 * 1024
    hello_timeout_ms: float = 10_000.0
    max_connections_per_bot: int = 1
    """Live connections one token may have (docs/protocol.md: a second is `already_connected`)."""
    lease_s: float = 15.0
    """This server's lease in the database, renewed every third of it: when it lapses (the
    server died or lost the database), other servers on the database abort its games."""
    storage_outage_limit_s: float = 300.0
    """The database unreachable for longer than this: the server stops (its waiting results
    go to the spill directory) and reports `failed`, so that a service manager restarts it."""
    spill_dir: str | None = None
    """Where results wait on disk while the database is away (see storage/spill.py); None:
    in memory only."""
    max_pending_per_address: int = 16
    """Connections from one address that have not said `hello` yet (0: unlimited); one more
    is closed at once, before the greeting (there is no framing to answer in yet)."""
    max_pending: int = 1024
    """Connections from all addresses that have not said `hello` yet (0: unlimited)."""
    auth_delay_ms: float = 250.0
    """A failed login is answered after this delay, doubled for every further failure from
    the same address or with the same hello name within `auth_window_s` (0: no delay)."""
    auth_delay_max_ms: float = 15_000.0
    auth_window_s: float = 600.0
    max_games_per_minute: int = 0
    """Games one bot may start per minute, over all its connections (0: unlimited; `maag
    serve` and `maag ladder` default to 120): past it, the bot is not paired until the
    oldest of those games is a minute old."""
    token_check_s: float = 1.0
    """How often the live connections' tokens are checked against storage: a token revoked
    (`maag bot add NAME --replace`, on this server or any other on the same database) closes
    its connections with `auth_failed` within this time; a new `hello` is always checked."""
    record_latency: bool = False
    """Keep every referee time (receipt of a frame to its replies written) for benchmarks."""


@dataclass(slots=True)
class GameRequest:
    """A game to be played between two named bots (seat 1, seat 2)."""

    seats: tuple[str, str]
    match_id: str | None = None
    tags: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None
    start_state: dict[str, Any] | None = None
    future: asyncio.Future[GameSummary] | None = None
    on_start: Callable[[int], None] | None = None
    requeue: bool = True
    """When a seat leaves between the pairing and the game's first message: True, the request
    goes back to the front of the queue (a match waits for its bot to come back); False, its
    future fails with GameNotStarted (a ladder decides again among the bots still there)."""
    tc: TimeControl | None = None
    """This game's time control (None: the server's): a person's seat needs more time than a bot's."""
    clients: tuple[Any, Any] | None = None
    """Connections handed in with `attach` that must hold the two seats (a hosted bot plays
    one game per process): the game waits for exactly these, never another of the bots'."""
    on_prompt: Callable[[int], None] | None = None
    """Called with the seat (0 or 1) just before each `your_turn` is written to it: the host
    thaws that seat's process and freezes the other's (fair clocks)."""
    annotate: Callable[[], dict[str, Any]] | None = None
    """Called when the game is over, before it is stored: its dict is kept in the replay as
    `host` (each seat's CPU time per turn, whether the machine was overloaded)."""


class GameNotStarted(Exception):
    """A requested game was paired but not played: a seat's connection closed before the
    game's first message, or the game could not be set up (a start state the engine
    refuses). Its row is stored as aborted."""


@dataclass(frozen=True, slots=True)
class GameChange:
    """What a watcher of the server (`RefereeServer.watch`) is told: a game started
    (`kind` "start"), moved on ("move": actions applied, a turn ended on time, a seat left or
    came back) or is over and stored ("over", with its summary). `session` is the referee's
    own: read it, never drive it."""

    kind: str
    session: GameSession
    summary: GameSummary | None = None


@dataclass(frozen=True, slots=True)
class GameSummary:
    game_id: int
    seats: tuple[str, str]
    winner: int | None
    """0 or 1 (seat index), -1 draw, None aborted."""
    reason: str
    plies: int
    think_ms: tuple[float, float]
    transport_ms: tuple[float, float]
    stored: bool
    search: tuple[dict[str, Any] | None, dict[str, Any] | None] = (None, None)
    """Per seat: what its bot reported of its search (GameSession.search_report)."""
    verdict: dict[str, Any] | None = None
    """For a forfeit: {"seat": 1 or 2, "kind": time, memory, crash, illegal, protocol,
    disconnect or startup, "detail": text} (GameSession's verdicts)."""
    host: dict[str, Any] | None = None
    """What the host measured (GameRequest.annotate), as kept in the replay."""


class RateLimiter:
    __slots__ = ("rate", "tokens", "last")

    def __init__(self, rate: int) -> None:
        self.rate = float(rate)
        self.tokens = float(rate)
        self.last = time.monotonic()

    def take(self, now: float) -> bool:
        if self.rate <= 0:
            return True
        self.tokens = min(self.rate, self.tokens + (now - self.last) * self.rate)
        self.last = now
        if self.tokens < 1.0:
            return False
        self.tokens -= 1.0
        return True


_TCP_INFO_RTT = struct.Struct("=I")
_RTT_OFFSET = 8 + 15 * 4  # struct tcp_info: 8 one-byte fields, then u32 fields; tcpi_rtt is the 16th


class _Reader(asyncio.StreamReader):
    """A StreamReader that records the peer's EOF (or the connection's loss) the moment the
    transport reports it. The connection's read task only sees the EOF when it next runs,
    which may be after a game's end has freed the connection's slots and paired them again;
    `peer_gone` lets the pairing skip such a connection before its task has caught up."""

    def __init__(self, limit: int) -> None:
        super().__init__(limit=limit)
        self.peer_gone = False

    def feed_eof(self) -> None:
        self.peer_gone = True
        super().feed_eof()

    def set_exception(self, exc: Exception) -> None:
        self.peer_gone = True  # connection_lost with an error (reset): gone as well
        super().set_exception(exc)


class _Client:
    """One connection."""

    _ids = itertools.count(1)

    def __init__(self, server: RefereeServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 max_frame: int, max_rate: int) -> None:
        self.id = next(self._ids)
        self.server = server
        self.reader = reader
        self.writer = writer
        self.conn = Connection(Role.SERVER, max_frame=max_frame)
        self.rate = RateLimiter(max_rate)
        self.peer = writer.get_extra_info("peername")
        self.sock: socket.socket | None = writer.get_extra_info("socket")
        self.bot: str | None = None
        self.token_hash: str | None = None  # of a token from storage (checked for revocation)
        self.display: str | None = None  # hello.name: how the bot calls itself (shown beside `bot`)
        self.concurrency = 0
        self.want_legal = False
        self.want_groups = False
        self.max_games: int | None = None  # hello.max_games: no pairing past this many games
        self.begun = 0  # games paired on this connection (in flight or started)
        self.games: dict[str, tuple[_Game, list[int]]] = {}
        self.reserved = 0
        self.free_since = 0.0
        self.closed = False
        self.linger = False  # after a fatal error: half-close, drain the input, then close
        self.cpu0 = 0.0  # thread CPU time when the current input was read (benchmarks)
        self.out: list[bytes] = []
        self.pinned = False
        """Handed in by `attach`: one game, only by a request naming this connection."""
        self.fault: tuple[str, str] | None = None  # (verdict, detail) known when it closes
        self.probe: Callable[[], Any] | None = None  # awaitable: why a hosted process ended
        self.hello_future: asyncio.Future[str] | None = None

    def __repr__(self) -> str:
        return f"<client {self.id} {self.bot or '-'} {self.peer}>"

    @property
    def closing(self) -> bool:
        """No new game may start on this connection: we closed it or stopped sending (after
        a fatal error), its peer has sent EOF or vanished (even if the read task has not
        read that yet), or the transport is closing."""
        return (self.closed or (isinstance(self.reader, _Reader) and self.reader.peer_gone)
                or self.writer.transport.is_closing())

    @property
    def free_slots(self) -> int:
        if self.bot is None or self.closing:
            return 0
        free = self.concurrency - len(self.games) - self.reserved
        return free if self.max_games is None else min(free, self.max_games - self.begun)

    def rtt_ms(self) -> float:
        """Smoothed round-trip time of the TCP connection as the kernel measures it (0 if
        unknown)."""
        if self.sock is None or not hasattr(socket, "TCP_INFO"):
            return 0.0
        try:
            raw = self.sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, _RTT_OFFSET + 4)
            return float(_TCP_INFO_RTT.unpack_from(raw, _RTT_OFFSET)[0]) / 1000.0
        except (OSError, struct.error):
            return 0.0

    def queue(self, msg: Message) -> None:
        """Encode `msg` for this connection (written on flush)."""
        if self.closed:
            return
        try:
            self.out.append(self.conn.send(msg))
        except LocalProtocolError as e:  # a server bug: never send a bad message
            LOG.error("%s cannot send %s: %s", self, msg.TYPE, e)
            return
        if LOG.isEnabledFor(logging.DEBUG):
            LOG.debug("%d >> %s %s", self.id, getattr(msg, "game_id", "-"), msg.to_wire())

    def flush(self) -> None:
        if not self.out or self.closed:
            self.out.clear()
            return
        data = b"".join(self.out) if len(self.out) > 1 else self.out[0]
        self.out.clear()
        try:
            self.writer.write(data)
        except (ConnectionError, RuntimeError):
            self.close()
            return
        if self.writer.transport.get_write_buffer_size() > self.server.config.max_out_buffer:
            LOG.warning("%s does not read its messages; dropping it", self)
            self.close()

    def close(self) -> None:
        """Close the socket. Idempotent, and independent of `closed`, which only says that
        nothing more may be sent (set early by _drop and after fatal errors)."""
        self.closed = True
        with contextlib.suppress(Exception):
            self.writer.close()


@dataclass(slots=True, eq=False)
class _Game:
    session: GameSession
    clients: list[_Client | None]
    bots: tuple[str, str]
    db_id: int
    request: GameRequest | None
    timer: asyncio.TimerHandle | None = None
    deadline: float | None = None
    ending: bool = False


def _host(peer: Any) -> str:
    """The address part of a peer name ((host, port) for TCP)."""
    return str(peer[0]) if isinstance(peer, tuple) and peer else str(peer)


def _not_played(*clients: _Client) -> None:
    """A paired game that does not start does not count against hello.max_games."""
    for c in clients:
        c.begun -= 1


class RefereeServer:
    """A referee server. `await start()`, then `request_game` or let bots pair; `await
    stop()` aborts running games (stored as aborted) and closes every connection."""

    def __init__(self, config: ServerConfig, storage: Storage) -> None:
        self.config = config
        self.storage = AsyncStorage(storage)
        Game(config.game, config.game_config)  # fail now on a bad configuration
        self.port = config.port
        self._server: asyncio.base_events.Server | None = None
        self.clients: set[_Client] = set()
        self.games: dict[str, _Game] = {}
        self.requests: deque[GameRequest] = deque()
        self._game_index = 0
        self._local_tokens: dict[str, str] = {}  # hash of a token of this run only -> bot
        self.explicit_only: set[str] = set()
        """Bots paired only by explicit requests (`request_game`), never automatically nor by a
        ladder's scheduler: a person's seat and the agent started to play it (maag.server.web)."""
        self._watchers: list[asyncio.Task[Any]] = []
        self._tasks: set[asyncio.Task[Any]] = set()
        self.latencies_ms: list[float] = []
        self.cpu_ms: list[float] = []  # the same, in CPU time of the event-loop thread
        self.stats = {"connections": 0, "messages_in": 0, "messages_out": 0, "actions": 0, "games_started": 0,
                      "games_finished": 0, "errors_sent": 0}
        self.stopping = False
        self.server_id = secrets.token_hex(8)
        self.storage_ok = True
        self.storage_down_since: float | None = None
        self.failed: str | None = None
        """Why the server gave up (the database away too long); then `failed_event` is set."""
        self.failed_event = asyncio.Event()
        self._pending: dict[int, tuple[dict[str, Any], GameRequest | None, GameSummary | None]] = {}
        self._spill: Spill | None = None
        self._keeper_wake = asyncio.Event()
        self._auth_failures: dict[str, tuple[int, float]] = {}  # address or name -> (count, last)
        self._starts: dict[str, deque[float]] = {}  # bot -> start times of its recent games
        self._repair: asyncio.TimerHandle | None = None
        self._game_watchers: list[Callable[[GameChange], None]] = []

    # -- lifecycle ----------------------------------------------------------------------
    async def start(self) -> None:
        cfg = self.config
        st = self.storage.storage
        await self.storage.run(st.register_server, self.server_id,
                               f"{socket.gethostname()}:{cfg.port} pid {os.getpid()}", cfg.lease_s)
        n = await self.storage.run(st.abort_lapsed)
        if n:
            LOG.warning("%d game(s) of servers whose lease has lapsed were marked aborted", n)
        if cfg.spill_dir is not None:
            self._spill = Spill(cfg.spill_dir, self.server_id)
            adopted = self._spill.adopt()
            for gid, replay in adopted.items():
                self._pending[gid] = (replay, None, None)
            if adopted:
                self._save_spill()
                LOG.warning("%d result(s) left by a server that could not store them will be stored",
                            len(adopted))
            self._spill.forget_adopted()
        loop = asyncio.get_running_loop()

        def protocol() -> asyncio.StreamReaderProtocol:
            # asyncio.start_server's factory, with a reader that records the peer's EOF.
            return asyncio.StreamReaderProtocol(_Reader(limit=2**16), self._handle)

        self._server = await loop.create_server(protocol, self.config.host, self.config.port,
                                                reuse_address=True, reuse_port=self.config.reuse_port or None)
        sock = self._server.sockets[0]
        self.port = sock.getsockname()[1]
        LOG.info("referee listening on %s:%d (game %s, tc %s)", self.config.host, self.port, self.config.game,
                 self.config.tc)
        self._watchers.append(loop.create_task(self._watch_tokens()))
        self._watchers.append(loop.create_task(self._keep_storage()))

    async def serve_forever(self) -> None:
        assert self._server is not None
        await self._server.serve_forever()

    async def stop(self) -> None:
        """Abort running games (stored as aborted, `game_over` sent), say `shutting_down` to
        every connection and close everything."""
        self.stopping = True
        for w in self._watchers:
            w.cancel()
        if self._repair is not None:
            self._repair.cancel()
        if self._server is not None:
            self._server.close()
        for g in list(self.games.values()):
            if not g.ending:
                g.session.abort("server shutdown")
                self._after(g)
        for t in list(self._tasks):
            with contextlib.suppress(Exception):
                await t
        for r in self.requests:
            if r.future is not None and not r.future.done():
                r.future.cancel()
        await self._flush_pending()
        if not self._pending and self.storage_ok:
            with contextlib.suppress(Exception):
                await self.storage.run(self.storage.storage.unregister_server, self.server_id)
        if self._pending:
            LOG.error("%d result(s) could not be stored; they wait in %s for the next server",
                      len(self._pending), self._spill.path if self._spill else "memory (lost: no spill_dir)")
        if self._spill is not None:
            self._spill.close()
        for c in list(self.clients):
            if c.conn.their_error is None and c.bot is not None:
                c.queue(Error(code=ErrorCode.SHUTTING_DOWN.value, message="the server is stopping"))
                c.flush()
            c.close()
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)
        self.storage.close()

    def _spawn(self, coro: Any) -> None:
        t = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(t)
        t.add_done_callback(self._tasks.discard)

    def watch(self, fn: Callable[[GameChange], None]) -> Callable[[], None]:
        """Call `fn` on every game change (see GameChange), in the event loop, right after the
        referee acted: `fn` must return quickly (the web view only marks the game for its next
        push). Returns the function that stops the calls."""
        self._game_watchers.append(fn)
        return lambda: self._game_watchers.remove(fn) if fn in self._game_watchers else None

    def running(self) -> list[GameSession]:
        """The sessions of the games being played, in order of start."""
        return [g.session for g in self.games.values() if not g.ending]

    def _tell(self, kind: str, session: GameSession, summary: GameSummary | None = None) -> None:
        change = GameChange(kind, session, summary)
        for fn in list(self._game_watchers):
            try:
                fn(change)
            except Exception:  # a watcher's bug never stops a game
                LOG.exception("a game watcher failed on %s of game %s", kind, session.game_id)

    def add_token(self, token: str, bot: str, *, explicit_only: bool = False) -> None:
        """Accept `token` for bot `bot` in this server's lifetime only (never stored; kept by
        its hash, like stored tokens); with `explicit_only`, the bot is paired only by
        explicit requests (see `explicit_only`)."""
        self._local_tokens[hash_token(token)] = bot
        if explicit_only:
            self.explicit_only.add(bot)

    async def _watch_tokens(self) -> None:
        """Close the connections whose stored token has been revoked. Tokens are never cached
        by this server: each `hello` asks storage, and this loop asks again for the live
        connections every `token_check_s`, so a revocation made by any process on the same
        database takes effect on every server."""
        while True:
            await asyncio.sleep(self.config.token_check_s)
            live = [c for c in self.clients if c.token_hash is not None and not c.closed]
            if not live:
                continue
            try:
                valid = await self.storage.valid_token_hashes(sorted({str(c.token_hash) for c in live}))
            except Exception as e:  # storage away: checked again when it is back
                LOG.debug("token check skipped: %s", e)
                continue
            for c in live:
                if c.token_hash not in valid and not c.closed:
                    LOG.warning("%s: its token was revoked; closing", c)
                    self._violation(c, ErrorCode.AUTH_FAILED, "your token was revoked")
                    self._drop(c)
                    c.close()

    # -- storage: lease, outages, results waiting -------------------------------------------
    def _storage_lost(self, e: BaseException) -> None:
        """Something could not reach the database: pause pairing, let the keeper retry."""
        if self.storage_ok:
            self.storage_ok = False
            self.storage_down_since = time.monotonic()
            LOG.error("storage unavailable: %s; pairing paused, results kept until it is back", e)
        self._keeper_wake.set()

    async def _keep_storage(self) -> None:
        """Renew this server's lease, abort the games of servers whose lease lapsed, and,
        while the database is away, retry with exponential backoff and jitter: write the
        results that wait, resume pairing when it answers, give up (`failed`) after
        `storage_outage_limit_s`. Logs one line per attempt at most, at most every 30 s."""
        cfg = self.config
        beat = cfg.lease_s / 3
        backoff = 0.25
        last_log = 0.0
        while True:
            wait = beat if self.storage_ok and not self._pending else backoff * random.uniform(0.5, 1.5)
            self._keeper_wake.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._keeper_wake.wait(), wait)
            try:
                st = self.storage.storage
                await self.storage.run(st.heartbeat, self.server_id)
                n = await self.storage.run(st.abort_lapsed)
                if n:
                    LOG.warning("%d game(s) of servers whose lease has lapsed were marked aborted", n)
                await self._flush_pending(raise_errors=True)
            except Exception as e:
                self._storage_lost(e)
                down = time.monotonic() - (self.storage_down_since or time.monotonic())
                if time.monotonic() - last_log >= 30.0:
                    last_log = time.monotonic()
                    LOG.error("storage still unavailable after %.0f s (%d result(s) waiting): %s", down,
                              len(self._pending), e)
                if down > cfg.storage_outage_limit_s:
                    limit = cfg.storage_outage_limit_s
                    self._fail(f"storage unavailable for {down:.0f} s (limit {limit:g} s)")
                    return
                backoff = min(10.0, backoff * 2)
                continue
            backoff = 0.25
            if not self.storage_ok:
                down = time.monotonic() - (self.storage_down_since or time.monotonic())
                self.storage_ok = True
                self.storage_down_since = None
                LOG.warning("storage is back after %.1f s; pairing resumed", down)
                self._pair()

    async def _flush_pending(self, raise_errors: bool = False) -> None:
        """Write the results that wait for the database, oldest first."""
        for gid in sorted(self._pending):
            if gid not in self._pending:  # written meanwhile by another flush
                continue
            replay, req, summary = self._pending[gid]
            try:
                await self.storage.finish_game(gid, replay)
            except StorageUnavailable:
                if raise_errors:
                    raise
                return
            except Exception:  # refused for good (another result is stored): say so, drop it
                LOG.exception("game %s: its result was refused by storage", gid)
                stored = False
            else:
                stored = True
                LOG.info("game %s: result stored after the database came back", gid)
            if self._pending.pop(gid, None) is None:
                continue
            self._save_spill()
            if req is not None and req.future is not None and not req.future.done() and summary is not None:
                req.future.set_result(dataclasses.replace(summary, stored=stored))

    def _save_spill(self) -> None:
        """Write the results still waiting to this server's spill file (if it has one)."""
        if self._spill is not None:
            self._spill.save({g: r for g, (r, _, _) in self._pending.items()})

    def _fail(self, why: str) -> None:
        LOG.critical("giving up: %s", why)
        self.failed = why
        self.failed_event.set()

    # -- pairing ------------------------------------------------------------------------
    def request_game(self, seat1: str, seat2: str, *, match_id: str | None = None,
                     tags: dict[str, Any] | None = None, seed: int | None = None,
                     start_state: dict[str, Any] | None = None,
                     on_start: Callable[[int], None] | None = None,
                     requeue: bool = True, tc: TimeControl | None = None,
                     clients: tuple[Any, Any] | None = None, on_prompt: Callable[[int], None] | None = None,
                     annotate: Callable[[], dict[str, Any]] | None = None) -> asyncio.Future[GameSummary]:
        """Queue a game between bots `seat1` and `seat2` (by name); the future resolves to its
        summary once the result is stored (see GameRequest.requeue for a seat that leaves
        before the game starts); `tc` replaces the server's time control for this game."""
        fut: asyncio.Future[GameSummary] = asyncio.get_running_loop().create_future()
        self.requests.append(GameRequest((seat1, seat2), match_id, dict(tags or {}), seed, start_state, fut,
                                         on_start, requeue, tc, clients, on_prompt, annotate))
        self._pair()
        return fut

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

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await self._handle(reader, writer, pinned=fut, probe=probe)

        def protocol() -> asyncio.StreamReaderProtocol:
            return asyncio.StreamReaderProtocol(_Reader(limit=2**16), handle)

        self._spawn(loop.connect_accepted_socket(protocol, sock))
        return fut

    def _pinned(self, handle: Any) -> _Client | None:
        for c in self.clients:
            if c.hello_future is handle:
                return c if c.free_slots > 0 else None
        return None

    async def record_forfeit(self, seats: tuple[str, str], loser: int, verdict: str, detail: str, *,
                             match_id: str | None = None, tags: dict[str, Any] | None = None,
                             seed: int | None = None) -> GameSummary:
        """Store a game that could not start because seat `loser`'s bot failed before it
        (its process never said hello in time: verdict `startup`): lost by that seat, no
        actions, the verdict in its result."""
        cfg = self.config
        full_config = Game(cfg.game, cfg.game_config).config
        db_id = await self.storage.create_game(cfg.game, full_config, seats, str(cfg.tc), match_id,
                                               self.server_id)
        winner = 1 - loser
        v = {"seat": loser + 1, "kind": verdict, "detail": detail}
        result_text = "1-0" if winner == 0 else "0-1"
        replay = {"version": REPLAY_VERSION, "game": cfg.game, "config": full_config, "seed": seed,
                  "start_state": None, "time_control": cfg.tc.to_dict(), "policy": cfg.policy.to_dict(),
                  "tags": {**(tags or {}), "Game": cfg.game, "Seat1": seats[0], "Seat2": seats[1],
                           "Result": result_text, "Reason": "disconnect", "GameId": str(db_id),
                           **({"Match": match_id} if match_id else {})},
                  "actions": [],
                  "result": {"winner": winner, "reason": "disconnect", "plies": 0, "verdict": v}}
        stored = True
        try:
            await self.storage.finish_game(db_id, replay)
        except Exception:
            LOG.exception("game %s: the forfeit could not be stored", db_id)
            stored = False
        return GameSummary(db_id, seats, winner, "disconnect", 0, (0.0, 0.0), (0.0, 0.0), stored, verdict=v)

    def _free(self, bot: str, exclude: _Client | None = None) -> _Client | None:
        best = None
        if not self._games_left(bot, time.monotonic()):
            return None
        for c in self.clients:
            if c.bot == bot and not c.pinned and c.free_slots > (1 if c is exclude else 0):
                if best is None or c.free_since < best.free_since:
                    best = c
        return best

    def _pair(self) -> None:
        if self.stopping or not self.storage_ok:
            return
        for req in list(self.requests):
            pin = req.clients or (None, None)
            a = self._pinned(pin[0]) if pin[0] is not None else self._free(req.seats[0])
            if a is None:
                continue
            a.reserved += 1
            b = self._pinned(pin[1]) if pin[1] is not None else self._free(req.seats[1])
            a.reserved -= 1
            if b is None:
                continue
            self.requests.remove(req)
            self._begin(req, a, b)
        if self.config.auto_pair and not self.requests:
            while True:
                now = time.monotonic()
                free = sorted((c for c in self.clients if c.free_slots > 0 and not c.pinned
                               and c.bot not in self.explicit_only
                               and self._games_left(str(c.bot), now)),
                              key=lambda c: c.free_since)
                pair = next(((x, y) for i, x in enumerate(free) for y in free[i + 1:] if x.bot != y.bot),
                            None)
                if pair is None:
                    return
                x, y = pair if self._game_index % 2 == 0 else (pair[1], pair[0])  # alternate seats
                self._begin(GameRequest((str(x.bot), str(y.bot))), x, y)

    def _begin(self, req: GameRequest, a: _Client, b: _Client) -> None:
        if self.config.max_games_per_minute:
            now = time.monotonic()
            for bot in {str(a.bot), str(b.bot)}:
                self._starts.setdefault(bot, deque()).append(now)
        a.reserved += 1
        b.reserved += 1
        a.begun += 1
        b.begun += 1
        index = self._game_index
        self._game_index += 1
        self._spawn(self._start_game(req, a, b, index))

    async def _start_game(self, req: GameRequest, a: _Client, b: _Client, index: int) -> None:
        cfg = self.config
        try:
            full_config = Game(cfg.game, cfg.game_config).config
            db_id = await self.storage.create_game(cfg.game, full_config, req.seats, str(req.tc or cfg.tc),
                                                   req.match_id, self.server_id)
        except Exception as e:
            # Nothing was played: an explicit request waits at the front of the queue until
            # the database is back (pairing is paused meanwhile); an automatic pairing is
            # made again then.
            a.reserved -= 1
            b.reserved -= 1
            _not_played(a, b)
            if req.future is not None and not req.future.done():
                self.requests.appendleft(req)
            self._storage_lost(e)
            return
        a.reserved -= 1
        b.reserved -= 1
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
                                  want_groups=(a.want_groups, b.want_groups), tags=tags)
        except Exception as e:  # e.g. a start state the engine refuses: no game, stored aborted
            _not_played(a, b)
            await self._refuse(req, db_id, seed, tags, e)
            return
        if a.closing or b.closing:
            # A seat's connection closed while the game's row was being written (typically a
            # bot leaving right after its previous game, just as the referee paired it
            # again). Nothing has been sent about this game, so it is not played: starting it
            # would only record a forfeit by disconnect that says nothing about the bots.
            _not_played(a, b)
            await self._cancel(req, session, db_id, a if a.closing else b)
            return
        game = _Game(session, [a, b], req.seats, db_id, req)
        self.games[gid] = game
        for seat, c in enumerate((a, b)):
            entry = c.games.setdefault(gid, (game, []))
            entry[1].append(seat)
        self.stats["games_started"] += 1
        LOG.info("game %s: %s vs %s (seed %d)", gid, req.seats[0], req.seats[1], session.seed)
        if req.on_start is not None:
            req.on_start(db_id)
        self._dispatch(game, session.start(time.monotonic()))
        if self._game_watchers:
            self._tell("start", session)
        self._after(game)

    async def _refuse(self, req: GameRequest, db_id: int, seed: int | None, tags: dict[str, Any],
                      error: Exception) -> None:
        """A paired game whose session cannot be set up (its start state or configuration is
        refused): the request fails with GameNotStarted naming the reason, the row is stored
        as aborted (with the reason in its replay), and both seats are free again."""
        why = f"game {db_id} could not start: {type(error).__name__}: {error}"
        LOG.warning("%s", why)
        if req.future is not None and not req.future.done():
            req.future.set_exception(GameNotStarted(why))
        self._pair()
        replay = {"version": REPLAY_VERSION, "game": self.config.game, "config": self.config.game_config,
                  "seed": seed, "start_state": req.start_state, "tags": {**tags, "Reason": "aborted"},
                  "actions": [], "result": {"winner": None, "reason": "aborted", "plies": 0}, "error": why}
        try:
            await self.storage.finish_game(db_id, replay)
        except Exception:
            LOG.exception("game %s: could not be stored as aborted", db_id)

    async def _cancel(self, req: GameRequest, session: GameSession, db_id: int, gone: _Client) -> None:
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
                self.requests.appendleft(req)
            else:
                why = f"{gone.bot} left before game {session.game_id} started"
                req.future.set_exception(GameNotStarted(why))
        self._pair()
        try:
            await self.storage.finish_game(db_id, session.replay())
        except Exception:
            LOG.exception("game %s: could not be stored as aborted", session.game_id)

    # -- games --------------------------------------------------------------------------
    def _dispatch(self, game: _Game, outs: list[Out]) -> None:
        touched: list[_Client] = []
        hook = game.request.on_prompt if game.request is not None else None
        for o in outs:
            c = game.clients[o.seat]
            if hook is not None and isinstance(o.msg, YourTurn) and not game.session.finished:
                try:
                    hook(o.seat)
                except Exception:
                    LOG.exception("game %s: the host's turn hook failed", game.session.game_id)
            if c is None or c.closed:
                continue
            c.queue(o.msg)  # a protocol message, validated when the referee built it
            self.stats["messages_out"] += 1
            if c not in touched:
                touched.append(c)
        for c in touched:
            c.flush()

    def _after(self, game: _Game) -> None:
        """After any change to a game: end it, or (re)arm its timer."""
        s = game.session
        if self._game_watchers and not game.ending:
            self._tell("move", s)
        if s.finished:
            if not game.ending:
                game.ending = True
                if game.timer is not None:
                    game.timer.cancel()
                    game.timer = None
                self._spawn(self._end_game(game))
            return
        dl = s.next_deadline()
        if dl == game.deadline:
            return
        if game.timer is not None:
            game.timer.cancel()
            game.timer = None
        game.deadline = dl
        if dl is not None:
            loop = asyncio.get_running_loop()
            # The event loop's clock is time.monotonic on every platform asyncio supports.
            when = loop.time() + max(0.0, dl - time.monotonic()) + 0.0005
            game.timer = loop.call_at(when, self._on_timer, game)

    def _on_timer(self, game: _Game) -> None:
        game.timer = None
        game.deadline = None
        if game.ending:
            return
        self._dispatch(game, game.session.tick(time.monotonic()))
        self._after(game)

    async def _end_game(self, game: _Game) -> None:
        s = game.session
        replay = s.replay()
        req0 = game.request
        if req0 is not None and req0.annotate is not None:
            try:
                replay["host"] = req0.annotate()
            except Exception:
                LOG.exception("game %s: the host's annotation failed", s.game_id)
        stored = True
        waiting = False
        try:
            await self.storage.finish_game(game.db_id, replay)
        except StorageUnavailable as e:
            # Kept (in memory and in the spill file) and written when the database is back;
            # the bots are told now (replay_id null): their game is over either way.
            stored = False
            waiting = True
            self._pending[game.db_id] = (replay, None, None)
            self._save_spill()
            LOG.warning("game %s: result kept until storage is back", s.game_id)
            self._storage_lost(e)
        except Exception:
            stored = False
            LOG.exception("game %s: result could not be stored", s.game_id)
        o = s.outcome
        assert o is not None
        self._dispatch(game, s.game_over_messages(s.game_id if stored else None))
        self.games.pop(s.game_id, None)
        for c in set(game.clients):
            if c is not None:
                c.games.pop(s.game_id, None)
                c.free_since = time.monotonic()
        self.stats["games_finished"] += 1
        rep = s.clock_report()
        srch = s.search_report()
        LOG.info("game %s over: %s (%s) after %d actions", s.game_id, o.result_text, o.reason.value, o.plies)
        req = game.request
        summary = GameSummary(game.db_id, game.bots, o.winner, o.reason.value, o.plies,
                              (rep["think_ms"][0], rep["think_ms"][1]),
                              (rep["transport_ms"][0], rep["transport_ms"][1]), stored,
                              search=(srch[0], srch[1]), verdict=o.verdict, host=replay.get("host"))
        if self._game_watchers:
            self._tell("over", s, summary)
        if waiting and game.db_id in self._pending:  # the request's future waits for the write
            self._pending[game.db_id] = (replay, req, summary)
        elif req is not None and req.future is not None and not req.future.done():
            req.future.set_result(summary)
        self._pair()

    # -- connections --------------------------------------------------------------------
    async def _handle(self, reader: asyncio.StreamReader,
                      writer: asyncio.StreamWriter, *,
                      pinned: asyncio.Future[str] | None = None,
                      probe: Callable[[], Any] | None = None) -> None:
        cfg = self.config
        c = _Client(self, reader, writer, cfg.max_frame, cfg.max_rate)
        if pinned is not None:
            c.pinned, c.hello_future, c.probe = True, pinned, probe
            try:
                await self._serve(c, reader)
            finally:
                if not pinned.done():
                    reason = c.fault[1] if c.fault else "closed before its hello"
                    pinned.set_exception(ConnectionError(reason))
            return
        why = self._over_pending_limit(c)
        if why is not None:
            LOG.warning("%s refused: %s", c, why)
            c.close()
            return
        await self._serve(c, reader)

    async def _serve(self, c: _Client, reader: asyncio.StreamReader) -> None:
        self.clients.add(c)
        self.stats["connections"] += 1
        LOG.info("%d connected from %s", c.id, c.peer)
        if c.sock is not None:
            with contextlib.suppress(OSError):
                c.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            await self._read_loop(c, reader)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            raise
        except Exception:
            LOG.exception("%s: internal error", c)
            if c.bot is not None and c.conn.our_error is None and not c.closed:
                c.queue(Error(code=ErrorCode.INTERNAL_ERROR.value, message="internal error; please report"))
                c.flush()
        finally:
            if c.probe is not None and c.games:
                # A hosted process: learn why it ended (a crash, its memory limit) before
                # its seat is given up, so that the verdict says so.
                with contextlib.suppress(Exception):
                    why = await asyncio.wait_for(c.probe(), 3.0)
                    if why is not None:
                        c.fault = why
            self._drop(c)
            if c.linger:
                await self._linger(c, reader)
            c.close()

    def _over_pending_limit(self, new: _Client) -> str | None:
        """Why a new connection is refused (too many connections without `hello`), or None."""
        cfg = self.config
        pending = [c for c in self.clients if c.bot is None and not c.closed]
        if cfg.max_pending and len(pending) >= cfg.max_pending:
            return f"{len(pending)} connections have not said hello yet (max_pending)"
        host = _host(new.peer)
        same = sum(1 for c in pending if _host(c.peer) == host)
        if cfg.max_pending_per_address and same >= cfg.max_pending_per_address:
            return f"{same} connections from {host} have not said hello yet (max_pending_per_address)"
        return None

    def _auth_delay(self, keys: list[str]) -> float:
        """Record a failed login under `keys` and return how long to wait before answering."""
        cfg = self.config
        now = time.monotonic()
        worst = 0
        for k in keys:
            n, last = self._auth_failures.get(k, (0, now))
            n = 1 if now - last > cfg.auth_window_s else n + 1
            self._auth_failures[k] = (n, now)
            worst = max(worst, n)
        if len(self._auth_failures) > 100_000:  # forget the oldest keys: memory stays bounded
            for k, _ in sorted(self._auth_failures.items(), key=lambda kv: kv[1][1])[:50_000]:
                del self._auth_failures[k]
        return min(cfg.auth_delay_max_ms, cfg.auth_delay_ms * 2 ** min(worst - 1, 30)) / 1000

    def _games_left(self, bot: str, now: float) -> bool:
        """May `bot` start a game now (max_games_per_minute)?"""
        limit = self.config.max_games_per_minute
        if not limit:
            return True
        starts = self._starts.get(bot)
        if starts is None:
            return True
        while starts and now - starts[0] >= 60.0:
            starts.popleft()
        if len(starts) < limit:
            return True
        if self._repair is None:  # pair again when the oldest of those games is a minute old
            def again() -> None:
                self._repair = None
                self._pair()
            self._repair = asyncio.get_running_loop().call_later(60.0 - (now - starts[0]) + 0.01, again)
        return False

    async def _linger(self, c: _Client, reader: asyncio.StreamReader) -> None:
        """Close gracefully after a fatal error: end our side (so the error is delivered and
        not lost to a reset caused by unread input), discard input until the peer closes or
        two seconds pass."""
        with contextlib.suppress(Exception):
            c.writer.write_eof()

        async def drain() -> None:
            while await reader.read(65536):
                pass

        with contextlib.suppress(Exception):
            await asyncio.wait_for(drain(), 2.0)

    async def _read_loop(self, c: _Client, reader: asyncio.StreamReader) -> None:
        # A hosted process's start-up has the host's own budget (it awaits attach's future).
        hello_by = time.monotonic() + (3600.0 if c.pinned else self.config.hello_timeout_ms / 1000)
        while not c.closed:
            if c.bot is None:
                left = hello_by - time.monotonic()
                try:
                    data = await asyncio.wait_for(reader.read(65536), max(0.0, left))
                except asyncio.TimeoutError:
                    LOG.info("%s: no hello in time; closing", c)
                    return
            else:
                data = await reader.read(65536)
            now = time.monotonic()
            if self.config.record_latency:
                c.cpu0 = time.thread_time()
            c.conn.receive_data(data)
            while not c.closed:
                try:
                    ev = c.conn.next_event()
                except RemoteProtocolError as e:
                    self._violation(c, e.code, e.message)
                    return
                if ev is NEED_DATA:
                    break
                if isinstance(ev, ConnectionClosed):
                    return
                if isinstance(ev, Greeting):
                    continue
                assert isinstance(ev, Message)
                if not c.rate.take(now):
                    self._violation(c, ErrorCode.RATE_LIMITED,
                                    f"more than {self.config.max_rate} messages per second")
                    return
                self.stats["messages_in"] += 1
                if LOG.isEnabledFor(logging.DEBUG):
                    LOG.debug("%d << %s", c.id, ev.to_wire())
                if isinstance(ev, Hello):
                    await self._hello(c, ev)
                else:
                    self._message(c, ev, now)
            if not data:
                return

    def _violation(self, c: _Client, code: ErrorCode, message: str) -> None:
        LOG.info("%s: %s: %s", c, code.value, message)
        self.stats["errors_sent"] += 1
        try:
            c.out.append(c.conn.send(Error(code=code.value, message=message[:1900])))
        except ProtocolError:
            pass
        c.flush()
        if code in FATAL:
            c.closed = True
            c.linger = True
            c.fault = ("protocol", f"{code.value}: {message[:200]}")

    async def _hello(self, c: _Client, h: Hello) -> None:
        if self.stopping:
            self._violation(c, ErrorCode.SHUTTING_DOWN, "the server is stopping")
            return
        digest = hash_token(h.token)
        name = self._local_tokens.get(digest)
        if name is None:
            try:
                name = await self.storage.bot_by_token(h.token)
            except Exception as e:
                self._storage_lost(e)
                self._violation(c, ErrorCode.UNAVAILABLE,
                                "the server's database is unavailable; try again later")
                return
            if name is not None:
                c.token_hash = digest
        if name is None:
            delay = self._auth_delay([f"address {_host(c.peer)}", f"name {h.name}"])
            if delay > 0:
                await asyncio.sleep(delay)
            self._violation(c, ErrorCode.AUTH_FAILED, "unknown or revoked token")
            return
        if self.config.game not in h.games:
            self._violation(c, ErrorCode.UNSUPPORTED_GAME, f"this server referees {self.config.game} only")
            return
        if not c.pinned and sum(1 for x in self.clients if x.bot == name and not x.pinned) >= \
                self.config.max_connections_per_bot:
            self._violation(c, ErrorCode.ALREADY_CONNECTED,
                            f"bot {name!r} has {self.config.max_connections_per_bot} connections already")
            return
        c.bot = name
        c.display = h.name
        c.concurrency = 1 if c.pinned else h.concurrency
        c.want_legal = h.want_legal
        c.want_groups = bool(h.want_groups)
        c.max_games = 1 if c.pinned else h.max_games
        c.free_since = time.monotonic()
        c.queue(Welcome(bot=name, server=SERVER_NAME, max_frame=self.config.max_frame,
                        max_rate=self.config.max_rate))
        c.flush()
        LOG.info("%s: hello as %s, calling itself %r (concurrency %d)", c, name, h.name, h.concurrency)
        if c.hello_future is not None:
            if not c.hello_future.done():
                c.hello_future.set_result(name)
            self._pair()
            return  # a hosted process plays the one game it is started for, never an old seat
        self._reattach(c)
        self._pair()

    def _reattach(self, c: _Client) -> None:
        """Give `c` the disconnected seats of its bot in running games (reconnection)."""
        now = time.monotonic()
        for game in list(self.games.values()):
            if game.ending or c.free_slots <= 0:
                continue
            for seat in (0, 1):
                if game.bots[seat] == c.bot and game.clients[seat] is None:
                    game.clients[seat] = c
                    entry = c.games.setdefault(game.session.game_id, (game, []))
                    entry[1].append(seat)
                    game.session.set_want_legal(seat, c.want_legal)
                    game.session.set_want_groups(seat, c.want_groups)
                    LOG.info("game %s: seat %d reconnected (%s)", game.session.game_id, seat + 1, c)
                    self._dispatch(game, game.session.reconnect(seat, now))
                    self._after(game)
                    break

    def _message(self, c: _Client, m: Message, now: float) -> None:
        if isinstance(m, Ping):
            c.queue(Pong(id=m.id))
            c.flush()
            return
        if isinstance(m, (Act, Turn, Resign)):
            entry = c.games.get(m.game_id)
            if entry is None:
                self._game_error(c, m, ErrorCode.UNKNOWN_GAME, f"no game {m.game_id!r} of yours is running")
                return
            game, seats = entry
            if m.seat is not None:
                if m.seat - 1 not in seats:
                    self._game_error(c, m, ErrorCode.WRONG_SEAT, f"you do not hold seat {m.seat} here")
                    return
                seat = m.seat - 1
            elif len(seats) == 1:
                seat = seats[0]
            else:
                seat = game.session.to_move
            if game.ending:
                self._game_error(c, m, ErrorCode.UNKNOWN_GAME, "the game is over")
                return
            if isinstance(m, Resign):
                outs = game.session.resign(seat, now)
            else:
                actions = [m.action] if isinstance(m, Act) else list(m.actions)
                outs = game.session.submit(seat, actions, now, transport_ms=c.rtt_ms(), info=m.info)
                self.stats["actions"] += len(actions)
            self._dispatch(game, outs)
            self._after(game)
            if self.config.record_latency:
                self.latencies_ms.append((time.monotonic() - now) * 1000)
                self.cpu_ms.append((time.thread_time() - c.cpu0) * 1000)
            return
        self._violation(c, ErrorCode.UNEXPECTED_MESSAGE, f"{m.TYPE} is not expected here")

    def _game_error(self, c: _Client, m: Act | Turn | Resign, code: ErrorCode, text: str) -> None:
        self.stats["errors_sent"] += 1
        if isinstance(m, Resign):
            c.queue(Error(code=code.value, message=text, game_id=m.game_id))
        else:
            c.queue(Result(game_id=m.game_id, accepted=0, error=code.value, message=text))
        c.flush()

    def _drop(self, c: _Client) -> None:
        """Forget a connection: its seats are disconnected (the writer is closed by the caller)."""
        c.closed = True
        self.clients.discard(c)
        LOG.info("%s disconnected", c)
        if c.pinned:  # a request waiting for this hosted process's connection cannot be played
            for req in list(self.requests):
                if req.clients and c.hello_future in req.clients:
                    self.requests.remove(req)
                    if req.future is not None and not req.future.done():
                        req.future.set_exception(GameNotStarted(f"{c.bot}'s process closed before its game"))
        now = time.monotonic()
        for gid, (game, seats) in list(c.games.items()):
            if game.ending:
                continue
            for seat in seats:
                game.clients[seat] = None
                self._dispatch(game, game.session.disconnect(seat, now, c.fault, final=c.pinned))
            self._after(game)
            del c.games[gid]
