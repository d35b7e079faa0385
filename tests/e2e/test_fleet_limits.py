"""The abuse limits of a bot hold across the referees that share a database (several `maag
serve` behind one address): a second connection to another referee is refused while the first
lives, and let in once it has ended; the rows of a referee that died go with its lease; the
games a bot started on one referee count towards its games per minute on the others, and so do
failed logins towards the login delay. On SQLite (one file, two referees) and on a real
PostgreSQL."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from maag.server.net.server import RefereeServer, ServerConfig
from maag.server.storage.base import open_storage

from .conftest import Raw, until
from .test_hostile import fatal

Make = Callable[..., Awaitable[RefereeServer]]


@pytest.fixture(params=["sqlite", "postgresql"])
async def fleet(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[tuple[Make, str]]:
    url = (str(tmp_path / "fleet.sqlite3") if request.param == "sqlite"
           else request.getfixturevalue("postgres_db"))
    servers: list[RefereeServer] = []

    async def make(**kw: Any) -> RefereeServer:
        srv = RefereeServer(ServerConfig(port=0, auto_pair=False, lease_s=1.5, **kw), open_storage(url))
        await srv.start()
        servers.append(srv)
        return srv

    yield make, url
    for srv in servers:
        await srv.stop()


def add_bot(url: str, name: str) -> str:
    st = open_storage(url)
    try:
        return st.add_bot(name)
    finally:
        st.close()


def rows(url: str) -> list[tuple[Any, ...]]:
    st = open_storage(url)
    try:
        return st.db.query("SELECT server, bot FROM connections")
    finally:
        st.close()


async def test_one_connection_per_bot_across_referees(fleet: tuple[Make, str]) -> None:
    make, url = fleet
    a, b = await make(), await make()
    token = add_bot(url, "twin")
    first = await Raw.connect(a.port)
    await first.hello(token, "twin")
    second = await Raw.connect(b.port)  # the other referee behind the same address
    second.send({"type": "hello", "name": "twin", "token": token, "games": ["heroes"]})
    await fatal(second, "already_connected")
    first.send({"type": "ping", "id": "still here"})  # the first connection is kept
    assert (await first.recv_type("pong"))["id"] == "still here"
    first.close()
    await until(lambda: rows(url) == [])  # its row went with it
    third = await Raw.connect(b.port)
    await third.hello(token, "twin")
    assert [r[1] for r in rows(url)] == ["twin"]
    third.close()


@pytest.mark.parametrize("how", ["stop", "kill"])
async def test_a_dead_referees_connections_stop_counting_when_its_lease_lapses(
        fleet: tuple[Make, str], tmp_path: Path, how: str) -> None:
    """stop (SIGSTOP, a machine frozen or cut off): its database session lingers, its
    connections count until its lease lapses; kill (-9): on PostgreSQL its session ends with
    it, and its connections stop counting at once (storage/base.py session_gone)."""
    make, url = fleet
    b = await make()
    token = add_bot(url, "twin")
    port_file = tmp_path / "a.port"
    a = subprocess.Popen([sys.executable, "-m", "maag.server", "serve", "--db", url, "--port", "0",
                          "--port-file", str(port_file), "--lease", "5", "-q"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        await until(lambda: port_file.exists() and port_file.read_text().strip() != "")
        first = await Raw.connect(int(port_file.read_text()))
        await first.hello(token, "twin")
        if how == "kill":
            a.kill()  # -9: its rows stay in the database, its lease lapses within 5 s
            a.wait()
        else:
            a.send_signal(signal.SIGSTOP)
        t0 = time.monotonic()
        refused = 0
        while True:
            again = await Raw.connect(b.port)
            again.send({"type": "hello", "name": "twin", "token": token, "games": ["heroes"]})
            m = await again.recv()
            if m is not None and m["type"] == "welcome":
                break
            assert m is not None and m["code"] == "already_connected", m
            refused += 1
            assert time.monotonic() - t0 < 30, "the dead referee's connection still counts"
            await asyncio.sleep(0.2)
        if how == "kill" and url.startswith("postgresql"):
            assert time.monotonic() - t0 < 2.5, "a killed referee's connection counted until its lease lapsed"
        else:
            assert refused >= 1  # counted while the dead referee's lease was alive
        again.close()
    finally:
        if a.poll() is None:
            a.kill()
        a.wait()


async def test_games_per_minute_and_failed_logins_count_across_referees(fleet: tuple[Make, str]) -> None:
    make, url = fleet
    a = await make(max_games_per_minute=1, auth_delay_ms=1.0)
    b = await make(max_games_per_minute=1, auth_delay_ms=1.0)
    players = []
    for name in ("p", "q"):
        raw = await Raw.connect(a.port)
        await raw.hello(add_bot(url, name), name)
        players.append(raw)
    a.request_game("p", "q")
    await until(lambda: bool(a.games))
    # The other referee learns of the game (within a third of its lease) and counts it.
    await until(lambda: {"p", "q"} <= set(b.lobby.elsewhere))
    assert not b.lobby.games_left("p", time.monotonic()) and not b.lobby.games_left("q", time.monotonic())
    assert b.lobby.games_left("someone else", time.monotonic())
    for _ in range(3):
        intruder = await Raw.connect(a.port)
        intruder.send({"type": "hello", "name": "intruder", "token": "maag_guessed", "games": ["heroes"]})
        await fatal(intruder, "auth_failed")
    # A fourth failure, on the other referee, waits as a fourth: 1 ms doubled three times.
    assert await b.fleet.auth_delay(["address 127.0.0.1", "name intruder"]) == 0.008
    for raw in players:
        raw.close()
