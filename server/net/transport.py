"""The transport: one `Client` per TCP connection, an asyncio.Protocol that turns the bytes it
is fed into protocol events for the server and writes what the server queues for it.

No read task: `data_received` hands every whole message to the server in the same callback:
each act, turn and resignation as a `Play` (`RefereeServer.act`; read by its bytes when plain,
`Connection.plain`), the rest to `on_message`. A `hello` is the one message the server answers
asynchronously (it asks storage): reading pauses until it is answered, so messages are
handled in order and a peer cannot pile up input meanwhile. The peer's EOF is seen the moment
the transport reports it (`peer_gone`), so a closing connection is never paired. Limits kept
here: the message rate, the bytes buffered for a peer that does not read (frame size: protocol).
Which games a connection sits in and how many free slots it has is not kept here: that is
the lobby's seating (seating.py), keyed by connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import math
import socket
import time
from collections.abc import Callable, Coroutine
from typing import Any, ClassVar, Protocol

from maag.protocol import (
    NEED_DATA,
    Act,
    Connection,
    ConnectionClosed,
    Error,
    ErrorCode,
    Hello,
    LocalProtocolError,
    Message,
    Play,
    RemoteProtocolError,
    Resign,
    Role,
    Turn,
)
from maag.server.net.model import ServerConfig
from maag.server.net.rtt import RTT_READ_S, min_rtt_ms

__all__ = ["Client", "Host", "RateLimiter"]

LOG = logging.getLogger("maag.server.net.server")


class Host(Protocol):
    """What a connection uses of its server, the composition root (server.py): it reports
    what it reads there and takes the limits and counters from it."""

    config: ServerConfig
    stats: dict[str, int]
    latencies_ms: list[float]
    cpu_ms: list[float]

    def plain_play(self, c: Client, game_id: str, keys: list[bytes]) -> Play | None: ...
    def act(self, c: Client, p: Play, now: float) -> None: ...
    def opened(self, c: Client) -> bool: ...
    def on_message(self, c: Client, m: Message, now: float) -> None: ...
    async def hello(self, c: Client, h: Hello) -> None: ...
    async def ended(self, c: Client) -> None: ...
    def spawn(self, coro: Coroutine[Any, Any, Any]) -> None: ...
    def violation(self, c: Client, code: ErrorCode, message: str) -> None: ...


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


LINGER_S = 2.0  # after a fatal error: how long the peer's input is drained before closing


class Client(asyncio.Protocol):
    """One connection: the protocol state, the limits, the bot it logged in as."""

    _ids = itertools.count(1)
    plain_reader: ClassVar[bool] = True
    """Whether plain acts and turns are read by their bytes (`_plain`) before the general
    reader reads what is left; the tests compare both."""

    def __init__(self, server: Host, *, pinned: asyncio.Future[str] | None = None,
                 probe: Callable[[], Any] | None = None, via_link: bool = False) -> None:
        cfg = server.config
        self.id = next(self._ids)
        self.server = server
        self.conn = Connection(Role.SERVER, max_frame=cfg.max_frame)
        self.writer = self.conn.writer  # (what a game tells this connection after an act: acts.py)
        self.rate = RateLimiter(cfg.max_rate)
        self.transport: asyncio.Transport | None = None
        self.peer: Any = None
        self.sock: socket.socket | None = None
        self.bot: str | None = None
        self.token_hash: str | None = None  # of a token from storage (checked for revocation)
        self.display: str | None = None  # hello.name: how the bot calls itself (shown beside `bot`)
        self.want_legal = False
        self.want_groups = False
        self.turn_events = False  # hello.events "turn": the opponent's actions once its turn ends
        self.counted = False  # counted in the database among its bot's connections to every referee
        self.closed = False
        self.linger = False  # after a fatal error: half-close, drain the input, then close
        self.peer_gone = False  # the peer's EOF (or the connection's loss) has arrived
        self.cpu0 = 0.0  # thread CPU time when the current input was read (benchmarks)
        self.out: list[bytes] = []
        self.pinned = pinned is not None
        """Handed in by `attach`: one game, only by a request naming this connection."""
        self.hello_future = pinned
        self.via_link = via_link  # accepted on the link listener: only link tokens log in
        self.link = False  # a fleet peer carrying one seat of a game hosted here (fleet/links.py)
        self.link_seat: tuple[str, int] | None = None  # (game, seat) a link asked for
        self.extra_rtt_ms = 0.0  # a link's: the round trip from its member to the bot
        self.probe = probe  # awaitable: why a hosted process ended
        self.fault: tuple[str, str] | None = None  # (verdict, detail) known when it closes
        self._busy = False  # a hello is being answered: input waits
        self._ended = False
        self._hello_timer: asyncio.TimerHandle | None = None
        self._hello_late = False
        self._rtt = 0.0
        self._rtt_at = -math.inf  # (when `_rtt` was read, time.monotonic; -inf: to be read)

    def __repr__(self) -> str:
        return f"<client {self.id} {self.bot or '-'} {self.peer}>"

    # -- asyncio.Protocol ---------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # (uvloop's are no asyncio.Transport)
        self.peer = transport.get_extra_info("peername")
        self.sock = transport.get_extra_info("socket")
        if not self.server.opened(self):
            self.close()
            self._ended = True
            return
        # A hosted process's start-up has the host's own budget (it awaits attach's future).
        wait = 3600.0 if self.pinned else self.server.config.hello_timeout_ms / 1000
        self._hello_timer = asyncio.get_running_loop().call_later(wait, self._hello_expired)

    def data_received(self, data: bytes) -> None:
        if self._ended:
            return  # lingering after a fatal error: the input is discarded
        if self._busy:
            self.conn.receive_data(data)
        else:
            self._process(data)

    def eof_received(self) -> bool:
        self.peer_gone = True
        if self._ended:
            self.close()
            return False
        self.conn.receive_data(b"")
        if not self._busy:
            self._process()
        return True  # our side stays open until the server closes it

    def connection_lost(self, exc: Exception | None) -> None:
        self.peer_gone = True
        if self._hello_timer is not None:
            self._hello_timer.cancel()
        if not self._ended:
            with contextlib.suppress(RuntimeError):  # (after an EOF already fed)
                self.conn.receive_data(b"")
            self._end()

    # -- input --------------------------------------------------------------------------
    def _process(self, data: bytes = b"") -> None:
        """Handle `data` (new input, its plain acts and turns first) and every whole message
        buffered. Every act, turn and resignation, however read, becomes a `Play` handed to
        the server's `act`."""
        server = self.server
        now = time.monotonic()
        # Benchmarks: one input in 16 is timed (reading the thread's CPU clock is a system
        # call, which would add to what is measured).
        timed = server.config.record_latency and not server.stats["messages_in"] % 16
        self.cpu0 = time.thread_time() if timed else 0.0
        try:
            if data and self.plain_reader and not self.closed and not LOG.isEnabledFor(logging.DEBUG):
                taken = self._plain(data, now)  # (with debug logs on, every message is read and logged)
                if taken < 0:  # over the message rate
                    self._end()
                    return
                if taken == len(data) and not self.closed:
                    return  # (all of it: nothing is buffered, the reader would find no more)
                data = data[taken:] if taken else data
            if data:
                self.conn.receive_data(data)
            while not self.closed:
                try:
                    ev = self.conn.next_event()
                except RemoteProtocolError as e:
                    server.violation(self, e.code, e.message)
                    break
                if ev is NEED_DATA:
                    return
                if not isinstance(ev, Message):
                    if isinstance(ev, ConnectionClosed):
                        break
                    continue  # the Greeting
                if not self.rate.take(now):
                    server.violation(self, ErrorCode.RATE_LIMITED,
                                     f"more than {server.config.max_rate} messages per second")
                    break
                server.stats["messages_in"] += 1
                if LOG.isEnabledFor(logging.DEBUG):
                    LOG.debug("%d << %s", self.id, ev.to_wire())
                if isinstance(ev, Hello):
                    self._busy = True
                    if self.transport is not None:
                        self.transport.pause_reading()
                    server.spawn(self._hello(ev))
                    return
                if type(ev) is Act or type(ev) is Turn or type(ev) is Resign:
                    server.act(self, Play.of(ev), now)
                else:
                    server.on_message(self, ev, now)
        except Exception:
            LOG.exception("%s: internal error", self)
            if self.bot is not None and self.conn.our_error is None and not self.closed:
                self.queue(Error(code=ErrorCode.INTERNAL_ERROR.value,
                                 message="internal error; please report"))
                self.flush()
        self._end()

    def _plain(self, data: bytes, now: float) -> int:
        """The plain acts and turns at the front of `data` handed on: bytes taken (-1: over rate)."""
        server, conn = self.server, self.conn
        pos, n = 0, len(data)
        while pos < n and not self.closed:
            got = conn.plain(data, pos)
            if got is None:
                break
            p = server.plain_play(self, got[0], got[1])
            if p is None:
                break
            pos = got[2]
            if not self.rate.take(now):
                server.violation(self, ErrorCode.RATE_LIMITED,
                                 f"more than {server.config.max_rate} messages per second")
                return -1
            server.stats["messages_in"] += 1
            server.act(self, p, now)
        return pos

    async def _hello(self, h: Hello) -> None:
        try:
            await self.server.hello(self, h)
        except Exception:
            LOG.exception("%s: internal error", self)
            self._end()
            return
        finally:
            self._busy = False
        if self._ended:
            return
        if self.transport is not None and not self.transport.is_closing():
            self.transport.resume_reading()
        if self.bot is None and self._hello_late:
            LOG.info("%s: no hello in time; closing", self)
            self._end()
            return
        self._process()

    def _hello_expired(self) -> None:
        self._hello_timer = None
        if self.bot is not None or self._ended:
            return
        if self._busy:
            self._hello_late = True
            return
        LOG.info("%s: no hello in time; closing", self)
        self._end()

    def _end(self) -> None:
        """The connection is over for the server (EOF, fatal error, no hello in time)."""
        if self._ended:
            return
        self._ended = True
        if self._hello_timer is not None:
            self._hello_timer.cancel()
            self._hello_timer = None
        self.server.spawn(self.server.ended(self))

    async def linger_and_close(self) -> None:
        """Close gracefully after a fatal error: end our side (so the error is delivered and
        not lost to a reset caused by unread input), discard input until the peer closes or
        LINGER_S pass."""
        t = self.transport
        if t is None or t.is_closing():
            return
        with contextlib.suppress(Exception):
            if t.can_write_eof():
                t.write_eof()
        if self.peer_gone:
            return
        with contextlib.suppress(Exception):
            t.resume_reading()
        end = time.monotonic() + LINGER_S
        while not self.peer_gone and not t.is_closing() and time.monotonic() < end:
            await asyncio.sleep(0.05)

    # -- output -------------------------------------------------------------------------
    @property
    def closing(self) -> bool:
        """No new game may start on this connection: we closed it or stopped sending (after
        a fatal error), its peer has sent EOF or vanished, or the transport is closing."""
        return self.closed or self.peer_gone or self.transport is None or self.transport.is_closing()

    def rtt_ms(self) -> float:
        """The TCP connection's minimum round-trip time as the kernel measured it (0 if
        unknown; see rtt.py), read again at most every RTT_READ_S (and after
        `forget_rtt`)."""
        now = time.monotonic()
        if now - self._rtt_at >= RTT_READ_S:
            self._rtt = min_rtt_ms(self.sock) + self.extra_rtt_ms
            self._rtt_at = now
        return self._rtt

    def forget_rtt(self) -> None:
        """Read the round-trip time afresh on the next `rtt_ms`."""
        self._rtt_at = -math.inf

    def queue(self, msg: Message) -> None:
        """Encode `msg` for this connection (written on flush)."""
        if self.closed:
            return
        try:
            self.out.append(self.conn.send(msg))
        except LocalProtocolError as e:
            self.not_sent(e, msg.TYPE)
            return
        if LOG.isEnabledFor(logging.DEBUG):
            LOG.debug("%d >> %s %s", self.id, getattr(msg, "game_id", "-"), msg.to_wire())

    def not_sent(self, e: LocalProtocolError, what: str = "a game's message") -> None:
        """The connection refused to send a message (`e`)."""
        if self.peer_gone:  # its EOF closed the connection: a game's last messages go nowhere
            LOG.debug("%s is gone; %s not sent", self, what)
        else:  # a server bug: never send a bad message
            LOG.error("%s cannot send %s: %s", self, what, e)

    def flush(self) -> None:
        if not self.out or self.closed:
            self.out.clear()
            return
        data = b"".join(self.out) if len(self.out) > 1 else self.out[0]
        self.out.clear()
        t = self.transport
        if t is None or t.is_closing():
            self.close()
            return
        try:
            t.write(data)
        except (ConnectionError, RuntimeError):
            self.close()
            return
        if t.get_write_buffer_size() > self.server.config.max_out_buffer:
            LOG.warning("%s does not read its messages; dropping it", self)
            self.close()

    def close(self) -> None:
        """Close the socket. Idempotent, and independent of `closed`, which only says that
        nothing more may be sent (set early by the server's drop and after fatal errors)."""
        self.closed = True
        if self.transport is not None:
            with contextlib.suppress(Exception):
                self.transport.close()
