"""Helpers of the SDK tests: a scripted server (python-chess's MockTransport, kept out of the
package: `expect(message, replies)` in order, then `assert_done()`), and a socket for a bot
process to inherit that reaches a real referee (`fd_to_referee`), with the environment a
sandboxed bot gets (`sandbox_env`)."""

from __future__ import annotations

import asyncio
import os
import socket
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from maag.clients import Transport
from maag.protocol import (
    NEED_DATA,
    Connection,
    ConnectionClosed,
    Event,
    Greeting,
    Hello,
    Message,
    ProtocolError,
    Role,
    Welcome,
)

Matcher = Any  # an Event to compare with, or a predicate on the received Event


class ScriptedTransport(Transport):
    """Plays the server: each client message must match the next expectation (an equal
    event, or a predicate); its replies (messages, ConnectionClosed for EOF, or raw bytes)
    are then delivered to the client. Mismatches are collected and raised by assert_done."""

    def __init__(self) -> None:
        self.server = Connection(Role.SERVER)
        self.expectations: deque[tuple[Matcher, Sequence[Any]]] = deque()
        self.inbox: asyncio.Queue[bytes] = asyncio.Queue()
        self.received: list[Event] = []
        self.failures: list[str] = []
        self.closed = False

    def expect(self, msg: Matcher, replies: Sequence[Any] = ()) -> None:
        self.expectations.append((msg, replies))

    def expect_login(self, encoding: str = "msgpack", replies: Sequence[Any] = (),
                     hello: Matcher | None = None) -> None:
        self.expect(Greeting(encoding=encoding))
        welcome = Welcome(bot="tester", server="scripted", max_frame=1 << 20)
        self.expect(hello or (lambda m: isinstance(m, Hello)), [welcome, *replies])

    def push(self, *replies: Any) -> None:
        for r in replies:
            if isinstance(r, bytes):
                self.inbox.put_nowait(r)
            elif isinstance(r, ConnectionClosed):
                self.inbox.put_nowait(b"")
            else:
                self.inbox.put_nowait(self.server.send(r))

    # -- Transport ---------------------------------------------------------------------------
    async def read(self) -> bytes:
        return await self.inbox.get()

    def write(self, data: bytes) -> None:
        self.server.receive_data(data)
        while True:
            try:
                ev = self.server.next_event()
            except ProtocolError as e:
                self.failures.append(f"client broke the protocol: {e}")
                return
            if ev is NEED_DATA:
                return
            assert not isinstance(ev, type(NEED_DATA))
            self.received.append(ev)
            if not self.expectations:
                self.failures.append(f"unexpected {ev!r}")
                continue
            want, replies = self.expectations.popleft()
            ok = want(ev) if callable(want) and not isinstance(want, (Message, Greeting)) else want == ev
            if not ok:
                self.failures.append(f"expected {want!r}, got {ev!r}")
            self.push(*replies)

    def close(self) -> None:
        self.closed = True
        self.inbox.put_nowait(b"")

    def assert_done(self) -> None:
        assert not self.failures, self.failures
        assert not self.expectations, f"still expected: {list(self.expectations)}"


async def fd_to_referee(port: int) -> tuple[socket.socket, asyncio.Task[None]]:
    """One end of a socket pair for a bot process to inherit, the other relayed to the
    referee's TCP port (the referee runs unchanged; the bot has no network of its own)."""
    ours, bots = socket.socketpair()
    r1, w1 = await asyncio.open_connection(sock=ours)
    r2, w2 = await asyncio.open_connection("127.0.0.1", port)

    async def pump(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        while data := await r.read(65536):
            w.write(data)
            await w.drain()

    async def relay() -> None:
        try:
            await asyncio.wait([asyncio.ensure_future(pump(r1, w2)), asyncio.ensure_future(pump(r2, w1))],
                               return_when=asyncio.FIRST_COMPLETED)
        finally:
            w1.close()
            w2.close()

    return bots, asyncio.create_task(relay())


def sandbox_env(home: Path, connect: str, token: str, bot: str) -> dict[str, str]:
    """What a sandboxed bot's environment holds, and no more."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "TMPDIR": str(home),
            "LANG": "C.UTF-8", "MAAG_CONNECT": connect, "MAAG_TOKEN": token, "MAAG_BOT": bot,
            "MAAG_CONCURRENCY": "1", "MAAG_GAME": "nim"}
