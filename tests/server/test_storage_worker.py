"""The storage thread's group commit (server/storage/worker.py) on a real SQLite file: the jobs
that queue up behind one are committed in one transaction, each a savepoint (its error undoes
its own writes and reaches its caller only), no job is told it succeeded before the commit,
and a failed commit or a transaction lost under the batch fails every job of it, nothing
stored. The batch is made deterministic by holding the thread with a job that waits."""

from __future__ import annotations

import asyncio
import concurrent.futures
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from maag.server.storage.backend import StorageError, StorageUnavailable
from maag.server.storage.base import AsyncStorage, SQLiteStorage, open_storage
from maag.server.storage.rulings import add_host, host_by_token
from maag.server.storage.sqlite import SQLiteDatabase
from maag.server.storage.worker import MAX_BATCH, StorageThread

WAIT = 30.0


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tuple[SQLiteStorage, StorageThread, list[str]]]:
    """A games store on a file, its storage thread, and every transaction statement its
    connection ran (BEGIN, SAVEPOINT, COMMIT...), as SQLite traced them."""
    st = SQLiteStorage(tmp_path / "w.sqlite3")
    db = st.db
    assert isinstance(db, SQLiteDatabase)
    traced: list[str] = []
    db._db.set_trace_callback(lambda s: traced.append(s.split()[0].upper()))
    thread = StorageThread(db)
    yield st, thread, traced
    thread.stop()
    st.close()


def held(thread: StorageThread) -> threading.Event:
    """Hold the thread with a job that waits: the jobs given meanwhile queue up behind it."""
    gate, started = threading.Event(), threading.Event()

    def wait() -> None:
        started.set()
        gate.wait(WAIT)

    thread.submit(wait)
    assert started.wait(WAIT)
    return gate


def games(st: SQLiteStorage) -> list[str]:
    return [g.seats[0] for g in st.list_games()]


def test_jobs_queued_behind_one_are_committed_together_in_order(
        store: tuple[SQLiteStorage, StorageThread, list[str]]) -> None:
    st, thread, traced = store
    gate = held(thread)
    traced.clear()
    futures = [thread.submit(lambda i=i: st.create_game("nim", {}, (f"p{i}", "q"), "inf")) for i in range(10)]
    assert thread.queued() == 10 and not any(f.done() for f in futures)
    # When the first job is told, every write of the batch is committed: another connection sees them.
    seen: list[int] = []
    futures[0].add_done_callback(lambda f: seen.append(
        sqlite3.connect(st.db.path).execute("SELECT COUNT(*) FROM games").fetchone()[0]))
    gate.set()
    ids = [f.result(WAIT) for f in futures]
    assert ids == sorted(ids) and len(set(ids)) == 10  # run in the order given
    assert traced.count("COMMIT") == 1 and traced.count("BEGIN") == 1  # one transaction ...
    assert traced.count("SAVEPOINT") == 10 and traced.count("RELEASE") == 10  # ... a savepoint a job
    assert seen == [10] and sorted(games(st)) == sorted(f"p{i}" for i in range(10))
    # One job alone is its own transaction, as before.
    traced.clear()
    assert thread.submit(lambda: st.create_game("nim", {}, ("alone", "q"), "inf")).result(WAIT) > ids[-1]
    assert traced.count("BEGIN") == 1 and traced.count("SAVEPOINT") == 0


def test_a_jobs_error_undoes_its_own_writes_and_reaches_it_alone(
        store: tuple[SQLiteStorage, StorageThread, list[str]]) -> None:
    st, thread, _ = store
    db = st.db

    def half_done() -> None:
        def tx(cur: Any) -> None:
            db.execute(cur, "INSERT INTO bots (name, token_hash, created) VALUES ('half', 'h', 'now')")
            raise StorageError("refused after a write")
        db.tx(tx)

    gate = held(thread)
    before = thread.submit(lambda: st.add_bot("before"))
    failing = thread.submit(half_done)
    python_error = thread.submit(lambda: 1 // 0)
    after = thread.submit(lambda: st.add_bot("after"))
    gate.set()
    assert before.result(WAIT) and after.result(WAIT)
    with pytest.raises(StorageError, match="refused after a write"):
        failing.result(WAIT)
    with pytest.raises(ZeroDivisionError):
        python_error.result(WAIT)
    assert sorted(b.name for b in st.list_bots()) == ["after", "before"]  # not "half"


def test_a_failed_commit_fails_every_job_of_the_batch_and_stores_none(
        store: tuple[SQLiteStorage, StorageThread, list[str]]) -> None:
    st, thread, _ = store
    db = st.db
    # A constraint SQLite checks only at COMMIT: a deferred foreign key.
    thread.submit(lambda: db.tx(lambda cur: cur.execute(
        "CREATE TABLE later (ref INTEGER REFERENCES games (id) DEFERRABLE INITIALLY DEFERRED)"))).result(WAIT)
    gate = held(thread)
    first = thread.submit(lambda: st.create_game("nim", {}, ("kept?", "q"), "inf"))
    dangling = thread.submit(lambda: db.tx(lambda cur: cur.execute("INSERT INTO later VALUES (424242)")))
    gate.set()
    for f in (first, dangling):
        with pytest.raises(sqlite3.IntegrityError):
            f.result(WAIT)
    assert games(st) == [] and st.db.query("SELECT COUNT(*) FROM later") == [(0,)]
    # The next batch commits as usual.
    gate = held(thread)
    ok = [thread.submit(lambda i=i: st.add_bot(f"b{i}")) for i in range(3)]
    gate.set()
    assert all(f.result(WAIT) for f in ok) and len(st.list_bots()) == 3


def test_a_transaction_lost_under_the_batch_fails_every_job_and_nothing_is_written_after_it(
        store: tuple[SQLiteStorage, StorageThread, list[str]]) -> None:
    st, thread, _ = store
    db = st.db
    gate = held(thread)
    written = thread.submit(lambda: st.add_bot("written"))
    rogue = thread.submit(lambda: db.tx(lambda cur: cur.execute("ROLLBACK")))  # ends the batch's transaction
    later = thread.submit(lambda: st.add_bot("later"))  # must not be written outside a transaction
    gate.set()
    for f in (written, rogue, later):
        with pytest.raises(StorageUnavailable):
            f.result(WAIT)
    assert st.list_bots() == []
    assert thread.submit(lambda: st.add_bot("next")).result(WAIT) and len(st.list_bots()) == 1


def test_a_table_made_by_a_job_of_a_batch_does_not_commit_the_batch_early(
        store: tuple[SQLiteStorage, StorageThread, list[str]], tmp_path: Path) -> None:
    """A job's first use of the hosts' table creates it (rulings.py `ensure`, a script):
    inside a batch its statements run in the job's savepoint, not as a script, which would
    commit the batch first (and a second lock would hang the thread)."""
    st, thread, traced = store
    token = add_host(st, "judge")  # (the table made outside a batch)
    fresh = SQLiteStorage(tmp_path / "fresh.sqlite3")
    other = StorageThread(fresh.db)
    try:
        gate = held(other)
        jobs: list[concurrent.futures.Future[Any]] = [
            other.submit(lambda: fresh.add_bot("x")), other.submit(lambda: host_by_token(fresh, "nobody")),
            other.submit(lambda: fresh.add_bot("y"))]
        gate.set()
        assert jobs[0].result(WAIT) and jobs[1].result(WAIT) is None and jobs[2].result(WAIT)
        assert len(fresh.list_bots()) == 2
    finally:
        other.stop()
        fresh.close()
    assert thread.submit(lambda: host_by_token(st, token)).result(WAIT) == "judge"


def test_a_batch_takes_at_most_max_batch_jobs_and_stop_runs_what_is_queued(
        store: tuple[SQLiteStorage, StorageThread, list[str]]) -> None:
    st, thread, traced = store
    gate = held(thread)
    traced.clear()
    n = MAX_BATCH + 5
    futures = [thread.submit(lambda i=i: st.add_bot(f"b{i}")) for i in range(n)]
    gate.set()
    thread.stop()  # (after the jobs queued: they run first)
    assert all(f.done() and f.result() for f in futures)
    assert traced.count("COMMIT") == 2 and len(st.list_bots()) == n
    with pytest.raises(RuntimeError):
        thread.submit(lambda: None)


def test_the_referees_storage_awaits_its_jobs_commits(tmp_path: Path) -> None:
    async def main() -> None:
        st = AsyncStorage(SQLiteStorage(tmp_path / "a.sqlite3"))
        gate = held(st.thread)
        calls: list[Callable[[], Any]] = [lambda: st.storage.create_game("nim", {}, ("a", "b"), "inf")] * 5
        tasks = [asyncio.ensure_future(st.run(c)) for c in calls]
        await asyncio.sleep(0.05)
        assert not any(t.done() for t in tasks)
        gate.set()
        ids = await asyncio.gather(*tasks)
        assert len(set(ids)) == 5 and all(isinstance(i, int) for i in ids)
        st.close()

    asyncio.run(main())


def test_a_job_given_up_before_it_started_is_not_run_and_the_thread_goes_on(tmp_path: Path) -> None:
    """A caller cancelled while its job waits (a stopping referee's task): the job is dropped,
    as an executor drops it, and the jobs around it run (once, a cancelled job's future
    ended the thread and every later job waited for ever)."""
    async def main() -> None:
        st = AsyncStorage(SQLiteStorage(tmp_path / "c.sqlite3"))
        gate = held(st.thread)
        kept = asyncio.ensure_future(st.run(st.storage.add_bot, "kept"))
        dropped = asyncio.ensure_future(st.run(st.storage.add_bot, "dropped"))
        alone = asyncio.ensure_future(st.run(st.storage.add_bot, "also kept"))
        await asyncio.sleep(0.05)
        dropped.cancel()
        await asyncio.sleep(0.05)
        gate.set()
        assert await kept and await alone
        with pytest.raises(asyncio.CancelledError):
            await dropped
        assert await st.run(st.storage.add_bot, "after")
        assert sorted(b.name for b in st.storage.list_bots()) == ["after", "also kept", "kept"]
        st.close()

    asyncio.run(main())


def test_on_postgresql_each_job_is_its_own_transaction_and_told_at_once(postgres_db: str) -> None:
    """A backend that does not batch (PostgreSQL, for now): the jobs queued behind one run
    one by one, each committed and its caller told before the next runs."""
    st = open_storage(postgres_db)
    thread = StorageThread(st.db)
    try:
        gate = held(thread)
        first = thread.submit(lambda: st.add_bot("first"))
        told: list[bool] = []

        def second_job() -> str:
            told.append(first.done())
            return st.add_bot("second")

        second = thread.submit(second_job)
        failing = thread.submit(lambda: st.add_bot("first"))  # (the name is taken)
        gate.set()
        assert first.result(WAIT) and second.result(WAIT) and told == [True]
        with pytest.raises(StorageError):
            failing.result(WAIT)
        assert sorted(b.name for b in st.list_bots()) == ["first", "second"]
    finally:
        thread.stop()
        st.close()


def test_a_process_leaving_without_stopping_the_thread_still_stores_what_was_queued(tmp_path: Path) -> None:
    """At the interpreter's exit the queued jobs run (a result being stored is not cut off
    with a daemon thread), as an executor's did."""
    import subprocess
    import sys
    script = (
        "import sys, time\n"
        "from maag.server.storage.base import SQLiteStorage\n"
        "from maag.server.storage.worker import StorageThread\n"
        "st = SQLiteStorage(sys.argv[1])\n"
        "t = StorageThread(st.db)\n"
        "t.submit(lambda: time.sleep(0.3))\n"
        "for i in range(5):\n"
        "    t.submit(lambda i=i: st.add_bot(f'b{i}'))\n")
    db = tmp_path / "exit.sqlite3"
    r = subprocess.run([sys.executable, "-c", script, str(db)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    st = SQLiteStorage(db)
    assert sorted(b.name for b in st.list_bots()) == [f"b{i}" for i in range(5)]
    st.close()
