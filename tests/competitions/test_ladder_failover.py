"""One scheduler per ladder, whatever the number of `maag ladder` processes on one PostgreSQL
database: a second process refuses to start, or with --standby waits; when the leader is
killed with -9 (its session's advisory lock dies with it), the standby takes over, continues
from the stored history and schedules the bots that connect to it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from maag.server.storage.base import GameRecord, open_storage

STUCK = 120.0  # a safety net against a hung test, not a timing requirement
LEASE_S = 2.0  # the referees' lease: a killed one's connections count until it lapses


def until(what: str, cond: Callable[[], bool], watch: list[subprocess.Popen[str]]) -> None:
    t0 = time.monotonic()
    while not cond():
        for p in watch:
            if p.poll() is not None:
                raise AssertionError(f"a ladder exited ({p.returncode}) while waiting for {what}: "
                                     f"{p.stderr.read() if p.stderr else ''}")
        assert time.monotonic() - t0 < STUCK, f"stuck waiting for {what}"
        time.sleep(0.05)


def ladder_games(db: str) -> list[GameRecord]:
    st = open_storage(db)
    try:
        return st.list_games(match_id="ladder:ha", limit=10_000)
    finally:
        st.close()


def test_one_scheduler_per_ladder_and_a_standby_takes_over(postgres_db: str, tmp_path: Path,
                                                            procs: list[subprocess.Popen[str]]) -> None:
    db = postgres_db
    tokens = {}
    for name in ("alice", "bob"):
        r = subprocess.run([sys.executable, "-m", "maag.server", "bot", "add", name, "--db", db],
                           capture_output=True, text=True, check=True)
        tokens[name] = r.stdout.strip().splitlines()[-1]

    def ladder(tag: str, *extra: str) -> tuple[subprocess.Popen[str], Path]:
        port_file = tmp_path / f"{tag}.port"
        p = subprocess.Popen(
            [sys.executable, "-m", "maag.server", "ladder", "--db", db, "--name", "ha", "--port", "0",
             "--port-file", str(port_file), "--map", "a-tiny", "--tc", "10s", "--grace", "300ms",
             "--seed", "5", "--lease", str(LEASE_S), *extra],
            stdout=(tmp_path / f"{tag}.out").open("w"), stderr=(tmp_path / f"{tag}.err").open("w"), text=True)
        procs.append(p)
        return p, port_file

    def bots(port: int) -> list[subprocess.Popen[str]]:
        out = []
        for name in ("alice", "bob"):
            p = subprocess.Popen([sys.executable, "-m", "maag.server.net.minibot", "--connect",
                                  f"127.0.0.1:{port}", "--token", tokens[name], "--agent", "random",
                                  "--name", name], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 text=True)
            procs.append(p)
            out.append(p)
        return out

    def finished() -> int:
        return sum(g.status == "finished" for g in ladder_games(db))

    leader, leader_port = ladder("leader")
    until("the leader's port", lambda: leader_port.exists() and leader_port.read_text().strip() != "",
          [leader])
    # A second process without --standby: a clear refusal, nothing scheduled.
    r = subprocess.run([sys.executable, "-m", "maag.server", "ladder", "--db", db, "--name", "ha",
                        "--port", "0", "--map", "a-tiny"], capture_output=True, text=True, timeout=STUCK)
    assert r.returncode == 2 and "already scheduled by another process" in r.stderr, r.stderr
    standby, standby_port = ladder("standby", "--standby")
    until("the standby standing by", lambda: "Standing by" in (tmp_path / "standby.out").read_text(),
          [leader, standby])
    bots(int(leader_port.read_text()))
    until("3 games on the leader", lambda: finished() >= 3, [leader, standby])
    assert not standby_port.exists()  # standing by: not listening, pairing nobody
    os.kill(leader.pid, signal.SIGKILL)
    leader.wait()
    t_kill = time.monotonic()
    until("the standby's port", lambda: standby_port.exists() and standby_port.read_text().strip() != "",
          [standby])
    took = time.monotonic() - t_kill
    before = finished()
    # The bots' connections to the killed leader count against their limit (one each, across
    # the referees on this database) until its lease lapses: then they connect to the new one.
    time.sleep(LEASE_S + 0.5)
    bots(int(standby_port.read_text()))
    until("3 more games on the new leader", lambda: finished() >= before + 3, [standby])
    standby.send_signal(signal.SIGTERM)
    standby.wait(timeout=STUCK)
    assert standby.returncode == 0, (tmp_path / "standby.err").read_text()
    out = (tmp_path / "standby.out").read_text()
    assert "Taking over ladder ha" in out, out + (tmp_path / "standby.err").read_text()
    assert f"({before} past games" in out or f"({before - 1} past games" in out  # from the history
    assert took < 30, took  # the lock died with the leader's session (the bots' start is separate)
    games = ladder_games(db)
    ids = [g.id for g in games]
    assert len(ids) == len(set(ids))
    # The leader's game in progress when it died: aborted once its lease lapsed, or still
    # "playing" until then; every other game finished normally, none twice.
    assert sum(g.status == "finished" for g in games) >= before + 3


def test_hosted_versions_kept_while_the_database_is_out_of_reach(tmp_path: Path) -> None:
    """The submitted bots' versions of a ladder whose database cannot be reached (restarting,
    its machine's link cut) stay as they were, to be read again later: a fleet member whose link
    was cut once exited with a traceback here (status 1) instead of finding its lease revoked
    once mended (status 3; tests/e2e/test_fleet_machines.py)."""
    import socket

    from maag.server.compete.ladder_hosted import HostedEntrants
    from maag.server.net.server import ServerConfig

    with socket.socket() as s:  # a port nobody listens on: connections refused at once
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    seen: list[str] = []
    entrants = HostedEntrants("main", f"postgresql://maag:maag@127.0.0.1:{port}/gone", ServerConfig(),
                              host_options=None, slots=1, log_dir=str(tmp_path), cluster=None,
                              joined=seen.append, left=seen.append)
    t0 = time.monotonic()
    entrants.refresh()
    assert entrants.bots == {} and seen == []
    assert entrants._refreshed >= t0  # looked at again HOSTED_REFRESH_S later, not at every tick
