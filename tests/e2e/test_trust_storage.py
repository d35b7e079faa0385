"""Storage that survives its database, and several referees on one database.

Every test has a PostgreSQL cluster of its own, which it stops and starts (a restart cuts
every connection), and real bot processes:
- a referee whose database restarts: the games finished meanwhile are stored once it is
  back, a bot that connects meanwhile is told `unavailable`, pairing pauses and resumes;
- a ladder across a database restart: no finished game lost, none counted twice, and the
  log says so in a few lines, not thousands;
- a database that stays away: `maag serve` exits with status 3, its results wait in the
  spill directory, and the next server stores them;
- two `maag serve` on one database, one killed with -9 mid-game: the other plays on, the
  dead one's game is aborted only after its lease lapses, and a restarted server plays again.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from maag.server.compete.ladder import Ladder
from maag.server.compete.ladder_report import ladder_match_id
from maag.server.net.server import RefereeServer, ServerConfig
from maag.server.referee.clock import TimeControl
from maag.server.storage.base import open_storage

from .conftest import Raw, spawn_minibot, stop_process, until

MAAG = [sys.executable, "-m", "maag.server"]


def stored(url: str, **kw: Any) -> list[Any]:
    st = open_storage(url)
    try:
        return st.list_games(limit=10**6, **kw)
    finally:
        st.close()


def results_count(url: str) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT count(*) FROM results").fetchone()
        return int(row[0]) if row else 0


def add_bots(url: str, *names: str) -> list[str]:
    st = open_storage(url)
    try:
        return [st.add_bot(n) for n in names]
    finally:
        st.close()


async def test_a_database_restart_loses_no_result_and_pairing_resumes(private_postgres: Any,
                                                                      tmp_path: Path) -> None:
    pg = private_postgres
    tokens = add_bots(pg.url, "p1", "p2", "late")
    cfg = ServerConfig(port=0, game_config={"map": "a-tiny"}, tc=TimeControl.parse("2s"), lease_s=3.0,
                       storage_outage_limit_s=120.0, spill_dir=str(tmp_path / "spill"))
    srv = RefereeServer(cfg, open_storage(pg.url))
    await srv.start()
    bots = [await spawn_minibot(srv.port, t, "--delay", "20", "--concurrency", "2") for t in tokens[:2]]
    try:
        await until(lambda: srv.stats["games_finished"] >= 1, timeout=120)
        await until(lambda: bool(srv.games), timeout=120)  # a game in progress through the outage
        pg.stop()
        finished_before = srv.stats["games_finished"]
        # Games in progress go on without the database; their results wait.
        await until(lambda: srv.stats["games_finished"] > finished_before and bool(srv.keeper.pending),
                    timeout=120)
        assert not srv.storage_ok
        late = await Raw.connect(srv.port)
        late.send({"type": "hello", "name": "late", "token": tokens[2], "games": ["heroes"]})
        assert [m["code"] for m in await late.closed() if m["type"] == "error"] == ["unavailable"]
        started_while_down = srv.stats["games_started"]
        await asyncio.sleep(1.0)
        assert srv.stats["games_started"] == started_while_down  # pairing paused
        pg.start()
        await until(lambda: srv.storage_ok and not srv.keeper.pending, timeout=120)
        await until(lambda: srv.stats["games_started"] > started_while_down, timeout=120)  # resumed
        await until(lambda: srv.stats["games_finished"] >= srv.stats["games_started"] - 4, timeout=120)
    finally:
        for b in bots:
            await stop_process(b)
        await srv.stop()
    games = stored(pg.url)
    finished = [g for g in games if g.status == "finished"]
    assert len(finished) >= finished_before + 1
    assert results_count(pg.url) == len([g for g in games if g.status != "running"])
    assert not any(g.status == "running" for g in games)
    assert not list((tmp_path / "spill").glob("*.jsonl"))  # nothing left waiting


async def test_a_ladder_across_a_database_restart(private_postgres: Any, tmp_path: Path,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    pg = private_postgres
    tokens = add_bots(pg.url, "l1", "l2", "l3")
    cfg = ServerConfig(port=0, game_config={"map": "a-tiny"}, tc=TimeControl.parse("2s"), lease_s=3.0,
                       storage_outage_limit_s=120.0, spill_dir=str(tmp_path / "spill"))
    ladder = Ladder(pg.url, cfg, name="restart", per_bot=1, seed=None)
    await ladder.start()
    runner = asyncio.ensure_future(ladder.run())
    bots = [await spawn_minibot(ladder.port, t, "--delay", "20") for t in tokens]  # a game lasts 4 s or more
    try:
        await until(lambda: ladder.finished >= 1, timeout=120)  # stored before the outage
        assert ladder.server is not None
        srv = ladder.server
        await until(lambda: bool(srv.games), timeout=120)  # a game in progress through the outage
        caplog.clear()
        with caplog.at_level(logging.INFO):
            pg.stop()
            at_stop = ladder.finished
            await until(lambda: bool(srv.keeper.pending), timeout=120)
            await asyncio.sleep(3.0)
            lines_while_down = len(caplog.records)
            pg.start()
            await until(lambda: srv.storage_ok and not srv.keeper.pending, timeout=120)
            # The game played through the outage, then one paired after it (pairing resumed).
            await until(lambda: ladder.finished >= at_stop + 2, timeout=120)
        ladder.stop()
        await asyncio.wait_for(runner, 120)
    finally:
        for b in bots:
            await stop_process(b)
        if not runner.done():
            runner.cancel()
    # A few lines for a few seconds of outage, not a flood (before: 36,245 failed creations).
    assert lines_while_down < 60, [r.getMessage() for r in caplog.records][:80]
    games = stored(pg.url, match_id=ladder_match_id("restart"))
    assert not any(g.status == "running" for g in games)
    assert len(ladder.outcomes) == len([g for g in games if g.status == "finished"])
    assert results_count(pg.url) == len([g for g in games if g.status != "running"])


# The games of the referees started as processes: short (a draw after 8 turns, a couple of
# seconds with the bots' pauses), as what is tested is what a referee stores around its
# database's outage or its death, not how a game ends.
SHORT = ("--map", "a-tiny", "--option", "turn_limit=8")


def _serve(url: str, port_file: Path, spill: Path, *extra: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([*MAAG, "serve", "--db", url, "--port", "0", "--port-file", str(port_file),
                             *SHORT, "--tc", "2s", "--spill-dir", str(spill), "-q", *extra],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


async def _port(port_file: Path) -> int:
    await until(lambda: port_file.exists() and port_file.read_text().strip() != "", timeout=60)
    return int(port_file.read_text())


async def _gives_up_without_its_database(pg: Any, proc: subprocess.Popen[bytes], port_file: Path,
                                         tokens: list[str], *bot_args: str) -> None:
    """With bots playing on `proc` (`maag serve` or `maag ladder`, started with a short
    --storage-outage-limit), stop the database after a finished game: `proc` must exit with
    status 3 and say why."""
    bots = []
    try:
        port = await _port(port_file)
        bots = [await spawn_minibot(port, t, "--delay", "20", *bot_args) for t in tokens]
        await until(lambda: len(stored(pg.url, status="finished")) >= 1, timeout=120)
        pg.stop()
        await until(lambda: proc.poll() is not None, timeout=120)
        assert proc.returncode == 3
        assert b"storage unavailable for" in (proc.stderr.read() if proc.stderr else b"")
    finally:
        for b in bots:
            await stop_process(b)
        if proc.poll() is None:
            proc.kill()
        proc.wait()


async def test_a_database_away_too_long_exits_3_and_the_next_server_stores_the_results(
        private_postgres: Any, tmp_path: Path) -> None:
    pg = private_postgres
    tokens = add_bots(pg.url, "s1", "s2")
    spill = tmp_path / "spill"
    serve = _serve(pg.url, tmp_path / "port", spill, "--storage-outage-limit", "3")
    await _gives_up_without_its_database(pg, serve, tmp_path / "port", tokens, "--concurrency", "2")
    waiting = list(spill.glob("*.jsonl"))
    assert waiting, "the results of the games ended by the outage wait on disk"
    n_waiting = sum(len(p.read_text().splitlines()) for p in waiting)
    pg.start()
    before = len([g for g in stored(pg.url) if g.status != "running"])
    nxt = _serve(pg.url, tmp_path / "port2", spill)
    try:
        await _port(tmp_path / "port2")
        await until(lambda: not list(spill.glob("*.jsonl")), timeout=60)
    finally:
        nxt.send_signal(signal.SIGTERM)
        assert nxt.wait(60) == 0
    after = [g for g in stored(pg.url) if g.status != "running"]
    assert len(after) == before + n_waiting
    assert results_count(pg.url) == len(after)


async def test_two_servers_on_one_database_and_a_kill_9(private_postgres: Any, tmp_path: Path) -> None:
    pg = private_postgres
    tokens = add_bots(pg.url, "a1", "a2", "b1", "b2")
    spill = tmp_path / "spill"
    a = _serve(pg.url, tmp_path / "pa", spill, "--lease", "6")
    b = _serve(pg.url, tmp_path / "pb", spill, "--lease", "6", "--grace", "1s")
    procs: list[Any] = []
    try:
        pa, pb = await _port(tmp_path / "pa"), await _port(tmp_path / "pb")
        procs += [await spawn_minibot(pa, t, "--delay", "30") for t in tokens[:2]]
        procs += [await spawn_minibot(pb, t, "--delay", "30") for t in tokens[2:]]

        def running_of(seats: set[str]) -> list[Any]:
            return [g for g in stored(pg.url, status="running") if set(g.seats) == seats]

        await until(lambda: bool(running_of({"a1", "a2"})) and bool(running_of({"b1", "b2"})), timeout=120)
        a.kill()
        a.wait()
        victims = running_of({"a1", "a2"})
        assert victims  # not aborted at once: the lease (6 s) has not lapsed yet
        b_done = len([g for g in stored(pg.url, status="finished") if set(g.seats) == {"b1", "b2"}])
        # The other server plays on, and takes the dead one's game over once its lease lapses:
        # its bots do not come back (they do not reconnect), so it is aborted after the grace.
        await until(lambda: all(g.status == "aborted" for g in stored(pg.url)
                                if g.id in {v.id for v in victims}), timeout=120)
        await until(lambda: len([g for g in stored(pg.url, status="finished")
                                 if set(g.seats) == {"b1", "b2"}]) > b_done + 1, timeout=120)
        assert not any(g.status == "aborted" and set(g.seats) == {"b1", "b2"} for g in stored(pg.url))
        # A restarted server plays again.
        for p in procs[:2]:
            await stop_process(p)
        a = _serve(pg.url, tmp_path / "pa2", spill, "--lease", "6")
        pa = await _port(tmp_path / "pa2")
        procs += [await spawn_minibot(pa, t, "--delay", "30") for t in tokens[:2]]
        a_done = len([g for g in stored(pg.url, status="finished") if set(g.seats) == {"a1", "a2"}])
        await until(lambda: len([g for g in stored(pg.url, status="finished")
                                 if set(g.seats) == {"a1", "a2"}]) > a_done, timeout=120)
    finally:
        for p in procs:
            await stop_process(p)
        for s in (a, b):
            if s.poll() is None:
                s.send_signal(signal.SIGTERM)
                s.wait(60)
    games = stored(pg.url)
    assert all(g.reason is not None for g in games if g.status == "finished")  # each with its result
    # Aborted without a result: only the games the dead server was playing.
    assert {g.id for g in games if g.status == "aborted" and g.reason is None} <= {v.id for v in victims}


async def test_a_ladder_exits_3_when_the_database_stays_away(private_postgres: Any, tmp_path: Path) -> None:
    pg = private_postgres
    tokens = add_bots(pg.url, "x1", "x2")
    ladder = subprocess.Popen([*MAAG, "ladder", "--db", pg.url, "--port", "0", "--port-file",
                               str(tmp_path / "port"), *SHORT, "--tc", "2s", "--spill-dir",
                               str(tmp_path / "spill"), "--storage-outage-limit", "2"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    await _gives_up_without_its_database(pg, ladder, tmp_path / "port", tokens)
