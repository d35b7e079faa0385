"""How a host names the database (issue 54): `--db`, else `$MAAG_DB`, else the default file,
turned into a database in one place (maag.server.storage.backend.resolve_db) for every
command. Real `maag` processes in an empty folder, against real SQLite files and the test
suite's real PostgreSQL: a URL in $MAAG_DB opens that database and never becomes a path (it
once made folders `postgresql:` and `sqlite:` in the current folder while PostgreSQL stayed
empty); a malformed name is refused, naming the accepted forms; `maag bot submit` and
`maag bot process` store their smoke games in that database (not in a file named `None`);
`maag ladder --submitted` runs without --db. After every command, the current folder and the
user's data directory hold only what the test named."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from maag.server.storage.backend import UnsupportedURL, resolve_db
from maag.server.storage.base import open_storage

ROOT = Path(__file__).resolve().parents[2]
GOOD = ROOT / "examples" / "python-bot"

# The accepted forms, as every refusal names them (docs/competitions.md, section 1).
FORMS = ("sqlite:///PATH", "postgresql://USER:PASSWORD@HOST:PORT/DB")


class Host:
    """A host's shell: an empty current folder, a home of its own (the default database
    would be in its data directory) and $MAAG_DB set or not."""

    def __init__(self, tmp_path: Path) -> None:
        self.cwd = tmp_path / "cwd"
        self.home = tmp_path / "home"
        self.cwd.mkdir()
        self.home.mkdir()

    def maag(self, *args: str, db: str | None = None,
             timeout: float = 240) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if k not in ("MAAG_DB", "XDG_DATA_HOME")}
        env["HOME"] = str(self.home)
        if db is not None:
            env["MAAG_DB"] = db
        return subprocess.run([sys.executable, "-m", "maag.server", *args], cwd=self.cwd, env=env,
                              capture_output=True, text=True, timeout=timeout)

    def left(self) -> tuple[list[str], list[str]]:
        """What is in the current folder, and in the user's data directory (where the
        default database is), now. (The package cache and the spill folder have their own
        places in the home folder.)"""
        data = self.home / ".local" / "share"
        return sorted(os.listdir(self.cwd)), sorted(str(p.relative_to(data)) for p in data.rglob("*"))


def bots_in_postgres(url: str) -> list[str]:
    with psycopg.connect(url) as conn:
        return [r[0] for r in conn.execute("SELECT name FROM bots ORDER BY name").fetchall()]


@pytest.mark.parametrize("scheme", ["postgresql", "postgres"])
def test_maag_db_postgres_url_writes_to_postgres(tmp_path: Path, postgres_db: str, scheme: str) -> None:
    """The systemd unit's way (docs/competitions.md): the URL only in $MAAG_DB, no --db."""
    host = Host(tmp_path)
    url = scheme + postgres_db[postgres_db.index("://"):]
    r = host.maag("bot", "add", "alice", db=url)
    assert r.returncode == 0, r.stderr
    token = r.stdout.strip().splitlines()[-1]
    assert token.startswith("maag_")
    r = host.maag("bot", "list", db=url)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\t")[0] == "alice"
    assert bots_in_postgres(postgres_db) == ["alice"]
    # A standings read and a replay look-up go to the same database (no game 1 there).
    r = host.maag("ladder", "--standings", "--json", db=url)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout.splitlines()[-1])["games"] == 0
    assert host.left() == ([], []) and os.listdir(host.home) == []


def test_sqlite_url_and_paths(tmp_path: Path) -> None:
    host = Host(tmp_path)
    absolute = tmp_path / "data" / "abs.sqlite3"
    # sqlite:///PATH with an absolute PATH: that file (its folder made), nothing in the cwd.
    r = host.maag("bot", "add", "alice", db=f"sqlite:///{absolute}")
    assert r.returncode == 0, r.stderr
    r = host.maag("bot", "list", db=f"sqlite:///{absolute}")
    assert r.returncode == 0 and r.stdout.startswith("alice\t"), r.stderr
    st = open_storage(absolute)
    try:
        assert [b.name for b in st.list_bots()] == ["alice"]
    finally:
        st.close()
    assert host.left() == ([], []) and os.listdir(host.home) == []
    # sqlite:///NAME: NAME in the current folder; a plain path too; --db wins over $MAAG_DB.
    assert host.maag("bot", "add", "bob", db="sqlite:///rel.sqlite3").returncode == 0
    assert host.maag("bot", "add", "carol", db="plain.sqlite3").returncode == 0
    r = host.maag("bot", "add", "dave", "--db", "sqlite:///flag.sqlite3", db=f"sqlite:///{absolute}")
    assert r.returncode == 0, r.stderr
    assert host.left() == (["flag.sqlite3", "plain.sqlite3", "rel.sqlite3"], [])
    for name, bot in (("rel.sqlite3", "bob"), ("plain.sqlite3", "carol"), ("flag.sqlite3", "dave")):
        st = open_storage(host.cwd / name)
        try:
            assert [b.name for b in st.list_bots()] == [bot]
        finally:
            st.close()
    # Neither --db nor $MAAG_DB: the documented default in the user's data directory; the
    # docs' `--db "$MAAG_DB"` with the variable unset means it too.
    r = host.maag("bot", "add", "erin")
    assert r.returncode == 0, r.stderr
    r = host.maag("bot", "add", "fred", "--db", "")
    assert r.returncode == 0, r.stderr
    assert host.left() == (["flag.sqlite3", "plain.sqlite3", "rel.sqlite3"], ["maag", "maag/maag.sqlite3"])
    st = open_storage(host.home / ".local" / "share" / "maag" / "maag.sqlite3")
    try:
        assert sorted(b.name for b in st.list_bots()) == ["erin", "fred"]
    finally:
        st.close()


def test_resolve_db_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What each form names, in the process (the subprocess tests above show its effects)."""
    monkeypatch.chdir(tmp_path)
    env = {"MAAG_DB": "postgresql://maag:pw@db:5432/ladder"}
    assert resolve_db(None, environ=env).url == "postgresql://maag:pw@db:5432/ladder"
    assert resolve_db("", environ=env).scheme == "postgresql"
    assert resolve_db("x.sqlite3", environ=env).path == tmp_path / "x.sqlite3"
    assert resolve_db("sqlite:///x.sqlite3", environ={}).path == tmp_path / "x.sqlite3"
    assert resolve_db(f"sqlite:///{tmp_path}/y.sqlite3", environ={}).url == f"sqlite:///{tmp_path}/y.sqlite3"
    assert resolve_db("postgres://h/d", environ={}).scheme == "postgres"
    assert resolve_db("sqlite:///:memory:", environ={}).path is None
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert resolve_db(None, environ={}).path == tmp_path / "data" / "maag" / "maag.sqlite3"
    with pytest.raises(UnsupportedURL, match=r"\$MAAG_DB 'postgresql:/maag:\*\*\*@db/ladder' names no "):
        resolve_db(None, environ={"MAAG_DB": "postgresql:/maag:pw@db/ladder"})
    assert os.listdir(tmp_path) == []


BAD = ["sqlite:cup.sqlite3", "postgresql:/maag:hunter2@127.0.0.1:5432/competition", "mysql://maag@h/db",
       "sqlite://host/cup.sqlite3", "sqlite:///", "SQLITE:///cup.sqlite3"]

# Every command that opens the database, as a host types it (each refused before it starts).
COMMANDS = [["bot", "add", "alice"], ["bot", "list"], ["bot", "versions"], ["bot", "process"],
            ["bot", "submit", "alice", str(GOOD)], ["replay", "1"], ["ladder", "--standings"],
            ["ladder", "--port", "0"], ["serve", "--port", "0"],
            ["match", "random", "first", "--games", "1"], ["tournament", "--bot", "random", "--bot", "first"]]


@pytest.mark.parametrize("bad", BAD)
def test_malformed_names_refused(tmp_path: Path, bad: str) -> None:
    host = Host(tmp_path)
    for how in ("env", "flag"):
        r = (host.maag("bot", "list", db=bad) if how == "env" else
             host.maag("bot", "list", "--db", bad, db=str(tmp_path / "ok.sqlite3")))
        assert r.returncode == 2, (how, r.stdout, r.stderr)
        assert all(f in r.stderr for f in FORMS), r.stderr
        assert ("$MAAG_DB" if how == "env" else "--db") in r.stderr
        assert "Traceback" not in r.stderr and "hunter2" not in r.stderr, r.stderr
    assert host.left() == ([], []) and not (host.home / ".local").exists()
    assert not (tmp_path / "ok.sqlite3").exists()


def test_every_command_refuses_a_malformed_maag_db(tmp_path: Path) -> None:
    host = Host(tmp_path)
    for cmd in COMMANDS:
        r = host.maag(*cmd, db="postgresql:/maag:maag@127.0.0.1:55499/competition", timeout=60)
        assert r.returncode == 2, (cmd, r.stdout, r.stderr[-2000:])
        assert all(f in r.stderr for f in FORMS) and "Traceback" not in r.stderr, (cmd, r.stderr)
        assert host.left() == ([], []) and os.listdir(host.home) == [], cmd


def _need_sandbox() -> None:
    if shutil.which("bwrap") is None or os.geteuid() != 0:
        if os.environ.get("CI"):
            pytest.fail("the sandbox needs bubblewrap and root here (CI)")
        pytest.skip("needs bubblewrap and root")


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_hosted_flow_without_db(tmp_path: Path, backend: str, request: pytest.FixtureRequest) -> None:
    """docs/competitions.md, "Hosted bots", with the database named by $MAAG_DB alone:
    submit (and process) store their smoke games in it, `maag replay` finds them, and the
    ladder plays the submitted versions."""
    _need_sandbox()
    host = Host(tmp_path)
    url = (f"sqlite:///{tmp_path / 'data' / 'maag.sqlite3'}" if backend == "sqlite"
           else str(request.getfixturevalue("postgres_db")))
    for name in ("alice", "bob"):
        assert host.maag("bot", "add", name, db=url).returncode == 0
    game = ["--game", "nim", "--tc", "300ms"]
    r = host.maag("bot", "submit", "alice", str(GOOD), "--json", *game, db=url)
    assert r.returncode == 0, r.stderr[-2000:]
    v = json.loads(r.stdout.splitlines()[-1])
    assert v["status"] == "active" and len(v["report"]["games"]) == 4, v
    # Its smoke games are in the host's database: `maag replay` shows one from there.
    smoke = v["report"]["games"][0]["game_id"]
    st = open_storage(url)
    try:
        g = st.get_game(smoke)
        assert g is not None and g.match_id == "validate:alice@1" and g.status == "finished"
    finally:
        st.close()
    r = host.maag("replay", str(smoke), "--json", db=url)
    assert r.returncode == 0, r.stderr[-2000:]
    assert host.left() == ([], [])
    # A version stored pending, built and validated by `maag bot process`.
    r = host.maag("bot", "submit", "bob", str(GOOD), "--no-process", "--json", *game, db=url)
    assert r.returncode == 0 and json.loads(r.stdout.splitlines()[-1])["status"] == "pending", r.stderr
    r = host.maag("bot", "process", "--json", *game, db=url)
    assert r.returncode == 0, r.stderr[-2000:]
    assert [x["status"] for x in json.loads(r.stdout.splitlines()[-1])] == ["active"]
    assert host.left() == ([], [])
    # The ladder of submitted versions, its database from $MAAG_DB only.
    r = host.maag("ladder", "--submitted", "also", "--max-games", "2", "--port", "0", "--json", *game, db=url)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "AssertionError" not in r.stderr
    rows = {row["bot"]: row["games"] for row in json.loads(r.stdout.splitlines()[-1])["standings"]}
    assert rows == {"alice@1": 2, "bob@1": 2}, rows
    assert host.left() == ([], [])
