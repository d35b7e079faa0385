"""A fleet across machines (issue 56's test bed, tests/e2e/netbed.py): three `maag ladder
--fleet` members, each in a network namespace of its own with its own address, on a
PostgreSQL and behind a HAProxy as docs/competitions.md tells a host with several machines;
real SDK bots (tests/e2e/pacing_bot.py) connect to HAProxy and reconnect on their own.

The scheduling member's link is cut mid-ladder while it hosts games: its packets are
dropped, no connection is closed (a pulled cable). Then every game it hosted is finished by
another member or aborted unrated, none is rated against a bot for the cut, none is stored
twice, and the ladder goes on at the rate it had.

Today this fails two ways (issue 56): a game the cut member hosted is finished by a takeover
with a `time` verdict against a bot whose connection stalled behind the cut (it never learnt
its game moved); and the ladder stops: the cut scheduler's database session lingers on the
server (nothing closed it), and with it the advisory lock that makes it the scheduler, so no
standby takes over.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest
from maag.server.storage.base import open_storage

from .netbed import NetBed, need_bed

LEASE_S = 2.0
BOTS = 6
BOT = str(Path(__file__).with_name("pacing_bot.py"))
pytestmark = pytest.mark.timeout(300)


def q(url: str, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as conn:
        return conn.execute(sql, args).fetchall()  # type: ignore[arg-type]


def until(cond: Any, timeout: float, what: str) -> None:
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError(f"not within {timeout} s: {what}")
        time.sleep(0.2)


def finished(url: str) -> int:
    return int(q(url, "SELECT COUNT(*) FROM games WHERE status = 'finished'")[0][0])


@pytest.fixture
def bed(tmp_path: Path, postgres_db: str) -> Any:
    why = need_bed()
    if why:
        if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
            pytest.fail(why)
        pytest.skip(why)
    b = NetBed(tmp_path, 3, postgres_db).up()
    try:
        yield b
    finally:
        b.down()


@pytest.mark.xfail(strict=True, reason="issue 56: a bot behind the cut loses its game on time; the cut "
                   "scheduler's lingering database session keeps its advisory lock, so no standby schedules")
def test_a_member_whose_link_is_cut_costs_no_bot_a_game(bed: NetBed, postgres_db: str,
                                                        tmp_path: Path) -> None:
    url = postgres_db
    st = open_storage(url)
    try:
        tokens = [st.add_bot(f"bot{i}") for i in range(BOTS)]
    finally:
        st.close()
    for m in bed.members:
        bed.start(m, [sys.executable, "-m", "maag.server", "ladder", "--fleet", "--db", bed.db_url,
                      "--host", m.address, "--port", "7878", "--map", "a-tiny", "--option", "turn_limit=8",
                      "--tc", "5s", "--grace", "20s", "--lease", str(LEASE_S), "--max-games-per-minute", "0",
                      "--per-bot", "1", "-v", "--spill-dir", str(tmp_path / f"spill{m.index}")],
                  tmp_path / f"member{m.index}.log")
    until(lambda: len(q(url, "SELECT id FROM servers WHERE link IS NOT NULL")) == 3, 60, "three members")
    servers = {str(link).rsplit(":", 1)[0]: sid for sid, link in q(url, "SELECT id, link FROM servers")}
    bed.wait_balanced()
    bots = [subprocess.Popen([sys.executable, BOT, bed.bots_address, "--delay-ms", "40", "--reconnect", "60"],
                             env={**os.environ, "MAAG_TOKEN": t}, stdout=subprocess.DEVNULL,
                             stderr=open(tmp_path / f"bot{i}.log", "wb"))
            for i, t in enumerate(tokens)]
    try:
        until(lambda: finished(url) >= 20, 120, "20 games")
        hosted = dict(q(url, "SELECT server, COUNT(*) FROM games WHERE status = 'finished' GROUP BY server"))
        total = sum(hosted.values())
        assert all(hosted.get(servers[m.address], 0) >= total / 10 for m in bed.members), hosted

        # The rate before: games finished per second over 10 s, three members.
        n0, t0 = finished(url), time.monotonic()
        time.sleep(10)
        before = (finished(url) - n0) / (time.monotonic() - t0)

        # The worst member to lose: the scheduler (it hosts games too).
        victim = next(m for m in bed.members
                      if b"Taking over ladder" in (tmp_path / f"member{m.index}.log").read_bytes())
        sid = servers[victim.address]
        running = "SELECT id FROM games WHERE server = %s AND status = 'running'"
        until(lambda: bool(q(url, running, sid)), 30, "a game on the member to cut")
        on_victim = [g for (g,) in q(url, running, sid)]
        bed.cut(victim)
        cut_at = time.monotonic()

        def settled() -> bool:
            rows = q(url, "SELECT status FROM games WHERE id = ANY(%s)", on_victim)
            return all(s in ("finished", "aborted") for (s,) in rows)

        until(settled, 60, f"the games of the cut member ({on_victim}) finished elsewhere or aborted")
        # Its games: finished by another member, or aborted; none with a verdict against a bot.
        st = open_storage(url)
        try:
            for gid in on_victim:
                g = st.get_game(gid)
                assert g is not None
                clean = g.verdict is None and g.reason not in ("time", "disconnect")
                assert g.status == "aborted" or clean, g
        finally:
            st.close()
        # None stored twice: each assignment became one game, no game two assignments' (a game
        # has one result: results' key).
        pairs = q(url, "SELECT COUNT(*), COUNT(DISTINCT game_id) FROM fleet_assignments "
                  "WHERE game_id IS NOT NULL")
        assert pairs[0][0] == pairs[0][1], pairs
        # Within a minute of the cut, the ladder's rate is back within 10% of what it was.
        time.sleep(max(0.0, 50 - (time.monotonic() - cut_at)))
        n1, t1 = finished(url), time.monotonic()
        time.sleep(10)
        after = (finished(url) - n1) / (time.monotonic() - t1)
        assert after >= 0.9 * before, (before, after)
    finally:
        for b in bots:
            b.kill()
            b.wait()
