"""A host's day as docs/competitions.md tells it, with maag installed from its wheel in a
virtualenv and the environment exactly as the doc's systemd unit sets it: the database named
by `MAAG_DB` alone, as a PostgreSQL URL (and as `sqlite:///PATH`). Every command is read
from the doc (tests/deployed/docs.py); the test changes only what names this machine
(the password and address of the database, ports, the web root, a token's placeholder) and
shortens the time control (`--tc 1s` becomes 100 ms), each substitution listed in `local`.

What must hold: the bots, games and standings land in the database `MAAG_DB` names and
nowhere else (no SQLite file under a name made from the URL, nothing in the folder the
commands run in); the ladder of the unit's ExecStart pairs bots connected with the doc's
`maag bot run` line, stops within seconds on SIGTERM once no game runs, and continues from
its history when started again; the doc's standings and replay commands read it all back."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from .conftest import Deployed
from .docs import DocCommand, find, systemd_unit

pytestmark = pytest.mark.timeout(600)
DOC = "competitions.md"
STOP_S = 10.0  # SIGTERM with no game running: "within seconds"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Day:
    """One host's machine: a folder to run commands in, a HOME, the unit's environment."""

    def __init__(self, deployed: Deployed, cwd: Path, home: Path, db: str, www: Path) -> None:
        self.deployed, self.cwd, self.home, self.www = deployed, cwd, home, www
        self.env = deployed.env(home, MAAG_DB=db)
        self.port = free_port()
        self.tokens: dict[str, str] = {}

    def local(self, text: str) -> str:
        """A documented command made to run on this machine (and nothing else changed)."""
        out = text.replace("/usr/local/bin/maag", "maag")
        out = out.replace("--host 0.0.0.0", "--host 127.0.0.1")
        out = re.sub(r"--port 7878\b", f"--port {self.port}", out)
        out = out.replace("ladder.example.org:7878", f"127.0.0.1:{self.port}")
        out = out.replace("/var/www/html/", f"{self.www}/")
        out = out.replace("--tc 1s", "--tc 100ms")
        if out.startswith("maag ladder") and "--port" not in out and "--standings" not in out:
            out += f" --port {self.port}"  # (the default port, 7878, may be taken on this machine)
        assert out != text or "maag_..." in text or "$MAAG_DB" in text, text
        return out

    def run(self, cmd: DocCommand | str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        text = self.local(cmd.text if isinstance(cmd, DocCommand) else cmd)
        return subprocess.run(["bash", "-c", text], cwd=self.cwd, env=self.env, capture_output=True,
                              text=True, timeout=timeout, stdin=subprocess.DEVNULL)

    def start(self, text: str, log: Path, **env: str) -> subprocess.Popen[bytes]:
        return subprocess.Popen(["bash", "-c", "exec " + self.local(text)], cwd=self.cwd,
                                env={**self.env, **env}, stdout=open(log, "wb"), stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)

    def bot(self, name: str, log: Path) -> subprocess.Popen[bytes]:
        line = find(DOC, r"maag bot run")
        text = line.text.replace("MAAG_TOKEN=maag_... ", "")
        return self.start(text, log, MAAG_TOKEN=self.tokens[name])


def stop(p: subprocess.Popen[bytes], sig: int = signal.SIGTERM, timeout: float = 30) -> float:
    """Send `sig`; the seconds until the process exited."""
    t0 = time.monotonic()
    if p.poll() is None:
        p.send_signal(sig)
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            return float("inf")
    return time.monotonic() - t0


@contextmanager
def processes() -> Iterator[list[subprocess.Popen[bytes]]]:
    ps: list[subprocess.Popen[bytes]] = []
    try:
        yield ps
    finally:
        for p in ps:
            if p.poll() is None:
                p.kill()
                p.wait()


def wait_listening(port: int, proc: subprocess.Popen[bytes], log: Path, timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while True:
        assert proc.poll() is None, log.read_text(errors="replace")[-3000:]
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        assert time.monotonic() < end, log.read_text(errors="replace")[-3000:]
        time.sleep(0.1)


def tail(log: Path) -> Any:
    return lambda: log.read_text(errors="replace")[-3000:]


def wait_for(what: str, check: Any, timeout: float, why: Any = "") -> Any:
    end = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        assert time.monotonic() < end, f"{what}: {why() if callable(why) else why}"
        time.sleep(0.25)


def the_day(day: Day, games: Any, tmp: Path) -> None:
    """The doc's sections 2 to 4, on the database `MAAG_DB` names. `games()` reads the
    finished and running game counts from that database directly."""
    # 2. Register the bots and hand out tokens.
    for name in ("alice", "bob"):
        r = day.run(find(DOC, rf"maag bot add {name} --db", section="2."))
        assert r.returncode == 0, r.stdout + r.stderr
        day.tokens[name] = r.stdout.strip().splitlines()[-1]
        assert day.tokens[name].startswith("maag_"), r.stdout
    r = day.run(find(DOC, r"maag bot list"))
    assert r.returncode == 0 and "alice" in r.stdout and "bob" in r.stdout, r.stdout + r.stderr
    assert sorted(os.listdir(day.cwd)) == [], "made in the folder the commands ran in"

    # 3. The ladder as the systemd unit runs it, and two bots as the participants run them.
    unit = systemd_unit(DOC)
    with processes() as ps:
        log = tmp / "ladder-1.log"
        ladder = day.start(unit.exec_start, log)
        ps.append(ladder)
        wait_listening(day.port, ladder, log)
        ps += [day.bot(n, tmp / f"{n}-1.log") for n in ("alice", "bob")]
        wait_for("a finished game", lambda: games()[0] >= 1, 240, tail(log))
        for p in ps[1:]:
            stop(p)
        wait_for("no game running", lambda: games()[1] == 0, 120, tail(log))
        took = stop(ladder)
        assert took < STOP_S, f"SIGTERM with no game running took {took:.1f} s: {log.read_text()[-2000:]}"
    first = games()[0]
    # One id for a game everywhere: the ladder's "Started game N" and "Finished game N" name the
    # stored game (the database's id, `maag replay N`), whatever the order games start and end.
    text = (tmp / "ladder-1.log").read_text(errors="replace")
    started = re.findall(r"Started game (\d+) \((\w+) vs (\w+)\)", text)
    finished = re.findall(r"Finished game (\d+) \((\w+) vs (\w+)\)", text)
    assert finished and set(finished) <= set(started), text[-3000:]
    assert max(int(g) for g, _, _ in finished) == games.last_id(), text[-3000:]
    assert (day.www / "ladder" / "index.html").is_file()  # the unit's --out-html, written on stopping

    # Started again, it continues from its history.
    with processes() as ps:
        log = tmp / "ladder-2.log"
        ladder = day.start(unit.exec_start, log)
        ps.append(ladder)
        wait_listening(day.port, ladder, log)
        ps += [day.bot(n, tmp / f"{n}-2.log") for n in ("alice", "bob")]
        wait_for("a game after the restart", lambda: games()[0] > first, 240,
                 tail(log))
        for p in ps[1:]:
            stop(p)
        wait_for("no game running", lambda: games()[1] == 0, 120, tail(log))
        took = stop(ladder)
        assert took < STOP_S, f"SIGTERM with no game running took {took:.1f} s"

    # 4. The standings and a replay, from the database alone.
    total = games()[0]
    r = day.run(find(DOC, r"maag ladder --standings --db \"\$MAAG_DB\" --json"))
    assert r.returncode == 0, r.stdout + r.stderr
    table = json.loads(r.stdout)
    assert table["games"] == total and {row["bot"] for row in table["standings"]} == {"alice", "bob"}, table
    r = day.run(find(DOC, r"maag ladder --standings --db \"\$MAAG_DB\"$"))
    assert r.returncode == 0 and "alice" in r.stdout, r.stdout + r.stderr
    replay = find(DOC, r"maag replay 1234")
    r = day.run(replay.text.replace("1234", str(games.last_id())))
    assert r.returncode == 0 and "OK" in r.stdout, r.stdout + r.stderr

    # Nothing was made in the folder the commands ran in, nor a default database in HOME.
    assert sorted(os.listdir(day.cwd)) == []
    assert not list(day.home.rglob("*.sqlite3")), list(day.home.rglob("*"))


def test_a_day_on_postgresql_named_by_the_units_environment(deployed: Deployed, host_dirs: tuple[Path, Path],
                                                            postgres_db: str, tmp_path: Path) -> None:
    import psycopg

    documented = systemd_unit(DOC).environment["MAAG_DB"]
    assert re.fullmatch(r"postgresql://\w+:PASSWORD@[\w.]+:\d+/\w+", documented), documented
    cwd, home = host_dirs
    day = Day(deployed, cwd, home, postgres_db, tmp_path / "www")

    class Games:
        def __call__(self) -> tuple[int, int]:
            with psycopg.connect(postgres_db) as c:
                fin = c.execute("SELECT COUNT(*) FROM games WHERE status = 'finished'").fetchone()
                run = c.execute("SELECT COUNT(*) FROM games WHERE status = 'running'").fetchone()
            return (int(fin[0]) if fin else 0, int(run[0]) if run else 0)

        def last_id(self) -> int:
            with psycopg.connect(postgres_db) as c:
                row = c.execute("SELECT MAX(id) FROM games WHERE status = 'finished'").fetchone()
            assert row is not None
            return int(row[0])

    def tables_exist() -> bool:
        with psycopg.connect(postgres_db) as c:
            return c.execute("SELECT to_regclass('public.games')").fetchone() not in (None, (None,))

    assert not tables_exist()
    the_day(day, Games(), tmp_path)
    with psycopg.connect(postgres_db) as c:
        bots = sorted(r[0] for r in c.execute("SELECT name FROM bots").fetchall())
    assert bots == ["alice", "bob"]


def test_a_day_on_sqlite_named_by_a_url(deployed: Deployed, host_dirs: tuple[Path, Path],
                                        tmp_path: Path) -> None:
    import sqlite3

    cwd, home = host_dirs
    path = tmp_path / "data" / "competition.sqlite3"
    path.parent.mkdir()
    day = Day(deployed, cwd, home, f"sqlite:///{path}", tmp_path / "www")

    class Games:
        def _one(self, sql: str) -> int:
            if not path.exists():
                return 0
            con = sqlite3.connect(path)
            try:
                row = con.execute(sql).fetchone()
                return int(row[0] or 0)
            except sqlite3.OperationalError:  # no table yet
                return 0
            finally:
                con.close()

        def __call__(self) -> tuple[int, int]:
            return (self._one("SELECT COUNT(*) FROM games WHERE status = 'finished'"),
                    self._one("SELECT COUNT(*) FROM games WHERE status = 'running'"))

        def last_id(self) -> int:
            return self._one("SELECT MAX(id) FROM games WHERE status = 'finished'")

    the_day(day, Games(), tmp_path)
    assert path.is_file()


def test_a_day_of_hosted_bots_and_governing(deployed: Deployed, host_dirs: tuple[Path, Path],
                                           postgres_db: str,
                                           tmp_path: Path) -> None:
    """Section 5b (packages submitted, built and validated in the sandbox, a hosted ladder)
    and section 7 (a game voided, a bot pardoned, the rulings read back), on PostgreSQL named
    by MAAG_DB alone, each command as the doc writes it."""
    import io
    import tarfile

    from .conftest import REPO, sandbox_usable

    why = sandbox_usable()
    if why:
        pytest.skip(why)
    cwd, home = host_dirs
    day = Day(deployed, cwd, home, postgres_db, tmp_path / "www")
    # The participants' packages, where the doc's command expects them (the host names them).
    for name in ("alice", "bob"):
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as tf:
            tf.add(REPO / "examples" / "python-bot", arcname=name)
        (cwd / f"{name}.tar.gz").write_bytes(buf.getvalue())
    section = "5b."
    add, submit = find(DOC, r"maag bot add alice", section), find(DOC, r"maag bot submit", section)
    versions = find(DOC, r"maag bot versions", section)
    for name in ("alice", "bob"):
        r = day.run(add.text.replace("alice", name))
        assert r.returncode == 0, r.stdout + r.stderr
        r = day.run(submit.text.replace("alice", name))
        assert r.returncode == 0 and f"{name}@1\tactive" in r.stdout, r.stdout + r.stderr
        r = day.run(versions.text.replace("alice", name))
        assert r.returncode == 0 and f"{name}@1" in r.stdout and "active" in r.stdout, r.stdout + r.stderr

    class Games:
        def __call__(self) -> tuple[int, int]:
            import psycopg

            with psycopg.connect(postgres_db) as c:
                rows = c.execute("SELECT status, COUNT(*) FROM games WHERE match_id LIKE 'ladder:%' "
                                 "GROUP BY status").fetchall()
            got = dict(rows)
            return int(got.get("finished", 0)), int(got.get("running", 0))

    games = Games()
    with processes() as ps:
        log = tmp_path / "hosted-ladder.log"
        ladder = day.start(find(DOC, r"maag ladder .*--submitted", section).text, log)
        ps.append(ladder)
        wait_listening(day.port, ladder, log)
        wait_for("a hosted game", lambda: games()[0] >= 1, 240, tail(log))
        took = stop(ladder, timeout=120)
        assert ladder.returncode == 0, log.read_text(errors="replace")[-3000:]
    text = log.read_text(errors="replace")
    started = re.findall(r"Started game (\d+) \((\S+) vs (\S+)\)", text)
    assert started and {started[0][1], started[0][2]} == {"alice@1", "bob@1"}, text[-2000:]
    assert took < 120

    # 7. Governing: show a game, void it, pardon a bot, read the rulings.
    gid = started[0][0]
    section = "7."
    r = day.run(find(DOC, r"maag game show", section).text.replace("57", gid))
    assert r.returncode == 0 and gid in r.stdout, r.stdout + r.stderr
    r = day.run(find(DOC, r"maag game void", section).text.replace("57", gid))
    assert r.returncode == 0, r.stdout + r.stderr
    # The doc's pardon names the bot, bob: it covers its hosted versions, bob@1 here.
    r = day.run(find(DOC, r"maag bot pardon", section))
    assert r.returncode == 0, r.stdout + r.stderr
    r = day.run(find(DOC, r"maag game rulings", section))
    assert r.returncode == 0 and "void" in r.stdout and "pardon" in r.stdout, r.stdout + r.stderr
    assert "the host's OOM killer took bob's process" in r.stdout, r.stdout
    r = day.run(find(DOC, r"maag game show", section).text.replace("57", gid))
    assert "voided" in r.stdout, r.stdout
    # What the host named is all there is in the folder the commands ran in.
    assert sorted(os.listdir(cwd)) == ["alice.tar.gz", "bob.tar.gz"]
