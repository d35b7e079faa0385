"""`maag bench fleet` (server/bench/fleet.py): one tiny point, two real `maag ladder --fleet`
members on a fresh PostgreSQL database with hosted and connected bots, counted from the
database; the database dropped and every process stopped afterwards. Not a measurement:
the figures are never compared with anything here."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from maag.server.bench.fleet import FleetBench, run_point


def _children() -> list[int]:
    """This process's child processes still there (exited but not reaped ones too)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == os.getpid():
            out.append(int(stat.parent.name))
    return out


def _bench_databases(url: str) -> set[str]:
    with psycopg.connect(url, autocommit=True) as c:
        rows = c.execute("SELECT datname FROM pg_database WHERE datname LIKE 'maag_bench_fleet_%'")
        return {r[0] for r in rows}


def test_a_point_counts_the_fleets_games_and_leaves_nothing_behind(postgres_url: str) -> None:
    if shutil.which("bwrap") is None or os.geteuid() != 0:
        if os.environ.get("CI"):
            pytest.fail("the sandbox needs bubblewrap and root here (CI)")
        pytest.skip("needs bubblewrap and root (hosted bots)")
    before = _bench_databases(postgres_url)
    children = set(_children())  # (the suite's other tests may have left theirs, e.g. a resource tracker)
    ticks: list[float] = []
    spec = FleetBench(seconds=3.0, warmup=1.0, hosted=2, bots=2, slots=1, game="nim", tc="1s")
    res = run_point(postgres_url, 2, spec, ticks.append)
    assert res["members"] == 2 and res["games"] > 0, res
    assert len(res["per_member"]) == 2 and sum(res["per_member"]) == res["games"], res
    assert 0 < res["hosted_games"] <= res["games"] and res["aborted"] == 0, res
    assert res["games_per_min"] == pytest.approx(res["games"] * 60 / res["window_s"], rel=0.005)
    assert 2.9 < res["window_s"] < 4.5, res
    assert ticks and ticks == sorted(ticks) and 0 < ticks[-1] <= 1.0, ticks
    assert _bench_databases(postgres_url) == before  # (its database dropped)
    assert set(_children()) - children == set(), "a member or a bot was left running"


def test_a_point_on_the_network_bed(postgres_url: str) -> None:
    """`--netns`: the member in a network namespace of its own, the bots and the database
    reached through HAProxy on the bed's bridge (bench/netbed.py); its games counted as on
    loopback, and the bed taken down afterwards."""
    from maag.server.bench.netbed import need_bed

    why = need_bed() or (None if shutil.which("bwrap") else "no bubblewrap (hosted bots)")
    if why:
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)
    children = set(_children())
    spec = FleetBench(seconds=2.0, warmup=1.0, hosted=2, bots=2, slots=1, game="nim", tc="1s", netns=True)
    res = run_point(postgres_url, 1, spec)
    assert res["games"] > 0 and res["per_member"] == [res["games"]] and res["hosted_games"] > 0, res
    k = 1 + os.getpid() % 250  # (the bed's namespaces and bridge are named after this process)
    left = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    spaces = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert f"mgbr{k}:" not in left and f"maag{k}m1" not in spaces, (left, spaces)
    assert set(_children()) - children == set(), "a member or a bot was left running"


def test_the_command_wants_a_postgresql_server() -> None:
    env = {k: v for k, v in os.environ.items() if k != "MAAG_TEST_POSTGRES"}
    r = subprocess.run([sys.executable, "-m", "maag.server", "bench", "fleet", "--db", "sqlite:///x.db"],  # noqa: S603
                       capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 2 and "--db postgresql://" in r.stderr, r.stderr
