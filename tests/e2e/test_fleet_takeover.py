"""Referees on one PostgreSQL and one port (`maag serve --reuse-port`) survive the loss of one
of them: real processes, bots written with the SDK that reconnect on their own
(`reconnect_s`, as `maag bot run --reconnect`; tests/e2e/pacing_bot.py).

- killed (-9) while hosting games: another referee takes them over, rebuilds them from the
  action log and finishes them with the bots, which reconnect to the same address; the
  stored replays re-simulate; no game has two results; every `game_over` a bot was told is
  a stored result; stopped (SIGTERM): the same, with its games handed over;
- killed (-9) with a lease far longer than the bots' patience: the bots get their game back at
  once (a referee whose database session ended is gone, its lease or not), it finishes
  normally, and nothing is lost or rated for the death;
- paused (SIGSTOP) for three leases while another takes its games, then woken: nothing it
  writes is accepted (no result, no action, no game row), and it stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from maag.server.referee.replay import resimulate
from maag.server.storage.base import open_storage

from .conftest import stop_process, until

LEASE_S = 1.0
BOT = str(Path(__file__).with_name("pacing_bot.py"))  # random actions, 40 ms apart; reconnects


def q(url: str, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as conn:
        return conn.execute(sql, args).fetchall()  # type: ignore[arg-type]


class Fleet:
    """`maag serve` processes on one database, listening on one port (--reuse-port)."""

    def __init__(self, url: str, tmp: Path) -> None:
        self.url, self.tmp = url, tmp
        self.port = 0
        self.procs: list[subprocess.Popen[bytes]] = []
        self.bots: list[asyncio.subprocess.Process] = []

    def serve(self, lease_s: float = LEASE_S, turns: int = 20) -> subprocess.Popen[bytes]:
        """One more referee; returns once it listens (and holds its lease)."""
        n = len(self.procs)
        port_file = self.tmp / f"ref{n}.port"
        before = len(q(self.url, "SELECT id FROM servers"))
        args = ["--db", self.url, "--reuse-port", "--port", str(self.port), "--port-file", str(port_file),
                "--map", "a-tiny", "--option", f"turn_limit={turns}", "--tc", "5s", "--grace", "20s",
                "--lease", str(lease_s), "--max-games-per-minute", "0",
                "--spill-dir", str(self.tmp / f"spill{n}")]
        p = subprocess.Popen([sys.executable, "-m", "maag.server", "serve", *args, "-q"],
                             stdout=subprocess.DEVNULL, stderr=open(self.tmp / f"ref{n}.log", "wb"))  # noqa: SIM115
        self.procs.append(p)
        deadline = time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text().strip()):
            assert p.poll() is None and time.monotonic() < deadline, "the referee did not start"
            time.sleep(0.05)
        self.port = int(port_file.read_text())
        assert len(q(self.url, "SELECT id FROM servers")) == before + 1
        return p

    def server_id(self, p: subprocess.Popen[bytes]) -> str:
        rows = q(self.url, "SELECT id FROM servers WHERE name LIKE %s", f"% pid {p.pid}")
        assert len(rows) == 1
        return str(rows[0][0])

    async def bots_up(self, n: int, concurrency: int) -> None:
        st = open_storage(self.url)
        try:
            tokens = [st.add_bot(f"bot{i}") for i in range(n)]
        finally:
            st.close()
        for i, t in enumerate(tokens):
            with open(self.tmp / f"bot{i}.log", "wb") as log:  # a pipe nobody reads would block it
                self.bots.append(await asyncio.create_subprocess_exec(
                    sys.executable, BOT, f"127.0.0.1:{self.port}", "--concurrency", str(concurrency),
                    "--delay-ms", "40", "--reconnect", "60", stdout=asyncio.subprocess.DEVNULL, stderr=log,
                    env={**os.environ, "MAAG_TOKEN": t}))

    async def told(self) -> dict[int, str]:
        """Stop the bots; every game_over they were told: game id -> what they logged."""
        out: dict[int, str] = {}
        for b in self.bots:
            await stop_process(b)
        for i in range(len(self.bots)):
            err = (self.tmp / f"bot{i}.log").read_bytes()
            for m in re.finditer(rb"game (\d+) over: ([^\n]*)", err):
                out[int(m.group(1))] = m.group(2).decode()
        return out

    def close(self) -> None:
        for p in self.procs:
            with contextlib.suppress(ProcessLookupError):
                os.kill(p.pid, signal.SIGCONT)
            if p.poll() is None:
                p.kill()
            p.wait()


@pytest.fixture
async def fleet(postgres_db: str, tmp_path: Path) -> AsyncIterator[Fleet]:
    open_storage(postgres_db).close()  # the schema, before anyone reads it
    f = Fleet(postgres_db, tmp_path)
    try:
        yield f
    finally:
        for b in f.bots:
            await stop_process(b)
        f.close()


def running_on(url: str, server: str) -> list[int]:
    return [int(r[0]) for r in q(url, "SELECT id FROM games WHERE status = 'running' AND server = %s",
                                 server)]


def all_over(url: str, ids: list[int]) -> bool:
    return not q(url, "SELECT id FROM games WHERE id = ANY(%s) AND status = 'running'", ids)


def check_told(url: str, told: dict[int, str]) -> None:
    """Every game_over a bot was told is a stored result (its winner as told)."""
    stored = {int(r[0]): r[1] for r in q(url, "SELECT game_id, winner FROM results")}
    for gid, text in told.items():
        assert gid in stored, f"game {gid}: a bot was told it is over ({text}), but no result is stored"
        w = stored[gid]
        assert text.startswith("aborted" if w is None else "a draw" if w == -1 else f"won by seat {w + 1}"), (
            gid, text, w)


@pytest.mark.parametrize("how", ["kill", "stop"])
async def test_a_killed_or_stopped_referees_games_finish_on_another(fleet: Fleet, how: str) -> None:
    """kill: -9, no goodbye, its games taken over once its lease lapses; stop: SIGTERM, it
    hands its games over (its log written whole, its lease given up at once)."""
    url = fleet.url
    a = fleet.serve()
    await fleet.bots_up(10, 5)  # 50 seats: 25 games at once, all on the only referee
    a_id = fleet.server_id(a)
    await until(lambda: len(q(url, "SELECT id FROM games WHERE status = 'running' AND server = %s "
                                   "AND logged > 4", a_id)) >= 25, 60)
    fleet.serve()
    fleet.serve()
    hosted = running_on(url, a_id)
    a.send_signal(signal.SIGKILL if how == "kill" else signal.SIGTERM)
    killed_at = time.monotonic()
    assert a.wait(30) == (-signal.SIGKILL if how == "kill" else 0)
    await until(lambda: not q(url, "SELECT id FROM games WHERE server = %s AND status = 'running'", a_id), 30)
    taken_after = time.monotonic() - killed_at
    await until(lambda: all_over(url, hosted), 90)
    over_after = time.monotonic() - killed_at
    told = await fleet.told()
    rows = q(url, "SELECT g.id, g.status, g.epoch, r.reason, r.winner, r.server FROM games g "
                  "LEFT JOIN results r ON r.game_id = g.id WHERE g.id = ANY(%s)", hosted)
    finished = [r for r in rows if r[1] == "finished"]
    aborted = [r for r in rows if r[1] == "aborted"]
    print(f"\n{how}: the referee hosted {len(hosted)} games; taken over within {taken_after:.1f} s; "
          f"{len(finished)} finished elsewhere, {len(aborted)} aborted; all over {over_after:.1f} s after "
          "the kill")
    assert len(finished) + len(aborted) == len(hosted)
    assert len(finished) >= 0.95 * len(hosted), rows
    assert all(r[2] >= 1 and r[5] != a_id for r in finished)  # stored by the referee that took it
    assert all(r[3] == "aborted" and r[4] is None for r in aborted)  # not rated
    assert q(url, "SELECT game_id FROM results GROUP BY game_id HAVING COUNT(*) > 1") == []
    st = open_storage(url)
    try:
        for gid, *_ in finished:
            replay = st.get_replay(gid)
            assert replay is not None
            check = resimulate(replay)
            assert check.reason != "aborted"
    finally:
        st.close()
    cli = subprocess.run([sys.executable, "-m", "maag.server", "replay", str(finished[0][0]), "--db", url],
                         capture_output=True, text=True, timeout=60)
    assert cli.returncode == 0, cli.stderr
    assert q(url, "SELECT COUNT(*) FROM game_actions WHERE game_id = ANY(%s)", hosted) == [(0,)]
    check_told(url, told)


async def test_a_paused_referee_stores_nothing_once_awake(fleet: Fleet) -> None:
    url = fleet.url
    a = fleet.serve()
    await fleet.bots_up(4, 2)
    a_id = fleet.server_id(a)
    await until(lambda: len(q(url, "SELECT id FROM games WHERE status = 'running' AND server = %s "
                                   "AND logged > 4", a_id)) >= 3, 60)
    b = fleet.serve()
    b_id = fleet.server_id(b)
    os.kill(a.pid, signal.SIGSTOP)
    hosted = running_on(url, a_id)
    await asyncio.sleep(3 * LEASE_S)
    # Its lease lapsed; the other referee revoked it and took its games (no bot of them is
    # connected there yet: they still hold their connections to the paused one).
    await until(lambda: q(url, "SELECT revoked FROM servers WHERE id = %s", a_id) == [(1,)], 10)
    assert not running_on(url, a_id) and set(hosted) <= set(running_on(url, b_id))
    before = snapshot(url, a_id)
    os.kill(a.pid, signal.SIGCONT)
    assert a.wait(30) == 3  # it finds its lease revoked, drops its games and stops
    assert "lease lost" in (fleet.tmp / "ref0.log").read_text()
    after = snapshot(url, a_id)  # nothing more of it (the taken games' logs go as they end)
    assert all(x <= y for x, y in zip(after, before, strict=True)), (before, after)
    await until(lambda: all_over(url, hosted), 60)
    assert snapshot(url, a_id)[0] == before[0]
    told = await fleet.told()
    check_told(url, told)
    rows = q(url, "SELECT g.id, r.server FROM games g JOIN results r ON r.game_id = g.id "
                  "WHERE g.id = ANY(%s)", hosted)
    assert len(rows) == len(hosted) and all(r[1] == b_id for r in rows)


def snapshot(url: str, server: str) -> tuple[frozenset[Any], ...]:
    """What `server` wrote: its results, the game rows it made or holds, its logged batches
    (epoch 0: its games were never taken over before)."""
    return (frozenset(q(url, "SELECT game_id FROM results WHERE server = %s", server)),
            frozenset(q(url, "SELECT id FROM games WHERE server = %s", server)),
            frozenset(q(url, "SELECT game_id, seq FROM game_actions WHERE epoch = 0")))


@pytest.mark.parametrize("how", ["kill", "stop"])
async def test_a_killed_referees_game_comes_back_at_once_whatever_the_lease(fleet: Fleet, how: str) -> None:
    """Issue 56: with a lease of 30 s, a bot reconnecting after its referee's kill -9 was
    refused until the lease lapsed, then its game was not given back and counted lost. stop:
    SIGTERM just after a peer started (within its third of a lease between renewals): the
    referee counted no peer and aborted its games instead of handing them over."""
    url = fleet.url
    a = fleet.serve(lease_s=30, turns=40)
    await fleet.bots_up(2, 1)
    a_id = fleet.server_id(a)
    await until(lambda: len(q(url, "SELECT id FROM games WHERE status = 'running' AND server = %s "
                                   "AND logged > 4", a_id)) >= 1, 60)
    b = fleet.serve(lease_s=30, turns=40)
    b_id = fleet.server_id(b)
    hosted = running_on(url, a_id)
    a.send_signal(signal.SIGKILL if how == "kill" else signal.SIGTERM)
    killed_at = time.monotonic()
    assert a.wait(30) == (-signal.SIGKILL if how == "kill" else 0)
    # Taken over by the live referee long before the lease could lapse, and played on there.
    await until(lambda: set(hosted) <= set(running_on(url, b_id)) or all_over(url, hosted), 10)
    await until(lambda: all_over(url, hosted), 30)
    print(f"\n{how}: over {time.monotonic() - killed_at:.1f} s after the signal (lease 30 s)")
    rows = q(url, "SELECT g.id, g.status, r.reason, r.verdict, r.server FROM games g "
                  "JOIN results r ON r.game_id = g.id WHERE g.id = ANY(%s)", hosted)
    assert len(rows) == len(hosted), rows
    for _gid, status, reason, verdict, server in rows:
        assert status == "finished" and server == b_id, rows
        assert reason not in ("aborted", "disconnect", "time", "protocol") and verdict is None, rows
    told = await fleet.told()
    assert set(hosted) <= set(told), told
    check_told(url, told)
    for i in range(len(fleet.bots)):
        assert b"not given back" not in (fleet.tmp / f"bot{i}.log").read_bytes()
