"""End-to-end helpers: a real referee on 127.0.0.1 (in the test's event loop, or as its own
process), real bot processes (the referee's minibot), and a raw socket client that can
send anything at all and reads the server's frames."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import struct
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import msgpack
import pytest
from maag.server.net.server import RefereeServer, ServerConfig
from maag.server.referee.clock import TimeControl
from maag.server.storage.base import SQLiteStorage

WAIT = 30.0  # safety net against hangs only; nothing is asserted about speed


class Raw:
    """A client that writes raw bytes and decodes the server's frames."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, encoding: str) -> None:
        self.reader, self.writer, self.encoding = reader, writer, encoding
        self.received: list[bytes] = []  # every frame's bytes, in order (for byte comparisons)

    @classmethod
    async def connect(cls, port: int, encoding: str | None = "json") -> Raw:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        raw = cls(reader, writer, encoding or "json")
        if encoding is not None:
            raw.send_raw(f"MAAG 1 {encoding}\n".encode())
        return raw

    def send_raw(self, data: bytes) -> None:
        self.writer.write(data)

    def send(self, msg: dict[str, Any], *, v: bool = True) -> None:
        if v:
            msg = {"v": 1, **msg}
        if self.encoding == "json":
            self.send_raw(json.dumps(msg).encode() + b"\n")
        else:
            body = msgpack.packb(msg)
            self.send_raw(struct.pack(">I", len(body)) + body)

    async def recv(self, timeout: float = WAIT) -> dict[str, Any] | None:
        """The next message, or None at end of stream."""
        try:
            if self.encoding == "json":
                line = await asyncio.wait_for(self.reader.readline(), timeout)
                if not line:
                    return None
                self.received.append(line)
                return json.loads(line)  # type: ignore[no-any-return]
            head = await asyncio.wait_for(self.reader.readexactly(4), timeout)
            body = await asyncio.wait_for(self.reader.readexactly(struct.unpack(">I", head)[0]), timeout)
            self.received.append(head + body)
            return msgpack.unpackb(body)  # type: ignore[no-any-return]
        except asyncio.IncompleteReadError:
            return None

    async def recv_type(self, *types: str, timeout: float = WAIT) -> dict[str, Any]:
        """Skip messages until one of `types` arrives."""
        while True:
            m = await self.recv(timeout)
            assert m is not None, f"connection closed while waiting for {types}"
            if m["type"] in types:
                return m

    async def closed(self, timeout: float = WAIT) -> list[dict[str, Any]]:
        """Read until the server closes the connection; returns what came before."""
        out = []
        while True:
            m = await self.recv(timeout)
            if m is None:
                return out
            out.append(m)

    async def hello(self, token: str, name: str = "raw", **kw: Any) -> dict[str, Any]:
        self.send({"type": "hello", "name": name, "token": token, "games": ["heroes"], **kw})
        m = await self.recv()
        assert m is not None and m["type"] == "welcome", m
        return m

    def close(self) -> None:
        self.writer.close()


MakeServer = Callable[..., Awaitable[RefereeServer]]


@pytest.fixture
async def referee(tmp_path: Path) -> AsyncIterator[MakeServer]:
    """A factory of started referees on 127.0.0.1 (stopped after the test)."""
    servers: list[RefereeServer] = []

    async def make(db: Path | None = None, **kw: Any) -> RefereeServer:
        kw.setdefault("tc", TimeControl.parse("2s"))
        kw.setdefault("auto_pair", False)
        srv = RefereeServer(
            ServerConfig(port=0, **kw), SQLiteStorage(db or tmp_path / f"r{len(servers)}.sqlite3")
        )
        await srv.start()
        servers.append(srv)
        return srv

    yield make
    for s in servers:
        await s.stop()


def token_for(srv: RefereeServer, name: str) -> str:
    token = "t_" + secrets.token_hex(8)
    srv.add_token(token, name)
    return token


async def spawn_agent(port: int, token: str, *args: str, capture: bool = False) -> asyncio.subprocess.Process:
    """A bundled agent as a bot process (`maag bot run ARGS --connect ...`, the token in
    $MAAG_TOKEN); its output is piped when `capture`, else discarded."""
    out = asyncio.subprocess.PIPE if capture else asyncio.subprocess.DEVNULL
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "maag.server", "bot", "run", *args, "--connect", f"127.0.0.1:{port}",
        stdout=out, stderr=out, env={**os.environ, "MAAG_TOKEN": token})


async def spawn_minibot(port: int, token: str, *args: str) -> asyncio.subprocess.Process:
    """A real bot process (the referee's minibot)."""
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "maag.server.net.minibot",
        "--connect",
        f"127.0.0.1:{port}",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "MAAG_TOKEN": token},
    )


async def stop_process(p: asyncio.subprocess.Process) -> None:
    if p.returncode is None:
        p.kill()
    await p.wait()


async def until(pred: Callable[[], bool], timeout: float = WAIT) -> None:
    """Wait (polling) until `pred()` holds; fails the test after `timeout` as a hang guard."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not pred():
        assert loop.time() < end, "condition not reached (hang guard)"
        await asyncio.sleep(0.01)
