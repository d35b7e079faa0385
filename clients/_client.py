"""The asyncio client: connects to a referee, greets, says hello and plays every game it is
given with a fresh `Bot` per game, several at once. All protocol logic is maag.protocol's
`Connection`; this module moves bytes and calls the bot."""

from __future__ import annotations

import abc
import asyncio
import enum
import inspect
import logging
import math
import os
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple, TypeAlias

from maag.protocol import (
    DEFAULT_MAX_FRAME,
    FATAL,
    MAX_INFO,
    MAX_INFO_TEXT,
    MAX_NAME,
    NEED_DATA,
    Connection,
    ConnectionClosed,
    Error,
    GameEvent,
    GameOver,
    GameStart,
    Greeting,
    Hello,
    Message,
    Ping,
    Pong,
    ProtocolError,
    Resign,
    Result,
    Role,
    Turn,
    TurnEvents,
    Welcome,
    YourTurn,
)

from ._bot import Bot, GameInfo, GameRecord, Limit, Observation, TurnResult
from ._errors import BotError, BotTerminatedError, ServerError
from ._options import parse_settings

LOGGER = logging.getLogger("maag.clients")

STALE_S = 2.0
"""After a reconnection, how long the referee has to announce again each game we held (it
does so right after its welcome); a game it does not announce is over for us."""


class _Tick(enum.Enum):
    TICK = "TICK"


_TICK = _Tick.TICK  # from `_next`: woken by a timer, not by the server


# ---- transports -----------------------------------------------------------------------------

class Transport(abc.ABC):
    """A byte stream to the server. `read` returns b"" at end of stream."""

    @abc.abstractmethod
    async def read(self) -> bytes: ...

    @abc.abstractmethod
    def write(self, data: bytes) -> None: ...

    async def drain(self) -> None:
        """Wait until written data has been handed to the network."""
        return None

    @abc.abstractmethod
    def close(self) -> None: ...


class StreamTransport(Transport):
    """A stream connection (asyncio streams): TCP, a Unix socket or an inherited socket."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def open(cls, host: str | Address, port: int | None = None) -> StreamTransport:
        """Open a connection: `open(host, port)` over TCP, or `open(address)` for any parsed
        `Address` (TCP, a Unix socket, or an inherited socket's file descriptor)."""
        if isinstance(host, str):
            if port is None:
                raise BotError("StreamTransport.open(host, port): the port is missing")
            host = TcpAddress(host, port)
        reader, writer = await _open_streams(host)
        return cls(reader, writer)

    async def read(self) -> bytes:
        try:
            return await self.reader.read(65536)
        except (ConnectionError, OSError):
            return b""

    def write(self, data: bytes) -> None:
        if not self.writer.is_closing():
            self.writer.write(data)

    async def drain(self) -> None:
        try:
            await self.writer.drain()
        except (ConnectionError, OSError):
            pass

    def close(self) -> None:
        self.writer.close()


class TcpAddress(NamedTuple):
    """A TCP address: "HOST:PORT"."""

    host: str
    port: int

    def __str__(self) -> str:
        bracket = ":" in self.host or self.host in ("unix", "fd")  # so that it parses back the same
        return f"[{self.host}]:{self.port}" if bracket else f"{self.host}:{self.port}"


class UnixAddress(NamedTuple):
    """A Unix stream socket: "unix:PATH"."""

    path: str

    def __str__(self) -> str:
        return f"unix:{self.path}"


class FdAddress(NamedTuple):
    """A stream socket this process already holds (inherited, already connected): "fd:N"."""

    fd: int

    def __str__(self) -> str:
        return f"fd:{self.fd}"


Address: TypeAlias = TcpAddress | UnixAddress | FdAddress
"""A parsed connect address (`parse_address`); `str(address)` spells it back."""

ADDRESS_FORMS = "HOST:PORT, [V6]:PORT, :PORT, unix:PATH or fd:N"


def parse_address(text: str) -> Address:
    """A connect address (what $MAAG_CONNECT, `--connect` and `{connect}` hold) as an `Address`:

    - "HOST:PORT" (or "[v6]:PORT", or ":PORT" for 127.0.0.1): `TcpAddress(host, port)`, which
      is also the tuple (host, port);
    - "unix:PATH": `UnixAddress(path)`, a Unix stream socket to connect to;
    - "fd:N": `FdAddress(n)`, an already connected stream socket inherited as file
      descriptor N (a sandboxed bot has no network: its referee hands it one).

    The prefixes win: a host really named "unix" or "fd" is written "[unix]:PORT".
    BotError if the text is none of these."""
    if not isinstance(text, str):
        raise BotError(f"an address is a string ({ADDRESS_FORMS}), not {type(text).__name__}")
    kind, sep, rest = text.partition(":")
    if sep and kind == "fd":
        if not rest.isascii() or not rest.isdigit() or len(rest) > 9:
            raise BotError(f"fd:N needs a file descriptor number N >= 0, not {text!r}")
        return FdAddress(int(rest))
    if sep and kind == "unix":
        if not rest or "\0" in rest:
            raise BotError(f"unix:PATH needs the path of a Unix socket, not {text!r}")
        return UnixAddress(rest)
    host, sep, port = text.rpartition(":")
    if not sep or not port.isascii() or not port.isdigit() or not 0 < int(port) < 65536:
        raise BotError(f"an address must look like {ADDRESS_FORMS}, not {text!r}")
    host = host.strip("[]") or "127.0.0.1"
    return TcpAddress(host, int(port))


def _as_address(address: str | Address | tuple[str, int]) -> Address:
    if isinstance(address, str):
        return parse_address(address)
    if isinstance(address, (TcpAddress, UnixAddress, FdAddress)):
        return address
    host, port = address
    return TcpAddress(host, port)


def _adopt_socket(fd: int) -> socket.socket:
    """The stream socket behind inherited file descriptor `fd` (it now owns the descriptor);
    BotError if `fd` is not open or not a stream socket."""
    try:
        os.fstat(fd)
    except OSError as e:
        raise BotError(f"fd:{fd}: no such open file descriptor ({e.strerror})") from None
    try:
        sock = socket.socket(fileno=fd)
    except OSError as e:
        raise BotError(f"fd:{fd} is not a socket ({e.strerror})") from None
    if sock.type != socket.SOCK_STREAM:
        sock.detach()  # not ours to close
        raise BotError(f"fd:{fd} is not a stream socket (type {sock.type!r})")
    return sock


async def _open_streams(address: Address) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Connect (or, for fd:N, adopt the inherited socket) and return asyncio streams."""
    if isinstance(address, FdAddress):
        sock = _adopt_socket(address.fd)
        try:
            return await asyncio.open_connection(sock=sock)
        except BaseException:
            sock.close()
            raise
    if isinstance(address, UnixAddress):
        return await asyncio.open_unix_connection(address.path)
    return await asyncio.open_connection(address.host, address.port)


# ---- the client -----------------------------------------------------------------------------

@dataclass(slots=True, eq=False)
class _Game:
    info: GameInfo
    bot: Bot
    prompt: int = 0  # number of the latest your_turn; a plan for an older one is dropped
    task: asyncio.Task[None] | None = None
    turns_sent: int = 0


@dataclass(slots=True)
class ClientStats:
    """Counters of one connection."""

    games: list[GameRecord] = field(default_factory=list)
    turns_sent: int = 0
    errors: list[tuple[str | None, str]] = field(default_factory=list)
    """(game_id, code) of every error and failed result from the server."""


BotFactory = Callable[[], Bot]


class Client:
    """One connection to a referee that plays games with `bot`.

    bot: a `Bot` subclass (instantiated with `settings` for every game) or a function that
    returns a fresh Bot. token: the bot's token. name: shown to opponents (default: the
    Bot class's `name`). encoding: "msgpack" (default) or "json". concurrency: how many
    games at once. stop_after: close the connection once this many games have ended and
    none is running (None: play until the server closes). strict: let an exception in the
    bot end the client (default: log it and resign that game). reconnect_s: when the
    connection is lost with games running, connect again (same address and token) for up to
    this many seconds and pick the games up where the referee kept them (its --grace decides
    how long it waits); 0 (the default) ends the client instead. An `fd:N` connection cannot
    be made again. live_events: True asks the referee for each of the opponent's actions as it
    is applied (hello `events` "action"); False for them once its turn ends, in one message
    (`events` "turn"); None (the default): the bot's `live_events` (False unless it says so).
    Either way the bot's `on_event` is called once per action, in order.
    """

    def __init__(self, bot: type[Bot] | BotFactory, *, token: str, name: str | None = None,
                 settings: Mapping[str, Any] | None = None, encoding: str = "msgpack",
                 concurrency: int = 1, stop_after: int | None = None, strict: bool = False,
                 games: tuple[str, ...] | None = None, want_legal: bool | None = None,
                 max_frame: int = DEFAULT_MAX_FRAME, reconnect_s: float = 0.0,
                 live_events: bool | None = None) -> None:
        if isinstance(bot, type):
            if not issubclass(bot, Bot):
                raise BotError(f"{bot.__name__} is not a Bot subclass")
            parse_settings(bot.options, settings)  # fail now, not at the first game
            cls = bot
            self._factory: BotFactory = lambda: cls(settings)
        else:
            if settings:
                raise BotError("settings are given to a Bot class, not to a factory")
            self._factory = bot
        self.hello = Hello(name=name or getattr(bot, "name", "bot"), token=token,
                           games=games or tuple(getattr(bot, "games", Bot.games)),
                           concurrency=concurrency,
                           want_legal=bool(getattr(bot, "want_legal", False)
                                           if want_legal is None else want_legal),
                           max_games=stop_after,  # so the referee pairs us no more after them
                           want_groups=True if getattr(bot, "want_groups", False) else None,
                           # Once a turn unless asked: the bot is woken once per opponent's turn.
                           events="action" if (getattr(bot, "live_events", False) if live_events is None
                                               else live_events) else "turn")
        self.encoding = encoding
        self.stop_after = stop_after
        self.strict = strict
        self.max_frame = max_frame
        self.conn = Connection(Role.CLIENT, max_frame=max_frame)
        self.reconnect_s = reconnect_s
        self.reconnects = 0
        self._address: Address | None = None
        self._stale: set[str] = set()  # games held before a reconnect, not announced again yet
        self.welcome: Welcome | None = None
        self.stats = ClientStats()
        self._transport: Transport | None = None
        self._games: dict[str, _Game] = {}
        self._pings: dict[int, asyncio.Future[float]] = {}
        self._ping_seq = 0
        self._failure: BaseException | None = None
        self._closing = False
        self._read_task: asyncio.Future[bytes] | None = None
        self._read_at: float | None = None  # time.monotonic() of the last read from the server
        self._wake: asyncio.Future[None] | None = None  # set when a task fails the client

    # -- connecting ------------------------------------------------------------------------
    async def connect(self, address: str | Address | tuple[str, int],
                      timeout: float | None = 10.0) -> Welcome:
        """Connect to `address` and log in; see `start`. The address is "HOST:PORT", "unix:PATH"
        or "fd:N" (an inherited, already connected socket, which the client then owns and
        closes), as a string (`parse_address`), an `Address` or a (host, port) tuple.
        BotError for a malformed address or an fd that is no stream socket,
        BotTerminatedError if the connection cannot be made."""
        addr = _as_address(address)
        self._address = addr
        try:
            reader, writer = await asyncio.wait_for(_open_streams(addr), timeout)
        except (OSError, asyncio.TimeoutError) as e:
            raise BotTerminatedError(f"cannot connect to {addr}: {e or 'timed out'}") from None
        return await self.start(StreamTransport(reader, writer), timeout)

    async def start(self, transport: Transport, timeout: float | None = 10.0) -> Welcome:
        """Greet and say hello over `transport`; return the server's `welcome`. Raises
        ServerError if the server refuses (e.g. auth_failed), BotTerminatedError if it closes."""
        self._transport = transport
        self._send(Greeting(encoding=self.encoding))
        self._send(self.hello)
        await transport.drain()

        async def wait_welcome() -> Welcome:
            while True:
                ev = await self._next()
                if isinstance(ev, Welcome):
                    return ev
                if isinstance(ev, Error):
                    raise ServerError(ev.code, ev.message)
                if isinstance(ev, ConnectionClosed):
                    raise BotTerminatedError("the server closed the connection before welcome")

        try:
            welcome = await asyncio.wait_for(wait_welcome(), timeout)
        except asyncio.TimeoutError:
            transport.close()
            raise BotTerminatedError("no welcome from the server") from None
        except BaseException:
            transport.close()
            raise
        self.welcome = welcome
        LOGGER.info("connected as %s to %s", welcome.bot, welcome.server)
        return welcome

    # -- running ---------------------------------------------------------------------------
    async def run(self) -> ClientStats:
        """Play until the server closes the connection, or `stop_after` games are over.
        Raises ServerError on a fatal server error, BotTerminatedError if the connection
        is lost while games are running, BotError on a protocol violation by the server."""
        if self.welcome is None:
            raise BotError("call connect() or start() before run()")
        try:
            while True:
                try:
                    return await self._play()
                except (BotTerminatedError, ConnectionError, OSError) as e:
                    if not self._may_reconnect():
                        raise
                    await self._reconnect(e)
        finally:
            await self.close()

    async def _play(self) -> ClientStats:
        """Play on the current connection until it ends (see `run`)."""
        while True:
            ev = await self._next()
            if ev is _TICK:  # woken by a timer (games dropped after a reconnect)
                if self._done():
                    break
                continue
            if isinstance(ev, ConnectionClosed):
                break
            await self._dispatch(ev)
            if self._failure is not None:
                raise self._failure
            if self._done():
                break
        if self._failure is not None:
            raise self._failure
        if self._games and not self._closing:
            raise BotTerminatedError(f"the server closed the connection with {len(self._games)} "
                                     "game(s) running")
        return self.stats

    # -- reconnecting ----------------------------------------------------------------------
    def _may_reconnect(self) -> bool:
        return (self.reconnect_s > 0 and not self._closing and self._failure is None and bool(self._games)
                and self._address is not None and not isinstance(self._address, FdAddress))

    async def _reconnect(self, why: BaseException) -> None:
        """The connection was lost with games running: connect again, with growing pauses,
        for up to `reconnect_s`; the referee then announces each game it kept for us again
        (`game_start`, and `your_turn` where it is our move). A game it does not announce
        within STALE_S of the welcome is over for us: recorded as lost by disconnection."""
        assert self._address is not None
        LOGGER.warning("connection lost (%s) with %d game(s) running; reconnecting for up to %g s",
                       why, len(self._games), self.reconnect_s)
        for g in self._games.values():  # their turns will be asked again
            g.prompt += 1
            if g.task is not None:
                g.task.cancel()
        if self._read_task is not None:
            self._read_task.cancel()
            self._read_task = None
        if self._transport is not None:
            self._transport.close()
            self._transport = None
        if self.stop_after is not None:  # the games given back count on the new connection too
            left = max(1, self.stop_after - len(self.stats.games))
            self.hello = replace(self.hello, max_games=left)
        deadline = time.monotonic() + self.reconnect_s
        pause = 0.1
        while True:
            self.conn = Connection(Role.CLIENT, max_frame=self.max_frame)
            self.welcome = None
            try:
                await self.connect(self._address, timeout=max(0.5, min(10.0, deadline - time.monotonic())))
                break
            except (BotTerminatedError, ServerError) as e:
                # already_connected: the referee has not yet seen the old connection end (a
                # network that drops packets tells it later than one that resets): try again.
                if isinstance(e, ServerError) and e.code != "already_connected":
                    raise
                if time.monotonic() + pause > deadline:
                    raise BotTerminatedError(f"the connection was lost ({why}) and could not be made again "
                                             f"within {self.reconnect_s:g} s: {e}") from None
                await asyncio.sleep(pause)
                pause = min(2.0, pause * 2)
        self.reconnects += 1
        self._stale = set(self._games)
        asyncio.get_running_loop().call_later(STALE_S, self._drop_stale)

    def _drop_stale(self) -> None:
        for gid in sorted(self._stale):
            g = self._games.pop(gid, None)
            if g is None:
                continue
            LOGGER.warning("game %s was not given back after the reconnection: counted as lost", gid)
            if g.task is not None:
                g.task.cancel()
            other = 2 if g.info.seat == 1 else 1
            self.stats.games.append(GameRecord(g.info, other, "disconnect"))
        self._stale.clear()
        if self._wake is not None and not self._wake.done():
            self._wake.set_result(None)

    async def ping(self, timeout: float | None = 10.0) -> float:
        """Round-trip time to the server in seconds (needs `run()` to be running)."""
        self._ping_seq += 1
        fut: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self._pings[self._ping_seq] = fut
        start = time.perf_counter()
        self._send(Ping(id=self._ping_seq))
        await asyncio.wait_for(fut, timeout)
        return time.perf_counter() - start

    async def close(self) -> None:
        """Stop thinking, close the connection (idempotent)."""
        self._closing = True
        for g in self._games.values():
            if g.task is not None:
                g.task.cancel()
        tasks = [g.task for g in self._games.values() if g.task is not None]
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        if self._read_task is not None:
            self._read_task.cancel()
            self._read_task = None
        if self._transport is not None:
            try:
                self.conn.send(ConnectionClosed())
            except ProtocolError:
                pass
            await self._transport.drain()
            self._transport.close()
            self._transport = None

    def _done(self) -> bool:
        return (self.stop_after is not None and len(self.stats.games) >= self.stop_after
                and not self._games)

    # -- I/O -------------------------------------------------------------------------------
    def _send(self, msg: Message | Greeting) -> None:
        if self._transport is None:
            raise BotError("not connected")
        data = self.conn.send(msg)
        LOGGER.debug(">> %s %s", getattr(msg, "game_id", "-"), msg)
        self._transport.write(data)

    async def _next(self) -> Message | ConnectionClosed | _Tick:
        """The next message from the server (ConnectionClosed at the end; _TICK when a timer
        woke the client)."""
        assert self._transport is not None
        while True:
            try:
                ev = self.conn.next_event()
            except ProtocolError as e:
                raise BotError(f"the server broke the protocol: {e}") from None
            if ev is not NEED_DATA:
                assert isinstance(ev, (Message, ConnectionClosed))
                LOGGER.debug("<< %s %s", getattr(ev, "game_id", "-"), ev)
                return ev
            if self._read_task is None:
                self._read_task = asyncio.ensure_future(self._transport.read())
            if self._wake is None:
                self._wake = asyncio.get_running_loop().create_future()
            waiting: set[asyncio.Future[Any]] = {self._read_task, self._wake}
            await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            if self._failure is not None:
                raise self._failure
            if self._wake.done() and not self._read_task.done():
                self._wake = None
                return _TICK
            if self._read_task.done():
                data, self._read_task = self._read_task.result(), None
                self._read_at = time.monotonic()
                self.conn.receive_data(data)

    # -- dispatch --------------------------------------------------------------------------
    async def _dispatch(self, msg: Message) -> None:
        g: _Game | None
        if isinstance(msg, GameStart):
            info = GameInfo(game_id=msg.game_id, game=msg.game, seat=msg.seat, config=msg.config,
                            time_control=msg.time_control, opponent=msg.opponent)
            if msg.game_id in self._games:  # a reconnect re-announces the game: keep the bot
                self._stale.discard(msg.game_id)
                return
            g = _Game(info, self._factory())
            self._games[msg.game_id] = g
            LOGGER.info("game %s started: seat %d against %s", msg.game_id, msg.seat, msg.opponent)
            await self._call(g, g.bot.on_game_start(info))
        elif isinstance(msg, YourTurn):
            g = self._game(msg.game_id)
            if g is None:
                return
            g.prompt += 1
            if g.task is not None and not g.task.done():
                g.task.cancel()
            g.task = asyncio.create_task(self._choose(g, msg, g.prompt, self._read_at),
                                         name=f"choose {msg.game_id}")
        elif isinstance(msg, GameEvent):
            g = self._game(msg.game_id)
            if g is not None:
                if msg.kind == "timeout" and msg.seat == g.info.seat:
                    g.prompt += 1  # the referee ended our turn: a plan still being made is stale
                await self._call(g, g.bot.on_event(msg.kind, msg.seat, msg.action))
        elif isinstance(msg, TurnEvents):  # (the opponent's turn, as the events it stands for)
            g = self._game(msg.game_id)
            if g is not None:
                for action in msg.actions:
                    await self._call(g, g.bot.on_event("action", msg.seat, action))
        elif isinstance(msg, Result):
            g = self._game(msg.game_id)
            if msg.error is not None:
                LOGGER.warning("game %s: %d action(s) accepted, then %s: %s", msg.game_id, msg.accepted,
                               msg.error, msg.message or "")
                self.stats.errors.append((msg.game_id, msg.error))
            if g is not None:
                await self._call(g, g.bot.on_result(msg.accepted, msg.error, msg.message))
        elif isinstance(msg, GameOver):
            g = self._games.pop(msg.game_id, None)
            if g is None:
                return
            g.prompt += 1
            if g.task is not None:
                g.task.cancel()
            record = GameRecord(g.info, msg.winner, msg.reason, msg.replay_id)
            self.stats.games.append(record)
            result = ("aborted" if record.aborted else "a draw" if msg.winner is None
                      else f"won by seat {msg.winner}")
            LOGGER.info("game %s over: %s (%s)", msg.game_id, result, msg.reason)
            await self._call(g, g.bot.on_game_over(record))
        elif isinstance(msg, Error):
            self.stats.errors.append((msg.game_id, msg.code))
            if msg.game_id is None and (msg.error_code in FATAL or msg.error_code is None):
                self._fail(ServerError(msg.code, msg.message))
                return
            LOGGER.warning("game %s: error %s: %s", msg.game_id, msg.code, msg.message)
            g = self._game(msg.game_id) if msg.game_id else None
            if g is not None and msg.code == "timeout":
                g.prompt += 1  # the turn is over: a plan still being made is stale
        elif isinstance(msg, Pong):
            fut = self._pings.pop(msg.id, None) if isinstance(msg.id, int) else None
            if fut is not None and not fut.done():
                fut.set_result(0.0)

    def _game(self, game_id: str) -> _Game | None:
        g = self._games.get(game_id)
        if g is None:
            LOGGER.warning("message for unknown game %s ignored", game_id)
        return g

    async def _call(self, g: _Game, coro: Any) -> None:
        """Await a bot callback; an exception resigns the game (or ends the client if strict)."""
        try:
            await coro
        except Exception as e:
            self._bot_failed(g, e)

    def _bot_failed(self, g: _Game, e: BaseException) -> None:
        if self.strict:
            self._fail(e)
            return
        LOGGER.error("game %s: the bot failed; resigning", g.info.game_id, exc_info=e)
        if g.info.game_id in self._games and not self._closing:
            g.prompt += 1
            try:
                self._send(Resign(game_id=g.info.game_id))
            except (ProtocolError, BotError):
                pass

    def _fail(self, e: BaseException) -> None:
        """End the client with `e` (raised from run())."""
        if self._failure is None:
            self._failure = e
        if self._wake is not None and not self._wake.done():
            self._wake.set_result(None)

    async def _choose(self, g: _Game, msg: YourTurn, prompt: int, received_at: float | None = None) -> None:
        obs = Observation(g.info, msg.observation, msg.legal, msg.groups)
        tc = g.info.time_control
        limit = Limit(time_left_ms=msg.time_left_ms, bank_ms=msg.bank_ms, turn_ms=tc.get("turn_ms"),
                      increment_ms=tc.get("increment_ms"), lag_ms=tc.get("lag_ms"), received_at=received_at)
        try:
            if inspect.iscoroutinefunction(g.bot.choose_turn):
                result = await g.bot.choose_turn(obs, limit)
            else:
                result = await asyncio.to_thread(g.bot.choose_turn, obs, limit)
            if not isinstance(result, TurnResult):
                raise BotError(f"choose_turn returned {type(result).__name__}, not a TurnResult")
            if prompt != g.prompt or self._closing:
                LOGGER.info("game %s: plan dropped (the turn moved on)", g.info.game_id)
                return
            if result.resigned:
                g.prompt += 1
                self._send(Resign(game_id=g.info.game_id))
            else:
                actions = result.action_dicts()
                if not actions:
                    raise BotError("choose_turn returned no actions (end the turn explicitly)")
                self._send(Turn(game_id=g.info.game_id, actions=actions, info=wire_info(result.info)))
                g.turns_sent += 1
                self.stats.turns_sent += 1
            if result.info:
                LOGGER.info("game %s: %s", g.info.game_id, dict(result.info))
            if self._transport is not None:
                await self._transport.drain()
        except asyncio.CancelledError:
            raise
        except Exception as e:
            self._bot_failed(g, e)


def wire_info(info: Mapping[str, Any]) -> dict[str, Any] | None:
    """What `turn.info` carries of a TurnResult's info: its numbers and texts (texts cut to
    the protocol's length), at most MAX_INFO of them; None when nothing is left."""
    out: dict[str, Any] = {}
    for k, v in info.items():
        if len(out) >= MAX_INFO or not isinstance(k, str) or not 1 <= len(k) <= MAX_NAME:
            continue
        if isinstance(v, str):
            out[k] = v[:MAX_INFO_TEXT]
        elif isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and abs(v) < 2**63:
            out[k] = v
    return out or None


async def run_bot(bot: type[Bot] | BotFactory, address: str | Address, *, token: str,
                  **kwargs: Any) -> ClientStats:
    """Connect to `address` ("HOST:PORT", "unix:PATH" or "fd:N"; see `parse_address`), play
    until the server closes (or `stop_after`), return stats."""
    client = Client(bot, token=token, **kwargs)
    await client.connect(address)
    return await client.run()
