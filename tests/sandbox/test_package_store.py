"""The package store (issue 55): an uploaded package is checked and unpacked once per
machine, whatever way it comes in (an upload, its processing, a match given the archive, a
tournament or ladder given the stored version), and its validation (the kit's situations and
the smoke games) runs on one referee. Real archives, real sandbox, real referee, `nim`."""

from __future__ import annotations

import asyncio
import os
import shutil
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from maag.server.hosting.api import (
    HostOptions,
    SubmissionRejected,
    hosted_bot,
    pack,
    package_store,
    process,
    submit,
)
from maag.server.net.server import RefereeServer
from maag.server.storage.submissions import open_submission_store

ROOT = Path(__file__).resolve().parents[2]
GOOD = ROOT / "examples" / "python-bot"


@pytest.fixture
def referees_started(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """How many referees start while the test runs (the real start, counted)."""
    count = [0]
    real = RefereeServer.start

    async def start(self: RefereeServer) -> None:
        count[0] += 1
        await real(self)

    monkeypatch.setattr(RefereeServer, "start", start)
    yield count


def test_an_upload_is_unpacked_once_and_validated_on_one_referee(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, referees_started: list[int]) -> None:
    if shutil.which("bwrap") is None or os.geteuid() != 0:
        if os.environ.get("CI"):
            pytest.fail("the sandbox needs bubblewrap and root here (CI)")
        pytest.skip("needs bubblewrap and root")
    monkeypatch.setenv("MAAG_PACKAGE_CACHE", str(tmp_path / "cache"))
    store = package_store()
    assert store.unpacked == 0
    archive = tmp_path / "bot.tar.gz"
    with tarfile.open(archive, "w:gz") as tf:
        tf.add(GOOD, arcname="bot")
    db = tmp_path / "db.sqlite3"
    subs = open_submission_store(str(db))
    options = HostOptions(max_threads=2)
    try:
        data, pkg = pack(archive, options=options)
        assert store.unpacked == 1  # checked where it will run from
        v = submit(subs, "alice", data, pkg)
        done = asyncio.run(process(subs, str(db), v, game="nim", game_config={}, tc="300ms",
                                   options=options, log_dir=tmp_path / "logs"))
        assert done.status == "active", (done.reason, done.report)
        assert len(done.report["games"]) == 4 and done.report["check"]["situations"]
        assert store.unpacked == 1, "processing unpacked the package again"
        assert referees_started[0] == 1, f"{referees_started[0]} referees for one validation"
        # Every later way in reads the store: the same upload again, a match given the
        # archive, a tournament or the ladder given the stored version.
        pack(archive, options=options)
        work = tmp_path / "work"
        work.mkdir()
        assert hosted_bot(str(archive), "a", options, work) is not None
        assert hosted_bot(f"package:sha256:{v.sha256}", "b", options, work, db_url=str(db)) is not None
        assert store.unpacked == 1
        # A folder packs to the same bytes every time: unpacked once, however often uploaded.
        pack(GOOD, options=options)
        pack(GOOD, options=options)
        assert store.unpacked == 2
    finally:
        subs.close()


def test_a_refused_upload_leaves_nothing_in_the_store(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAAG_PACKAGE_CACHE", str(tmp_path / "cache"))
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "maag-bot.toml").write_text('name = "x"\nthread = 2\nrun = "./x"\n')
    with pytest.raises(SubmissionRejected, match=r"^bot/maag-bot.toml:2: unknown key 'thread'"):
        pack(bad)
    evil = tmp_path / "evil.tar.gz"
    with tarfile.open(evil, "w:gz") as tf:
        link = tarfile.TarInfo("bot/out")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc"
        tf.addfile(link)
    with pytest.raises(SubmissionRejected, match="evil.tar.gz"):
        pack(evil)
    assert package_store().unpacked == 2
    assert not [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]
