"""Submissions (issue 43) from the host's side: `maag bot submit` stores a version, builds and
validates it in the sandbox, and only a version that passes becomes active; a newer one
retires it; a process that died mid-step leaves nothing working forever; tournaments take
NAME@VERSION; the hosted ladder plays the active versions. Real SQLite, real sandbox,
real referee, the `nim` game at short time controls."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from maag.server.hosting.api import HostOptions, pack, process_pending, resolve_bot, submit
from maag.server.storage.base import open_storage
from maag.server.storage.submissions import open_submission_store

ROOT = Path(__file__).resolve().parents[2]
GOOD = ROOT / "examples" / "python-bot"
C_BOT = ROOT / "examples" / "c-bot"


def _need_sandbox() -> None:
    import shutil

    if shutil.which("bwrap") is None or os.geteuid() != 0:
        if os.environ.get("CI"):
            pytest.fail("the sandbox needs bubblewrap and root here (CI)")
        pytest.skip("needs bubblewrap and root")


def maag(*args: str, cwd: Path | None = None, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "maag.server", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd)


def _pkg(folder: Path, manifest: str, files: dict[str, str] | None = None) -> Path:
    folder.mkdir(parents=True)
    (folder / "maag-bot.toml").write_text(manifest)
    for name, text in (files or {}).items():
        (folder / name).write_text(text)
    return folder


def test_submit_build_validate_activate_retire(tmp_path: Path) -> None:
    _need_sandbox()
    db = tmp_path / "db.sqlite3"
    assert maag("bot", "add", "alice", "--db", str(db)).returncode == 0
    common = ["--db", str(db), "--game", "nim", "--tc", "300ms", "--log-dir", str(tmp_path / "logs")]
    r = maag("bot", "submit", "alice", str(GOOD), "--json", *common)
    assert r.returncode == 0, r.stderr[-2000:]
    v1 = json.loads(r.stdout.splitlines()[-1])
    assert v1["status"] == "active" and v1["version"] == 1
    assert v1["report"]["passed"] and len(v1["report"]["games"]) == 4
    # A build that fails: rejected with the reason and the build's log; the active one stays.
    bad = _pkg(tmp_path / "badbuild", 'name = "x"\nrun = "./x"\nbuild = "echo compiling now; exit 3"\n')
    r = maag("bot", "submit", "alice", str(bad), "--json", *common)
    assert r.returncode == 1
    v2 = json.loads(r.stdout.splitlines()[-1])
    assert v2["status"] == "rejected" and "build failed" in v2["reason"]
    store = open_submission_store(db)
    try:
        got = store.get("alice", 2)
        assert got is not None and "compiling now" in (got.build_log or "")
        assert store.get("alice").version == 1  # type: ignore[union-attr]
    finally:
        store.close()
    # One that crashes: rejected by the bot kit's situations, run in the sandbox, with its report.
    crash = _pkg(tmp_path / "crash", 'name = "x"\nrun = "python3 -c \'import os; os.abort()\'"\n')
    r = maag("bot", "submit", "alice", str(crash), "--json", *common)
    v3 = json.loads(r.stdout.splitlines()[-1])
    assert v3["status"] == "rejected" and "bot check failed" in v3["reason"] and "134" in v3["reason"]
    assert not v3["report"]["passed"] and not v3["report"]["check"]["ok"]
    # The good one's report holds the kit's situations, passed.
    assert v1["report"]["check"]["ok"] and v1["report"]["check"]["situations"]
    # A newer good version (the C bot, built by make) retires version 1; its games stay.
    r = maag("bot", "submit", "alice", str(C_BOT), "--json", *common)
    assert r.returncode == 0, r.stderr[-2000:]
    v4 = json.loads(r.stdout.splitlines()[-1])
    assert v4["status"] == "active" and v4["version"] == 4
    store = open_submission_store(db)
    try:
        statuses = {v.version: v.status for v in store.versions("alice")}
        assert statuses == {1: "retired", 2: "rejected", 3: "rejected", 4: "active"}
        v = store.get("alice")
        assert v is not None and v.built is not None  # the built package is what games run
    finally:
        store.close()
    st = open_storage(db)
    try:
        old = [g for g in st.list_games(match_id="validate:alice@1") if g.status == "finished"]
        assert len(old) == 4 and all(st.get_replay(g.id) for g in old)
    finally:
        st.close()


def test_refused_packages_store_nothing(tmp_path: Path) -> None:
    import tarfile

    from maag.server.hosting.api import SubmissionRejected

    evil = tmp_path / "evil.tar.gz"
    with tarfile.open(evil, "w:gz") as tf:
        (tmp_path / "m").write_text('name = "e"\nrun = "true"\n')
        tf.add(tmp_path / "m", arcname="maag-bot.toml")
        tf.add(tmp_path / "m", arcname="../escape")
    with pytest.raises(SubmissionRejected, match="outside the package"):
        pack(evil)
    big = _pkg(tmp_path / "big", 'name = "b"\nrun = "true"\n')
    (big / "blob").write_bytes(os.urandom(300_000))
    with pytest.raises(SubmissionRejected, match="more than the limit"):
        pack(big, max_bytes=100_000)
    store = open_submission_store(tmp_path / "db.sqlite3")
    try:
        assert store.versions() == []
    finally:
        store.close()


def test_a_version_left_mid_step_is_processed_again(tmp_path: Path) -> None:
    _need_sandbox()
    db = tmp_path / "db.sqlite3"
    store = open_submission_store(db)
    try:
        data, pkg = pack(GOOD)
        v = submit(store, "alice", data, pkg)
        # A process took it and died while validating.
        assert store.move("alice", v.version, ("pending",), "building")
        assert store.move("alice", v.version, ("building",), "validating")
        done = asyncio.run(process_pending(store, str(db), game="nim", game_config={}, tc="300ms",
                                           options=HostOptions(), log_dir=tmp_path / "logs"))
        assert [x.status for x in done] == ["active"]
        assert store.versions(status="validating") == [] and store.versions(status="building") == []
        assert resolve_bot(store, "alice") == ("alice@1", "package:sha256:" + v.sha256)
        assert resolve_bot(store, "mcts") is None
        with pytest.raises(ValueError, match="no such version"):
            resolve_bot(store, "alice@7")
    finally:
        store.close()


def test_hosted_ladder_and_tournament_play_submitted_versions(tmp_path: Path) -> None:
    _need_sandbox()
    db = tmp_path / "db.sqlite3"
    store = open_submission_store(db)
    try:
        for name in ("alice", "bob", "carol"):
            data, pkg = pack(GOOD)
            submit(store, name, data, pkg)
        done = asyncio.run(process_pending(store, str(db), game="nim", game_config={}, tc="300ms",
                                           options=HostOptions(), log_dir=tmp_path / "logs"))
        assert [x.status for x in done] == ["active"] * 3
    finally:
        store.close()
    r = maag("ladder", "--db", str(db), "--game", "nim", "--tc", "300ms", "--submitted", "only",
             "--max-games", "6", "--port", "0", "--json")
    assert r.returncode == 0, r.stderr[-2000:]
    summary = json.loads(r.stdout.splitlines()[-1])
    rows = {row["bot"]: row for row in summary["standings"]}
    assert set(rows) == {"alice@1", "bob@1", "carol@1"}
    assert sum(row["games"] for row in rows.values()) == 12  # 6 games, each counted for two bots
    st = open_storage(db)
    try:
        ladder_games = st.list_games(match_id="ladder:main")
        assert len(ladder_games) == 6 and len({g.id for g in ladder_games}) == 6
        assert all(g.status == "finished" and g.verdict is None for g in ladder_games)
    finally:
        st.close()
    r = maag("tournament", "--db", str(db), "--game", "nim", "--tc", "300ms", "--bot", "alice@1",
             "--bot", "bob", "--games-per-pair", "2", "--json")
    assert r.returncode == 0, r.stderr[-2000:]
    names = {row["bot"] for row in json.loads(r.stdout.splitlines()[-1])["standings"]}
    assert names == {"alice@1", "bob@1"}


def _worker_pids(client: object) -> list[int]:
    return list(client.run(os.getpid).values())  # type: ignore[attr-defined]


def test_hosted_ladder_on_dask_survives_a_worker_killed(tmp_path: Path) -> None:
    """Three submitted bots on a local Dask cluster of two workers; one worker is killed with
    -9 while it plays: every finished game is stored once, the ladder plays on to its count,
    and the killed worker's game is not counted (it stays running or aborted, never finished)."""
    _need_sandbox()
    import signal
    import threading
    import time

    from maag.server.compete.ladder import Ladder
    from maag.server.net.server import ServerConfig
    from maag.server.referee.clock import TimeControl

    db = tmp_path / "db.sqlite3"
    store = open_submission_store(db)
    try:
        for name in ("alice", "bob", "carol"):
            data, pkg = pack(GOOD)
            submit(store, name, data, pkg)
        done = asyncio.run(process_pending(store, str(db), game="nim", game_config={}, tc="300ms",
                                           options=HostOptions(), log_dir=tmp_path / "logs"))
        assert [x.status for x in done] == ["active"] * 3
    finally:
        store.close()
    cfg = ServerConfig(port=0, game="nim", tc=TimeControl.parse("300ms"))
    ladder = Ladder(str(db), cfg, max_games=8, submitted="only", slots=2, cluster="local",
                    log_dir=str(tmp_path / "ladder-logs"))
    killed: list[int] = []

    def killer() -> None:  # once both workers play, kill one
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not killed:
            time.sleep(0.2)
            d = ladder.hosting.dask
            if d is None or ladder.finished < 1:
                continue
            pids = _worker_pids(d[0])
            if len(pids) >= 2:
                os.kill(pids[0], signal.SIGKILL)
                killed.append(pids[0])

    t = threading.Thread(target=killer, daemon=True)
    t.start()
    asyncio.run(ladder.run())
    t.join(5)
    assert killed, "no worker was killed: the test did not test anything"
    st = open_storage(db)
    try:
        games = st.list_games(match_id="ladder:main", limit=1000)
    finally:
        st.close()
    finished = [g for g in games if g.status == "finished"]
    assert len({g.id for g in finished}) == len(finished)
    assert len(ladder.outcomes) == len(finished) >= 8 - 1  # a game lost with the worker is not counted
    assert all(g.status in ("finished", "running", "aborted") for g in games)
