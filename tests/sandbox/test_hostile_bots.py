"""Issue 40's hostile bot suite. Each hostile package (hostile/<name>/) is played through
`maag match PACKAGE random` on nim, in the sandbox, as a real process with the host's secrets
in its environment, while a companion match (a well-behaved package, also hosted) runs beside
it. For each: the attempt fails or the bot is stopped with the right verdict, the opponent
and the companion's games finish normally, the results are stored, no process or control
group of the bot remains, and the host's memory, disk and mounts are as before.

The probes that look for a way out print what they saw (`PROBE {...}` lines in their logs)
and play an illegal action when they find one (`--max-illegal 1`: the stored result then
carries an `illegal` verdict). The last tests run the same probes outside the sandbox, where
each must find its way out: a probe that could not see a breach would prove nothing."""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from maag.server.sandbox.cgroups import Cgroups
from maag.server.sandbox.limits import DEFAULT_LIMITS

from .conftest import (
    HOSTILE,
    NORMAL_REASONS,
    SECRETS,
    Companion,
    HostState,
    Match,
    command_line,
    groups_left,
    launch,
    leftovers,
    play,
)

pytestmark = pytest.mark.timeout(300)

SANDBOX_ENV = {"PATH", "HOME", "TMPDIR", "LANG", "PWD", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE",
               "MAAG_CONNECT", "MAAG_TOKEN", "MAAG_BOT", "MAAG_CONCURRENCY", "MAAG_GAME", "MAAG_THREADS"}


@pytest.fixture
def before(sandbox: Cgroups, tmp_path: Path) -> HostState:
    return HostState.now(sandbox, tmp_path)


def aftermath(m: Match, bot: str, *, games: int, sandbox: Cgroups, before: HostState, tmp: Path,
              companion: Companion, opponent: str = "random") -> None:
    """What every hostile match must leave: the match ran to its end, every game is stored as
    printed (a verdict only ever against the hostile bot), the opponent played each game to
    its end, no process or group of the bot remains, the host is as before, the companion's
    games beside it finished normally."""
    assert m.returncode == 0, m.describe()
    assert [g["n"] for g in m.games] == list(range(1, games + 1)), m.describe()
    stored = m.stored()
    assert len(stored) == games, stored
    for g in m.games:
        assert g["reason"] != "aborted" and g["result"] in ("1-0", "0-1", "1/2-1/2"), g
        v = g["verdict"]
        if v is not None:
            assert v["seat"] == m.seat_of(g, bot), f"a verdict against the opponent: {g}"
        record, replay = next((r, p) for r, p in stored if r.id == g["game_id"])
        assert record.status == "finished" and record.reason == g["reason"], record
        assert replay is not None and replay["result"]["verdict"] == v, (replay and replay["result"], v)
    opponent_log = m.logs(opponent)
    assert opponent_log and "Traceback" not in opponent_log[0].read_text(errors="replace")
    deadline = time.monotonic() + 10
    while leftovers(m.pid) or groups_left(sandbox, m.pid):
        assert time.monotonic() < deadline, ("left behind", leftovers(m.pid), groups_left(sandbox, m.pid))
        time.sleep(0.1)
    # The host's temporary folder holds the bots' logs (capped) and nothing else.
    rest = [p for p in m.tmpdir.rglob("*") if p.is_file() and p.suffix != ".log"]
    assert not rest, rest
    log_bytes = sum(p.stat().st_size for p in m.tmpdir.rglob("*.log"))
    assert log_bytes <= (games + 1) * (DEFAULT_LIMITS.log + 1000), log_bytes
    before.assert_back(sandbox, tmp)
    companion.assert_fine_beside(m)


def verdicts(m: Match) -> list[Any]:
    return [g["verdict"] for g in m.games]


def assert_no_secret(m: Match, bot: str) -> None:
    text = "\n".join(p.read_text(errors="replace") for p in m.logs(bot))
    for k, v in SECRETS.items():
        assert v not in text and k not in text, k


# -- looking for a way out: each attempt fails ----------------------------------------------------------

def test_env_reader_finds_no_database_url_nor_token(sandbox: Cgroups, companion: Companion, tmp_path: Path,
                                                   before: HostState) -> None:
    m = play(tmp_path, "env_reader", games=2)
    aftermath(m, "env-reader", games=2, sandbox=sandbox, before=before, tmp=tmp_path, companion=companion)
    probes = m.probes("env-reader")
    assert len(probes) == 2, probes  # a fresh process per game
    for p in probes:
        assert not p["breached"], p
        assert set(p["keys"]) <= SANDBOX_ENV, p["keys"]
        assert p["pid1_environ"] != "read", p  # bwrap's own environment is not the bot's to read
    assert verdicts(m) == [None, None]
    assert_no_secret(m, "env-reader")


def test_db_reader_cannot_open_the_hosts_database(sandbox: Cgroups, companion: Companion, tmp_path: Path,
                                                 before: HostState) -> None:
    db = tmp_path / "match.sqlite3"
    m = play(tmp_path, "db_reader", targets={"paths": [str(db), str(companion.db), str(db) + "-wal"]})
    aftermath(m, "db-reader", games=1, sandbox=sandbox, before=before, tmp=tmp_path, companion=companion)
    probes = m.probes("db-reader")
    assert len(probes) == 1
    for p in probes:
        assert not p["breached"], p
        assert str(db) in p["attempts"] and str(companion.db) in p["attempts"], p
    assert verdicts(m) == [None]
    assert db.read_bytes().startswith(b"SQLite format 3")  # it was there to be read


@pytest.fixture
def listener() -> Iterator[tuple[int, list[bytes]]]:
    """A TCP port on 127.0.0.1 that records what each connection sends."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    srv.settimeout(0.2)
    got: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(2)
                try:
                    got.append(conn.recv(100))
                except OSError:
                    got.append(b"")

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield srv.getsockname()[1], got
    stop.set()
    t.join(5)
    srv.close()


def test_port_connect_reaches_nothing(sandbox: Cgroups, companion: Companion, tmp_path: Path,
                                      before: HostState, listener: tuple[int, list[bytes]]) -> None:
    port, got = listener
    addresses = [["127.0.0.1", port], ["127.0.0.1", 5432], ["127.0.0.1", 22], ["127.0.0.1", 8786],
                 ["1.1.1.1", 53]]  # the test's port; PostgreSQL, ssh, Dask; the world
    m = play(tmp_path, "port_connect", targets={"addresses": addresses})
    aftermath(m, "port-connect", games=1, sandbox=sandbox, before=before, tmp=tmp_path, companion=companion)
    probes = m.probes("port-connect")
    assert len(probes) == 1
    for p in probes:
        assert not p["breached"], p
        assert f"127.0.0.1:{port}" in p["attempts"], p
        assert p["interfaces"] == ["lo"], p  # a network namespace of its own: nothing but loopback
    assert verdicts(m) == [None]
    assert got == []


def test_write_outside_changes_nothing(sandbox: Cgroups, companion: Companion, tmp_path: Path,
                                       before: HostState) -> None:
    outside = tmp_path / "host-folder"
    outside.mkdir()
    site = Path(sys.prefix) / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    paths = [str(outside / "pwned"), str(HOSTILE / "pwned"), "/bot/pwned", "/usr/pwned", "/etc/pwned",
             "/pwned", "/root/pwned", "/dev/pwned", "/opt/maag/sdk/maag/clients/pwned",
             f"{sys.prefix}/pwned", f"{site}/pwned"]
    chmod = ["/bot/bot.py", "/bot"]
    m = play(tmp_path, "write_outside", targets={"paths": paths, "chmod": chmod, "own": True})
    aftermath(m, "write-outside", games=1, sandbox=sandbox, before=before, tmp=tmp_path, companion=companion)
    probes = m.probes("write-outside")
    assert len(probes) == 1
    for p in probes:
        assert not p["breached"], p
        assert set(p["attempts"]) == set(paths) | {"chmod /bot/bot.py", "chmod /bot"}, p
        assert p["own_space"] == "written", p  # its own scratch space is writable
    assert verdicts(m) == [None]
    assert list(outside.iterdir()) == []
    # (Its /dev/shm is a space of its own, like /scratch: tests/sandbox/test_runner_killed.py
    # writes there and finds nothing in the host's.)
    assert not Path("/dev/shm/pwned").exists()


def test_proc_reader_sees_only_its_own_processes(sandbox: Cgroups, companion: Companion, tmp_path: Path,
                                                 before: HostState) -> None:
    m = play(tmp_path, "proc_reader")
    aftermath(m, "proc-reader", games=1, sandbox=sandbox, before=before, tmp=tmp_path, companion=companion)
    probes = m.probes("proc-reader")
    assert len(probes) == 1
    for p in probes:
        assert not p["breached"], p
        assert str(p["me"]) in p["seen"], p  # it did read /proc: itself at least
        for s in p["seen"].values():  # itself, and bwrap (its pid 1), closed to it
            assert s["cmd"] == "python3 bot.py" or (s["cmd"].split()[0].endswith("/bwrap") and s["uid"] == "0"
                                                    and s["fds"] == s["root"] == "PermissionError"), p
    assert verdicts(m) == [None]


# -- taking too much: the attempt fails, or the bot is stopped with the right verdict ----------------------

def test_alloc_4g_is_stopped_at_its_memory_limit(sandbox: Cgroups, companion: Companion, tmp_path: Path,
                                                 before: HostState) -> None:
    m = play(tmp_path, "alloc_4g", tc="2s")
    aftermath(m, "alloc-4g", games=1, sandbox=sandbox, before=before, tmp=tmp_path, companion=companion)
    (g,) = m.games
    assert g["verdict"] is not None and g["verdict"]["kind"] == "memory", g
    assert g["result"] == "0-1" and g["reason"] == "disconnect", g
    got = max(p.get("allocated", 0) for p in m.probes("alloc-4g"))
    assert 0 < got <= DEFAULT_LIMITS.memory, got
    peak = g["host"]["memory_peak"][0]
    assert DEFAULT_LIMITS.memory * 0.8 <= peak <= DEFAULT_LIMITS.memory, peak


def test_fork_bomb_meets_the_process_limit(sandbox: Cgroups, companion: Companion, tmp_path: Path,
                                           before: HostState) -> None:
    m = play(tmp_path, "fork_bomb")
    aftermath(m, "fork-bomb", games=1, sandbox=sandbox, before=before, tmp=tmp_path, companion=companion)
    probes = m.probes("fork-bomb")
    assert len(probes) == 1, probes
    for p in probes:
        assert 0 < p["forked"] < DEFAULT_LIMITS.pids, p
        assert p["failures"].get("EAGAIN", 0) == p["attempts"] - p["forked"], p
    # It plays on with its children: the games end on the board, their processes with them.
    assert verdicts(m) == [None]
    assert all(g["reason"] in NORMAL_REASONS for g in m.games)


def test_spinner_is_held_to_its_declared_core(sandbox: Cgroups, companion: Companion, tmp_path: Path,
                                              before: HostState) -> None:
    """A thread per core, spinning through the opponent's turns: with pondering allowed its
    CPU time is capped at one core (its manifest's `threads`), and the opponent (a searching
    agent that uses its whole turn) plays on its clock; with `--ponder freeze` it gets next to
    no CPU time off turn."""
    m = play(tmp_path / "allow", "spinner", "mcts")
    aftermath(m, "spinner", games=1, sandbox=sandbox, before=before, tmp=tmp_path, companion=companion,
              opponent="mcts")
    (probe,) = m.probes("spinner")
    assert probe["threads"] == os.cpu_count()
    assert verdicts(m) == [None]
    cores = m.games[0]["host"]["cores"]
    assert cores is None or probe["affinity"] == cores  # given cores of its own: it sees no others
    for g in m.games:
        s = m.seat_of(g, "spinner") - 1
        off = g["host"]["cpu_ms_off_turn"][s]
        on = sum(g["host"]["cpu_ms_per_turn"][s])
        opponent_ms = g["think_ms"][1 - s] + g["transport_ms"][1 - s]
        wall_ms = sum(g["think_ms"]) + sum(g["transport_ms"])
        assert off >= 0.1 * opponent_ms, g["host"]  # it did spin through the opponent's turns...
        assert on + off <= 1.15 * wall_ms + 100, g  # ...on one core at most
        assert g["search"][1 - s] is not None and g["search"][1 - s]["iterations_per_turn"] > 0, g
    frozen = play(tmp_path / "freeze", "spinner", "mcts", args=("--ponder", "freeze"))
    aftermath(frozen, "spinner", games=1, sandbox=sandbox, before=before, tmp=tmp_path, companion=companion,
              opponent="mcts")
    assert verdicts(frozen) == [None]
    for g in frozen.games:
        s = frozen.seat_of(g, "spinner") - 1
        opponent_ms = g["think_ms"][1 - s] + g["transport_ms"][1 - s]
        assert g["host"]["cpu_ms_off_turn"][s] <= 0.02 * opponent_ms + 10, g["host"]


def test_scratch_writer_fills_only_its_capped_space(sandbox: Cgroups, companion: Companion, tmp_path: Path,
                                                    before: HostState) -> None:
    m = play(tmp_path, "scratch_writer")
    aftermath(m, "scratch-writer", games=1, sandbox=sandbox, before=before, tmp=tmp_path, companion=companion)
    probes = m.probes("scratch-writer")
    assert len(probes) == 1
    for p in probes:
        assert DEFAULT_LIMITS.scratch * 0.9 <= p["total"] <= DEFAULT_LIMITS.scratch, p
        assert all(w["stopped"] in ("ENOSPC", "EFBIG") for w in p["written"].values()), p
    assert verdicts(m) == [None]  # it plays on with its space full
    assert all(g["reason"] in NORMAL_REASONS for g in m.games)


def test_flooder_has_its_log_cut_and_plays_on(sandbox: Cgroups, companion: Companion, tmp_path: Path,
                                              before: HostState) -> None:
    m = play(tmp_path, "flooder")
    aftermath(m, "flooder", games=1, sandbox=sandbox, before=before, tmp=tmp_path, companion=companion)
    assert verdicts(m) == [None]
    for g in m.games:
        assert g["host"]["log_truncated"][m.seat_of(g, "flooder") - 1] is True, g["host"]
    logs = m.logs("flooder")
    assert len(logs) == 1
    for p in logs:
        text = p.read_bytes()
        assert len(text) <= DEFAULT_LIMITS.log + 200, len(text)
        assert b"[maag: the log was cut at" in text and b"PROBE " in text


def test_daemon_does_not_outlive_its_game(sandbox: Cgroups, companion: Companion, tmp_path: Path,
                                          before: HostState) -> None:
    comm = f"hd-{time.monotonic_ns() % 10**9}"
    seen: set[str] = set()

    def look() -> None:  # the daemon, as the host sees it, while the match runs
        for d in Path("/proc").iterdir():
            try:
                if d.name.isdigit() and (d / "comm").read_text().strip() == comm:
                    seen.add(d.name)
            except OSError:
                pass

    m = play(tmp_path, "daemon", targets={"comm": comm}, watch=look)
    aftermath(m, "daemon", games=1, sandbox=sandbox, before=before, tmp=tmp_path, companion=companion)
    assert verdicts(m) == [None]
    probes = m.probes("daemon")
    assert len(probes) == 1 and probes[0]["ppid"] == 1, probes  # double-forked, parentless
    assert seen, "the daemon never ran"
    during = set(seen)
    seen.clear()
    look()
    assert not seen, f"the daemon outlived its game: {seen} (while the match ran: {during})"


def test_sleeper_loses_on_time(sandbox: Cgroups, companion: Companion, tmp_path: Path,
                               before: HostState) -> None:
    m = play(tmp_path, "sleeper", games=2, args=("--max-late", "1"))  # its first late turn loses
    aftermath(m, "sleeper", games=2, sandbox=sandbox, before=before, tmp=tmp_path, companion=companion)
    for g in m.games:
        assert g["verdict"] is not None and g["verdict"]["kind"] == "time", g
        assert g["reason"] == "timeout", g
    assert m.probes("sleeper")


def test_segfault_is_a_crash_by_sigsegv(sandbox: Cgroups, companion: Companion, tmp_path: Path,
                                        before: HostState) -> None:
    m = play(tmp_path, "segfault")
    aftermath(m, "segfault", games=1, sandbox=sandbox, before=before, tmp=tmp_path, companion=companion)
    for g in m.games:
        v = g["verdict"]
        assert v is not None and v["kind"] == "crash" and "SIGSEGV" in v["detail"], g
    assert len(m.probes("segfault")) == 1


# -- the probes can tell: outside the sandbox (or given the variable on purpose) each finds its way out ----

def test_env_reader_sees_what_the_host_passes_on_purpose_and_ps_does_not(
        sandbox: Cgroups, companion: Companion, tmp_path: Path, before: HostState) -> None:
    """`--pass-env GITHUB_TOKEN`: the probe finds it (and plays its illegal action), while the
    value appears on no command line of the host's (where every user could read it)."""
    on_command_lines: list[str] = []

    def look() -> None:
        for d in Path("/proc").iterdir():
            try:
                if d.name.isdigit() and SECRETS["GITHUB_TOKEN"].encode() in (d / "cmdline").read_bytes():
                    on_command_lines.append(d.name)
            except OSError:
                pass

    m = play(tmp_path, "env_reader", args=("--pass-env", "GITHUB_TOKEN"), watch=look)
    aftermath(m, "env-reader", games=1, sandbox=sandbox, before=before, tmp=tmp_path, companion=companion)
    (p,) = m.probes("env-reader")
    assert p["breached"] and "GITHUB_TOKEN" in p["keys"], p
    assert [v["kind"] for v in verdicts(m)] == ["illegal"]
    assert on_command_lines == []


def test_outside_the_sandbox_each_probe_finds_its_way_out(tmp_path: Path,
                                                          listener: tuple[int, list[bytes]]) -> None:
    """The same probes as command lines outside the sandbox (four matches at once): each finds
    what it looks for, and plays its illegal action."""
    port, got = listener
    outside = tmp_path / "host-folder"
    outside.mkdir()
    targets: dict[str, dict[str, Any]] = {
        "db_reader": {"paths": [str(tmp_path / "db_reader" / "match.sqlite3")]},
        "port_connect": {"addresses": [["127.0.0.1", port]]},
        "write_outside": {"paths": [str(outside / "pwned")]},
        "proc_reader": {}}
    running = {name: launch(tmp_path / name, command_line(tmp_path, name, t)) for name, t in targets.items()}
    for name, r in running.items():
        m = r.finish()
        assert m.returncode == 0, m.describe()
        (p,) = m.probes(m.games[0]["seat1"])
        assert p["breached"], (name, p)
        assert [v["kind"] for v in verdicts(m)] == ["illegal"], (name, m.games)
    assert got == [b"hostile bot was here\n"]  # (from the port probe)
    assert list(outside.iterdir()) == []  # (the write probe removes what it wrote)
