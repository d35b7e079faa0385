"""One storage suite, run against SQLite and a real PostgreSQL (`postgres_db` fixture)."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from maag.server.storage.base import Storage, StorageError, open_storage

# db_url (tests/conftest.py): a URL naming an empty database of each backend.


@pytest.fixture
def store(db_url: str) -> Iterator[Storage]:
    s = open_storage(db_url)
    yield s
    s.close()


def replay(winner: int | None = 0, reason: str = "rules", plies: int = 12, seed: int = 77) -> dict[str, Any]:
    return {"game": "heroes", "seed": seed, "actions": [{"type": "end_turn"}] * plies,
            "result": {"winner": winner, "reason": reason, "plies": plies},
            "tags": {"event": "test"}, "clock": {"think_ms": [1.5, 2.5]}}


def test_backend_class(store: Storage, db_url: str) -> None:
    expected = "PostgresDatabase" if db_url.startswith("postgresql://") else "SQLiteDatabase"
    assert type(store.db).__name__ == expected


def test_bots_and_tokens(store: Storage) -> None:
    t1 = store.add_bot("alpha")
    t2 = store.add_bot("beta")
    assert t1 != t2 and t1.startswith("maag_")
    assert store.bot_by_token(t1) == "alpha" and store.bot_by_token(t2) == "beta"
    assert store.bot_by_token("maag_nope") is None
    assert [b.name for b in store.list_bots()] == ["alpha", "beta"]
    with pytest.raises(StorageError):
        store.add_bot("alpha")
    t3 = store.add_bot("alpha", replace=True)
    assert store.bot_by_token(t1) is None and store.bot_by_token(t3) == "alpha"
    for bad in ("", " x", "a\nb", "n" * 65):
        with pytest.raises(StorageError):
            store.add_bot(bad)
    assert len(store.list_bots()) == 2


def test_games_results_replays(store: Storage) -> None:
    g1 = store.create_game("heroes", {"map": "a"}, ("alpha", "beta"), "10/1+0.1", match_id="m1")
    g2 = store.create_game("heroes", {"map": "b"}, ("beta", "alpha"), "10/1+0.1", match_id="m1")
    g3 = store.create_game("heroes", {}, ("x", "y"), "inf")
    assert g1 < g2 < g3
    rec = store.get_game(g1)
    assert rec is not None and rec.status == "running" and rec.seats == ("alpha", "beta")
    assert rec.config == {"map": "a"} and rec.match_id == "m1" and rec.winner is None
    store.finish_game(g1, replay(winner=1, plies=30))
    rec = store.get_game(g1)
    assert rec is not None and (rec.status, rec.winner, rec.reason, rec.plies) == ("finished", 1, "rules", 30)
    assert rec.finished is not None
    assert store.get_replay(g1) == replay(winner=1, plies=30)
    assert store.get_replay(g2) is None and store.get_game(9999) is None
    # Finishing twice is refused and changes nothing.
    with pytest.raises(StorageError):
        store.finish_game(g1, replay(winner=0))
    assert store.get_replay(g1) == replay(winner=1, plies=30)
    store.finish_game(g2, replay(winner=-1, reason="turn_limit"))
    assert [g.id for g in store.list_games(match_id="m1")] == [g2, g1]
    assert [g.id for g in store.list_games(status="running")] == [g3]
    assert [g.id for g in store.list_games(limit=2)] == [g3, g2]
    assert store.get_game(g2).winner == -1  # type: ignore[union-attr]


def test_aborts(store: Storage) -> None:
    g1 = store.create_game("heroes", {}, ("a", "b"), "inf")
    g2 = store.create_game("heroes", {}, ("a", "b"), "inf")
    g3 = store.create_game("heroes", {}, ("a", "b"), "inf")
    store.finish_game(g1, replay(winner=None, reason="aborted"))
    store.finish_game(g2, replay())
    assert store.abort_lapsed() == 1
    assert [store.get_game(g).status for g in (g1, g2, g3)] == ["aborted", "finished", "aborted"]  # type: ignore
    # A result that arrives after its game was aborted (its server had lost the database for
    # longer than its lease) is still stored; the same result again is a retry; another is refused.
    store.finish_game(g3, replay())
    store.finish_game(g3, replay())
    assert store.get_game(g3).status == "finished"  # type: ignore[union-attr]
    with pytest.raises(StorageError):
        store.finish_game(g3, replay(winner=None, reason="aborted"))


def test_leases_protect_a_live_servers_games(store: Storage) -> None:
    store.register_server("live", "live server", 3600.0)
    store.register_server("dead", "dead server", 0.0)  # lapsed as soon as it is written
    mine = store.create_game("heroes", {}, ("a", "b"), "inf", server="live")
    theirs = store.create_game("heroes", {}, ("a", "b"), "inf", server="dead")
    unknown = store.create_game("heroes", {}, ("a", "b"), "inf", server="never-registered")
    legacy = store.create_game("heroes", {}, ("a", "b"), "inf")  # made by an older maag
    assert store.abort_lapsed() == 3
    assert [store.get_game(g).status for g in (mine, theirs, unknown, legacy)] == [  # type: ignore[union-attr]
        "running", "aborted", "aborted", "aborted"]
    store.heartbeat("live")
    store.unregister_server("live")  # a clean stop ends the lease
    assert store.abort_lapsed() == 1
    assert store.get_game(mine).status == "aborted"  # type: ignore[union-attr]


def test_reopen_sees_everything(db_url: str) -> None:
    s = open_storage(db_url)
    token = s.add_bot("keeper")
    gid = s.create_game("heroes", {}, ("keeper", "other"), "inf")
    s.finish_game(gid, replay())
    s.close()
    s = open_storage(db_url)
    assert s.bot_by_token(token) == "keeper"
    assert s.get_replay(gid) == replay()
    s.close()


WRITER = """
import os, sys
from maag.server.storage.base import open_storage
s = open_storage(sys.argv[1])
gid = s.create_game("heroes", {}, ("a", "b"), "inf")
s.finish_game(gid, {"seed": 1, "result": {"winner": 0, "reason": "rules", "plies": 3}})
print(gid, flush=True)
sys.stdin.readline()  # killed here
"""


def test_finished_game_survives_kill_9(db_url: str) -> None:
    """A result is durable once finish_game returns: kill -9 the writer right after."""
    p = subprocess.Popen([sys.executable, "-c", WRITER, db_url], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None
    gid = int(p.stdout.readline())
    p.kill()
    p.wait()
    s = open_storage(db_url)
    rec = s.get_game(gid)
    assert rec is not None and rec.status == "finished" and rec.winner == 0
    s.close()


def test_concurrent_writers(db_url: str) -> None:
    """Several storage objects (own connections) on one fresh database, writing at once."""
    stores = [open_storage(db_url) for _ in range(4)]
    ids: list[int] = []
    lock = threading.Lock()

    def work(s: Storage) -> None:
        for _ in range(10):
            gid = s.create_game("heroes", {}, ("a", "b"), "inf")
            s.finish_game(gid, replay())
            with lock:
                ids.append(gid)

    threads = [threading.Thread(target=work, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(ids)) == 40
    assert len(stores[0].list_games(status="finished")) == 40
    for s in stores:
        s.close()


def test_opening_a_store_beside_an_open_transaction_does_not_wait_for_it(postgres_db: str) -> None:
    """A second tournament store or referee storage opened while another connection's
    transaction has read the tables (a runner mid-claim) runs its schema without waiting for
    that transaction: no ALTER TABLE for a column that exists (its ACCESS EXCLUSIVE lock
    deadlocked a runner starting beside a running one). With the old migration the store's
    constructor blocks until the reader commits, so the thread below would still be alive."""
    import threading

    import psycopg
    from maag.server.storage.tournaments import open_tournament_store

    open_tournament_store(postgres_db).close()
    open_storage(postgres_db).close()
    with psycopg.connect(postgres_db) as reader:  # a transaction left open, holding read locks
        reader.execute("SELECT count(*) FROM tournament_games").fetchone()
        reader.execute("SELECT count(*) FROM games").fetchone()
        errors: list[BaseException] = []

        def open_stores() -> None:
            try:
                open_tournament_store(postgres_db).close()
                open_storage(postgres_db).close()
            except BaseException as e:  # reported below
                errors.append(e)

        t = threading.Thread(target=open_stores, daemon=True)
        t.start()
        t.join(60)
        blocked = t.is_alive()
        reader.rollback()
    t.join(60)
    assert not blocked, "opening a store waited for another connection's open transaction"
    assert not errors, errors


def test_every_store_opens_through_one_dispatcher(db_url: str) -> None:
    """Games, the tournaments' schedule and the submissions, one database, one `--db` value:
    each store on the backend the URL names, a store's `url` opening it again."""
    from maag.server.storage.submissions import open_submission_store
    from maag.server.storage.tournaments import open_tournament_store

    games = open_storage(db_url)
    schedule, uploads = open_tournament_store(db_url), open_submission_store(db_url)
    try:
        assert {type(s.db) for s in (games, schedule, uploads)} == {type(games.db)}
        assert schedule.open_tournament("cup", {"n": 1}) is True
        v = uploads.add("alpha", b"archive", {"name": "alpha"})
        assert uploads.move("alpha", v.version, ("pending",), "active") is True
        again = open_storage(games.url)
        assert again.list_games() == [] and type(again.db) is type(games.db)
        again.close()
        fresh = open_submission_store(db_url)
        got = fresh.get("alpha")
        assert got is not None and got.status == "active" and fresh.package(got.sha256) == b"archive"
        fresh.close()
    finally:
        for s in (games, schedule, uploads):
            s.close()


def test_a_url_of_no_backend_is_refused_by_every_store() -> None:
    from maag.server.storage.submissions import open_submission_store
    from maag.server.storage.tournaments import open_tournament_store

    for opener in (open_storage, open_tournament_store, open_submission_store):
        with pytest.raises(StorageError, match="names no database.*sqlite:///PATH.*postgresql://"):
            opener("mysql://somewhere/db")
        with pytest.raises(ValueError):  # what the tournament and submission stores raised before
            opener("mysql://somewhere/db")
